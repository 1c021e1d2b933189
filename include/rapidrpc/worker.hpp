// Worker processes: pool methods run outside the server's process, so a
// crash or a runaway there costs one call, not the service.
//
// The worker protocol is language-neutral: over a stream socket, each
// message is a frame of a 4-byte big-endian length followed by that many
// bytes of an XML-RPC document. The worker first sends an empty frame (a
// length of 0) once it can take calls; the server sends it none before. The
// server sends methodCalls; the worker answers each with one
// methodResponse (a result or a fault), in the order the calls came, one
// call at a time: the server may send a call before the one ahead of it
// is answered (it takes the first unanswered call for the one running,
// and the others for not started). The worker exits when the socket
// reaches end of stream. A worker may be written in any language that can
// read XML-RPC. Both documents are UTF-8; the server passes an XML-RPC
// client's request on as it came when it is in UTF-8 and XML-RPC's plain
// grammar (whitespace between elements included), and passes the worker's
// answer on to that client as it was written (docs/design.md, "Worker
// processes"). rapidrpcd's Python workers speak a compact form besides,
// Python's marshal format, which a worker announces in its first frame
// (docs/design.md).
#pragma once

#include <rapidrpc/registry.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace rapidrpc {

/// The largest frame either side accepts.
inline constexpr std::size_t max_worker_frame_bytes = 64 * 1024 * 1024;

/// The worker side: says it is ready on `fd`, then serves the calls arriving
/// there with `methods`, one at a time, until end of stream (inline and pool
/// methods run at once; an async method runs on an io_context of the
/// worker's own until it replies). Returns 0 then, or 1 on a broken stream.
/// Blocking; for a worker program's main().
int serve_worker(const registry& methods, int fd = 3);

/// The server side's describe step, for a worker program that can list its
/// methods (rapidrpcd's Python worker: docs/python.md): runs `command`
/// with "--describe" appended, which writes to its standard output an
/// XML-RPC methodResponse whose value is the method table, an array of
/// structs {name, help, signature (array of strings), params (the names),
/// min, max (the parameter counts; max -1: any)}, and exits 0. Returns each
/// method as a pool method with that help, signature, names and count, run
/// by the worker processes of server_options::workers.command (the same
/// `command`): the server answers an unknown method, a wrong count, named
/// parameters and the system.* methods itself. Throws std::runtime_error,
/// with what the program wrote to its standard error (an import error's
/// traceback), if it cannot be started, does not exit 0 within `limit`, or
/// writes a table that cannot be read.
method_table describe_worker_methods(const std::vector<std::string>& command,
                                     std::chrono::milliseconds limit = std::chrono::seconds(5));

/// describe_worker_methods(), its methods added to `methods` as reloadable
/// ones (registry::add_reloadable()): server::reload_workers() replaces
/// them with the table of the code loaded anew.
void add_worker_methods(registry& methods, const std::vector<std::string>& command,
                        std::chrono::milliseconds limit = std::chrono::seconds(5));

}  // namespace rapidrpc
