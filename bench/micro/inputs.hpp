// The documents the micro-benchmarks read and write, built once per run
// and shared by every benchmark: the same four calls in both protocols.
//
//   small   sample.add(3, 5) -> 8: the smallest call, where the fixed cost
//           per document (envelope, method lookup) is all there is;
//   array   echo(a 200,000-element array): bench/protocols' mix of ints,
//           doubles and short strings ("item-123") scaled up, about 7 MB of
//           XML; the cost per value;
//   base64  echo(10,000,000 bytes as base64): the cost per byte of one
//           large scalar;
//   structs echo(2,000 structs of eight members, ints and short strings
//           in turn, as a service lists its records): the cost per member.
#pragma once

#include <rapidrpc/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace bench::micro {

enum class input : std::uint8_t { small, array, base64, structs };

/// One call, its answer and its documents.
struct call {
  std::string method;
  rapidrpc::array params;
  rapidrpc::value result;
  /// What items/s counts for this call: 1 per call for small and base64,
  /// the array's elements for array, the members for structs.
  std::int64_t items = 1;

  std::string xml_call;       ///< methodCall
  std::string xml_response;   ///< methodResponse carrying `result`
  std::string json_request;   ///< request object, id 1
  std::string json_response;  ///< response object carrying `result`, id 1
};

/// The call for `in`, built on first use (the large ones take a moment).
/// Not thread-safe: the benchmarks run one at a time on the main thread.
const call& call_of(input in);

/// The JSON text of the id every JSON-RPC document carries.
inline constexpr std::string_view json_id = "1";

}  // namespace bench::micro
