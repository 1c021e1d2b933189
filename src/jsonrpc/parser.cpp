// The JSON-RPC reader: a handler that builds rapidrpc::values directly and
// reads the request envelopes as they stream past, so a request is never
// held as a generic JSON tree. Its events come from the direct reader
// (scanner.hpp), and from Boost.JSON's basic_parser (a strict, non-recursive
// SAX parser) for any text the direct reader gives up on. docs/jsonrpc.md
// has the rules; bench/json_choice has why this parser.
#include "jsonrpc/reader.hpp"

#include <rapidrpc/jsonrpc.hpp>

#include <rapidrpc/literals.hpp>

#include "jsonrpc/scanner.hpp"
#include "value/base64.hpp"
#include "value/decimal.hpp"
#include "value/growth.hpp"
#include "value/text.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <system_error>

namespace rapidrpc::jsonrpc {
namespace {

namespace bj = boost::json;

// The members an envelope may have, requests' and responses' together.
enum member : std::uint8_t {
  m_jsonrpc,
  m_method,
  m_params,
  m_result,
  m_error,
  m_id,
  m_other,
  member_count
};

member member_of(std::string_view key) {
  if (key == "jsonrpc") return m_jsonrpc;
  if (key == "method") return m_method;
  if (key == "params") return m_params;
  if (key == "result") return m_result;
  if (key == "error") return m_error;
  if (key == "id") return m_id;
  return m_other;
}

// One request or response object, read member by member.
struct envelope {
  std::array<std::optional<value>, member_count> members;  // m_id unused
  unsigned seen = 0;                                       // bit per member
  bool repeated = false;                                   // a member name came twice
  bool other = false;  // a member that is none of the known ones
  enum class id_state : std::uint8_t { absent, ok, bad } id = id_state::absent;
  std::string id_text;
  std::string inner_error;  // what was wrong inside a member's value

  void clear() {
    for (auto& m : members) m.reset();
    seen = 0;
    repeated = other = false;
    id = id_state::absent;
    id_text.clear();
    inner_error.clear();
  }
};

// {"$datetime": "..."} in canonical form becomes a date (and {"$base64":
// "..."} bytes, handler::base64_member()); any other object stays a struct.
value object_value(structure&& members) {
  if (members.size() == 1) {
    auto& [key, member] = *members.begin();
    if (const auto* text = member.get_if<std::string>()) {
      if (key == "$datetime") {
        // Only the forms the writer produces (19 characters, or 26 with
        // microseconds), so that it reads back the same.
        date_time t;
        if (parse_date_time(*text, t) && text->size() == (t.microsecond != 0 ? 26U : 19U) &&
            (*text)[4] == '-')
          return value(t);
      }
    }
  }
  return value(std::move(members));
}

// Why a text was refused as a whole.
struct text_error {
  std::int32_t code = 0;
  std::string detail;
};

class handler {
 public:
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  // `response`: the text is a response; `any_value`: the text is one JSON
  // value, no envelope (parse_value); neither: a request or a batch.
  handler(const limits& lim, bool response, bool any_value = false)
      : lim_(lim), response_(response), any_value_(any_value) {}

  // ---- results ---------------------------------------------------------------

  text_error failure;  // set when the handler stopped the parse
  bool batch = false;
  bool root_scalar = false;
  std::vector<std::variant<request, error_reply>> entries;
  std::optional<response> answer;  // response mode
  std::optional<value> root;       // any_value mode

  // What was wrong inside a value (a repeated member name, a number no
  // value can hold); empty if nothing.
  const std::string& inner_error() const noexcept { return env_.inner_error; }

  // ---- basic_parser's events -------------------------------------------------

  bool on_document_begin(bj::error_code&) { return true; }
  bool on_document_end(bj::error_code&) { return true; }

  bool on_object_begin(bj::error_code& ec) { return open(true, ec); }
  bool on_array_begin(bj::error_code& ec) { return open(false, ec); }

  bool on_object_end(std::size_t, bj::error_code& ec) {
    if (frames_.empty()) {
      if (level_ == level::envelope) return end_envelope(ec);
      return true;
    }
    frame f = std::move(frames_.back());
    pop_frame();
    if (f.base64) return add(std::move(*f.base64), ec, true);  // {"$base64": ...} alone
    return add(object_value(std::move(f.members)), ec, true);
  }

  bool on_array_end(std::size_t, bj::error_code& ec) {
    if (frames_.empty()) return true;  // the batch
    frame f = std::move(frames_.back());
    pop_frame();
    return add(std::move(f.items), ec, true);
  }

