#include "readers.hpp"
#include "sax_builder.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <cstring>

namespace json_choice {

namespace {

// RapidJSON 1.1 turns a lone low surrogate escape ("\udc00") into the bytes
// ED B0 80, which are not UTF-8. With kParseValidateEncodingFlag raw input
// never holds ED A0..BF, so finding that pair in a decoded string means an
// escape produced a surrogate: reject it (a memchr per string).
bool has_surrogate(const char* s, std::size_t n) {
  const char* end = s + n;
  while (const void* hit = std::memchr(s, '\xED', static_cast<std::size_t>(end - s))) {
    const char* p = static_cast<const char*>(hit);
    if (p + 1 < end && static_cast<unsigned char>(p[1]) >= 0xA0) return true;
    s = p + 1;
  }
  return false;
}

// The SAX handler: every event goes to the shared builder; returning false
// stops the parse (kParseErrorTermination) and the builder holds the reason.
template <bool NumbersAsText>
struct handler {
  using Ch = char;
  sax_builder& b;

  bool Null() { return b.add(rapidrpc::value(rapidrpc::nil)); }
  bool Bool(bool v) { return b.add(rapidrpc::value(v)); }
  bool Int(int i) { return b.add_int64(i); }
  bool Uint(unsigned u) { return b.add_int64(u); }
  bool Int64(std::int64_t i) { return b.add_int64(i); }
  bool Uint64(std::uint64_t u) { return b.add_uint64(u); }
  bool Double(double d) { return b.add_double(d); }
  bool RawNumber(const Ch* s, rapidjson::SizeType n, bool) { return b.add_number_text({s, n}); }
  bool String(const Ch* s, rapidjson::SizeType n, bool) {
    if (has_surrogate(s, n)) return b.fail("lone surrogate escape");
    return b.add(rapidrpc::value(std::string(s, n)));
  }
  bool StartObject() { return b.begin_object(); }
  bool Key(const Ch* s, rapidjson::SizeType n, bool) {
    if (has_surrogate(s, n)) return b.fail("lone surrogate escape");
    b.key({s, n});
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return b.end_object(); }
  bool StartArray() { return b.begin_array(); }
  bool EndArray(rapidjson::SizeType) { return b.end_array(); }
};

}  // namespace

struct rapidjson_reader::impl {
  rapidjson::Reader reader;  // keeps its internal stack between parses
  sax_builder builder;

  template <unsigned Flags, bool NumbersAsText>
  rapidrpc::value run(std::string_view text) {
    builder.reset();
    // MemoryStream: reads exactly text.size() bytes, no terminator needed; it
    // answers '\0' at the end, which RapidJSON takes as end of input, so a NUL
    // byte in the text also looks like the end: check that all was read.
    rapidjson::MemoryStream in(text.data(), text.size());
    handler<NumbersAsText> h{builder};
    rapidjson::ParseResult r = reader.Parse<Flags>(in, h);
    if (!r) {
      if (r.Code() == rapidjson::kParseErrorTermination && builder.error())
        throw read_error(builder.error());
      throw read_error(std::string(rapidjson::GetParseError_En(r.Code())) + " at offset " +
                       std::to_string(r.Offset()));
    }
    if (in.Tell() != text.size()) throw read_error("unexpected text after the JSON value");
    return builder.take();
  }
};

rapidjson_reader::rapidjson_reader() : impl_(std::make_unique<impl>()) {}
rapidjson_reader::~rapidjson_reader() = default;

rapidrpc::value rapidjson_reader::parse(std::string_view text) {
  return impl_
      ->run<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseNumbersAsStringsFlag, true>(
          text);
}

rapidrpc::value rapidjson_reader::parse_native_numbers(std::string_view text) {
  return impl_
      ->run<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag, false>(
          text);
}

}  // namespace json_choice
