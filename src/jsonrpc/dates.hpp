// Private: the date form of the JSON-RPC codec.
#pragma once

#include <rapidrpc/value.hpp>

#include <string>

namespace rapidrpc::jsonrpc::detail {

/// Appends "YYYY-MM-DDTHH:MM:SS" (the caller checks the fields first).
void append_date_time(std::string& out, const date_time& t);

}  // namespace rapidrpc::jsonrpc::detail
