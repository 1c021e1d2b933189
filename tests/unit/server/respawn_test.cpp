// The prefork supervisor's back-off for a worker that keeps dying young
// (src/server/process_modes.hpp): the defaults an operator gets, and the
// delays they give, as docs/design.md ("Modes") states them. The daemon
// tests run with short values (--respawn-backoff); this is where the real
// ones are checked.
#include "server/process_modes.hpp"

#include <rapidrpc/server.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace rapidrpc::detail {
namespace {

using std::chrono::milliseconds;

std::vector<long> delays(unsigned deaths, milliseconds base, milliseconds max) {
  std::vector<long> out;
  for (unsigned n = 0; n <= deaths; ++n) out.push_back(prefork_respawn_delay(n, base, max).count());
  return out;
}

TEST(PreforkRespawn, DefaultsAreATenthOfASecondDoubledUpToFiveSeconds) {
  const server_options defaults;
  EXPECT_EQ(defaults.respawn_backoff, milliseconds(100));
  EXPECT_EQ(defaults.respawn_backoff_max, milliseconds(5000));
}

TEST(PreforkRespawn, DefaultScheduleIsNoneTwiceThenGrowsToFiveSeconds) {
  const server_options o;
  // A worker that has lived (0) or dies young the first time (1) is
  // replaced at once; then 0.4, 0.8, 1.6, 3.2 s, and 5 s from then on.
  EXPECT_EQ(delays(8, o.respawn_backoff, o.respawn_backoff_max),
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
    EXPECT_EQ(prefork_respawn_delay(n, milliseconds(100), milliseconds(5000)), milliseconds(5000))
        << n;
  EXPECT_EQ(prefork_respawn_delay(4'000'000'000u, milliseconds(3'600'000), milliseconds(3'600'000)),
            milliseconds(3'600'000));
}

}  // namespace
}  // namespace rapidrpc::detail
