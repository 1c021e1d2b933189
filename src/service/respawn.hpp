// Private: the one back-off rule for replacing a process that keeps dying
// young, so that a crash loop does not eat the machine: the prefork
// supervisor's workers (server_options::serving.respawn_backoff and
// respawn_backoff_max) and the worker processes (worker_pool.hpp) follow
// it, each with its own numbers.
#pragma once

#include <chrono>

namespace rapidrpc::detail {

struct respawn_rule {
  /// A process that dies within this of its start has died young.
  static constexpr std::chrono::seconds young{1};

  /// How many young deaths in a row are replaced at once.
  unsigned at_once = 1;
  /// Then the n-th waits `base` times 2^n, at most `max`.
  std::chrono::milliseconds base{100};
  std::chrono::milliseconds max{5000};

  /// How long to wait before replacing a process that has died young
  /// `quick_deaths` times in a row.
  std::chrono::milliseconds delay(unsigned quick_deaths) const noexcept;

  /// A process started at `started` has died at `now`: counts it into
  /// `quick_deaths` (one that lived longer than `young` starts the count
  /// again) and returns delay() of the count.
  std::chrono::milliseconds died(unsigned& quick_deaths,
                                 std::chrono::steady_clock::time_point started,
                                 std::chrono::steady_clock::time_point now) const noexcept {
    quick_deaths = now - started < young ? quick_deaths + 1 : 0;
    return delay(quick_deaths);
  }
};

}  // namespace rapidrpc::detail
