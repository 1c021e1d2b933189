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
//
// The public calls read with the direct reader first (basic_parser where it
// gives up); each of them (request, response, any value; default and small
// limits) must give what basic_parser alone gives: the same message, value
// or response (doubles bit for bit, i4 and i8 apart, members in order), and
// the same error, to its text.
#include "fuzz_support.hpp"
#include "jsonrpc/reader.hpp"

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

bool same_error(const jsonrpc::error_reply& a, const jsonrpc::error_reply& b) {
  return a.id == b.id && a.code == b.code && a.detail == b.detail;
}

// `same` compares doubles bit for bit but not i4 with i8: kinds too.
bool same_kinds(const rapidrpc::value& a, const rapidrpc::value& b) {
  if (a.type() != b.type()) return false;
  if (const auto* x = a.get_if<rapidrpc::array>()) {
    const auto& y = b.as<rapidrpc::array>();
    for (std::size_t i = 0; i < x->size(); ++i)
      if (!same_kinds((*x)[i], y[i])) return false;
  } else if (const auto* s = a.get_if<rapidrpc::structure>()) {
    auto j = b.as<rapidrpc::structure>().begin();
    for (auto i = s->begin(); i != s->end(); ++i, ++j)
      if (i->first != j->first || !same_kinds(i->second, j->second)) return false;
  }
  return true;
}

bool same_exactly(const rapidrpc::value& a, const rapidrpc::value& b) {
  return same(a, b) && same_kinds(a, b);
}

// The direct reader against basic_parser alone, under `lim`.
void check_direct_reader(std::string_view text, const rapidrpc::limits& lim) {
  using jsonrpc::detail::reader;
  namespace d = jsonrpc::detail;
  {
    auto a = d::parse_request(text, lim, reader::direct_first);
    auto b = d::parse_request(text, lim, reader::boost_only);
    FUZZ_CHECK(a.index() == b.index());
    if (const auto* e = std::get_if<jsonrpc::error_reply>(&a)) {
      FUZZ_CHECK(same_error(*e, std::get<jsonrpc::error_reply>(b)));
    } else {
      const auto& x = std::get<jsonrpc::message>(a);
      const auto& y = std::get<jsonrpc::message>(b);
      FUZZ_CHECK(x.batch == y.batch && x.entries.size() == y.entries.size());
      for (std::size_t i = 0; i < x.entries.size(); ++i) {
        FUZZ_CHECK(x.entries[i].index() == y.entries[i].index());
        if (const auto* bad = std::get_if<jsonrpc::error_reply>(&x.entries[i])) {
          FUZZ_CHECK(same_error(*bad, std::get<jsonrpc::error_reply>(y.entries[i])));
          continue;
        }
        const auto& p = std::get<jsonrpc::request>(x.entries[i]);
        const auto& q = std::get<jsonrpc::request>(y.entries[i]);
        FUZZ_CHECK(same_request(p, q));
        FUZZ_CHECK(same_exactly(rapidrpc::value(p.params), rapidrpc::value(q.params)));
        if (p.named) FUZZ_CHECK(same_exactly(rapidrpc::value(*p.named), rapidrpc::value(*q.named)));
      }
    }
  }
  {
    auto a = d::parse_value(text, lim, reader::direct_first);
    auto b = d::parse_value(text, lim, reader::boost_only);
    FUZZ_CHECK(a.index() == b.index());
    if (const auto* e = std::get_if<jsonrpc::error_reply>(&a))
      FUZZ_CHECK(same_error(*e, std::get<jsonrpc::error_reply>(b)));
    else
      FUZZ_CHECK(same_exactly(std::get<rapidrpc::value>(a), std::get<rapidrpc::value>(b)));
  }
  {
    auto a = d::parse_response(text, lim, reader::direct_first);
    auto b = d::parse_response(text, lim, reader::boost_only);
    FUZZ_CHECK(a.index() == b.index());
    if (const auto* e = std::get_if<jsonrpc::error_reply>(&a)) {
      FUZZ_CHECK(same_error(*e, std::get<jsonrpc::error_reply>(b)));
    } else {
      const auto& x = std::get<jsonrpc::response>(a);
      const auto& y = std::get<jsonrpc::response>(b);
      FUZZ_CHECK(x.id == y.id && x.outcome.index() == y.outcome.index());
      if (const auto* v = std::get_if<rapidrpc::value>(&x.outcome)) {
        FUZZ_CHECK(same_exactly(*v, std::get<rapidrpc::value>(y.outcome)));
      } else {
        const auto& f = std::get<rapidrpc::fault>(x.outcome);
        const auto& g = std::get<rapidrpc::fault>(y.outcome);
        FUZZ_CHECK(f.code() == g.code() && f.message() == g.message());
      }
    }
  }
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
  check_direct_reader(text, {});
  check_direct_reader(text, small);
  return 0;
}
