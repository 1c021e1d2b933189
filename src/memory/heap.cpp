#include "memory/heap.hpp"

#include <malloc.h>
#include <algorithm>

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

void heap_trimmer::freed(std::chrono::milliseconds keep) {
  due_ = std::max(due_, std::chrono::steady_clock::now() + keep);
  if (!armed_) arm();
}

void heap_trimmer::arm() {
  armed_ = true;
  timer_.expires_at(due_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    armed_ = false;
    if (ec) return;
    // Another large buffer was freed meanwhile: the burst goes on.
    if (std::chrono::steady_clock::now() < due_) return arm();
    trim_heap();
  });
}

void heap_trimmer::finish() {
  if (!armed_) return;
  timer_.cancel();
  trim_heap();
}

}  // namespace rapidrpc::detail
