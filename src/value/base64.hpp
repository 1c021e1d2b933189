// Private: base64's block codecs. decode_base64 and append_base64
// (rapidrpc/literals.hpp) run the bulk of their data through the widest
// block codec this machine has (AVX2, else SSSE3, else none), chosen once
// at run time: 32 or 16 characters at a time while all are in the
// alphabet. The scalar code does the rest (line breaks, padding, anything
// invalid) and gives the outcome; run alone, as here, it is the reference
// the unit tests and the fuzz target `base64` hold the block codecs to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc::detail {

/// How many characters append_base64 writes for `bytes` bytes.
constexpr std::size_t base64_chars(std::size_t bytes) { return (bytes + 2) / 3 * 4; }

/// decode_base64 without the block codecs.
bool decode_base64_scalar(std::string_view text, std::vector<std::uint8_t>& out);

/// append_base64 without the block codecs.
void append_base64_scalar(std::string& out, std::span<const std::uint8_t> data);

/// The block codec in use: "avx2", "ssse3" or "none".
std::string_view base64_block_codec();

}  // namespace rapidrpc::detail
