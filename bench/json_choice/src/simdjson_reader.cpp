#include "readers.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

namespace json_choice {

namespace ondemand = simdjson::ondemand;

namespace {

[[noreturn]] void fail(simdjson::error_code e) { throw read_error(simdjson::error_message(e)); }
[[noreturn]] void fail(const char* why) { throw read_error(why); }

template <class T>
T get(simdjson::simdjson_result<T>&& r) {
  T out{};
  if (auto e = std::move(r).get(out)) fail(e);
  return out;
}

rapidrpc::value from_number(ondemand::number n) {
  switch (n.get_number_type()) {
    case ondemand::number_type::signed_integer: {
      std::int64_t i = n.get_int64();
      if (i >= std::numeric_limits<std::int32_t>::min() &&
          i <= std::numeric_limits<std::int32_t>::max())
        return rapidrpc::value(static_cast<std::int32_t>(i));
      return rapidrpc::value(i);
    }
    case ondemand::number_type::unsigned_integer:
      fail("integer out of the 64-bit range");  // >= 2^63
    case ondemand::number_type::floating_point_number: {
      double d = n.get_double();
      if (!std::isfinite(d)) fail("number out of the double range");
      return rapidrpc::value(d);
    }
  }
  fail("unknown number type");
}

// V is ondemand::document (the root) or ondemand::value: both have the same
// accessors.
template <class V>
rapidrpc::value build(V& v, std::size_t depth) {
  switch (get(v.type())) {
    case ondemand::json_type::array: {
      if (depth >= max_depth) fail("nested too deeply");
      rapidrpc::array items;
      for (auto element : get(v.get_array())) {
        ondemand::value item = get(std::move(element));
        items.push_back(build(item, depth + 1));
      }
      return rapidrpc::value(std::move(items));
    }
    case ondemand::json_type::object: {
      if (depth >= max_depth) fail("nested too deeply");
      rapidrpc::structure members;
      for (auto member : get(v.get_object())) {
        ondemand::field f = get(std::move(member));
        std::string name(get(f.unescaped_key()));
        ondemand::value item = f.value();
        if (!members.emplace(std::move(name), build(item, depth + 1)).second)
          fail("repeated member name");
      }
      return rapidrpc::value(std::move(members));
    }
    case ondemand::json_type::number:
      return from_number(get(v.get_number()));
    case ondemand::json_type::string:
      return rapidrpc::value(get(v.get_string()));
    case ondemand::json_type::boolean:
      return rapidrpc::value(get(v.get_bool()));
    case ondemand::json_type::null:
      if (!get(v.is_null())) fail("invalid literal");
      return rapidrpc::value(rapidrpc::nil);
  }
  fail("unknown JSON type");
}

}  // namespace

simdjson_reader::simdjson_reader() {
  // The stage-1 limit on nesting; build() enforces max_depth itself.
  if (auto e = parser_.allocate(64 * 1024, max_depth + 1)) fail(e);
}

rapidrpc::value simdjson_reader::parse(simdjson::padded_string_view text) {
  ondemand::document doc = get(parser_.iterate(text));
  rapidrpc::value v = build(doc, 0);
  // simdjson 3.0 has no document::at_end(): past the last token,
  // current_location() answers OUT_OF_BOUNDS.
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS)
    fail("unexpected text after the JSON value");
  return v;
}

rapidrpc::value simdjson_reader::parse_in_place(const std::string& body) {
  if (body.capacity() - body.size() < simdjson::SIMDJSON_PADDING) return parse_copy(body);
  return parse(simdjson::padded_string_view(body.data(), body.size(), body.capacity()));
}

rapidrpc::value simdjson_reader::parse_copy(std::string_view text) {
  if (scratch_.capacity() < text.size() + simdjson::SIMDJSON_PADDING)
    scratch_.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  scratch_.assign(text.data(), text.size());
  return parse(simdjson::padded_string_view(scratch_.data(), scratch_.size(), scratch_.capacity()));
}

rapidrpc::value simdjson_reader::parse_padded_string(std::string_view text) {
  simdjson::padded_string padded(text);
  return parse(padded);
}

const char* simdjson_reader::active_implementation() {
  return simdjson::get_active_implementation()->name().data();
}

// The kernel On Demand was compiled with here (simdjson::builtin_implementation()
// would answer for the shared library's own build instead).
const char* simdjson_reader::builtin_implementation() {
#define JSON_CHOICE_STR2(x) #x
#define JSON_CHOICE_STR(x) JSON_CHOICE_STR2(x)
  return JSON_CHOICE_STR(SIMDJSON_BUILTIN_IMPLEMENTATION);
}

}  // namespace json_choice
