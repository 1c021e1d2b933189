// Private: the server side of worker processes (--isolate). A thread of its
// own runs an io_context that owns every worker's socket; calls queue until
// a worker is free. Results are posted back to the caller's loop.
#pragma once

#include "log/log.hpp"
#include "metrics/metrics.hpp"
#include "registry/pool.hpp"
#include "service/respawn.hpp"

#include <rapidrpc/server_options.hpp>

#include <chrono>
#include <memory>

namespace rapidrpc {

/// How long a worker process may take to say it is ready before it is
/// killed and replaced.
inline constexpr std::chrono::milliseconds worker_start_timeout{60'000};

/// How a worker process that keeps dying young is replaced: the first two
/// deaths in a row at once (a call a worker died without reading goes to
/// the next one, up to three workers), then after 0.4 s, 0.8 s, ... up to 5 s.
inline constexpr detail::respawn_rule worker_respawn{2, std::chrono::milliseconds(50),
                                                     std::chrono::milliseconds(5000)};

/// Starts `workers` worker processes (0: one per core) running
/// `options.command` and returns the runner that sends pool calls to them,
/// each to a worker that has said it is ready. A worker past
/// `options.max_requests` (with its jitter), `max_lifetime` or
/// `max_memory_bytes` is replaced between calls, one at a time, its
/// successor started before it leaves (worker_options). `stats`, if set,
/// gets the pool's queue, busy and ready-process figures and its restarts
/// (it must outlive the pool). Workers replaced and why are said to `lines`.
std::unique_ptr<detail::pool_runner> make_worker_pool(
    const worker_options& options, unsigned workers, detail::metrics::pool_stats* stats = nullptr,
    std::chrono::milliseconds start_timeout = worker_start_timeout, detail::logger lines = {});

}  // namespace rapidrpc
