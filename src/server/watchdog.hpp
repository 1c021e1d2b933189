// Private: method timeouts in the process-per-connection modes (fork,
// prefork), where a method runs inline in the process serving the
// connection. Past the deadline, a SIGALRM handler writes a prepared
// timeout fault to the connection and ends the process, so the client gets
// its answer and the CPU is free at once; the supervisor starts a new
// process. (A thread cannot be stopped; a process can.)
#pragma once

#include <rapidrpc/registry.hpp>

#include "registry/pool.hpp"
#include "rpc/exchange.hpp"

#include <chrono>
#include <string_view>

namespace rapidrpc::detail::watchdog {

/// Installs the SIGALRM handler (once per process). With `answer` false
/// (TLS connections, whose records a signal handler cannot write) a call
/// past its timeout only ends the process, which closes the connection.
void install(bool answer = true);

/// The connection whose call runs next, the Server header to answer it
/// with if the call times out, and the exchange running the call (which
/// writes the timeout's reply for its protocol and request).
void watch(int fd, std::string_view server_name, const rpc::exchange* calls);

/// Runs pool methods inline under the watchdog.
class runner final : public pool_runner {
 public:
  void run(pool_call c) override;
};

}  // namespace rapidrpc::detail::watchdog