  bool on_key_part(bj::string_view s, std::size_t, bj::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }

  bool on_key(bj::string_view s, std::size_t, bj::error_code&) {
    std::string_view key = collect(s);
    if (frames_.empty()) {
      member m = member_of(key);
      env_member_ = m;
      if (m == m_other) {
        env_.other = true;
      } else {
        if (env_.seen & (1u << m)) env_.repeated = true;
        env_.seen |= 1u << m;
      }
    } else {
      frames_.back().key.assign(key);
    }
    text_.clear();
    return true;
  }

  bool on_string_part(bj::string_view s, std::size_t, bj::error_code&) {
    text_.append(s.data(), s.size());
    return true;
  }

  // Most values are an array's items, read in one piece: those go straight
  // in, inlined in the reader's loop; the rest below.
  [[gnu::always_inline]] bool on_string(bj::string_view s, std::size_t n, bj::error_code& ec) {
    if (items_ != nullptr && text_.empty()) [[likely]]
      return item(std::string_view(s.data(), s.size()), ec);
    return on_other_string(s, n, ec);
  }

  [[gnu::always_inline]] bool on_int64(std::int64_t i, bj::string_view s, bj::error_code& ec) {
    if (items_ != nullptr && number_.empty()) [[likely]]
      return fits_i4(i) ? item(static_cast<std::int32_t>(i), ec) : item(i, ec);
    return on_other_int64(i, s, ec);
  }

  bool on_other_string(bj::string_view s, std::size_t, bj::error_code& ec) {
    std::string_view str = collect(s);  // may be text_: cleared once it is used
    bool ok = at_envelope() && env_member_ == m_id ? count(ec) && set_id(write_id_string(str))
              : base64_member(str)                 ? count(ec)
                                                   : add(str, ec);
    text_.clear();
    return ok;
  }

  bool on_number_part(bj::string_view s, bj::error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }

  bool on_other_int64(std::int64_t i, bj::string_view s, bj::error_code& ec) {
    if (at_envelope() && env_member_ == m_id) return number_id(s, ec);
    number_.clear();
    if (fits_i4(i)) return add(static_cast<std::int32_t>(i), ec);
    return add(i, ec);
  }

  bool on_uint64(std::uint64_t u, bj::string_view s, bj::error_code& ec) {
    if (at_envelope() && env_member_ == m_id) return number_id(s, ec);
    number_.clear();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return out_of_range("an integer beyond 64 bits", ec);
    return add(static_cast<std::int64_t>(u), ec);
  }

  bool on_double(double d, bj::string_view s, bj::error_code& ec) {
    if (at_envelope() && env_member_ == m_id) return number_id(s, ec, d);
    std::string_view text = collect_number(s);
    // The digits of the text basic_parser has checked (-?int(.frac)?(e..)?),
    // and whether it has a fraction or an exponent.
    std::uint64_t mantissa = 0;  // wraps past 19 digits; only used up to 15
    const char* p = text.data();
    const char* const end = p + text.size();
    if (*p == '-') ++p;
    const char* const first = p;
    while (p != end && static_cast<unsigned>(*p - '0') < 10)
      mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
    std::size_t digits = static_cast<std::size_t>(p - first);
    std::size_t fraction_digits = 0;
    const bool fraction = p != end && *p == '.';
    if (fraction) {
      const char* const point = ++p;
      while (p != end && static_cast<unsigned>(*p - '0') < 10)
        mantissa = mantissa * 10 + static_cast<unsigned>(*p++ - '0');
      fraction_digits = static_cast<std::size_t>(p - point);
      digits += fraction_digits;
    }
    const bool exponent = p != end;  // what is left is e or E and its digits
    if (!fraction && !exponent) {    // basic_parser hands integers beyond 64 bits over as doubles
      number_.clear();
      return out_of_range("an integer beyond 64 bits", ec);
    }
    // Boost 1.81's fast path may be one unit in the last place off, and
    // makes 0e400 infinite; these give the nearest double (and JSON's
    // grammar is within parse_double's). Where parse_double finds the text
    // out of range, Boost's double stands: 0 for 1e-400, infinite beyond.
    double exact = 0;
    if (!exponent && digits <= rapidrpc::detail::max_short_decimal_digits)
      d = rapidrpc::detail::exact_short_decimal(mantissa, fraction_digits, text.front() == '-');
    else if (parse_double(text, exact) == literal_status::ok)
      d = exact;
    number_.clear();
    if (!std::isfinite(d)) return out_of_range("a number beyond the double range", ec);
    return add(d, ec);
  }

