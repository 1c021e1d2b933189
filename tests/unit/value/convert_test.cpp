#include <rapidrpc/convert.hpp>

#include <gtest/gtest.h>
#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace test_types {

struct point {
  std::int32_t x = 0;
  std::int32_t y = 0;
  friend bool operator==(const point&, const point&) = default;
};
BOOST_DESCRIBE_STRUCT(point, (), (x, y))

enum class colour { red, green };
BOOST_DESCRIBE_ENUM(colour, red, green)

struct shape {
  std::string name;
  std::vector<point> corners;
  std::optional<colour> fill;
  std::map<std::string, double> tags;
  friend bool operator==(const shape&, const shape&) = default;
};
BOOST_DESCRIBE_STRUCT(shape, (), (name, corners, fill, tags))

// A described base's members are its derived struct's too.
struct labelled_point : point {
  std::string label;
  friend bool operator==(const labelled_point&, const labelled_point&) = default;
};
BOOST_DESCRIBE_STRUCT(labelled_point, (point), (label))

// A type within itself, twice over: a binary tree.
struct tree {
  std::int32_t value = 0;
  std::vector<tree> left;
  std::vector<tree> right;
  friend bool operator==(const tree&, const tree&) = default;
};
BOOST_DESCRIBE_STRUCT(tree, (), (value, left, right))

}  // namespace test_types

namespace rapidrpc {
namespace {

using test_types::colour;
using test_types::labelled_point;
using test_types::point;
using test_types::shape;

// What converting `v` to T throws: its message.
template <class T>
std::string refusal(const value& v, const value_path& at = value_path::parameter(0)) {
  try {
    from_value<T>(v, at);
  } catch (const fault& f) {
    EXPECT_EQ(f.code(), fault_code::invalid_params);
    return f.message();
  }
  ADD_FAILURE() << "converted";
  return {};
}

// x written as a value and read back: equal to x, from a copy and moved.
template <class T>
void round_trips(const T& x, const value& expected) {
  value v = to_value(x);
  EXPECT_EQ(v, expected);
  EXPECT_EQ(from_value<T>(v), x);
  EXPECT_EQ(from_value<T>(std::move(v)), x);
}

TEST(Convert, ScalarsAreTheirKinds) {
  round_trips(std::int32_t{7}, value(7));
  round_trips(std::int64_t{1} << 40, value(std::int64_t{1} << 40));
  round_trips(true, value(true));
  round_trips(0.5, value(0.5));
  round_trips(std::string("text"), value("text"));
  round_trips(bytes(std::string_view("\x00\xff", 2)),
              value(bytes(std::string_view("\x00\xff", 2))));
  round_trips(value(array{1, "a"}), value(array{1, "a"}));
  EXPECT_EQ(from_value<std::int64_t>(value(5)), 5);  // an int widens
  EXPECT_EQ(from_value<double>(value(5)), 5.0);
  EXPECT_EQ(refusal<std::int32_t>(value(std::int64_t{5})), "parameter 1: expected int, got i8");
  EXPECT_EQ(refusal<std::int32_t>(value(1.5)), "parameter 1: expected int, got double");
}

TEST(Convert, ContainersAreArraysAndStructs) {
  round_trips(std::vector<std::int32_t>{1, 2, 3}, value(array{1, 2, 3}));
  round_trips(std::vector<std::string>{}, value(array{}));
  round_trips(std::array<double, 2>{0.5, 1.5}, value(array{0.5, 1.5}));
  round_trips(std::tuple<std::int32_t, std::string, bool>{1, "a", true},
              value(array{1, "a", true}));
  round_trips(std::pair<std::string, std::int32_t>{"a", 1}, value(array{"a", 1}));
  round_trips(std::map<std::string, std::int32_t>{{"a", 1}, {"b", 2}},
              value(structure{{"a", 1}, {"b", 2}}));
  round_trips(std::unordered_map<std::string, std::vector<bool>>{{"a", {true}}},
              value(structure{{"a", array{true}}}));
  round_trips(std::vector<std::vector<std::int32_t>>{{1}, {}, {2, 3}},
              value(array{array{1}, array{}, array{2, 3}}));
}

TEST(Convert, ByteVectorsAreBase64) {
  round_trips(std::vector<std::uint8_t>{0, 255}, value(bytes(std::vector<std::uint8_t>{0, 255})));
  round_trips(std::vector<std::byte>{std::byte{1}, std::byte{2}}, value(bytes("\x01\x02")));
  EXPECT_EQ(refusal<std::vector<std::uint8_t>>(value(array{1})),
            "parameter 1: expected base64, got array");
}

TEST(Convert, AnOptionalIsItsValueOrNil) {
  round_trips(std::optional<std::int32_t>{3}, value(3));
  round_trips(std::optional<std::int32_t>{}, value());
  EXPECT_EQ(refusal<std::optional<std::int32_t>>(value("3")),
            "parameter 1: expected int, got string");
}

TEST(Convert, ATimePointIsADateTimeInUtcToTheMicrosecond) {
  using namespace std::chrono;
  const system_clock::time_point t = sys_days{2026y / December / 4} + 13h + 5min + 9s + 250us;
  const date_time d{2026, 12, 4, 13, 5, 9, 250};
  round_trips(t, value(d));
  // Finer than a microsecond is cut.
  EXPECT_EQ(to_value(t + 999ns), value(d));
  round_trips(system_clock::time_point{}, value(date_time{}));  // 1970-01-01T00:00:00
  EXPECT_EQ(refusal<system_clock::time_point>(value(date_time{1600, 1, 1})),
            "parameter 1: a date this clock cannot hold (1677 to 2262)");
  EXPECT_EQ(refusal<system_clock::time_point>(value(date_time{2026, 2, 30})),
            "parameter 1: not a date of the calendar");
  EXPECT_EQ(refusal<system_clock::time_point>(value("2026")),
            "parameter 1: expected dateTime.iso8601, got string");
}

TEST(Convert, ADescribedStructIsAStructOfItsMembers) {
  round_trips(point{1, 2}, value(structure{{"x", 1}, {"y", 2}}));
  const shape s{"tri", {{0, 0}, {1, 0}, {0, 1}}, colour::green, {{"area", 0.5}}};
  const value v =
      structure{{"name", "tri"},
                {"corners", array{structure{{"x", 0}, {"y", 0}}, structure{{"x", 1}, {"y", 0}},
                                  structure{{"x", 0}, {"y", 1}}}},
                {"fill", "green"},
                {"tags", structure{{"area", 0.5}}}};
  round_trips(s, v);
  // Members in declaration order, as written.
  std::vector<std::string> names;
  const value written = to_value(s);
  for (const auto& [name, member] : written.as<structure>()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"name", "corners", "fill", "tags"}));
  round_trips(labelled_point{{1, 2}, "p"}, value(structure{{"x", 1}, {"y", 2}, {"label", "p"}}));
}

