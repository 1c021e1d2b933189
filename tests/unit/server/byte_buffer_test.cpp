// A connection's input buffer and its loop's block pool (no socket).
#include "server/byte_buffer.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <string_view>

namespace rapidrpc::detail {
namespace {

void put(byte_buffer& b, std::string_view text) {
  std::memcpy(b.prepare(text.size()), text.data(), text.size());
  b.commit(text.size());
}

TEST(ByteBuffer, AnIdleBufferGivesItsBlockBackForTheNextConnection) {
  block_pool pool;
  byte_buffer first(&pool);
  EXPECT_EQ(first.capacity(), 0u);  // nothing is held before the first read
  put(first, "POST / HTTP/1.1\r\n");
  EXPECT_EQ(first.capacity(), block_pool::block_bytes);
  EXPECT_EQ(pool.mapped(), 1u);

  first.shrink(0);  // not empty: kept
  EXPECT_EQ(first.capacity(), block_pool::block_bytes);
  first.consume(first.size());
  first.shrink(0);
  EXPECT_EQ(first.capacity(), 0u);
  EXPECT_EQ(pool.kept(), 1u);

  byte_buffer second(&pool);
  put(second, "x");
  EXPECT_EQ(pool.mapped(), 1u) << "the block given back is taken again";
  EXPECT_EQ(pool.kept(), 0u);

  put(first, "after");  // a released buffer reads again
  EXPECT_EQ(std::string_view(first.data(), first.size()), "after");
  EXPECT_EQ(pool.mapped(), 2u);
}

TEST(ByteBuffer, GrowingPastABlockKeepsTheBytesAndGivesTheBlockBack) {
  block_pool pool;
  byte_buffer b(&pool);
  put(b, "head:");
  std::string big(block_pool::block_bytes, 'x');
  put(b, big);
  EXPECT_GT(b.capacity(), block_pool::block_bytes);
  EXPECT_EQ(std::string_view(b.data(), b.size()), "head:" + big);
  EXPECT_EQ(pool.kept(), 1u);
  b.consume(b.size());
  b.shrink(0);
  EXPECT_EQ(b.capacity(), 0u);
}

TEST(ByteBuffer, ThePoolUnmapsBlocksBeyondWhatItKeeps) {
  block_pool pool(1);
  {
    byte_buffer a(&pool);
    byte_buffer b(&pool);
    put(a, "a");
    put(b, "b");
    EXPECT_EQ(pool.mapped(), 2u);
  }  // both destroyed: one is kept, one unmapped
  EXPECT_EQ(pool.kept(), 1u);
  EXPECT_EQ(pool.mapped(), 1u);
}

TEST(ByteBuffer, WithoutAPoolItUsesTheHeap) {
  byte_buffer b;
  put(b, "abc");
  EXPECT_GE(b.capacity(), 3u);
  b.consume(3);
  b.shrink(0);
  EXPECT_EQ(b.capacity(), 0u);
}

}  // namespace
}  // namespace rapidrpc::detail
