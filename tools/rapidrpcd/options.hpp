// rapidrpcd's command line: what it parses into the library's
// server_options and the daemon's own settings. main() only acts on them.
#pragma once

#include "python.hpp"

#include <rapidrpc/access.hpp>
#include <rapidrpc/server.hpp>

#include <string>
#include <variant>

namespace rapidrpcd {

/// What one run of the daemon does.
enum class task {
  serve,          ///< start the server and wait for a stop signal
  worker,         ///< serve the worker protocol on fd 3 (--worker, started by --isolate)
  hash_password,  ///< print a users-file line (--hash-password USER)
  /// a worker process of --python-attach: hand fd 3 to the Python
  /// program's fork server (--python-attach-worker SOCKET [--describe])
  attached_worker,
};

/// Everything the command line says.
struct settings {
  task what = task::serve;
  /// The server's options, complete for task::serve: modes, limits and
  /// timeouts set, thread counts of 0 resolved to one per core, the users
  /// file loaded, the allowed ranges parsed, the method deny list turned
  /// into an authorizer, the worker command pointing at this executable.
  rapidrpc::server_options server;
  /// Seconds calls in flight get to finish after SIGINT/SIGTERM.
  double drain_timeout = 10;
  /// --enable-test-methods: add the demo's test.* methods.
  bool test_methods = false;
  /// --python: serve a Python module's methods (instead of the demo
  /// service) in worker processes; module empty without it.
  python_settings python;
  /// task::attached_worker: print the method table instead of serving.
  bool describe = false;
  /// task::hash_password: the user name and the PBKDF2 iterations.
  std::string hash_user;
  unsigned hash_iterations = rapidrpc::default_password_iterations;
};

/// Parses rapidrpcd's command line. Returns the settings, or the exit status
/// when the daemon is to stop at once, its message printed: 0 after --help
/// or --version, CLI11's status for a malformed command line, 2 for options
/// that do not go together, 1 for a users file or address range that
/// cannot be used.
std::variant<settings, int> parse_options(int argc, char** argv);

}  // namespace rapidrpcd
