#include "service/respawn.hpp"

#include <algorithm>

namespace rapidrpc::detail {

std::chrono::milliseconds respawn_rule::delay(unsigned quick_deaths) const noexcept {
  if (quick_deaths <= at_once) return std::chrono::milliseconds(0);
  // Doubled once per death, and no more once at the cap: no overflow
  // however long the crash loop.
  auto d = base;
  for (unsigned i = 0; i < std::min(quick_deaths, 64u) && d < max; ++i) d *= 2;
  return std::min(d, max);
}

}  // namespace rapidrpc::detail
