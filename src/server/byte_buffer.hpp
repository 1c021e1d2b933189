// A growable byte buffer with a read and a write position, for a
// connection's input: no zero-filling on growth, compaction before growth.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>

namespace rapidrpc::detail {

class byte_buffer {
 public:
  /// Bytes received and not yet consumed.
  const char* data() const noexcept { return buf_.get() + begin_; }
  std::size_t size() const noexcept { return end_ - begin_; }
  bool empty() const noexcept { return begin_ == end_; }

  /// Room for at least `n` more bytes at write_ptr().
  char* prepare(std::size_t n) {
    if (cap_ - end_ >= n) return buf_.get() + end_;
    std::size_t live = size();
    if (cap_ >= live + n && begin_ > 0) {
      std::memmove(buf_.get(), data(), live);
    } else {
      std::size_t cap = cap_ ? cap_ : n;
      while (cap < live + n) cap *= 2;
      auto grown = std::make_unique_for_overwrite<char[]>(cap);
      if (live) std::memcpy(grown.get(), data(), live);
      buf_ = std::move(grown);
      cap_ = cap;
    }
    begin_ = 0;
    end_ = live;
    return buf_.get() + end_;
  }
  void commit(std::size_t n) noexcept { end_ += n; }
  void consume(std::size_t n) noexcept {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  /// Frees the storage if the buffer is empty and larger than `keep`.
  void shrink(std::size_t keep) {
    if (empty() && cap_ > keep) {
      buf_.reset();
      cap_ = begin_ = end_ = 0;
    }
  }

 private:
  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace rapidrpc::detail
