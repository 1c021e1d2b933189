// Private: runs JSON-RPC requests on a registry (the server side of the
// codec). Used by the HTTP connection; every completion comes back on the
// loop thread given in the call_context.
#pragma once

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/registry.hpp>

#include <functional>
#include <optional>
#include <string>

namespace rapidrpc::jsonrpc::detail {

/// Turns a request's named parameters into positional ones using the
/// method's parameter names. A fault (-32602) if the method has no names, a
/// name is unknown or one is missing; nothing to do for positional requests
/// or unknown methods (invoke() reports those).
std::optional<fault> bind_named(const registry& methods, request& r);

/// Appends the response to one request's outcome: the result, or the
/// fault as an error object. A result that cannot be written (not UTF-8,
/// non-finite) becomes an internal error.
void write_outcome(std::string& out, std::string_view id, const outcome& o);

/// Runs every entry of a batch at once (each where its method runs) and
/// calls `done` once, on ctx.loop, with the response array in the entries'
/// order, notifications left out; an empty string if there is nothing to
/// answer (all notifications).
void run_batch(const registry& methods, const call_context& ctx, message batch,
               std::function<void(std::string)> done);

}  // namespace rapidrpc::jsonrpc::detail
