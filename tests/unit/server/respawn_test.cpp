// The back-off for a process that keeps dying young (src/service/respawn.hpp)
// as the prefork supervisor and the worker processes use it: the defaults
// an operator gets, and the delays they give, as docs/design.md ("Modes")
// states them. The daemon tests run with short values (--respawn-backoff);
// this is where the real ones are checked.
#include "service/respawn.hpp"
#include "worker/worker_pool.hpp"

#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace rapidrpc::detail {
namespace {

using std::chrono::milliseconds;

std::vector<long> delays(unsigned deaths, milliseconds base, milliseconds max) {
  std::vector<long> out;
  const respawn_rule prefork{1, base, max};  // as server.cpp makes it
  for (unsigned n = 0; n <= deaths; ++n) out.push_back(prefork.delay(n).count());
  return out;
}

TEST(PreforkRespawn, DefaultsAreATenthOfASecondDoubledUpToFiveSeconds) {
  const server_options defaults;
  EXPECT_EQ(defaults.serving.respawn_backoff, milliseconds(100));
  EXPECT_EQ(defaults.serving.respawn_backoff_max, milliseconds(5000));
}

TEST(PreforkRespawn, DefaultScheduleIsNoneTwiceThenGrowsToFiveSeconds) {
  const server_options o;
  // A worker that has lived (0) or dies young the first time (1) is
  // replaced at once; then 0.4, 0.8, 1.6, 3.2 s, and 5 s from then on.
  EXPECT_EQ(delays(8, o.serving.respawn_backoff, o.serving.respawn_backoff_max),
            (std::vector<long>{0, 0, 400, 800, 1600, 3200, 5000, 5000, 5000}));
}

TEST(PreforkRespawn, TheBaseScalesTheScheduleAndTheMaxCapsIt) {
  EXPECT_EQ(delays(7, milliseconds(25), milliseconds(1000)),
            (std::vector<long>{0, 0, 100, 200, 400, 800, 1000, 1000}));
  // A cap below the first delay: every delayed replacement waits the cap.
  EXPECT_EQ(delays(3, milliseconds(100), milliseconds(250)), (std::vector<long>{0, 0, 250, 250}));
  // No back-off at all, if the operator wants none.
  EXPECT_EQ(delays(4, milliseconds(0), milliseconds(5000)), (std::vector<long>{0, 0, 0, 0, 0}));
  EXPECT_EQ(delays(4, milliseconds(100), milliseconds(0)), (std::vector<long>{0, 0, 0, 0, 0}));
}

TEST(PreforkRespawn, AnEndlessCrashLoopStaysAtTheCap) {
  // However many deaths in a row, no overflow past the cap.
  for (unsigned n : {10u, 63u, 64u, 65u, 1000u, 4'000'000'000u})
    EXPECT_EQ((respawn_rule{1, milliseconds(100), milliseconds(5000)}.delay(n)), milliseconds(5000))
        << n;
  EXPECT_EQ(
      (respawn_rule{1, milliseconds(3'600'000), milliseconds(3'600'000)}.delay(4'000'000'000u)),
      milliseconds(3'600'000));
}

TEST(WorkerRespawn, TwoAtOnceThenGrowsToFiveSeconds) {
  // A call a worker died without reading goes to the next, up to three
  // workers: the first two deaths in a row are replaced at once.
  std::vector<long> got;
  for (unsigned n = 0; n <= 9; ++n) got.push_back(worker_respawn.delay(n).count());
  EXPECT_EQ(got, (std::vector<long>{0, 0, 0, 400, 800, 1600, 3200, 5000, 5000, 5000}));
}

TEST(Respawn, OnlyDeathsInARowWithinASecondOfTheStartCount) {
  const respawn_rule rule{1, milliseconds(100), milliseconds(5000)};
  const auto start = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  unsigned quick = 0;
  EXPECT_EQ(rule.died(quick, start, start + milliseconds(10)), milliseconds(0));
  EXPECT_EQ(rule.died(quick, start, start + milliseconds(999)), milliseconds(400));
  EXPECT_EQ(quick, 2u);
  EXPECT_EQ(rule.died(quick, start, start + milliseconds(1000)), milliseconds(0));  // lived
  EXPECT_EQ(quick, 0u);
}

}  // namespace
}  // namespace rapidrpc::detail
