// Private: objects made once and used again, for the calls in flight of an
// endpoint with its own thread (the ZeroMQ endpoint, a worker host's link):
// a call's buffers and parser state stay warm from one call to the next.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace rapidrpc::detail {

/// Owns every T it made. take() hands out a free one, or one `make()` makes
/// (a std::unique_ptr<T>) when none is free; give_back() frees it again.
/// One thread: the owner's.
template <class T>
class free_list {
 public:
  template <class Make>
  T& take(Make make) {
    T* t;
    if (!free_.empty()) {
      t = free_.back();
      free_.pop_back();
    } else {
      all_.push_back(make());
      t = all_.back().get();
    }
    ++taken_;
    return *t;
  }

  void give_back(T& t) {
    free_.push_back(&t);
    --taken_;
  }

  /// How many are taken and not given back (calls in flight).
  std::size_t taken() const noexcept { return taken_; }

 private:
  std::vector<std::unique_ptr<T>> all_;
  std::vector<T*> free_;
  std::size_t taken_ = 0;
};

}  // namespace rapidrpc::detail
