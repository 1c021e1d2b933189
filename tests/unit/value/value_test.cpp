#include <rapidrpc/value.hpp>

#include <gtest/gtest.h>

namespace rapidrpc {
namespace {

TEST(Value, DefaultIsNil) {
  value v;
  EXPECT_EQ(v.type(), kind::nil);
  EXPECT_TRUE(v.is<nil_t>());
}

TEST(Value, ConstructorsPickTheMatchingKind) {
  EXPECT_EQ(value(3).type(), kind::i4);
  EXPECT_EQ(value(std::int64_t{3}).type(), kind::i8);
  EXPECT_EQ(value(true).type(), kind::boolean);
  EXPECT_EQ(value(2.5).type(), kind::floating);
  EXPECT_EQ(value("x").type(), kind::string);
  EXPECT_EQ(value(std::string_view("x")).type(), kind::string);
  EXPECT_EQ(value(date_time{}).type(), kind::date_time);
  EXPECT_EQ(value(bytes("ab")).type(), kind::binary);
  EXPECT_EQ(value(array{}).type(), kind::array);
  EXPECT_EQ(value(structure{}).type(), kind::structure);
}

TEST(Value, KindNamesAreTheProtocolNames) {
  EXPECT_EQ(kind_name(kind::i4), "int");
  EXPECT_EQ(kind_name(kind::date_time), "dateTime.iso8601");
  EXPECT_EQ(kind_name(kind::binary), "base64");
  EXPECT_EQ(kind_name(kind::structure), "struct");
}

TEST(Value, EqualityIsDeep) {
  value a = structure{{"x", array{1, "two", nil}}};
  value b = structure{{"x", array{1, "two", nil}}};
  value c = structure{{"x", array{1, "two", 3}}};
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(value(1), value(std::int64_t{1}));  // i4 and i8 are distinct kinds
}

TEST(Value, DebugStringEscapesControlCharacters) {
  value v = array{"a\"b\n", 1, std::int64_t{2}, true};
  EXPECT_EQ(to_debug_string(v), R"(["a\"b\x0a", 1, 2L, true])");
}

}  // namespace
}  // namespace rapidrpc
