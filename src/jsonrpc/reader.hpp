// Private: the JSON-RPC readers with a choice of how to read the text, for
// the tests and the fuzz target that compare the two ways.
#pragma once

#include <rapidrpc/jsonrpc.hpp>

#include <cstdint>
#include <string_view>
#include <variant>

namespace rapidrpc::jsonrpc::detail {

enum class reader : std::uint8_t {
  direct_first,  // the direct reader, and basic_parser where it gives up (the public calls)
  boost_only,    // basic_parser alone
};

std::variant<message, error_reply> parse_request(std::string_view text, const limits& lim,
                                                 reader how);
std::variant<value, error_reply> parse_value(std::string_view text, const limits& lim, reader how);
std::variant<response, error_reply> parse_response(std::string_view text, const limits& lim,
                                                   reader how);

/// Whether the direct reader reads `text`, as a request, without giving up
/// (a verdict of its own: the end of the text or a limit).
bool reads_directly(std::string_view text, const limits& lim = {});

}  // namespace rapidrpc::jsonrpc::detail
