// Worker processes: pool methods run outside the server's process, so a
// crash or a runaway there costs one call, not the service.
//
// The worker protocol is language-neutral: over a stream socket, each
// message is a frame of a 4-byte big-endian length followed by that many
// bytes of an XML-RPC document. The worker first sends an empty frame (a
// length of 0) once it can take calls; the server sends it none before. The
// server sends a methodCall; the worker answers with one methodResponse (a
// result or a fault), then waits for the next call; it exits when the socket
// reaches end of stream. A worker may be written in any language that can
// read XML-RPC (docs/design.md, "Worker processes").
#pragma once

#include <rapidrpc/registry.hpp>

#include <cstddef>

namespace rapidrpc {

/// The largest frame either side accepts.
inline constexpr std::size_t max_worker_frame_bytes = 64 * 1024 * 1024;

/// The worker side: says it is ready on `fd`, then serves the calls arriving
/// there with `methods` (inline and pool methods; async ones are answered
/// with fault_code::internal_error) until end of stream. Returns 0 then, or 1 on a broken stream.
/// Blocking; for a worker program's main().
int serve_worker(const registry& methods, int fd = 3);

}  // namespace rapidrpc
