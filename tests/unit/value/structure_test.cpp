// rapidrpc::structure: members kept in the order inserted, found by name,
// each name once; large structs found through the index.
#include <rapidrpc/value.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace rapidrpc {
namespace {

std::vector<std::string> names(const structure& s) {
  std::vector<std::string> out;
  for (const auto& [name, v] : s) out.push_back(name);
  return out;
}

std::string name_of(std::size_t i) { return "member" + std::to_string(i); }

// 0, 1, ... n-1 under names inserted in a scrambled order.
structure scrambled(std::size_t n, std::vector<std::size_t>* order = nullptr) {
  structure s;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i =
        (k * 7919) % n;  // 7919 is prime: a permutation when n is not its multiple
    EXPECT_TRUE(s.try_emplace(name_of(i), static_cast<std::int32_t>(i)).second);
    if (order) order->push_back(i);
  }
  return s;
}

TEST(Structure, IteratesInInsertionOrder) {
  structure s;
  s.emplace("zeta", 1);
  s.try_emplace("alpha", 2);
  s["mid"] = 3;
  s.insert({"beta", 4});
  s.insert_or_assign("gamma", 5);
  EXPECT_EQ(names(s), (std::vector<std::string>{"zeta", "alpha", "mid", "beta", "gamma"}));
  EXPECT_EQ(names(structure{{"b", 1}, {"a", 2}, {"c", 3}}),
            (std::vector<std::string>{"b", "a", "c"}));
}

TEST(Structure, FindsByName) {
  const structure s{{"b", 1}, {"a", "x"}};
  ASSERT_NE(s.find("a"), s.end());
  EXPECT_EQ(s.find("a")->second, value("x"));
  EXPECT_EQ(s.find("c"), s.end());
  EXPECT_EQ(s.find(std::string("b"))->first, "b");
  EXPECT_TRUE(s.contains("b"));
  EXPECT_FALSE(s.contains("B"));
  EXPECT_EQ(s.count("a"), 1U);
  EXPECT_EQ(s.count(""), 0U);
  EXPECT_EQ(s.at("b"), value(1));
  EXPECT_THROW((void)s.at("missing"), std::out_of_range);
  EXPECT_EQ(s.size(), 2U);
  EXPECT_FALSE(s.empty());
  EXPECT_TRUE(structure{}.empty());
}

TEST(Structure, ANameIsThereOnceAndTheFirstInsertStays) {
  structure s;
  EXPECT_TRUE(s.emplace("k", 1).second);
  auto [it, inserted] = s.emplace("k", 2);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(it->second, value(1));
  EXPECT_FALSE(s.insert({"k", 3}).second);
  EXPECT_EQ(s.size(), 1U);
  EXPECT_EQ(s.at("k"), value(1));
  // A repeat in an initializer list is dropped, as std::map drops it.
  const structure t{{"a", 1}, {"b", 2}, {"a", 3}};
  EXPECT_EQ(names(t), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.at("a"), value(1));
}

TEST(Structure, TryEmplaceLeavesItsArgumentsAloneWhenTheNameIsThere) {
  structure s{{"k", 1}};
  std::string name = "k";
  value v = array{1, 2, 3};
  EXPECT_FALSE(s.try_emplace(std::move(name), std::move(v)).second);
  EXPECT_EQ(name, "k");                 // NOLINT(bugprone-use-after-move): guaranteed untouched
  EXPECT_EQ(v, value(array{1, 2, 3}));  // NOLINT(bugprone-use-after-move)
}

