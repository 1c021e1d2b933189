// Boost.JSON header-only: this translation unit carries its implementation.
#include <boost/json/src.hpp>

#include "readers.hpp"
#include "sax_builder.hpp"

#include <algorithm>
#include <system_error>

namespace json_choice {

namespace {

namespace json = boost::json;

// The handler basic_parser calls. Strings, keys and numbers can arrive in
// parts (when the input is split, or a string is long): the parts are
// collected in buffers that keep their capacity between documents.
struct handler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  sax_builder b;
  std::string text;    // string or key parts so far
  std::string number;  // number text parts so far

  bool check(bool ok, json::error_code& ec) {
    if (!ok) ec = std::make_error_code(std::errc::invalid_argument);
    return ok;
  }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_array_begin(json::error_code& ec) { return check(b.begin_array(), ec); }
  bool on_array_end(std::size_t, json::error_code& ec) { return check(b.end_array(), ec); }
  bool on_object_begin(json::error_code& ec) { return check(b.begin_object(), ec); }
  bool on_object_end(std::size_t, json::error_code& ec) { return check(b.end_object(), ec); }

  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    text.append(s.data(), s.size());
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code& ec) {
    if (text.empty()) return check(b.add(rapidrpc::value(std::string(s.data(), s.size()))), ec);
    text.append(s.data(), s.size());
    bool ok = b.add(rapidrpc::value(text));
    text.clear();
    return check(ok, ec);
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    text.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    if (text.empty()) {
      b.key({s.data(), s.size()});
    } else {
      text.append(s.data(), s.size());
      b.key(text);
      text.clear();
    }
    return true;
  }

  bool on_number_part(json::string_view s, json::error_code&) {
    number.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, json::error_code& ec) {
    number.clear();
    return check(b.add_int64(i), ec);
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code& ec) {
    number.clear();
    return check(b.add_uint64(u), ec);
  }
  // basic_parser hands an integer beyond 64 bits over as a double: tell it
  // apart by its text (no fraction, no exponent).
  bool on_double(double d, json::string_view s, json::error_code& ec) {
    auto integral = [](std::string_view t) {
      return t.find_first_of(".eE") == std::string_view::npos;
    };
    bool is_integer = integral({s.data(), s.size()}) && integral(number);
    number.clear();
    if (is_integer) return check(b.fail("integer out of the 64-bit range"), ec);
    return check(b.add_double(d), ec);
  }
  bool on_bool(bool v, json::error_code& ec) { return check(b.add(rapidrpc::value(v)), ec); }
  bool on_null(json::error_code& ec) { return check(b.add(rapidrpc::value(rapidrpc::nil)), ec); }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

json::parse_options options() {
  json::parse_options o;
  o.max_depth = max_depth;  // basic_parser keeps its own stack: no recursion
  return o;
}

}  // namespace

struct boost_json_reader::impl {
  json::basic_parser<handler> parser{options()};

  [[noreturn]] void fail(const json::error_code& ec) {
    if (const char* why = parser.handler().b.error()) throw read_error(why);
    throw read_error(ec.message());
  }

  void start() {
    parser.reset();
    parser.handler().b.reset();
    parser.handler().text.clear();
    parser.handler().number.clear();
  }

  rapidrpc::value finish() {
    if (!parser.done()) throw read_error("incomplete JSON text");
    return parser.handler().b.take();
  }
};

boost_json_reader::boost_json_reader() : impl_(std::make_unique<impl>()) {}
boost_json_reader::~boost_json_reader() = default;

rapidrpc::value boost_json_reader::parse(std::string_view text) {
  impl_->start();
  json::error_code ec;
  std::size_t n = impl_->parser.write_some(false, text.data(), text.size(), ec);
  if (ec) impl_->fail(ec);
  if (n != text.size()) throw read_error("unexpected text after the JSON value");
  return impl_->finish();
}

rapidrpc::value boost_json_reader::parse_in_pieces(std::string_view text, std::size_t piece) {
  impl_->start();
  json::error_code ec;
  std::size_t at = 0;
  do {
    std::size_t len = std::min(piece, text.size() - at);
    bool more = at + len < text.size();
    std::size_t n = impl_->parser.write_some(more, text.data() + at, len, ec);
    if (ec) impl_->fail(ec);
    if (n != len) throw read_error("unexpected text after the JSON value");
    at += len;
  } while (at < text.size());
  return impl_->finish();
}

}  // namespace json_choice