  // The direct reader's decimal: d is already the nearest double to the
  // text, and finite.
  [[gnu::always_inline]] bool on_decimal(double d, bj::string_view s, bj::error_code& ec) {
    if (items_ != nullptr) [[likely]]
      return item(d, ec);
    if (at_envelope() && env_member_ == m_id) return number_id(s, ec);
    return add(d, ec);
  }

  bool on_bool(bool b, bj::error_code& ec) { return add(b, ec); }
  bool on_null(bj::error_code& ec) {
    if (at_envelope() && env_member_ == m_id) {
      if (!count(ec)) return false;
      return set_id("null");
    }
    return add(nil, ec);
  }
  bool on_comment_part(bj::string_view, bj::error_code&) { return true; }
  bool on_comment(bj::string_view, bj::error_code&) { return true; }

 private:
  enum class level : std::uint8_t { top, batch, envelope };

  struct frame {
    bool is_object = false;
    array items;
    structure members;
    std::string key;
    std::optional<bytes> base64;  // base64_member()'s, while no other member has come
  };

  static bool fits_i4(std::int64_t i) noexcept {
    return i >= std::numeric_limits<std::int32_t>::min() &&
           i <= std::numeric_limits<std::int32_t>::max();
  }

  bool at_envelope() const noexcept { return frames_.empty() && level_ == level::envelope; }

  std::string_view collect(bj::string_view last) {
    if (text_.empty()) return {last.data(), last.size()};
    text_.append(last.data(), last.size());
    return text_;
  }

  std::string_view collect_number(bj::string_view last) {
    if (number_.empty()) return {last.data(), last.size()};
    number_.append(last.data(), last.size());
    return number_;
  }

  bool stop(std::int32_t code, std::string detail, bj::error_code& ec) {
    failure = {code, std::move(detail)};
    ec = std::make_error_code(std::errc::invalid_argument);
    return false;
  }

  bool count(bj::error_code& ec) {
    if (++elements_ > lim_.max_elements) [[unlikely]]
      return too_many(ec);
    return true;
  }

  [[gnu::noinline]] bool too_many(bj::error_code& ec) {
    return stop(fault_code::invalid_request,
                "more than " + std::to_string(lim_.max_elements) + " values in one text", ec);
  }

  bool open(bool is_object, bj::error_code& ec) {
    if (frames_.empty() && !any_value_) {
      if (level_ == level::top && !started_) {
        started_ = true;
        if (is_object) {
          begin_envelope();
          return true;
        }
        if (!response_) {
          batch = true;
          level_ = level::batch;
          return true;
        }
      } else if (level_ == level::batch && is_object) {
        if (entries.size() >= lim_.max_batch)
          return stop(fault_code::invalid_request,
                      "a batch holds at most " + std::to_string(lim_.max_batch) + " requests", ec);
        begin_envelope();
        return true;
      }
    }
    if (!count(ec)) return false;
    if (frames_.size() >= lim_.max_depth)
      return stop(fault_code::invalid_request,
                  "nested deeper than " + std::to_string(lim_.max_depth) + " levels", ec);
    frames_.emplace_back().is_object = is_object;
    items_ = is_object ? nullptr : &frames_.back().items;
    return true;
  }

  void pop_frame() {
    frames_.pop_back();
    items_ = frames_.empty() || frames_.back().is_object ? nullptr : &frames_.back().items;
  }

  // A {"$base64": "..."} becomes bytes when its text is canonical (as the
  // writer writes it, so that it reads back the same) and the object has no
  // other member. The text is decoded here, where it lies, rather than
  // copied into a string first (a 10 MB value's 13 MB of text), and a
  // member that follows makes it text again (the bytes encoded: the same
  // text). A text the decoder takes is canonical unless it has white space,
  // which only makes it longer (padding is required, unused bits must be
  // zero): its length tells.
  bool base64_member(std::string_view text) {
    if (frames_.empty()) return false;
    frame& f = frames_.back();
    if (!f.is_object || !f.members.empty() || f.base64 || f.key != "$base64") return false;
    bytes b;
    if (!decode_base64(text, b.data) ||
        text.size() != rapidrpc::detail::base64_chars(b.data.size()))
      return false;
    f.base64.emplace(std::move(b));
    return true;
  }

