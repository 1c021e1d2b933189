// When a loop's heap trimmer trims (src/memory/heap.hpp); nothing is trimmed.
#include "memory/heap.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

namespace rapidrpc::detail {
namespace {

using clock = heap_trimmer::clock;

TEST(HeapTrimmer, ALargeBufferFreedOnOneLoopKeepsTheHeapFromAnotherLoopsTrim) {
  // Two loops share the process's one heap: the loop whose connections
  // parked would otherwise trim 50 ms later, taking back the pages the
  // other loop keeps for its next large request.
  boost::asio::io_context a_io;
  boost::asio::io_context b_io;
  heap_trimmer a(a_io);
  heap_trimmer b(b_io);
  const auto before = clock::now();
  a.large_freed();
  b.idle_freed();
  EXPECT_GE(b.trim_at(), before + heap_trimmer::after_large);
  EXPECT_GE(a.trim_at(), before + heap_trimmer::after_large);
}

TEST(HeapTrimmer, IdleMemoryFreedAfterALargeBufferDoesNotShortenItsKeep) {
  boost::asio::io_context io;
  heap_trimmer t(io);
  const auto before = clock::now();
  t.large_freed();
  t.idle_freed();
  EXPECT_GE(t.trim_at(), before + heap_trimmer::after_large);
  EXPECT_LE(t.trim_at(), clock::now() + heap_trimmer::after_large);
}

}  // namespace
}  // namespace rapidrpc::detail