TEST(Convert, AnEmptyOptionalMemberIsLeftOutAndMayBeMissing) {
  const shape s{"empty", {}, std::nullopt, {}};
  const value v = structure{{"name", "empty"}, {"corners", array{}}, {"tags", structure{}}};
  round_trips(s, v);
  structure with_nil = v.as<structure>();
  with_nil.try_emplace("fill", nil);
  EXPECT_EQ(from_value<shape>(value(with_nil)), s);
}

TEST(Convert, MembersItDoesNotDescribeAreIgnored) {
  EXPECT_EQ(from_value<point>(value(structure{{"x", 1}, {"y", 2}, {"z", 3}})), (point{1, 2}));
}

TEST(Convert, AFaultNamesWhereTheValueDoesNotFit) {
  EXPECT_EQ(refusal<point>(value(structure{{"x", 1}})), "parameter 1: member \"y\" is missing");
  EXPECT_EQ(refusal<point>(value(structure{{"x", 1}, {"y", "2"}})),
            "parameter 1, member \"y\": expected int, got string");
  EXPECT_EQ(refusal<point>(value(array{1, 2})), "parameter 1: expected struct, got array");
  const value corners =
      structure{{"name", "tri"},
                {"corners", array{structure{{"x", 0}, {"y", 0}}, structure{{"x", 1}, {"y", 0.5}}}},
                {"tags", structure{}}};
  EXPECT_EQ(refusal<shape>(corners, value_path::parameter(2)),
            "parameter 3, member \"corners\", element 1, member \"y\": expected int, got double");
  EXPECT_EQ(refusal<std::vector<std::int32_t>>(value(array{1, 2, "3"}), value_path::result()),
            "the result, element 2: expected int, got string");
  EXPECT_EQ((refusal<std::map<std::string, std::int32_t>>(value(structure{{"a", true}}))),
            "parameter 1, member \"a\": expected int, got boolean");
}