  // A member after base64_member()'s: that one is a string member again.
  static void base64_as_text(frame& f) {
    std::string text;
    append_base64(text, f.base64->data);
    f.members.try_emplace("$base64", std::move(text));
    f.base64.reset();
  }

  // A finished value (what a value is made from: a scalar, a string_view,
  // a finished container): into the container being built, made in place
  // there, or into the envelope. Containers were counted when they opened;
  // scalars are counted here.
  template <class T>
  bool add(T&& v, bj::error_code& ec, bool container = false) {
    if (!container && !count(ec)) return false;
    if (items_ != nullptr) {
      append(std::forward<T>(v));
      return true;
    }
    if (!frames_.empty()) {
      frame& f = frames_.back();
      if (!f.is_object) {
        rapidrpc::detail::room_for_one_more(f.items, elements_, lim_.max_elements)
            .emplace_back(std::forward<T>(v));
        return true;
      }
      if (f.base64) [[unlikely]]
        base64_as_text(f);
      if (!f.members.try_emplace(std::move(f.key), std::forward<T>(v)).second)
        note_inner("a member name repeats in an object");
      return true;
    }
    switch (level_) {
      case level::envelope:
        if (env_member_ == m_id)
          env_.id = envelope::id_state::bad;
        else if (env_member_ != m_other)
          env_.members[env_member_].emplace(std::forward<T>(v));
        return true;
      case level::batch:
        if (entries.size() >= lim_.max_batch)
          return stop(fault_code::invalid_request,
                      "a batch holds at most " + std::to_string(lim_.max_batch) + " requests", ec);
        entries.emplace_back(error_reply{"null", fault_code::invalid_request,
                                         "a batch entry must be a request object"});
        return true;
      case level::top:
        started_ = true;
        root_scalar = true;
        if (any_value_) root.emplace(std::forward<T>(v));
        return true;
    }
    return true;
  }

  // A scalar into the innermost frame, an array: counted, then made in
  // place there.
  template <class T>
  [[gnu::always_inline]] bool item(T&& v, bj::error_code& ec) {
    if (!count(ec)) return false;
    append(std::forward<T>(v));
    return true;
  }

  template <class T>
  [[gnu::always_inline]] void append(T&& v) {
    rapidrpc::detail::room_for_one_more(*items_, elements_, lim_.max_elements)
        .emplace_back(std::forward<T>(v));
  }

  void note_inner(std::string what) {
    if (env_.inner_error.empty()) env_.inner_error = std::move(what);
  }

  // A number that no value can hold: the params are invalid (a member of
  // the envelope itself, such as "jsonrpc", cannot be a number anyway).
  bool out_of_range(const char* what, bj::error_code& ec) {
    if (!at_envelope()) note_inner(std::string(what));
    return add(nil, ec);
  }

  // An id is answered as it was written. One beyond the double range
  // (2e400) could not be read back, by this parser either: it is a bad id.
  // `d` is basic_parser's double for a decimal; Boost 1.81 makes some
  // texts infinite that are not (0e400), so those are read again exactly.
  bool number_id(bj::string_view last, bj::error_code& ec, double d = 0) {
    std::string text(collect_number(last));
    number_.clear();
    if (!count(ec)) return false;
    double exact = 0;
    if (!std::isfinite(d) &&
        (parse_double(text, exact) != literal_status::ok || !std::isfinite(exact))) {
      env_.id = envelope::id_state::bad;
      return true;
    }
    return set_id(std::move(text));
  }

  bool set_id(std::string text) {
    env_.id = envelope::id_state::ok;
    env_.id_text = std::move(text);
    return true;
  }

  static std::string write_id_string(std::string_view s) {
    std::string out;
    write_string(out, s);  // valid UTF-8: the parser checked it
    return out;
  }

  void begin_envelope() {
    level_ = level::envelope;
    env_.clear();
    env_member_ = m_other;
  }

  bool end_envelope(bj::error_code&) {
    level_ = batch ? level::batch : level::top;
    if (response_)
      answer_from_envelope();
    else
      entries.push_back(request_from_envelope());
    return true;
  }

