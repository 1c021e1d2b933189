// Private: the server side of worker processes (--isolate). A thread of its
// own runs an io_context that owns every worker's socket; calls queue until
// a worker is free. Results are posted back to the caller's loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include "metrics/metrics.hpp"
#include "registry/pool.hpp"

namespace rapidrpc {

/// Starts `workers` worker processes (0: one per core) running `command`
/// and returns the runner that sends pool calls to them. A worker that has
/// answered `max_requests` calls (0: no limit) is replaced between calls.
/// `stats`, if set, gets the pool's queue, busy and live-process figures
/// and its restarts (it must outlive the pool).
std::unique_ptr<detail::pool_runner> make_worker_pool(std::vector<std::string> command,
                                                      unsigned workers, std::uint64_t max_requests,
                                                      detail::metrics::pool_stats* stats = nullptr);

}  // namespace rapidrpc
