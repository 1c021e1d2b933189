#include "server/heap.hpp"

#include <malloc.h>

namespace rapidrpc::detail {

void trim_heap() noexcept {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

void heap_trimmer::freed() {
  due_ = std::chrono::steady_clock::now() + quiet;
  if (!armed_) arm();
}

void heap_trimmer::arm() {
  armed_ = true;
  timer_.expires_at(due_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    armed_ = false;
    if (ec) return;
    // Another large buffer was freed meanwhile: the burst goes on.
    if (std::chrono::steady_clock::now() < due_) return arm();
    trim_heap();
  });
}

void heap_trimmer::finish() {
  if (!armed_) return;
  timer_.cancel();
  trim_heap();
}

}  // namespace rapidrpc::detail
