// rapidrpcd --python MODULE[:HOOK]: Python methods in worker processes.
// The host asks one run of the worker program (python/rapidrpc/_worker.py)
// for the method table, registers each method as a pool method with its
// help, signature, parameter names and parameter count, and serves them
// with worker processes that run the same program (docs/python.md).
#pragma once

#include <rapidrpc/registry.hpp>
#include <rapidrpc/server.hpp>

#include <string>
#include <vector>

namespace rapidrpcd {

/// What --python, --python-path and --python-exe say.
struct python_settings {
  std::string module;  ///< MODULE or MODULE:HOOK; empty: no --python

  /// True with --python.
  bool on() const noexcept { return !module.empty(); }
  std::vector<std::string> paths;  ///< added to the worker's sys.path, in order
  std::string exe = "/usr/bin/python3";
  /// --python-spawn-workers: no warm parent (worker_options::warm_parent).
  bool spawn_workers = false;
};

/// python/ in the source tree this rapidrpcd was built from, where one in
/// the build tree finds the worker program (source_tree.cpp).
extern const char* const source_python_dir;

/// This rapidrpcd's own executable (/proc/self/exe); throws
/// std::runtime_error if it cannot be read.
std::string self_executable();

/// The worker processes' command line.
std::vector<std::string> python_worker_command(const python_settings& python);

/// Registers the methods the module offers, as the worker protocol's
/// describe step lists them (rapidrpc::add_worker_methods). Throws std::runtime_error with the
/// worker's own words (an import error's traceback) if it cannot be loaded within 5 seconds.
void add_python_methods(rapidrpc::registry& methods, const python_settings& python);

/// SIGHUP: imports the module anew (the describe step), then has `server`
/// replace its workers by ones running the new code and serve the new
/// method table (server::reload_workers()); says so on standard error, and
/// READY=1 to the service manager once the new code serves. False, with
/// nothing changed and the reason said, if the module cannot be loaded or
/// the server has no workers of its own to replace.
bool reload_python(rapidrpc::server& server, const python_settings& python);

}  // namespace rapidrpcd
