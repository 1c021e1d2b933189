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
/// nothing more freed. One per event loop, used on its thread only. The
/// heap is the process's (one malloc arena), and so is the keep after a
/// large buffer: a trimmer does not trim while a large buffer freed on any
/// loop is being kept, since its trim would give that back too.
class heap_trimmer {
 public:
  using clock = std::chrono::steady_clock;

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

  /// A buffer of at least large_buffer_bytes was freed (by what runs on
  /// this loop): no trimmer of the process trims for after_large.
  void large_freed();
  /// Idle connections gave their memory back: trims after_idle later,
  /// or once the keep after the last large buffer ends.
  void idle_freed();
  /// When this trimmer will trim, if it is waiting to: the later of its
  /// own due time and the end of the process's keep after a large buffer.
  [[nodiscard]] clock::time_point trim_at() const noexcept;
  /// The loop is done: trims now if a trim was due, and waits no more.
  void finish();

 private:
  void arm();

  boost::asio::steady_timer timer_;
  clock::time_point due_{};  // after idle memory freed here (the large keep is the process's)
  bool armed_ = false;
};

}  // namespace rapidrpc::detail
