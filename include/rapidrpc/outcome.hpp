// The outcome of one call: the result value, or the fault it ended with.
// The one type every part of the library uses for it: the registry's
// completions and responders, the codecs' parsed responses, and the
// clients' try_call(), async_call() and multicall().
#pragma once

#include <rapidrpc/fault.hpp>
#include <rapidrpc/value.hpp>

#include <variant>

namespace rapidrpc {

/// The result of a call: a value, or the fault it ended with. Holds a value
/// (`std::get<value>`) when the call succeeded, a fault (`std::get<fault>`)
/// when a handler, the server or (in a client) the transport failed it.
using outcome = std::variant<value, fault>;

}  // namespace rapidrpc
