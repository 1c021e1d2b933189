#include "service/service.hpp"

namespace rapidrpc::detail {

void service_list::start() {
  try {
    for (; started_ < services_.size(); ++started_) services_[started_]->start();
  } catch (...) {
    stop(std::chrono::milliseconds(0));
    join();
    started_ = 0;
    throw;
  }
}

void service_list::stop(std::chrono::milliseconds drain) {
  for (std::size_t i = 0; i < started_; ++i) services_[i]->stop(drain);
}

void service_list::join() {
  for (std::size_t i = started_; i-- > 0;) services_[i]->join();
}

}  // namespace rapidrpc::detail
