// Private: giving the heap's free memory back to the system after large
// requests, and after a burst of connections has gone idle. rapidrpcd keeps
// freed memory in the heap (tools/rapidrpcd/main.cpp sets glibc up so), so
// that back-to-back large requests reuse its pages rather than faulting in
// fresh ones; a heap_trimmer gives it back once a burst is over.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstddef>

namespace rapidrpc::detail {

/// A buffer at least this large (a body, a reply: more than a connection
/// keeps between requests) is large: freeing one is reported to a
/// heap_trimmer.
inline constexpr std::size_t large_buffer_bytes = std::size_t{64} << 10;

/// Gives the heap's free memory back to the system (glibc's malloc_trim;
/// nothing elsewhere).
void trim_heap() noexcept;

/// Trims the heap once what was freed has been kept for a while with
/// nothing more freed. One per event loop, used on its thread only.
class heap_trimmer {
 public:
  /// How long the heap keeps what a large buffer freed: a client that
  /// sends its next large request within it finds the pages resident.
  /// Each fresh page costs a page fault; with 50 ms, a client that took
  /// longer than that to read one 8 MB answer and send the next request
  /// had its every call fault in its whole working set again (three
  /// quarters of its server CPU on a VM, docs/benchmarks.md).
  static constexpr std::chrono::milliseconds after_large{1000};
  /// How long it keeps what idle connections gave back when they parked
  /// or closed: until the sweep that parked them is done.
  static constexpr std::chrono::milliseconds after_idle{50};

  explicit heap_trimmer(boost::asio::io_context& io) : timer_(io) {}

  /// Memory was freed (by what runs on this loop); trims once `keep` has
  /// passed with nothing more freed, or later if something freed before
  /// is still to be kept longer.
  void freed(std::chrono::milliseconds keep);
  /// The loop is done: trims now if a trim was due, and waits no more.
  void finish();

 private:
  void arm();

  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::time_point due_{};
  bool armed_ = false;
};

}  // namespace rapidrpc::detail
