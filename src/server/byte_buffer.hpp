// A growable byte buffer with a read and a write position, for a
// connection's input: no zero-filling on growth, compaction before growth.
// Its first block comes from its loop's block_pool (when it has one), so
// that an idle connection can give it back (docs/design.md, "Lifetimes").
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace rapidrpc::detail {

/// The input blocks of one loop's connections: block_bytes each, mapped
/// apart from the heap so that a block given back is given back to the
/// system (a freed heap block between live objects would stay resident). The
/// last `keep` blocks given back are kept for the next taker: a new or
/// waking connection usually takes one without a system call. Used by its
/// loop's thread only.
class block_pool {
 public:
  static constexpr std::size_t block_bytes = 16 * 1024;

  explicit block_pool(std::size_t keep = 64) : keep_(keep) {}
  ~block_pool() {
    for (char* b : free_) ::munmap(b, block_bytes);
  }
  block_pool(const block_pool&) = delete;
  block_pool& operator=(const block_pool&) = delete;

  char* take() {
    if (!free_.empty()) {
      char* b = free_.back();
      free_.pop_back();
      return b;
    }
    void* p =
        ::mmap(nullptr, block_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ++mapped_;
    return static_cast<char*>(p);
  }
  void give(char* b) noexcept {
    if (free_.size() < keep_) {
      try {
        free_.push_back(b);
        return;
      } catch (...) {  // (no room to remember it: unmap it)
      }
    }
    ::munmap(b, block_bytes);
    --mapped_;
  }
  /// Blocks mapped now, taken or kept.
  std::size_t mapped() const noexcept { return mapped_; }
  /// Blocks kept for the next takers.
  std::size_t kept() const noexcept { return free_.size(); }

 private:
  std::vector<char*> free_;
  std::size_t keep_;
  std::size_t mapped_ = 0;
};

class byte_buffer {
 public:
  /// A buffer whose first block_bytes come from `pool` (which outlives it),
  /// or from the heap without one.
  explicit byte_buffer(block_pool* pool = nullptr) noexcept : pool_(pool) {}
  ~byte_buffer() { release_storage(); }
  byte_buffer(const byte_buffer&) = delete;
  byte_buffer& operator=(const byte_buffer&) = delete;

  /// Bytes received and not yet consumed.
  const char* data() const noexcept { return buf_ + begin_; }
  std::size_t size() const noexcept { return end_ - begin_; }
  bool empty() const noexcept { return begin_ == end_; }
  /// The bytes of storage held (0 once released).
  std::size_t capacity() const noexcept { return cap_; }

  /// Room for at least `n` more bytes at write_ptr().
  char* prepare(std::size_t n) {
    if (cap_ - end_ >= n) return buf_ + end_;
    std::size_t live = size();
    if (cap_ >= live + n && begin_ > 0) {
      std::memmove(buf_, data(), live);
    } else if (cap_ == 0 && pool_ != nullptr && n <= block_pool::block_bytes) {
      buf_ = pool_->take();
      pooled_ = true;
      cap_ = block_pool::block_bytes;
    } else {
      std::size_t cap = cap_ ? cap_ : n;
      while (cap < live + n) cap *= 2;
      char* grown = new char[cap];  // (not zero-filled)
      if (live) std::memcpy(grown, data(), live);
      release_storage();
      buf_ = grown;
      cap_ = cap;
    }
    begin_ = 0;
    end_ = live;
    return buf_ + end_;
  }
  void commit(std::size_t n) noexcept { end_ += n; }
  void consume(std::size_t n) noexcept {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  /// Frees the storage if the buffer is empty and larger than `keep`
  /// (shrink(0): any storage, back to its pool if it came from one).
  void shrink(std::size_t keep) noexcept {
    if (empty() && cap_ > keep) {
      release_storage();
      begin_ = end_ = 0;
    }
  }

 private:
  void release_storage() noexcept {
    if (buf_ == nullptr) return;
    if (pooled_)
      pool_->give(buf_);
    else
      delete[] buf_;
    buf_ = nullptr;
    pooled_ = false;
    cap_ = 0;
  }

  block_pool* pool_;
  char* buf_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool pooled_ = false;
};

}  // namespace rapidrpc::detail