  std::variant<request, error_reply> request_from_envelope() {
    auto invalid = [](std::string id, std::string why) {
      return error_reply{std::move(id), fault_code::invalid_request, std::move(why)};
    };
    if (env_.id == envelope::id_state::bad)
      return invalid("null", "id must be a string, a number or null");
    if (env_.repeated) return invalid("null", "a member name repeats in the request");
    std::string id = env_.id == envelope::id_state::ok ? std::move(env_.id_text) : std::string();
    std::string reply_id = id.empty() ? "null" : id;
    const auto& version = env_.members[m_jsonrpc];
    if (!version || !version->is<std::string>() || version->as<std::string>() != "2.0")
      return invalid(reply_id, "a request needs \"jsonrpc\": \"2.0\"");
    if (env_.other || env_.members[m_result] || env_.members[m_error])
      return invalid(reply_id, "a request has only jsonrpc, method, params and id");
    auto& method = env_.members[m_method];
    if (!method || !method->is<std::string>()) return invalid(reply_id, "method must be a string");
    std::string& name = method->as<std::string>();
    if (name.empty()) return invalid(reply_id, "method must not be empty");
    if (name.size() > lim_.max_name_bytes)
      return invalid(reply_id,
                     "method names are at most " + std::to_string(lim_.max_name_bytes) + " bytes");
    for (unsigned char c : name)
      if (c < 0x20 || c == 0x7F)
        return invalid(reply_id, "a method name may not hold control characters");
    request r;
    if (auto& params = env_.members[m_params]) {
      if (auto* a = params->get_if<array>())
        r.params = std::move(*a);
      else if (auto* s = params->get_if<structure>())
        r.named = std::move(*s);
      else
        return invalid(reply_id, "params must be an array or an object");
    }
    if (!env_.inner_error.empty())
      return error_reply{reply_id, fault_code::invalid_params, std::move(env_.inner_error)};
    r.method = std::move(name);
    r.id = std::move(id);
    return r;
  }

  void answer_from_envelope() {
    auto bad = [this](std::string why) { failure = {fault_code::invalid_request, std::move(why)}; };
    const auto& version = env_.members[m_jsonrpc];
    if (!version || !version->is<std::string>() || version->as<std::string>() != "2.0")
      return bad("a response needs \"jsonrpc\": \"2.0\"");
    if (env_.repeated || env_.other || env_.members[m_method] || env_.members[m_params])
      return bad("a response has only jsonrpc, result or error, and id");
    if (env_.id != envelope::id_state::ok) return bad("a response needs an id");
    if (!env_.inner_error.empty()) return bad(env_.inner_error);
    auto& result = env_.members[m_result];
    auto& error = env_.members[m_error];
    if (result.has_value() == error.has_value())
      return bad("a response has either result or error");
    response r;
    r.id = std::move(env_.id_text);
    if (result) {
      r.outcome = std::move(*result);
    } else {
      const auto* e = error->get_if<structure>();
      if (e == nullptr) return bad("error must be an object");
      auto code = e->find("code");
      auto message = e->find("message");
      if (code == e->end() || !code->second.is<std::int32_t>())
        return bad("error.code must be an integer");
      if (message == e->end() || !message->second.is<std::string>())
        return bad("error.message must be a string");
      std::string text = message->second.as<std::string>();
      if (auto data = e->find("data"); data != e->end() && data->second.is<std::string>())
        text += ": " + data->second.as<std::string>();
      r.outcome = fault(code->second.as<std::int32_t>(), text);
    }
    answer = std::move(r);
  }

  const limits& lim_;
  bool response_;
  bool any_value_;
  bool started_ = false;
  level level_ = level::top;
  std::vector<frame> frames_;  // containers being built below the envelope
  array* items_ = nullptr;     // the innermost frame's items, if it is an array
  envelope env_;
  member env_member_ = m_other;  // the envelope member whose value comes next
  std::size_t elements_ = 0;
  std::string text_;    // string or key parts so far
  std::string number_;  // number parts so far
};

bj::parse_options parse_options(const limits& lim) {
  bj::parse_options o;
  // The handler enforces the real limit (counted below the envelope, with a
  // clear message); this is the parser's own stack bound above it.
  o.max_depth = lim.max_depth + 3;
  return o;
}

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8, or text.size().
std::size_t first_non_utf8(std::string_view text) noexcept {
  const auto* const begin = reinterpret_cast<const unsigned char*>(text.data());
  const auto* const end = begin + text.size();
  for (const unsigned char* p = begin; p != end;) {
    if (*p < 0x80) {
      ++p;
      continue;
    }
    const std::size_t n = rapidrpc::detail::utf8_sequence_length(p, end);
    if (n == 0) return static_cast<std::size_t>(p - begin);
    p += n;
  }
  return text.size();
}

// Runs the parser over the whole text. A text_error if it is not JSON or a
// limit was passed.
template <class Parser>
std::optional<text_error> run(Parser& p, std::string_view text) {
  bj::error_code ec;
  std::size_t n = p.write_some(false, text.data(), text.size(), ec);
  if (p.handler().failure.code != 0) return std::move(p.handler().failure);
  if (ec == bj::error::too_deep)
    return text_error{fault_code::invalid_request, "nested too deeply"};
  if (ec) {
    // JSON texts are UTF-8 (RFC 8259, 8.1): where the parser stopped at a
    // byte that is not, say so rather than "syntax error".
    if (const std::size_t bad = first_non_utf8(text); bad <= n && bad < text.size()) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(text[bad]));
      return text_error{fault_code::parse_error, "invalid JSON at offset " + std::to_string(bad) +
                                                     ": the text is not UTF-8 (byte " + hex +
                                                     "); JSON-RPC texts must be UTF-8"};
    }
    return text_error{fault_code::parse_error,
                      "invalid JSON at offset " + std::to_string(n) + ": " + ec.message()};
  }
  if (n != text.size())
    return text_error{fault_code::parse_error, "invalid JSON at offset " + std::to_string(n) +
                                                   ": text after the JSON value"};
  return std::nullopt;
}