TEST(Structure, AssigningAnExistingNameKeepsItsPlace) {
  structure s{{"a", 1}, {"b", 2}, {"c", 3}};
  s["a"] = "first";
  EXPECT_FALSE(s.insert_or_assign("b", "second").second);
  EXPECT_EQ(names(s), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(s.at("a"), value("first"));
  EXPECT_EQ(s.at("b"), value("second"));
  EXPECT_EQ(s["new"], value(nil));  // operator[] appends nil
  EXPECT_EQ(names(s).back(), "new");
}

TEST(Structure, MembersCanBeChangedThroughIteration) {
  structure s{{"a", 1}, {"b", 2}};
  for (auto& [name, v] : s) v = value(name + "!");
  for (auto it = s.begin(); it != s.end(); ++it) it->second = value(it->first + "?");
  EXPECT_EQ(s.at("a"), value("a?"));
  EXPECT_EQ(s.at("b"), value("b?"));
}

TEST(Structure, EraseKeepsTheOrderOfTheRest) {
  structure s{{"d", 1}, {"c", 2}, {"b", 3}, {"a", 4}};
  EXPECT_EQ(s.erase("c"), 1U);
  EXPECT_EQ(s.erase("c"), 0U);
  auto next = s.erase(s.find("d"));
  EXPECT_EQ(next->first, "b");
  EXPECT_EQ(names(s), (std::vector<std::string>{"b", "a"}));
  EXPECT_FALSE(s.contains("d"));
  EXPECT_TRUE(s.contains("a"));
  s.clear();
  EXPECT_TRUE(s.empty());
  EXPECT_FALSE(s.contains("a"));
}

TEST(Structure, EqualityIgnoresOrderAndIterationShowsIt) {
  const structure a{{"x", 1}, {"y", structure{{"p", 1}, {"q", 2}}}};
  const structure b{{"y", structure{{"q", 2}, {"p", 1}}}, {"x", 1}};
  EXPECT_EQ(a, b);
  EXPECT_EQ(value(a), value(b));
  EXPECT_FALSE(std::ranges::equal(a, b));  // the order is there to see
  EXPECT_TRUE(std::ranges::equal(a, structure(a)));
  EXPECT_NE(a, (structure{{"x", 1}, {"y", structure{{"p", 1}, {"q", 3}}}}));
  EXPECT_NE(a, (structure{{"x", 1}, {"z", structure{{"p", 1}, {"q", 2}}}}));
  EXPECT_NE(a, (structure{{"x", 1}}));
  EXPECT_NE((structure{{"x", 1}}), (structure{{"x", std::int64_t{1}}}));
}

TEST(Structure, BuildsFromAMapAndOtherRanges) {
  const std::map<std::string, value> m{{"b", 2}, {"a", 1}};
  const structure s(m.begin(), m.end());
  EXPECT_EQ(names(s), (std::vector<std::string>{"a", "b"}));  // the map's order
  structure t;
  t.insert(m.begin(), m.end());
  EXPECT_EQ(s, t);
}

// Sizes around the point where lookup changes from a scan to the index, and
// well past it: every member is found where it was put, in order, each name
// once, and removals leave the index right.
TEST(Structure, LargeStructsKeepOrderAndFindEveryMember) {
  for (std::size_t n : {1U, 2U, 15U, 16U, 17U, 31U, 32U, 33U, 100U, 1000U, 3000U}) {
    std::vector<std::size_t> order;
    structure s = scrambled(n, &order);
    ASSERT_EQ(s.size(), n);
    std::size_t k = 0;
    for (const auto& [name, v] : s) {
      ASSERT_EQ(name, name_of(order[k])) << n;
      ASSERT_EQ(v, value(static_cast<std::int32_t>(order[k]))) << n;
      ++k;
    }
    for (std::size_t i = 0; i < n; ++i) {
      auto it = s.find(name_of(i));
      ASSERT_NE(it, s.end()) << n << " " << i;
      ASSERT_EQ(it->second, value(static_cast<std::int32_t>(i)));
      ASSERT_FALSE(s.try_emplace(name_of(i), 0).second);
    }
    EXPECT_FALSE(s.contains(name_of(n)));
    EXPECT_FALSE(s.contains(""));
    EXPECT_EQ(s.size(), n);

    // Copies and moves find what the original found.
    structure copy = s;
    structure moved = std::move(copy);
    EXPECT_EQ(moved, s);
    EXPECT_TRUE(std::ranges::equal(moved, s));
    ASSERT_TRUE(moved.contains(name_of(n / 2)));

    // Remove every other member (in insertion order), down through the scan size.
    for (std::size_t j = 0; j < order.size(); j += 2) ASSERT_EQ(s.erase(name_of(order[j])), 1U);
    ASSERT_EQ(s.size(), n / 2);
    for (std::size_t j = 0; j < order.size(); ++j)
      ASSERT_EQ(s.contains(name_of(order[j])), j % 2 == 1) << n << " " << j;
    k = 1;
    for (const auto& [name, v] : s) {
      ASSERT_EQ(name, name_of(order[k]));
      k += 2;
    }
    // And they can come back, at the end.
    ASSERT_TRUE(s.try_emplace(name_of(order[0]), -1).second);
    EXPECT_EQ(s.rbegin()->first, name_of(order[0]));
    EXPECT_EQ(s.at(name_of(order[0])), value(-1));
  }
}

TEST(Structure, EqualityOfLargeStructsInAnotherOrder) {
  const structure a = scrambled(5000);
  structure b;
  for (std::size_t i = 0; i < 5000; ++i) b.emplace(name_of(i), static_cast<std::int32_t>(i));
  EXPECT_EQ(a, b);
  b.at(name_of(4999)) = value(0);
  EXPECT_NE(a, b);
}

// A request may carry a struct of hundreds of thousands of members (the
// element limit is a million): inserting and finding them must stay linear.
// A quadratic scan of 200,000 names would take on the order of 10^10
// comparisons, minutes; the bound is CPU time, not wall time.
TEST(Structure, ManyMembersTakeLinearTime) {
  constexpr std::size_t n = 200000;
  const std::clock_t start = std::clock();
  structure s;
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(s.try_emplace(name_of(i), nil).second);
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(s.contains(name_of(i)));
  const double seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_LT(seconds, 5.0) << "200,000 inserts and lookups";
}

}  // namespace
}  // namespace rapidrpc
