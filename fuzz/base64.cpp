// Fuzz target: base64 (rapidrpc/literals.hpp) with its block codecs, against
// the scalar code alone (src/value/base64.hpp).
//
// Input: any bytes.
//
// Invariants: decoding them gives the scalar code's outcome, and on success
// its bytes, appended after what the output held; encoding them gives the
// scalar code's text, which decodes back to them, and so does that text
// with a line break after every 76 characters (as Python's clients send it).
#include "fuzz_support.hpp"

#include "value/base64.hpp"

#include <rapidrpc/literals.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::uint8_t> fast{7}, scalar{7};
  const bool decoded = rapidrpc::decode_base64(text, fast);
  FUZZ_CHECK(decoded == rapidrpc::detail::decode_base64_scalar(text, scalar));
  if (decoded) FUZZ_CHECK(fast == scalar);

  const std::span bytes(data, size);
  std::string encoded = "x", reference = "x";
  rapidrpc::append_base64(encoded, bytes);
  rapidrpc::detail::append_base64_scalar(reference, bytes);
  FUZZ_CHECK(encoded == reference);
  encoded.erase(0, 1);
  std::string lines;
  for (std::size_t i = 0; i < encoded.size(); i += 76) lines.append(encoded, i, 76).append("\n");
  for (const std::string& t : {encoded, lines}) {
    std::vector<std::uint8_t> back;
    FUZZ_CHECK(rapidrpc::decode_base64(t, back));
    FUZZ_CHECK(back.size() == size && std::equal(back.begin(), back.end(), data));
  }
  return 0;
}
