// Fuzz target: marshal::read_answer, the host's reader of a worker's answer
// in marshal's form (src/worker/marshal.hpp).
//
// Input: an answer frame's payload, its tag first ('r' a result, 'f' a
// fault; any other is not an answer).
//
// Invariants: whatever is read can be written as a JSON-RPC answer
// (write_result and write_error do not throw: valid UTF-8, finite doubles;
// XML-RPC refuses more, control characters, and its writer says so) and
// nests no deeper than the limit; a result written back in
// marshal's form reads as the same value (doubles bit for bit), and writing
// that gives the same bytes; the answer without its last byte is never
// read; a smaller depth limit reads the same answer or refuses it, never
// as malformed when the larger one read it.
#include "fuzz_support.hpp"

#include "worker/marshal.hpp"

#include <rapidrpc/jsonrpc.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace {

namespace marshal = rapidrpc::detail::marshal;

constexpr std::size_t depth_limit = 1000;

std::size_t depth_of(const rapidrpc::value& v) {
  std::size_t deepest = 0;
  if (const auto* a = v.get_if<rapidrpc::array>())
    for (const auto& item : *a) deepest = std::max(deepest, depth_of(item));
  else if (const auto* s = v.get_if<rapidrpc::structure>())
    for (const auto& [name, item] : *s) deepest = std::max(deepest, depth_of(item));
  else
    return 0;
  return deepest + 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const auto read = marshal::read_answer(in, depth_limit);
  const auto* o = std::get_if<rapidrpc::outcome>(&read);
  if (o == nullptr) {
    FUZZ_CHECK(!std::get<marshal::unreadable>(read).why.empty());
    return 0;
  }
  FUZZ_CHECK(!in.empty() && (in[0] == marshal::result_tag || in[0] == marshal::fault_tag));
  FUZZ_CHECK(!std::holds_alternative<rapidrpc::outcome>(
      marshal::read_answer(in.substr(0, in.size() - 1), depth_limit)));
  std::string json;
  if (const auto* f = std::get_if<rapidrpc::fault>(o)) {
    FUZZ_CHECK(in[0] == marshal::fault_tag);
    rapidrpc::jsonrpc::write_error(json, "1", f->code(), f->message());
    return 0;
  }
  const auto& v = std::get<rapidrpc::value>(*o);
  FUZZ_CHECK(in[0] == marshal::result_tag);
  FUZZ_CHECK(depth_of(v) <= depth_limit);
  rapidrpc::jsonrpc::write_result(json, "1", v);

  std::string again(1, marshal::result_tag);
  FUZZ_CHECK(marshal::append_value(again, v));
  const auto reread = marshal::read_answer(again, depth_limit);
  const auto* r = std::get_if<rapidrpc::outcome>(&reread);
  FUZZ_CHECK(r != nullptr && std::holds_alternative<rapidrpc::value>(*r));
  FUZZ_CHECK(rapidrpc::fuzz::same(std::get<rapidrpc::value>(*r), v));
  std::string third(1, marshal::result_tag);
  FUZZ_CHECK(marshal::append_value(third, std::get<rapidrpc::value>(*r)));
  FUZZ_CHECK(third == again);

  const auto shallow = marshal::read_answer(in, 2);
  if (const auto* u = std::get_if<marshal::unreadable>(&shallow))
    FUZZ_CHECK(!u->malformed && depth_of(v) > 2);
  else
    FUZZ_CHECK(
        depth_of(v) <= 2 &&
        rapidrpc::fuzz::same(std::get<rapidrpc::value>(std::get<rapidrpc::outcome>(shallow)), v));
  return 0;
}
