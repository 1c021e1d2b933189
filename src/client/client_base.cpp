// The out-of-line pieces of the clients' shared base
// (include/rapidrpc/client_base.hpp).
#include <rapidrpc/client_base.hpp>

#include <string>

namespace rapidrpc::client_detail {

engine::~engine() = default;

outcome to_outcome(call_result&& r) {
  if (auto* e = std::get_if<transport_error>(&r))
    return fault(fault_code::transport_error, e->what());
  if (auto* f = std::get_if<fault>(&r)) return std::move(*f);
  return std::get<value>(std::move(r));
}

value result_or_throw(call_result&& r) {
  if (auto* v = std::get_if<value>(&r)) return std::move(*v);
  if (auto* f = std::get_if<fault>(&r)) throw std::move(*f);
  throw std::get<transport_error>(std::move(r));
}

void throw_result_type(std::string_view why) {
  throw transport_error(transport_error::reason::bad_response, std::string(why));
}

}  // namespace rapidrpc::client_detail
