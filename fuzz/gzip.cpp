// Fuzz target: http::gunzip (request bodies with Content-Encoding: gzip) and
// http::gzip (response bodies).
//
// Input: the gzip stream (for gunzip), and the same bytes as plain data (for
// gzip).
//
// Invariants: those of check_gunzip() (fuzz_support.hpp) under a small and a
// larger limit; the two limits agree where neither is reached; and what
// http::gzip writes inflates back to the same bytes under a limit of exactly
// their size.
#include "fuzz_support.hpp"

#include "http/gzip.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace http = rapidrpc::http;
  using rapidrpc::fuzz::check_gunzip;
  const std::string_view in(reinterpret_cast<const char*>(data), size);

  std::string small_out, big_out;
  const auto small = check_gunzip(in, small_out, 1000);
  const auto big = check_gunzip(in, big_out, 256 * 1024);
  if (small != http::inflate_result::too_large) {
    FUZZ_CHECK(small == big);
    FUZZ_CHECK(small_out == big_out);
  }

  std::string packed;
  http::gzip(in, packed);
  std::string unpacked;
  FUZZ_CHECK(http::gunzip(packed, unpacked, in.size()) == http::inflate_result::ok);
  FUZZ_CHECK(unpacked == in);
  return 0;
}
