// rapidrpcd's command line and config file (config.hpp): what they parse
// into the library's server_options and the daemon's own settings. main()
// only acts on them.
#pragma once

#include "config.hpp"
#include "python.hpp"

#include <rapidrpc/access.hpp>
#include <rapidrpc/server.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rapidrpcd {

/// What one run of the daemon does.
enum class task {
  serve,          ///< start the server and wait for a stop signal
  worker,         ///< serve the worker protocol on fd 3 (--worker, started by --isolate)
  hash_password,  ///< print a users-file line (--hash-password USER)
  curve_keygen,   ///< --curve-keygen: write a CurveZMQ key pair
};

/// The methods --deny-method refuses. The server's authorizer asks it on
/// every call, from any loop thread; SIGHUP replaces the list meanwhile.
class method_denylist {
 public:
  using names = std::set<std::string, std::less<>>;
  explicit method_denylist(names denied)
      : names_(std::make_shared<const names>(std::move(denied))) {}
  bool denies(std::string_view method) const { return names_.load()->contains(method); }
  std::shared_ptr<const names> get() const { return names_.load(); }
  void replace(std::shared_ptr<const names> denied) { names_.store(std::move(denied)); }

 private:
  std::atomic<std::shared_ptr<const names>> names_;
};

/// Everything the command line and the config file say.
struct settings {
  task what = task::serve;
  /// The server's options, complete for task::serve: modes, limits and
  /// timeouts set, thread counts of 0 resolved to one per core, the users
  /// file loaded, the allowed ranges parsed, the method deny list turned
  /// into an authorizer, the worker command pointing at this executable.
  rapidrpc::server_options server;
  /// Seconds calls in flight get to finish after SIGINT/SIGTERM.
  double drain_timeout = 10;
  double drain_delay = 0;
  /// --enable-test-methods: add the demo's test.* methods.
  bool test_methods = false;
  /// --python: serve a Python module's methods (instead of the demo
  /// service) in worker processes; module empty without it.
  python_settings python;
  /// task::hash_password: the user name and the PBKDF2 iterations.
  std::string hash_user;
  unsigned hash_iterations = rapidrpc::default_password_iterations;
  /// task::curve_keygen: the files' name, without .key and .pub.
  std::string keygen_name;
  /// --config: the file read; empty without one.
  std::string config_file;
  /// Every setting as the daemon runs with it (the command line's, else the
  /// file's, else the default), in --help's order: what --print-config
  /// prints and a reload compares.
  std::vector<setting_value> values;
  /// --deny-method's list, which the authorizer in `server` asks; null when
  /// nothing can be denied (no list and no config file to reload).
  std::shared_ptr<method_denylist> denied;
};

/// Parses rapidrpcd's command line and the config file it names. Returns
/// the settings, or the exit status when the daemon is to stop at once, its
/// message printed: 0 after --help, --version, --print-config or a
/// --check-config that passed, CLI11's status for a malformed command line,
/// 2 for options that do not go together or a config file that cannot be
/// used, 1 for a users file or address range that cannot be used.
std::variant<settings, int> parse_options(int argc, char** argv);

/// SIGHUP: parses the same command line and the config file again, as
/// parse_options() does except for what start-up alone does (taking
/// systemd's LISTEN_FDS). Returns the settings, or why they cannot be
/// used (a message without the "rapidrpcd: " prefix).
std::variant<settings, std::string> reparse_options(int argc, char** argv);

}  // namespace rapidrpcd
