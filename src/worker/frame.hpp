// Private: the worker protocol's framing (rapidrpc/worker.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rapidrpc::detail {

/// Appends the 4-byte big-endian length of `payload`, then `payload`.
void append_frame(std::string& out, std::string_view payload);

/// Writes into the first 4 bytes of `frame` the length of what follows them.
void put_frame_length(std::string& frame) noexcept;

/// Reads the length in a 4-byte frame header.
std::uint32_t frame_length(const unsigned char* header) noexcept;

}  // namespace rapidrpc::detail
