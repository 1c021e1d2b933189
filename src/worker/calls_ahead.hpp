// Private: how far ahead a pool sends calls to workers that are busy (the
// local worker processes, worker_pool.cpp; worker hosts, remote_pool.cpp).
//
// A worker may be sent more calls than it runs at once: those it finds
// waiting when it has answered, rather than going to sleep until the pool
// has read the answer and sent another call (under load, the round trip's
// sleeps and wake-ups cost more than a short call). A call goes behind
// others only when every worker is busy, and only where the calls already
// there are expected to take less than ahead_below per place together, by
// the recent times of their methods: behind a call that takes long, it
// would wait while another worker that has ended its call could take it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>

namespace rapidrpc::detail {

/// Calls at a worker at once, per place: the one it runs and those behind.
inline constexpr std::size_t calls_ahead = 8;
/// What the calls at a worker may be expected to take together, per place,
/// for another to go behind them.
inline constexpr std::chrono::microseconds ahead_below{1000};

/// Each method's recent call time, by name: how long a call is expected to
/// take.
class method_times {
 public:
  /// The moving average of the method's recent calls; ahead_below before
  /// any has been timed, so that a call of a method not yet timed fills its
  /// place's allowance on its own.
  std::chrono::microseconds expected(const std::string& method) const {
    auto it = times_.find(method);
    return it == times_.end() ? ahead_below : it->second;
  }

  /// A call of `method` ran for `took`; each counts for an eighth.
  void timed(const std::string& method, std::chrono::steady_clock::duration took) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(took);
    auto [it, added] = times_.try_emplace(method, us);
    if (!added) it->second = (it->second * 7 + us) / 8;
  }

 private:
  std::unordered_map<std::string, std::chrono::microseconds> times_;
};

}  // namespace rapidrpc::detail