// One text read: by the direct reader, or by basic_parser where it gave up
// (or was not to be used); result() is the handler that has the events.
class reading {
 public:
  reading(std::string_view text, const limits& lim, detail::reader how, bool response,
          bool any_value = false)
      : direct_(lim, response, any_value) {
    if (how == detail::reader::direct_first) {
      detail::scanner<handler> s(direct_, parse_options(lim).max_depth);
      switch (s.run(text)) {
        case detail::scan_end::done:  // the handler may still have refused what it read
        case detail::scan_end::stopped:
          if (direct_.failure.code != 0) error_ = std::move(direct_.failure);
          return;
        case detail::scan_end::gave_up:
          break;
      }
    }
    fallback_.emplace(parse_options(lim), lim, response, any_value);
    error_ = run(*fallback_, text);
  }

  std::optional<text_error>& error() noexcept { return error_; }
  handler& result() noexcept { return fallback_ ? fallback_->handler() : direct_; }

 private:
  handler direct_;
  std::optional<bj::basic_parser<handler>> fallback_;
  std::optional<text_error> error_;
};

}  // namespace

std::variant<message, error_reply> detail::parse_request(std::string_view text, const limits& lim,
                                                         reader how) {
  reading r(text, lim, how, false);
  if (auto& e = r.error()) return error_reply{"null", e->code, std::move(e->detail)};
  auto& h = r.result();
  if (h.root_scalar)
    return error_reply{"null", fault_code::invalid_request,
                       "a request is an object or an array of them"};
  if (h.batch && h.entries.empty())
    return error_reply{"null", fault_code::invalid_request, "an empty batch"};
  message m;
  m.batch = h.batch;
  m.entries = std::move(h.entries);
  return m;
}

std::variant<value, error_reply> detail::parse_value(std::string_view text, const limits& lim,
                                                     reader how) {
  reading r(text, lim, how, false, true);
  if (auto& e = r.error()) return error_reply{"null", e->code, std::move(e->detail)};
  auto& h = r.result();
  if (!h.inner_error().empty())
    return error_reply{"null", fault_code::invalid_params, h.inner_error()};
  return std::move(*h.root);
}

std::variant<response, error_reply> detail::parse_response(std::string_view text, const limits& lim,
                                                           reader how) {
  reading r(text, lim, how, true);
  if (auto& e = r.error()) return error_reply{"null", e->code, std::move(e->detail)};
  auto& h = r.result();
  if (!h.answer)
    return error_reply{"null", fault_code::invalid_request, "a response is one object"};
  return std::move(*h.answer);
}

bool detail::reads_directly(std::string_view text, const limits& lim) {
  handler h(lim, false);
  return scanner<handler>(h, parse_options(lim).max_depth).run(text) != scan_end::gave_up;
}

std::variant<message, error_reply> parse_request(std::string_view text, const limits& lim) {
  return detail::parse_request(text, lim, detail::reader::direct_first);
}

std::variant<value, error_reply> parse_value(std::string_view text, const limits& lim) {
  return detail::parse_value(text, lim, detail::reader::direct_first);
}

std::variant<response, error_reply> parse_response(std::string_view text, const limits& lim) {
  return detail::parse_response(text, lim, detail::reader::direct_first);
}

}  // namespace rapidrpc::jsonrpc
