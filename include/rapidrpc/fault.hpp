// Faults: the protocol-neutral error a method call ends with.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rapidrpc {

/// Fault codes of the XML-RPC fault-interop convention, shared with JSON-RPC.
/// Handlers may use any other code for their own faults; it is kept as is.
namespace fault_code {
inline constexpr std::int32_t parse_error = -32700;  ///< malformed request document
inline constexpr std::int32_t unsupported_encoding = -32701;
inline constexpr std::int32_t invalid_character = -32702;  ///< bad character for the encoding
inline constexpr std::int32_t invalid_request = -32600;    ///< well-formed but not a valid call
inline constexpr std::int32_t method_not_found = -32601;
inline constexpr std::int32_t invalid_params = -32602;
inline constexpr std::int32_t internal_error = -32603;
inline constexpr std::int32_t application_error = -32500;
inline constexpr std::int32_t system_error = -32400;
inline constexpr std::int32_t transport_error = -32300;
inline constexpr std::int32_t timeout = -32001;  ///< the call passed its deadline
/// The caller may not make this call (refused by the server's authorizer).
inline constexpr std::int32_t not_authorized = -32002;
}  // namespace fault_code

/// The error a method call ends with, carried to the client as an XML-RPC
/// fault {faultCode, faultString} (or a JSON-RPC error object).
///
/// Handlers throw it to fail a call with their own code and message; the
/// message goes on the wire as is, so it must not hold internal detail.
/// Any other exception escaping a handler becomes fault_code::internal_error
/// with a generic message.
class fault : public std::runtime_error {
 public:
  fault(std::int32_t code, const std::string& message) : std::runtime_error(message), code_(code) {}

  std::int32_t code() const noexcept { return code_; }
  std::string message() const { return what(); }

 private:
  std::int32_t code_;
};

}  // namespace rapidrpc