TEST(Convert, AFixedSizeArrayTakesExactlyItsElements) {
  EXPECT_EQ((refusal<std::array<std::int32_t, 2>>(value(array{1, 2, 3}))),
            "parameter 1: expected an array of 2 elements, got 3");
  EXPECT_EQ(refusal<std::tuple<std::int32_t>>(value(array{})),
            "parameter 1: expected an array of 1 element, got 0");
  EXPECT_EQ((refusal<std::pair<std::int32_t, std::int32_t>>(value(array{1, 2, 3}))),
            "parameter 1: expected an array of 2 elements, got 3");
  EXPECT_EQ((refusal<std::tuple<std::int32_t, std::string>>(value(array{1, 2}))),
            "parameter 1, element 1: expected string, got int");
}

TEST(Convert, ADescribedEnumIsItsEnumeratorsName) {
  round_trips(colour::red, value("red"));
  EXPECT_EQ(refusal<colour>(value("blue")),
            "parameter 1: expected one of red, green; got \"blue\"");
  // What is not the name is not echoed: a fault message is text.
  EXPECT_EQ(refusal<colour>(value(std::string("red\0x", 5))),
            "parameter 1: expected one of red, green; got another string");
  EXPECT_EQ(refusal<colour>(value(std::string(65, 'r'))),
            "parameter 1: expected one of red, green; got another string");
  EXPECT_EQ(refusal<colour>(value(0)), "parameter 1: expected string, got int");
  EXPECT_THROW(to_value(static_cast<colour>(7)), std::invalid_argument);
}

TEST(Convert, ALongMemberNameIsCutInTheMessage) {
  const std::string name(100, 'n');
  EXPECT_EQ((refusal<std::map<std::string, std::int32_t>>(value(structure{{name, "x"}}))),
            "parameter 1, member \"" + std::string(64, 'n') + "...\": expected int, got string");
}

TEST(Convert, AMemberNameIsCutBetweenCharactersNotInsideOne) {
  // 63 ASCII bytes, then a 2-byte character across the 64-byte cut.
  const std::string name = std::string(63, 'n') + "\xc3\xa9" + "tail";
  EXPECT_EQ((refusal<std::map<std::string, std::int32_t>>(value(structure{{name, "x"}}))),
            "parameter 1, member \"" + std::string(63, 'n') + "...\": expected int, got string");
}

TEST(Convert, APathDeeperThanSixtyFourShowsItsNearestSixtyFour) {
  std::vector<value_path> frames{value_path::parameter(0)};
  frames.reserve(100);
  for (std::size_t i = 0; i < 99; ++i) frames.push_back(frames.back().element(i % 10));
  const std::string text = frames.back().to_string();
  EXPECT_EQ(text.rfind("..., element ", 0), 0U) << text;
  EXPECT_EQ(text.find("parameter"), std::string::npos) << text;
  EXPECT_EQ(frames[1].to_string(), "parameter 1, element 0");
}

TEST(Convert, MovingTakesTheStringsAndBytesWithoutCopying) {
  value v = array{std::string(1000, 'a')};
  const char* before = v.as<array>()[0].as<std::string>().data();
  auto out = from_value<std::vector<std::string>>(std::move(v));
  EXPECT_EQ(out[0].data(), before);
}

TEST(Convert, ATypeWithinItselfConvertsAndItsSchemaIsMadeOnce) {
  using test_types::tree;
  const tree t{1, {tree{2, {}, {}}}, {tree{3, {tree{4, {}, {}}}, {}}}};
  round_trips(t, to_value(t));
  EXPECT_EQ(from_value<tree>(to_value(t)).right[0].left[0].value, 4);
  // Within itself a tree is any value ({}): the schema is one level deep.
  const value any = structure{};
  const value children = structure{{"type", "array"}, {"items", any}};
  EXPECT_EQ(detail::schema_of<tree>(),
            value(structure{{"type", "object"},
                            {"properties", structure{{"value", kind_schema(kind::i4)},
                                                     {"left", children},
                                                     {"right", children}}},
                            {"required", array{"value", "left", "right"}}}));
}

TEST(Convert, SignatureNames) {
  EXPECT_EQ(convert<std::vector<point>>::name(), "array");
  EXPECT_EQ(convert<std::tuple<std::int32_t>>::name(), "array");
  EXPECT_EQ(convert<point>::name(), "struct");
  EXPECT_EQ((convert<std::map<std::string, std::int32_t>>::name()), "struct");
  EXPECT_EQ(convert<std::optional<std::int32_t>>::name(), "int");
  EXPECT_EQ(convert<std::chrono::system_clock::time_point>::name(), "dateTime.iso8601");
  EXPECT_EQ(convert<std::vector<std::uint8_t>>::name(), "base64");
  EXPECT_EQ(convert<colour>::name(), "string");
  EXPECT_EQ(convert<value>::name(), "any");
}

}  // namespace
}  // namespace rapidrpc
