#include <rapidrpc/convert.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

namespace rapidrpc {

std::string value_path::to_string() const {
  // The frames run from here up to the root: gathered, then written from
  // the root down.
  const value_path* frames[64];
  std::size_t n = 0;
  const value_path* p = this;
  for (; p != nullptr && n < std::size(frames); p = p->up_) frames[n++] = p;
  std::string out = p != nullptr ? "..." : "";  // deeper than 64: the nearest 64
  while (n > 0) {
    const value_path& f = *frames[--n];
    if (!out.empty()) out += ", ";
    switch (f.step_) {
      case step::parameter:
        out += "parameter " + std::to_string(f.index_ + 1);
        break;
      case step::result:
        out += "the result";
        break;
      case step::element:
        out += "element " + std::to_string(f.index_);
        break;
      case step::member: {
        // Cut at 64 bytes, not inside a UTF-8 sequence: the message must
        // stay text a writer accepts.
        std::size_t cut = std::min<std::size_t>(f.name_.size(), 64);
        if (cut < f.name_.size())
          while (cut > 0 && (static_cast<unsigned char>(f.name_[cut]) & 0xc0) == 0x80) --cut;
        out += "member \"";
        out += f.name_.substr(0, cut);
        if (cut < f.name_.size()) out += "...";
        out += '"';
        break;
      }
    }
  }
  return out;
}

void value_path::mismatch(std::string_view expected, const value& got) const {
  fail("expected " + std::string(expected) + ", got " + std::string(kind_name(got.type())));
}

void value_path::fail(std::string_view what) const {
  throw fault(fault_code::invalid_params, to_string() + ": " + std::string(what));
}

// ---- schemas -----------------------------------------------------------------

value kind_schema(kind k) {
  // base64 and dateTime as JSON-RPC carries them (docs/jsonrpc.md).
  auto tagged = [](const char* tag, structure text) {
    return structure{{"type", "object"},
                     {"properties", structure{{tag, std::move(text)}}},
                     {"required", array{tag}},
                     {"additionalProperties", false}};
  };
  switch (k) {
    case kind::nil:
      return structure{{"type", "null"}};
    case kind::i4:
      return structure{{"type", "integer"},
                       {"minimum", std::numeric_limits<std::int32_t>::min()},
                       {"maximum", std::numeric_limits<std::int32_t>::max()}};
    case kind::i8:
      return structure{{"type", "integer"},
                       {"minimum", std::numeric_limits<std::int64_t>::min()},
                       {"maximum", std::numeric_limits<std::int64_t>::max()}};
    case kind::boolean:
      return structure{{"type", "boolean"}};
    case kind::floating:
      return structure{{"type", "number"}};
    case kind::string:
      return structure{{"type", "string"}};
    case kind::date_time:
      return tagged("$datetime", structure{{"type", "string"}, {"format", "date-time"}});
    case kind::binary:
      return tagged("$base64", structure{{"type", "string"}, {"contentEncoding", "base64"}});
    case kind::array:
      return structure{{"type", "array"}};
    case kind::structure:
      return structure{{"type", "object"}};
  }
  return structure{};
}

value schema_of_type_name(std::string_view name) {
  for (auto k : {kind::nil, kind::i4, kind::i8, kind::boolean, kind::floating, kind::string,
                 kind::date_time, kind::binary, kind::array, kind::structure})
    if (kind_name(k) == name) return kind_schema(k);
  return structure{};  // "any", or a name of a type of one's own
}

namespace detail {

value tuple_schema(array elements) {
  const auto n = static_cast<std::int64_t>(elements.size());
  return structure{{"type", "array"},
                   {"items", std::move(elements)},
                   {"minItems", n},
                   {"maxItems", n},
                   {"additionalItems", false}};
}

}  // namespace detail

// ---- time points -------------------------------------------------------------

namespace {

using std::chrono::system_clock;
namespace chr = std::chrono;

}  // namespace

system_clock::time_point convert<system_clock::time_point>::from(const value& v,
                                                                 const value_path& at) {
  const auto* t = v.get_if<date_time>();
  if (t == nullptr) at.mismatch(name(), v);
  // system_clock counts nanoseconds in 64 bits: from 1677-09-21 to 2262-04-11.
  constexpr chr::sys_days first =
      chr::floor<chr::days>(system_clock::time_point::min()) + chr::days(1);
  constexpr chr::sys_days last =
      chr::floor<chr::days>(system_clock::time_point::max()) - chr::days(1);
  const chr::year_month_day date{chr::year(t->year), chr::month(t->month), chr::day(t->day)};
  if (!date.ok()) at.fail("not a date of the calendar");
  const chr::sys_days day{date};
  if (day < first || day > last) at.fail("a date this clock cannot hold (1677 to 2262)");
  return day + chr::hours(t->hour) + chr::minutes(t->minute) + chr::seconds(t->second) +
         chr::microseconds(t->microsecond);
}

value convert<system_clock::time_point>::to(system_clock::time_point x) {
  const auto us = chr::floor<chr::microseconds>(x);
  const auto day = chr::floor<chr::days>(us);
  const chr::year_month_day date{day};
  const chr::hh_mm_ss<chr::microseconds> time{us - day};
  date_time t;
  t.year = static_cast<std::int16_t>(static_cast<int>(date.year()));
  t.month = static_cast<std::uint8_t>(static_cast<unsigned>(date.month()));
  t.day = static_cast<std::uint8_t>(static_cast<unsigned>(date.day()));
  t.hour = static_cast<std::uint8_t>(time.hours().count());
  t.minute = static_cast<std::uint8_t>(time.minutes().count());
  t.second = static_cast<std::uint8_t>(time.seconds().count());
  t.microsecond = static_cast<std::uint32_t>(time.subseconds().count());
  return t;
}

}  // namespace rapidrpc
