// Private: what the XML-RPC and JSON-RPC writers share: UTF-8 checking and
// appending that leaves the output as it was when a value cannot be written.
#pragma once

#include <cstddef>
#include <string>

namespace rapidrpc::detail {

/// Length (2..4) of the well-formed UTF-8 sequence of a code point of U+0080
/// or above that starts at p (no overlongs, no surrogates, at most
/// U+10FFFF); 0 if there is none.
inline std::size_t utf8_sequence_length(const unsigned char* p, const unsigned char* end) noexcept {
  const auto cont = [](unsigned char c) { return (c & 0xC0) == 0x80; };
  const std::size_t left = static_cast<std::size_t>(end - p);
  const unsigned char c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return left >= 2 && cont(p[1]) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (left < 3 || !cont(p[1]) || !cont(p[2])) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;   // overlong
    if (c == 0xED && p[1] >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (left < 4 || !cont(p[1]) || !cont(p[2]) || !cont(p[3])) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;   // overlong
    if (c == 0xF4 && p[1] >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

/// Runs `write`, which appends to `out`, leaving `out` as it was if it throws.
template <class Write>
void append_or_restore(std::string& out, Write write) {
  const std::size_t old_size = out.size();
  try {
    write();
  } catch (...) {
    out.resize(old_size);
    throw;
  }
}

}  // namespace rapidrpc::detail
