// The ZeroMQ side of `rapidrpc bench`: JSON-RPC 2.0 calls over DEALER
// sockets to a ROUTER endpoint (tcp://host:port or ipc://path), several in
// flight on each socket.
//
// Threads: as in loadgen.hpp, each thread drives its share of the sockets
// with a loop of its own (zmq_poll), touches nothing of another thread's,
// and keeps its own histogram and timeline, merged after the run (the live
// line reads them meanwhile as it does over HTTP). All sockets share one
// ZeroMQ context with one I/O thread per load thread.
//
// Per call: the request of each in-flight slot is encoded once, before the
// run; a call only writes its id (a 16-digit number: slot and generation)
// into that slot's frame and sends it. A reply's id names the slot and the
// generation, so a late reply (for a call that already timed out) is told
// apart and dropped. A reply equal, but for the id, to one already parsed
// and found right passes as is; any other is parsed and its value compared
// with the expected one. No allocation of ours per call.
#pragma once

#include "loadgen.hpp"

namespace rapidrpc::cli {

/// True if `url` is a tcp:// or ipc:// URL (a ZeroMQ run).
bool is_zmq_bench(const bench_options& options) noexcept;

/// The run_bench() of ZeroMQ URLs: the warm-up call (unless options.expect
/// is set), then the load, shown by `live` if given. Throws bench_error if
/// it cannot start.
bench_result run_zmq_bench(const bench_options& options, live_line* live = nullptr);

}  // namespace rapidrpc::cli
