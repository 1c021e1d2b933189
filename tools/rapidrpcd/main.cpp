// rapidrpcd: the rapidrpc server daemon. It parses options, wires the
// library's server with the demo service, and waits for a stop signal.
#include <rapidrpc/demo.hpp>
#include <rapidrpc/server.hpp>
#include <rapidrpc/worker.hpp>

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <malloc.h>
#include <pthread.h>
#include <set>
#include <string>
#include <termios.h>
#include <thread>
#include <unistd.h>

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// --hash-password: reads one line (without echo on a terminal) and prints
// the users-file line for it.
int hash_password_line(const std::string& user, unsigned iterations) {
  try {
    // The name as a users file would take it.
    rapidrpc::parse_users(user + ":$pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA$" + std::string(43, 'A'));
  } catch (const std::exception&) {
    std::cerr << "rapidrpcd: bad user name (1 to 64 printable ASCII characters, no ':' or '\"')\n";
    return 2;
  }
  termios saved{};
  bool tty = ::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &saved) == 0;
  if (tty) {
    termios quiet = saved;
    quiet.c_lflag &= static_cast<tcflag_t>(~ECHO);
    ::tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    std::fprintf(stderr, "password for %s: ", user.c_str());
  }
  std::string password;
  std::getline(std::cin, password);
  if (tty) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    std::fprintf(stderr, "\n");
  }
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (password.empty()) {
    std::cerr << "rapidrpcd: empty password\n";
    return 1;
  }
  std::printf("%s:%s\n", user.c_str(), rapidrpc::hash_password(password, iterations).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  rapidrpc::server_options options;
  auto& lim = options.limits;
  std::int64_t request_timeout = lim.request_timeout.count();
  std::int64_t idle_timeout = lim.idle_timeout.count();
  std::int64_t write_timeout = lim.write_timeout.count();
  double drain_timeout = 10;
  std::string mode = "async-pool";
  double method_timeout = 0;
  bool test_methods = false;
  bool worker = false;
  std::string auth_file;
  std::vector<std::string> allow;
  std::vector<std::string> deny_methods;
  std::string hash_user;
  unsigned hash_iterations = rapidrpc::default_password_iterations;

  bool no_jsonrpc = false;

  CLI::App app{"rapidrpcd: a fast XML-RPC and JSON-RPC server serving the rapidrpc demo service",
               "rapidrpcd"};
  app.set_version_flag("--version", "rapidrpcd " RAPIDRPC_VERSION);
  app.add_option("--host", options.host, "Host name or address to listen on")->capture_default_str();
  app.add_option("--port", options.port, "TCP port (0 picks a free one)")->capture_default_str();
  app.add_option("--threads", options.threads, "Event-loop threads (0: one per core)")->capture_default_str();
  app.add_option("--workers", options.workers, "Worker-pool threads for CPU-heavy methods (0: one per core)")
      ->capture_default_str();
  app.add_option("--mode", mode,
                 "How connections and methods are served: async-pool (event loops + worker pool), "
                 "async (one loop, methods inline), sequential (one connection at a time), fork "
                 "(a process per connection), prefork (pre-started processes)")
      ->check(CLI::IsMember({"async-pool", "async", "sequential", "fork", "prefork"}))
      ->capture_default_str();
  app.add_option("--processes", options.processes,
                 "fork: most child processes at once; prefork: worker processes (0: one per core)")
      ->capture_default_str();
  app.add_flag("--isolate", options.isolate,
               "async-pool: run CPU-heavy methods in supervised worker processes instead of threads");
  app.add_option("--method-timeout", method_timeout,
                 "Seconds a CPU-heavy call may run before it fails with a timeout fault (0: no limit)")
      ->capture_default_str();
  app.add_flag("--enable-test-methods", test_methods,
               "Add test.crash, test.spin and test.throw (for tests only)");
  app.add_flag("--worker", worker, "Serve the worker protocol on fd 3 (started by --isolate)")
      ->group("");
  app.add_option("--path", options.paths,
                 "A request path that serves XML-RPC, and JSON-RPC by Content-Type (repeatable)")
      ->capture_default_str();
  app.add_option("--jsonrpc-path", options.jsonrpc_paths, "A request path that serves JSON-RPC only (repeatable)")
      ->capture_default_str();
  app.add_flag("--no-jsonrpc", no_jsonrpc, "Serve XML-RPC only (over HTTP)");
  app.add_option("--zmq", options.zmq,
                 "Also serve JSON-RPC over ZeroMQ on this address (repeatable): tcp://127.0.0.1:5555, "
                 "tcp://127.0.0.1:* (a free port), ipc:///path (see docs/zmq.md)");
  app.add_option("--gzip-min-bytes", options.gzip_min_bytes,
                 "Compress responses this large when the client accepts gzip (0: never)")
      ->capture_default_str();
  auto* cert = app.add_option("--tls-cert", options.tls.certificate_chain_file,
                              "Serve HTTPS: PEM file with the server certificate, then its "
                              "intermediate CA certificates (needs --tls-key)");
  auto* key = app.add_option("--tls-key", options.tls.private_key_file,
                             "PEM file with the certificate's private key, not encrypted (needs --tls-cert)");
  cert->needs(key);
  key->needs(cert);
  auto* access = app.add_option_group("Access", "Access control and logging (see docs/access.md)");
  access->add_option("--auth-file", auth_file,
                     "Require HTTP Basic authentication against this file of name:hash lines")
      ->check(CLI::ExistingFile);
  access->add_option("--allow", allow,
                     "Serve only peers in this address range, e.g. 127.0.0.0/8 or ::1/128 (repeatable; "
                     "others get 403)");
  access->add_option("--deny-method", deny_methods,
                     "Refuse calls of this method with fault -32002 (repeatable; also inside "
                     "system.multicall)");
  access->add_option("--access-log", options.access_log,
                     "Append one line per request to this file ('-': standard output); SIGHUP "
                     "re-opens it");
  access->add_option("--hash-password", hash_user,
                     "Read a password from standard input, print the --auth-file line for USER, exit")
      ->type_name("USER");
  access->add_option("--hash-iterations", hash_iterations, "PBKDF2 iterations for --hash-password")
      ->capture_default_str();
  auto* limits = app.add_option_group("Limits", "Limits and timeouts (see docs/limits.md)");
  limits->add_option("--max-body-bytes", lim.max_body_bytes, "Largest request body, after decompression")
      ->capture_default_str();
  limits->add_option("--max-request-line-bytes", lim.max_request_line_bytes, "Largest request line")
      ->capture_default_str();
  limits->add_option("--max-header-bytes", lim.max_header_bytes, "Largest request line plus headers")
      ->capture_default_str();
  limits->add_option("--max-header-fields", lim.max_header_fields, "Most header fields in one request")
      ->capture_default_str();
  limits->add_option("--max-depth", lim.max_depth, "Deepest array/struct nesting")->capture_default_str();
  limits->add_option("--max-elements", lim.max_elements, "Most XML elements or JSON values in one request")
      ->capture_default_str();
  limits->add_option("--multicall-max", lim.max_multicall, "Most calls in one system.multicall")
      ->capture_default_str();
  limits->add_option("--max-batch", lim.max_batch, "Most requests in one JSON-RPC batch")
      ->capture_default_str();
  limits->add_option("--max-connections", lim.max_connections, "Most connections open at once")
      ->capture_default_str();
  limits->add_option("--request-timeout", request_timeout, "Seconds to receive a whole request")
      ->capture_default_str();
  limits->add_option("--idle-timeout", idle_timeout, "Seconds a keep-alive connection may stay idle")
      ->capture_default_str();
  limits->add_option("--write-timeout", write_timeout, "Seconds a client may take to read a response")
      ->capture_default_str();
  limits->add_option("--drain-timeout", drain_timeout,
                     "Seconds calls in flight get to finish after SIGINT/SIGTERM")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (!hash_user.empty()) {
    try {
      return hash_password_line(hash_user, hash_iterations);
    } catch (const std::exception& e) {
      std::cerr << "rapidrpcd: " << e.what() << '\n';
      return 2;
    }
  }
  if (worker) {
    // A worker process of --isolate: the same methods, served over fd 3.
    rapidrpc::registry methods;
    rapidrpc::demo::add_methods(methods);
    if (test_methods) rapidrpc::demo::add_test_methods(methods);
    return rapidrpc::serve_worker(methods, 3);
  }
  for (auto m : {rapidrpc::serving_mode::async_pool, rapidrpc::serving_mode::async,
                 rapidrpc::serving_mode::sequential, rapidrpc::serving_mode::fork,
                 rapidrpc::serving_mode::prefork})
    if (rapidrpc::mode_name(m) == mode) options.mode = m;
  if (options.isolate && options.mode != rapidrpc::serving_mode::async_pool) {
    std::cerr << "rapidrpcd: --isolate applies to --mode async-pool only\n";
    return 2;
  }
  options.method_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(method_timeout * 1000));
  if (options.isolate) {
    char self[4096];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
      std::cerr << "rapidrpcd: cannot find its own executable for --isolate\n";
      return 1;
    }
    options.worker_command = {std::string(self, static_cast<std::size_t>(n)), "--worker"};
    if (test_methods) options.worker_command.push_back("--enable-test-methods");
  }
  options.jsonrpc = !no_jsonrpc;
  lim.request_timeout = std::chrono::seconds(request_timeout);
  lim.idle_timeout = std::chrono::seconds(idle_timeout);
  lim.write_timeout = std::chrono::seconds(write_timeout);
  if (options.threads == 0) options.threads = std::max(1u, std::thread::hardware_concurrency());
  if (options.workers == 0) options.workers = std::max(1u, std::thread::hardware_concurrency());
  options.server_name = "rapidrpc/" RAPIDRPC_VERSION;
  try {
    if (!auth_file.empty()) {
      options.users = rapidrpc::load_users(auth_file);
      if (options.users.empty()) {
        std::cerr << "rapidrpcd: " << auth_file << " names no user\n";
        return 1;
      }
    }
    for (const auto& cidr : allow) options.allow.push_back(rapidrpc::ip_network::parse(cidr));
  } catch (const std::exception& e) {
    std::cerr << "rapidrpcd: " << e.what() << '\n';
    return 1;
  }
  if (!deny_methods.empty()) {
    options.authorize = [denied = std::set<std::string, std::less<>>(deny_methods.begin(), deny_methods.end())](
                            std::string_view method, const rapidrpc::call_peer*) {
      return !denied.contains(method);
    };
  }

  // Buffers of 1 MiB or more (large bodies, inflated gzip) are mapped and
  // unmapped, so what a burst of large or hostile requests took goes back to
  // the system. glibc's default raises this threshold to the largest block
  // freed (up to 32 MiB) and then keeps up to twice that unused in each
  // thread's arena: a few gzip bombs would leave ~40 MiB per loop thread.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);

  // Stop signals (and SIGHUP, which re-opens the access log) are taken by
  // sigwait() below; every thread the server starts inherits this mask, so
  // none of them is interrupted by one.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  rapidrpc::server server(options);
  rapidrpc::demo::add_methods(server.methods());
  if (test_methods) rapidrpc::demo::add_test_methods(server.methods());
  try {
    server.start();
  } catch (const std::exception& e) {
    std::cerr << "rapidrpcd: " << e.what() << '\n';
    return 1;
  }
  std::string shape;
  switch (options.mode) {
    case rapidrpc::serving_mode::async_pool:
      shape = "threads " + std::to_string(options.threads) + ", workers " +
              std::to_string(options.workers) + (options.isolate ? " (processes)" : " (threads)");
      break;
    case rapidrpc::serving_mode::fork:
    case rapidrpc::serving_mode::prefork:
      shape = "processes " + std::to_string(options.processes ? options.processes
                                                              : std::max(1u, std::thread::hardware_concurrency()));
      break;
    default:
      shape = "one thread";
  }
  for (const auto& z : server.zmq_endpoints()) std::printf("rapidrpcd: JSON-RPC over ZeroMQ at %s\n", z.c_str());
  std::printf("rapidrpcd %s listening on %s (%s, mode %s, %s, paths %s, max body %zu bytes)\n",
              RAPIDRPC_VERSION, join(server.endpoints()).c_str(),
              options.tls.enabled() ? "https" : "http", mode.c_str(), shape.c_str(),
              join(options.paths).c_str(), lim.max_body_bytes);
  std::fflush(stdout);

  int sig = 0;
  while (sigwait(&stop_signals, &sig) == 0 && sig == SIGHUP) server.reopen_logs();
  std::fprintf(stderr, "rapidrpcd: %s received, finishing calls in flight (up to %.0f s)\n",
               sig == SIGINT ? "SIGINT" : "SIGTERM", drain_timeout);
  server.stop(std::chrono::milliseconds(static_cast<std::int64_t>(drain_timeout * 1000)));
  server.wait();
  std::fprintf(stderr, "rapidrpcd: stopped\n");
  return 0;
}
