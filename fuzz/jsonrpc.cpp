// Fuzz target: a JSON-RPC text, as the server parses a request body and the
// client a response body.
//
// Input: the text.
//
// Invariants: a text is a request (or batch) or an error, never a crash; an
// error reply's code is one of the codec's; what small limits accept, the
// default limits accept as the same message; every valid request can be
// written back with write_request and parses to the same request (doubles
// bit for bit, ids verbatim), and writing it again gives the same bytes. The
// same text read as a response: if accepted, written back (result or error)
// it reads as the same response.
#include "fuzz_support.hpp"

#include <rapidrpc/jsonrpc.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

namespace {

namespace jsonrpc = rapidrpc::jsonrpc;
using rapidrpc::fuzz::same;

bool same_request(const jsonrpc::request& a, const jsonrpc::request& b) {
  if (a.method != b.method || a.id != b.id || !same(a.params, b.params)) return false;
  if (a.named.has_value() != b.named.has_value()) return false;
  return !a.named || same(rapidrpc::value(*a.named), rapidrpc::value(*b.named));
}

bool same_entry(const std::variant<jsonrpc::request, jsonrpc::error_reply>& a,
                const std::variant<jsonrpc::request, jsonrpc::error_reply>& b) {
  if (a.index() != b.index()) return false;
  if (const auto* r = std::get_if<jsonrpc::request>(&a))
    return same_request(*r, std::get<jsonrpc::request>(b));
  const auto& x = std::get<jsonrpc::error_reply>(a);
  const auto& y = std::get<jsonrpc::error_reply>(b);
  return x.id == y.id && x.code == y.code;
}

bool known_code(std::int32_t code) {
  return code == rapidrpc::fault_code::parse_error ||
         code == rapidrpc::fault_code::invalid_request ||
         code == rapidrpc::fault_code::invalid_params;
}

void check_request_round_trip(const jsonrpc::request& r) {
  rapidrpc::array params = r.params;
  if (r.named) params = {rapidrpc::value(*r.named)};  // a struct as one positional parameter
  std::string written;
  try {
    jsonrpc::write_request(written, r.method, params, r.id);
  } catch (const std::invalid_argument&) {
    FUZZ_CHECK(!"a parsed request cannot be written back");
  }
  auto again = jsonrpc::parse_request(written);
  const auto* m = std::get_if<jsonrpc::message>(&again);
  FUZZ_CHECK(m != nullptr && !m->batch && m->entries.size() == 1);
  const auto* r2 = std::get_if<jsonrpc::request>(&m->entries[0]);
  FUZZ_CHECK(r2 != nullptr);
  FUZZ_CHECK(r2->method == r.method && r2->id == r.id && !r2->named && same(r2->params, params));
  std::string rewritten;
  jsonrpc::write_request(rewritten, r2->method, r2->params, r2->id);
  FUZZ_CHECK(rewritten == written);
}

void check_response(std::string_view text) {
  auto parsed = jsonrpc::parse_response(text);
  const auto* r = std::get_if<jsonrpc::response>(&parsed);
  if (r == nullptr) return;
  std::string written;
  if (const auto* v = std::get_if<rapidrpc::value>(&r->outcome)) {
    try {
      jsonrpc::write_result(written, r->id, *v);
    } catch (const std::invalid_argument&) {
      FUZZ_CHECK(!"a parsed result cannot be written back");
    }
  } else {
    const auto& f = std::get<rapidrpc::fault>(r->outcome);
    // A non-standard code keeps its message as the message.
    if (!jsonrpc::standard_message(f.code()).empty()) return;
    jsonrpc::write_error(written, r->id, f.code(), f.message());
  }
  auto again = jsonrpc::parse_response(written);
  const auto* r2 = std::get_if<jsonrpc::response>(&again);
  FUZZ_CHECK(r2 != nullptr && r2->id == r->id && r2->outcome.index() == r->outcome.index());
  if (const auto* v = std::get_if<rapidrpc::value>(&r->outcome))
    FUZZ_CHECK(same(*v, std::get<rapidrpc::value>(r2->outcome)));
  else
    FUZZ_CHECK(std::get<rapidrpc::fault>(r2->outcome).message() ==
               std::get<rapidrpc::fault>(r->outcome).message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const rapidrpc::limits small{
      .max_depth = 3, .max_elements = 40, .max_batch = 3, .max_name_bytes = 8};

  auto whole = jsonrpc::parse_request(text);
  const auto* msg = std::get_if<jsonrpc::message>(&whole);
  if (msg == nullptr) {
    const auto& e = std::get<jsonrpc::error_reply>(whole);
    FUZZ_CHECK(e.id == "null");
    FUZZ_CHECK(e.code == rapidrpc::fault_code::parse_error ||
               e.code == rapidrpc::fault_code::invalid_request);
  } else {
    FUZZ_CHECK(!msg->entries.empty());
    FUZZ_CHECK(msg->batch || msg->entries.size() == 1);
    for (const auto& entry : msg->entries) {
      if (const auto* r = std::get_if<jsonrpc::request>(&entry))
        check_request_round_trip(*r);
      else
        FUZZ_CHECK(known_code(std::get<jsonrpc::error_reply>(entry).code));
    }
  }

  auto limited = jsonrpc::parse_request(text, small);
  if (const auto* m = std::get_if<jsonrpc::message>(&limited)) {
    FUZZ_CHECK(msg != nullptr && m->batch == msg->batch &&
               m->entries.size() == msg->entries.size());
    for (std::size_t i = 0; i < m->entries.size(); ++i) {
      // A name too long for the small limit makes an entry invalid there
      // only, and that check comes before the params' own.
      const auto* small_bad = std::get_if<jsonrpc::error_reply>(&m->entries[i]);
      if (small_bad && small_bad->code == rapidrpc::fault_code::invalid_request) continue;
      FUZZ_CHECK(same_entry(m->entries[i], msg->entries[i]));
    }
  }

  check_response(text);
  return 0;
}
