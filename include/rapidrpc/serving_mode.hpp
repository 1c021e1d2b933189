// How a server runs its connections and methods: the serving modes and
// their names as rapidrpcd spells them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rapidrpc {

/// How a server runs its connections and methods (docs/design.md, "Modes").
enum class serving_mode : std::uint8_t {
  /// Event loops plus a worker pool (threads, or processes with `isolate`).
  async_pool,
  /// One event loop; every method runs inline on it (async ones stay async).
  async,
  /// One thread serves one connection at a time, one request per connection.
  sequential,
  /// A child process per connection, at most `processes` at once.
  fork,
  /// `processes` pre-started processes, each serving one connection at a
  /// time, restarted by a supervisor if they die.
  prefork,
};

/// The mode's name as rapidrpcd spells it ("async-pool", "prefork", ...).
std::string_view mode_name(serving_mode m) noexcept;

/// The mode named `name` as mode_name() spells it (exactly: no other case,
/// no spaces), or std::nullopt if no mode has that name.
std::optional<serving_mode> parse_mode(std::string_view name) noexcept;

}  // namespace rapidrpc
