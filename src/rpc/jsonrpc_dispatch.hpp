// Private: the JSON-RPC side of the exchange (exchange.hpp): named
// parameters bound to a method's parameter names, one request's outcome
// written as a response object, and batches run on a registry. Every
// completion comes back on the loop thread given in the call_context.
#pragma once

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/registry.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace rapidrpc::detail::rpc {

/// Turns a request's named parameters into positional ones using the
/// method's parameter names. A fault (-32602) if the method has no names, a
/// name is unknown or one is missing; nothing to do for positional requests
/// or unknown methods (invoke() reports those).
std::optional<fault> bind_named(const registry& methods, jsonrpc::request& r);

/// Appends the response to one request's outcome, the result or the fault
/// as an error object, and returns the fault code answered (0 for a
/// result). A result that cannot be written (not UTF-8, non-finite) becomes
/// an internal error.
std::int32_t write_json_outcome(std::string& out, std::string_view id, const outcome& o);

/// Runs every entry of a batch at once (each where its method runs) and
/// calls `done` once, on ctx.loop, with the response array in the entries'
/// order, notifications left out; an empty string if there is nothing to
/// answer (all notifications).
void run_batch(const registry& methods, const call_context& ctx, jsonrpc::message batch,
               std::function<void(std::string)> done);

}  // namespace rapidrpc::detail::rpc
