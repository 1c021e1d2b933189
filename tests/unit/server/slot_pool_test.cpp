// The slots a loop's connections keep their serving state in (no socket).
#include "server/slot_pool.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace rapidrpc::detail {
namespace {

constexpr std::size_t object_bytes = 760;  // about a connection's serving state

TEST(SlotPool, SlotsAreDistinctAlignedAndWhole) {
  slot_pool pool(object_bytes);
  std::vector<char*> taken;
  std::set<char*> seen;
  for (int i = 0; i < 1000; ++i) {
    auto* p = static_cast<char*>(pool.take());
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t), 0u);
    std::memset(p, i & 0xff, object_bytes);
    EXPECT_TRUE(seen.insert(p).second) << "a slot taken twice";
    taken.push_back(p);
  }
  for (int i = 0; i < 1000; ++i)
    for (std::size_t b = 0; b < object_bytes; b += 97)
      ASSERT_EQ(static_cast<unsigned char>(taken[i][b]), i & 0xff) << "slots overlap";
  for (char* p : taken) pool.give(p);
}

TEST(SlotPool, WhatABurstTookGoesBackButOneSlab) {
  slot_pool pool(object_bytes);
  std::vector<void*> burst;
  for (int i = 0; i < 2000; ++i) burst.push_back(pool.take());
  const std::size_t per_slab = slot_pool::slab_bytes / (object_bytes + 16);
  EXPECT_GE(pool.mapped(), 2000 / per_slab);
  // The connections that stay keep one slot each, scattered over the slabs.
  std::vector<void*> staying;
  for (std::size_t i = 0; i < burst.size(); ++i) {
    if (i % 500 == 0)
      staying.push_back(burst[i]);
    else
      pool.give(burst[i]);
  }
  EXPECT_EQ(pool.mapped(), staying.size() + 1) << "a slab with no slot taken is kept: one";
  for (void* p : staying) pool.give(p);
  EXPECT_EQ(pool.mapped(), 1u);
  // Taken and given back again and again: no slab is mapped anew.
  for (int i = 0; i < 10000; ++i) pool.give(pool.take());
  EXPECT_EQ(pool.mapped(), 1u);
}

TEST(SlotPool, AFullSlabTakesSlotsAgainOnceOneIsGivenBack) {
  slot_pool pool(object_bytes);
  std::vector<void*> taken;
  while (pool.mapped() < 2) taken.push_back(pool.take());
  void* second_slab = taken.back();
  taken.pop_back();
  pool.give(second_slab);  // the second slab is empty again: kept
  EXPECT_EQ(pool.mapped(), 2u);
  pool.give(taken.front());  // the first is open again
  void* again = pool.take();
  EXPECT_TRUE(again == taken.front() || again == second_slab);
  EXPECT_EQ(pool.mapped(), 2u);
  pool.give(again);
  for (std::size_t i = 1; i < taken.size(); ++i) pool.give(taken[i]);
  EXPECT_EQ(pool.mapped(), 1u);
}

}  // namespace
}  // namespace rapidrpc::detail
