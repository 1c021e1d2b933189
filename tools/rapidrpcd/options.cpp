#include "options.hpp"
#include "curve.hpp"
#include "upgrade.hpp"

#include <systemd/sd-daemon.h>
#include <CLI/CLI.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace rapidrpcd {

namespace {

double seconds(std::chrono::milliseconds ms) { return std::chrono::duration<double>(ms).count(); }

// The values that are spelled on the command line otherwise than the
// options hold them.
struct spelled {
  std::int64_t request_timeout = 0;
  std::int64_t idle_timeout = 0;
  std::int64_t write_timeout = 0;
  std::string mode = "async-pool";
  double method_timeout = 0;
  double max_worker_lifetime = 0;
  std::uint64_t max_worker_memory = 0;  // MiB
  double respawn_backoff = seconds(rapidrpc::server_options{}.serving.respawn_backoff);
  double respawn_backoff_max = seconds(rapidrpc::server_options{}.serving.respawn_backoff_max);
  bool worker = false;
  bool no_jsonrpc = false;
  std::string auth_file;
  std::string access_log_format = "text";
  std::vector<std::string> allow;
  std::vector<std::string> deny_methods;
  bool check_config = false;
  bool print_config = false;
  std::string curve_key;                 // --worker-curve-key
  std::string curve_front;               // --worker-curve-front
  std::vector<std::string> curve_allow;  // --worker-curve-allow
};

// The options that are not settings, so no keys of the config file: what
// the daemon is to do instead of serving, and the config file's own
// options. The hidden options (group "", what rapidrpcd passes its own
// worker processes) are not settings either.
const std::set<std::string> not_settings = {
    "help",         "version",       "config",          "check-config",
    "print-config", "hash-password", "hash-iterations", "curve-keygen"};

// --version and the config file's own options.
void add_config_options(CLI::App& app, settings& out, spelled& in) {
  app.set_version_flag("--version", "rapidrpcd " RAPIDRPC_VERSION);
  auto* config = app.add_option_group(
      "Config file", "Settings from a TOML file (see docs/operations.md, \"Config file\")");
  auto* file = config
                   ->add_option("--config", out.config_file,
                                "Read settings from this TOML file: its keys are the long options' "
                                "names, the command line wins; SIGHUP reads it again")
                   ->type_name("FILE");
  config
      ->add_flag("--check-config", in.check_config,
                 "Check the settings (the config file's and the command line's) as start-up "
                 "does, print FILE: ok and exit, binding nothing")
      ->needs(file);
  config->add_flag("--print-config", in.print_config,
                   "Print the settings the daemon would run with, as a config file, and exit");
}

// Where it listens, and how connections and methods are served.
void add_serving_options(CLI::App& app, settings& out, spelled& in) {
  auto& options = out.server;
  std::vector<std::string> modes;
  for (auto m : {rapidrpc::serving_mode::async_pool, rapidrpc::serving_mode::async,
                 rapidrpc::serving_mode::sequential, rapidrpc::serving_mode::fork,
                 rapidrpc::serving_mode::prefork})
    modes.emplace_back(rapidrpc::mode_name(m));
  app.add_option("--host", options.listen.host, "Host name or address to listen on")
      ->capture_default_str();
  app.add_option("--port", options.listen.port, "TCP port (0 picks a free one)")
      ->capture_default_str();
  app.add_option("--listen-fd", options.listen.fds,
                 "Serve this inherited listening TCP socket instead of --host and --port "
                 "(repeatable; systemd's socket activation, LISTEN_FDS, is taken by itself)")
      ->type_name("FD");
  app.add_option("--threads", options.serving.threads, "Event-loop threads (0: one per core)")
      ->capture_default_str();
  app.add_option("--workers", options.workers.count,
                 "Worker-pool threads for CPU-heavy methods (0: one per core)")
      ->capture_default_str();
  app.add_option("--mode", in.mode,
                 "How connections and methods are served: async-pool (event loops + worker pool), "
                 "async (one loop, methods inline), sequential (one connection at a time), fork "
                 "(a process per connection), prefork (pre-started processes)")
      ->check(CLI::IsMember(modes))
      ->capture_default_str();
  app.add_option("--processes", options.serving.processes,
                 "fork: most child processes at once; prefork: worker processes (0: one per core)")
      ->capture_default_str();
  app.add_option("--respawn-backoff", in.respawn_backoff,
                 "prefork: a worker that keeps dying within a second of its start is replaced "
                 "at once the first time, then after this many seconds times 4, 8, 16... "
                 "(a crash loop does not eat the machine)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--respawn-backoff-max", in.respawn_backoff_max,
                 "prefork: the most seconds such a worker waits before it is replaced")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_flag(
      "--isolate", options.workers.isolate,
      "async-pool: run CPU-heavy methods in supervised worker processes instead of threads");
  app.add_option("--max-requests", options.workers.max_requests,
                 "--isolate and --python: replace a worker process after this many calls, "
                 "between calls, its successor started first (0: never)")
      ->capture_default_str();
  app.add_option("--max-requests-jitter", options.workers.max_requests_jitter,
                 "add to each worker's --max-requests a number drawn from 0 to this, so that "
                 "workers are not replaced together")
      ->capture_default_str();
  app.add_option("--max-worker-lifetime", in.max_worker_lifetime,
                 "--isolate and --python: replace a worker process after this many seconds (plus "
                 "up to a tenth, drawn per process), between calls (0: never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-worker-memory", in.max_worker_memory,
                 "--isolate and --python: replace a worker process that holds more than this "
                 "many MiB of its own (unshared) memory after a call (0: no limit)")
      ->capture_default_str();
  app.add_option(
         "--method-timeout", in.method_timeout,
         "Seconds a CPU-heavy call (or a coroutine method's) may run before it fails with a "
         "timeout fault (0: no limit)")
      ->capture_default_str();
}

// --python, the relay and the options rapidrpcd passes its own workers.
void add_python_options(CLI::App& app, settings& out, spelled& in) {
  auto& options = out.server;
  auto* python = app.add_option_group(
      "Python", "Serve a Python module's methods in worker processes (see docs/python.md)");
  python
      ->add_option("--python", out.python.module,
                   "Serve the public functions of this module (or what MODULE:HOOK(server) "
                   "registers) instead of the demo service; needs --mode async-pool")
      ->type_name("MODULE[:HOOK]");
  python
      ->add_option("--python-path", out.python.paths,
                   "A directory to import the module from (repeatable; default: the current "
                   "directory)")
      ->type_name("DIR");
  python->add_option("--python-exe", out.python.exe, "The Python interpreter of the workers")
      ->capture_default_str();
  python->add_flag("--python-spawn-workers", out.python.spawn_workers,
                   "Start each worker as an interpreter of its own that imports the module, "
                   "rather than fork it from one process that imported it once (for a module "
                   "whose import starts threads)");
  auto* relay = app.add_option_group(
      "Relay",
      "Relay every request to a program behind a Unix socket (docs/design.md, \"The relay\")");
  relay
      ->add_option("--relay", options.relay.socket,
                   "Answer no request itself: relay each one to the program listening on this "
                   "Unix socket (how `from rapidrpc import SimpleXMLRPCServer` serves a script); "
                   "--mode async-pool only")
      ->type_name("SOCKET");
  relay
      ->add_option("--relay-keep-pid", options.relay.keep_pid,
                   "With --relay: never kill this process after a --method-timeout (the "
                   "program's own); rapidrpcd ends when it ends, if it is rapidrpcd's parent")
      ->type_name("PID");
  app.add_flag("--enable-test-methods", out.test_methods,
               "Add test.crash, test.spin, test.wait, test.throw and test.markup (for tests only)");
  app.add_flag("--worker", in.worker, "Serve the worker protocol on fd 3 (started by --isolate)")
      ->group("");
}

// Request paths, JSON-RPC, ZeroMQ, worker hosts and their CurveZMQ keys,
// gzip and TLS.
void add_protocols_options(CLI::App& app, settings& out, spelled& in) {
  auto& options = out.server;
  app.add_option("--path", options.http.paths,
                 "A request path that serves XML-RPC, and JSON-RPC by Content-Type (repeatable)")
      ->capture_default_str();
  app.add_option("--jsonrpc-path", options.http.jsonrpc_paths,
                 "A request path that serves JSON-RPC only (repeatable)")
      ->capture_default_str();
  app.add_flag("--no-jsonrpc", in.no_jsonrpc, "Serve XML-RPC only (over HTTP)");
  app.add_flag_callback(
      "--no-api-page", [&options] { options.http.api_page = false; },
      "Answer a browser's GET on a request path with 405, not the HTML page of the methods and "
      "a form to call them");
  app.add_option(
      "--zmq", options.zmq.endpoints,
      "Also serve JSON-RPC over ZeroMQ on this address (repeatable): tcp://127.0.0.1:5555, "
      "tcp://127.0.0.1:* (a free port), ipc:///path (see docs/zmq.md)");
  app.add_option("--worker-listen", options.worker_hosts.listen,
                 "Be the front of worker hosts: bind this ZeroMQ address (repeatable; "
                 "tcp://10.0.0.1:7000, tcp://127.0.0.1:* for a free port) where other rapidrpcd "
                 "--worker-connect; pool calls go to the least loaded worker, here or there, and "
                 "--workers 0 means none here (see docs/scale-out.md)")
      ->type_name("ADDRESS");
  app.add_option("--worker-connect", options.worker_hosts.connect,
                 "Be a worker host: run the pool calls of the front at this ZeroMQ address (its "
                 "--worker-listen), --workers of them at once")
      ->type_name("ADDRESS");
  auto* curve = app.add_option_group(
      "CurveZMQ", "Encryption and authentication of the worker-host link (docs/scale-out.md)");
  curve
      ->add_option("--worker-curve-key", in.curve_key,
                   "This server's CurveZMQ key pair, a .key file of --curve-keygen; turns "
                   "CurveZMQ on for --worker-listen or --worker-connect")
      ->type_name("FILE");
  curve
      ->add_option("--worker-curve-front", in.curve_front,
                   "With --worker-connect: the front's public key, its .pub file")
      ->type_name("FILE");
  curve
      ->add_option("--worker-curve-allow", in.curve_allow,
                   "With --worker-listen: a worker host's public key, its .pub file (repeatable); "
                   "hosts with other keys are refused")
      ->type_name("FILE");
  curve
      ->add_option("--curve-keygen", out.keygen_name,
                   "Write a new CurveZMQ key pair to NAME.key (secret) and NAME.pub, and exit")
      ->type_name("NAME");
  app.add_option("--gzip-min-bytes", options.http.gzip_min_bytes,
                 "Compress responses this large when the client accepts gzip (0: never)")
      ->capture_default_str();
  auto* cert = app.add_option("--tls-cert", options.tls.certificate_chain_file,
                              "Serve HTTPS: PEM file with the server certificate, then its "
                              "intermediate CA certificates (needs --tls-key)");
  auto* key = app.add_option(
      "--tls-key", options.tls.private_key_file,
      "PEM file with the certificate's private key, not encrypted (needs --tls-cert)");
  cert->needs(key);
  key->needs(cert);
}

// Access control, the access log and the admin listener.
void add_access_options(CLI::App& app, settings& out, spelled& in) {
  auto& options = out.server;
  auto* access = app.add_option_group("Access", "Access control and logging (see docs/access.md)");
  access
      ->add_option("--auth-file", in.auth_file,
                   "Require HTTP Basic authentication against this file of name:hash lines")
      ->check(CLI::ExistingFile);
  access->add_option(
      "--allow", in.allow,
      "Serve only peers in this address range, e.g. 127.0.0.0/8 or ::1/128 (repeatable; "
      "others get 403)");
  access->add_option("--deny-method", in.deny_methods,
                     "Refuse calls of this method with fault -32002 (repeatable; also inside "
                     "system.multicall)");
  access->add_option("--access-log", options.log.access_log,
                     "Append one line per request to this file ('-': standard output); SIGHUP "
                     "re-opens it");
  access
      ->add_option("--access-log-format", in.access_log_format,
                   "The access log's lines: text (space-separated fields) or json (one object a "
                   "line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("--admin", options.admin.address,
                 "Serve GET /metrics (Prometheus), /healthz and /readyz on this HOST:PORT, apart "
                 "from the RPC port (docs/operations.md); off by default")
      ->type_name("HOST:PORT");
  access
      ->add_option("--hash-password", out.hash_user,
                   "Read a password from standard input, print the --auth-file line for USER, exit")
      ->type_name("USER");
  access
      ->add_option("--hash-iterations", out.hash_iterations,
                   "PBKDF2 iterations for --hash-password")
      ->capture_default_str();
}

// Limits and timeouts.
void add_limits_options(CLI::App& app, settings& out, spelled& in) {
  auto& lim = out.server.limits;
  auto* limits = app.add_option_group("Limits", "Limits and timeouts (see docs/limits.md)");
  limits
      ->add_option("--max-body-bytes", lim.max_body_bytes,
                   "Largest request body, after decompression")
      ->capture_default_str();
  limits->add_option("--max-request-line-bytes", lim.max_request_line_bytes, "Largest request line")
      ->capture_default_str();
  limits
      ->add_option("--max-header-bytes", lim.max_header_bytes, "Largest request line plus headers")
      ->capture_default_str();
  limits
      ->add_option("--max-header-fields", lim.max_header_fields,
                   "Most header fields in one request")
      ->capture_default_str();
  limits->add_option("--max-depth", lim.max_depth, "Deepest array/struct nesting")
      ->capture_default_str();
  limits
      ->add_option("--max-elements", lim.max_elements,
                   "Most XML elements or JSON values in one request")
      ->capture_default_str();
  limits->add_option("--multicall-max", lim.max_multicall, "Most calls in one system.multicall")
      ->capture_default_str();
  limits->add_option("--max-batch", lim.max_batch, "Most requests in one JSON-RPC batch")
      ->capture_default_str();
  limits->add_option("--max-connections", lim.max_connections, "Most connections open at once")
      ->capture_default_str();
  limits->add_option("--request-timeout", in.request_timeout, "Seconds to receive a whole request")
      ->capture_default_str();
  limits
      ->add_option("--idle-timeout", in.idle_timeout,
                   "Seconds a keep-alive connection may stay idle")
      ->capture_default_str();
  limits
      ->add_option("--write-timeout", in.write_timeout,
                   "Seconds a client may take to read a response")
      ->capture_default_str();
  limits
      ->add_option("--drain-delay", out.drain_delay,
                   "Seconds to go on serving as before after SIGINT/SIGTERM, with /readyz "
                   "answering 503, so a load balancer's health check takes this server out "
                   "before it stops accepting and closes idle connections")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  limits
      ->add_option("--drain-timeout", out.drain_timeout,
                   "Seconds calls in flight get to finish after SIGINT/SIGTERM (and "
                   "--drain-delay)")
      ->capture_default_str();
}

// Every option, in --help's order (which is --print-config's).
void add_options(CLI::App& app, settings& out, spelled& in) {
  add_config_options(app, out, in);
  add_serving_options(app, out, in);
  add_python_options(app, out, in);
  add_protocols_options(app, out, in);
  add_access_options(app, out, in);
  add_limits_options(app, out, in);
}

// Why the settings cannot be used, and the exit status that says so.
struct failure {
  int status;
  std::string message;  // without the "rapidrpcd: " prefix
};

// The port a listening socket is bound to (0 if it cannot be read).
std::uint16_t bound_port(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
  return 0;
}

// The port of an --admin HOST:PORT (0 if it has none the server would take).
std::uint16_t admin_port(const std::string& admin) {
  const auto colon = admin.rfind(':');
  if (colon == std::string::npos) return 0;
  unsigned port = 0;
  for (char c : admin.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535) return 0;
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  return port > 65535 ? 0 : static_cast<std::uint16_t>(port);
}

// The flag that sets a server_options field, for options_refusal()'s
// sentences.
std::string flag_of(std::string_view field) {
  static const std::pair<std::string_view, std::string_view> flags[] = {
      {"serving.mode", "--mode"},
      {"serving.respawn_backoff", "--respawn-backoff"},
      {"serving.respawn_backoff_max", "--respawn-backoff-max"},
      {"workers.isolate", "--isolate"},
      {"workers.command", "--isolate"},
      {"workers.warm_parent", "--python"},
      {"workers.max_requests", "--max-requests"},
      {"workers.max_requests_jitter", "--max-requests-jitter"},
      {"workers.max_lifetime", "--max-worker-lifetime"},
      {"workers.max_memory_bytes", "--max-worker-memory"},
      {"relay.socket", "--relay"},
      {"relay.keep_pid", "--relay-keep-pid"},
      {"zmq.endpoints", "--zmq"},
      {"access.users", "--auth-file"},
      {"worker_hosts.listen", "--worker-listen"},
      {"worker_hosts.connect", "--worker-connect"},
      {"worker_hosts.curve.secret_key", "--worker-curve-key"},
      {"worker_hosts.curve.front_public_key", "--worker-curve-front"},
      {"worker_hosts.curve.host_public_keys", "--worker-curve-allow"},
      {"admin.address", "--admin"},
  };
  for (const auto& [name, flag] : flags)
    if (name == field) return std::string(flag);
  return std::string(field);
}

// The options whose values are spelled otherwise than the server holds
// them: the mode, seconds, the log format, one per core.
void set_spelled_values(rapidrpc::server_options& options, const spelled& in) {
  options.serving.mode = rapidrpc::parse_mode(in.mode).value();  // --mode accepts these names only
  const auto ms = [](double secs) {
    return std::chrono::milliseconds(static_cast<std::int64_t>(secs * 1000));
  };
  options.workers.method_timeout = ms(in.method_timeout);
  options.workers.max_lifetime = ms(in.max_worker_lifetime);
  options.workers.max_memory_bytes = in.max_worker_memory * 1024 * 1024;
  options.serving.respawn_backoff = ms(in.respawn_backoff);
  options.serving.respawn_backoff_max = ms(in.respawn_backoff_max);
  options.http.jsonrpc = !in.no_jsonrpc;
  options.log.format = in.access_log_format == "json" ? rapidrpc::access_log_format::json
                                                      : rapidrpc::access_log_format::text;
  options.limits.request_timeout = std::chrono::seconds(in.request_timeout);
  options.limits.idle_timeout = std::chrono::seconds(in.idle_timeout);
  options.limits.write_timeout = std::chrono::seconds(in.write_timeout);
  options.serving.threads = rapidrpc::count_or_cores(options.serving.threads);
  options.http.server_name = "rapidrpc/" RAPIDRPC_VERSION;
}

// Worker processes: --python's (its own combinations: the library knows no
// --python), or --isolate's, which run this executable with --worker.
std::optional<failure> set_worker_command(settings& out, const spelled& in) {
  auto& options = out.server;
  if (out.python.on()) {
    if (!options.relay.socket.empty())
      return failure{2, "--relay answers no call itself: it does not go with --python"};
    if (options.serving.mode != rapidrpc::serving_mode::async_pool) {
      return failure{2,
                     "--python needs --mode async-pool (the Python methods run in its worker "
                     "processes), not --mode " +
                         in.mode};
    }
    if (out.python.paths.empty()) out.python.paths.emplace_back(".");
    try {
      options.workers.isolate = true;
      options.workers.command = python_worker_command(out.python);
      options.workers.warm_parent = !out.python.spawn_workers;
    } catch (const std::exception& e) {
      return failure{1, e.what()};
    }
  } else if (options.workers.isolate) {
    try {
      options.workers.command = {self_executable(), "--worker"};
    } catch (const std::exception& e) {
      return failure{1, e.what()};
    }
    if (out.test_methods) options.workers.command.push_back("--enable-test-methods");
  }
  return std::nullopt;
}

// systemd's socket activation (a .socket unit, systemd-socket-activate):
// the listening sockets are descriptors 3 on, LISTEN_FDS of them.
// sd_listen_fds() also unsets the variables, so no worker sees them.
// Those named "admin" (LISTEN_FDNAMES: a socket unit's FileDescriptorName,
// or rapidrpcd's own binary upgrade) serve the admin listener.
std::optional<failure> take_activated_sockets(rapidrpc::server_options& options) {
  char** names = nullptr;
  const int activated = sd_listen_fds_with_names(1, &names);
  if (activated < 0) return failure{1, std::string("LISTEN_FDS: ") + std::strerror(-activated)};
  std::vector<int> handed_rpc;
  for (int i = 0; i < activated; ++i) {
    const bool admin =
        names != nullptr && names[i] != nullptr && std::strcmp(names[i], "admin") == 0;
    (admin ? options.admin.listen_fds : handed_rpc).push_back(SD_LISTEN_FDS_START + i);
  }
  if (names != nullptr) {
    for (int i = 0; names[i] != nullptr; ++i) std::free(names[i]);
    std::free(static_cast<void*>(names));
  }
  // A binary upgrade hands over the old process's sockets; if the settings
  // now name another port (or no admin listener), the successor binds what
  // they say instead, and the old sockets close with the old process.
  if (is_successor()) {
    const auto moved = [](const std::vector<int>& fds, const std::string& where,
                          std::uint16_t port) {
      return !fds.empty() && (where.empty() || (port != 0 && bound_port(fds.front()) != port));
    };
    if (moved(handed_rpc, "rpc", options.listen.port)) {
      std::cerr << "rapidrpcd: upgrade: the port is now " << options.listen.port << ", not "
                << bound_port(handed_rpc.front()) << ": listening there anew\n";
      for (int fd : handed_rpc) ::close(fd);
      handed_rpc.clear();
    }
    if (moved(options.admin.listen_fds, options.admin.address, admin_port(options.admin.address))) {
      std::cerr << "rapidrpcd: upgrade: the admin address is now \"" << options.admin.address
                << "\": listening there anew\n";
      for (int fd : options.admin.listen_fds) ::close(fd);
      options.admin.listen_fds.clear();
    }
  }
  if (options.listen.fds.empty()) options.listen.fds = handed_rpc;
  return std::nullopt;
}

// The CurveZMQ keys of the worker-host link, from their files.
std::optional<failure> read_curve_keys(rapidrpc::server_options& options, const spelled& in) {
  try {
    auto& keys = options.worker_hosts.curve;
    if (!in.curve_key.empty()) keys.secret_key = read_curve_key_file(in.curve_key, true).secret_key;
    if (!in.curve_front.empty())
      keys.front_public_key = read_curve_key_file(in.curve_front, false).public_key;
    keys.host_public_keys.clear();
    for (const auto& file : in.curve_allow)
      keys.host_public_keys.push_back(read_curve_key_file(file, false).public_key);
  } catch (const std::exception& e) {
    return failure{2, e.what()};
  }
  return std::nullopt;
}

// --auth-file, --allow and --deny-method.
std::optional<failure> set_access(settings& out, const spelled& in) {
  auto& options = out.server;
  try {
    if (!in.auth_file.empty()) {
      options.access.users = rapidrpc::load_users(in.auth_file);
      if (options.access.users.empty()) return failure{1, in.auth_file + " names no user"};
    }
    for (const auto& cidr : in.allow)
      options.access.allow.push_back(rapidrpc::ip_network::parse(cidr));
  } catch (const std::exception& e) {
    return failure{1, e.what()};
  }
  // With a config file, SIGHUP may bring a deny list: the authorizer is
  // there from the start.
  if (!in.deny_methods.empty() || !out.config_file.empty()) {
    out.denied = std::make_shared<method_denylist>(
        method_denylist::names(in.deny_methods.begin(), in.deny_methods.end()));
    options.access.authorize = [denied = out.denied](std::string_view method,
                                                     const rapidrpc::call_peer*) {
      return !denied->denies(method);
    };
  }
  return std::nullopt;
}

// Completes the server's options from what was spelled; says why if they
// cannot be served: a combination the library would not honour is the
// library's own sentence (rapidrpc::options_refusal), with the flags'
// names. Takes systemd's listening sockets (LISTEN_FDS) when `at_start`.
std::optional<failure> complete_server_options(settings& out, const spelled& in, bool at_start) {
  auto& options = out.server;
  set_spelled_values(options, in);
  if (auto why = set_worker_command(out, in)) return why;
  if (auto why = read_curve_keys(options, in)) return why;
  if (auto why = set_access(out, in)) return why;
  if (auto why = rapidrpc::options_refusal(options, flag_of)) return failure{2, *why};
  if (at_start)
    if (auto why = take_activated_sockets(options)) return why;
  // A front of worker hosts may run no pool call itself.
  if (options.workers.count == 0 && options.worker_hosts.listen.empty())
    options.workers.count = rapidrpc::count_or_cores(0);
  return std::nullopt;
}

// The header of --print-config's output.
constexpr const char* config_header =
    "# rapidrpcd's settings: rapidrpcd --config FILE (docs/operations.md, \"Config file\").\n"
    "# The keys are the long options' names; an option on the command line wins over\n"
    "# its key. An empty string or array leaves a setting unset. Printed by\n"
    "# rapidrpcd --print-config.\n";

// One reading of the command line and the config file: the settings, an
// exit status (the message printed) or why they cannot be used.
std::variant<settings, int, failure> read_settings(int argc, char** argv, bool at_start) {
  settings out;
  spelled in;
  in.request_timeout = out.server.limits.request_timeout.count();
  in.idle_timeout = out.server.limits.idle_timeout.count();
  in.write_timeout = out.server.limits.write_timeout.count();

  CLI::App app{"rapidrpcd: a fast XML-RPC and JSON-RPC server serving the rapidrpc demo service",
               "rapidrpcd"};
  add_options(app, out, in);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!at_start) return failure{2, e.what()};
    return app.exit(e);
  }
  if (!out.hash_user.empty()) {
    out.what = task::hash_password;
    return out;
  }
  if (!out.keygen_name.empty()) {
    out.what = task::curve_keygen;
    return out;
  }
  if (in.worker) {
    out.what = task::worker;
    return out;
  }
  const auto keys = settings_of(app, not_settings);
  if (!out.config_file.empty()) {
    try {
      apply_config_file(out.config_file, keys);
    } catch (const config_error& e) {
      return failure{2, e.what()};
    }
  }
  out.values = current_values(keys);
  if (auto why = complete_server_options(out, in, at_start && !in.check_config && !in.print_config))
    return *why;
  if (in.print_config) {
    std::cout << config_header << to_toml(out.values);
    return 0;
  }
  if (in.check_config) {
    std::cout << "rapidrpcd: " << out.config_file << ": ok\n";
    return 0;
  }
  return out;
}

}  // namespace

std::variant<settings, int> parse_options(int argc, char** argv) {
  auto read = read_settings(argc, argv, true);
  if (auto* why = std::get_if<failure>(&read)) {
    std::cerr << "rapidrpcd: " << why->message << '\n';
    return why->status;
  }
  if (auto* status = std::get_if<int>(&read)) return *status;
  return std::move(std::get<settings>(read));
}

std::variant<settings, std::string> reparse_options(int argc, char** argv) {
  auto read = read_settings(argc, argv, false);
  if (auto* why = std::get_if<failure>(&read)) return why->message;
  if (std::get_if<int>(&read)) return std::string("the command line no longer starts a server");
  return std::move(std::get<settings>(read));
}

}  // namespace rapidrpcd
