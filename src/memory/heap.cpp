#include "memory/heap.hpp"

#include <malloc.h>
#include <algorithm>
#include <atomic>

namespace rapidrpc::detail {

// Under a sanitizer malloc is the sanitizer's, and glibc's heap is not in
// use: trimming it from a loop thread would set up glibc's malloc there
// first, as if that thread were the main one (glibc then aborts at thread
// exit: "a->attached_threads > 0").
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RAPIDRPC_SANITIZED_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define RAPIDRPC_SANITIZED_MALLOC 1
#endif
#endif

void trim_heap() noexcept {
#if defined(__GLIBC__) && !defined(RAPIDRPC_SANITIZED_MALLOC)
  malloc_trim(0);
#endif
}

namespace {

// The end of the keep after the last large buffer freed anywhere in the
// process (a steady_clock count): loops free and trim on their own threads.
std::atomic<heap_trimmer::clock::rep> large_kept_until{0};

heap_trimmer::clock::time_point kept_until() noexcept {
  return heap_trimmer::clock::time_point(
      heap_trimmer::clock::duration(large_kept_until.load(std::memory_order_relaxed)));
}

}  // namespace

void heap_trimmer::large_freed() {
  const auto until = clock::now() + after_large;
  auto seen = large_kept_until.load(std::memory_order_relaxed);
  while (seen < until.time_since_epoch().count() &&
         !large_kept_until.compare_exchange_weak(seen, until.time_since_epoch().count(),
                                                 std::memory_order_relaxed)) {
  }
  if (!armed_) arm();  // trim_at() holds the keep
}

void heap_trimmer::idle_freed() {
  due_ = std::max(due_, clock::now() + after_idle);
  if (!armed_) arm();
}

heap_trimmer::clock::time_point heap_trimmer::trim_at() const noexcept {
  return std::max(due_, kept_until());
}

void heap_trimmer::arm() {
  armed_ = true;
  timer_.expires_at(trim_at());
  timer_.async_wait([this](const boost::system::error_code& ec) {
    armed_ = false;
    if (ec) return;
    // Something was freed meanwhile, here or (a large buffer) on another
    // loop: the burst goes on.
    if (clock::now() < trim_at()) return arm();
    trim_heap();
  });
}

void heap_trimmer::finish() {
  if (!armed_) return;
  timer_.cancel();
  trim_heap();
}

}  // namespace rapidrpc::detail
