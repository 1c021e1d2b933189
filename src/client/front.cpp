// The out-of-line pieces of the clients' shared front
// (include/rapidrpc/client_front.hpp).
#include <rapidrpc/client_front.hpp>

#include <string>

namespace rapidrpc::client_detail {

outcome to_outcome(call_result&& r) {
  switch (r.index()) {
    case 0:
      return std::get<value>(std::move(r));
    case 1:
      return std::get<fault>(std::move(r));
    default:
      return fault(fault_code::transport_error, std::get<transport_error>(r).what());
  }
}

value result_or_throw(call_result&& r) {
  switch (r.index()) {
    case 0:
      return std::get<value>(std::move(r));
    case 1:
      throw std::get<fault>(std::move(r));
    default:
      throw std::get<transport_error>(std::move(r));
  }
}

void throw_result_type(std::string_view got) {
  throw transport_error(transport_error::reason::bad_response,
                        "the result has an unexpected type: " + std::string(got));
}

}  // namespace rapidrpc::client_detail
