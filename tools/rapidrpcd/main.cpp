// rapidrpcd: the rapidrpc server daemon. It parses options, wires the
// library's server with the demo service, and waits for a stop signal.
#include <rapidrpc/demo.hpp>
#include <rapidrpc/server.hpp>

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <pthread.h>
#include <string>
#include <thread>

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  rapidrpc::server_options options;
  auto& lim = options.limits;
  std::int64_t request_timeout = lim.request_timeout.count();
  std::int64_t idle_timeout = lim.idle_timeout.count();
  std::int64_t write_timeout = lim.write_timeout.count();
  double drain_timeout = 10;

  CLI::App app{"rapidrpcd: a fast XML-RPC server serving the rapidrpc demo service", "rapidrpcd"};
  app.set_version_flag("--version", "rapidrpcd " RAPIDRPC_VERSION);
  app.add_option("--host", options.host, "Host name or address to listen on")->capture_default_str();
  app.add_option("--port", options.port, "TCP port (0 picks a free one)")->capture_default_str();
  app.add_option("--threads", options.threads, "Event-loop threads (0: one per core)")->capture_default_str();
  app.add_option("--workers", options.workers, "Worker-pool threads for CPU-heavy methods (0: one per core)")
      ->capture_default_str();
  app.add_option("--path", options.paths, "A request path that serves XML-RPC (repeatable)")
      ->capture_default_str();
  app.add_option("--gzip-min-bytes", options.gzip_min_bytes,
                 "Compress responses this large when the client accepts gzip (0: never)")
      ->capture_default_str();
  auto* limits = app.add_option_group("Limits", "Limits and timeouts (see docs/limits.md)");
  limits->add_option("--max-body-bytes", lim.max_body_bytes, "Largest request body, after decompression")
      ->capture_default_str();
  limits->add_option("--max-header-bytes", lim.max_header_bytes, "Largest request line plus headers")
      ->capture_default_str();
  limits->add_option("--max-depth", lim.max_depth, "Deepest array/struct nesting")->capture_default_str();
  limits->add_option("--max-elements", lim.max_elements, "Most XML elements in one request")
      ->capture_default_str();
  limits->add_option("--multicall-max", lim.max_multicall, "Most calls in one system.multicall")
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
  lim.request_timeout = std::chrono::seconds(request_timeout);
  lim.idle_timeout = std::chrono::seconds(idle_timeout);
  lim.write_timeout = std::chrono::seconds(write_timeout);
  if (options.threads == 0) options.threads = std::max(1u, std::thread::hardware_concurrency());
  if (options.workers == 0) options.workers = std::max(1u, std::thread::hardware_concurrency());
  options.server_name = "rapidrpc/" RAPIDRPC_VERSION;

  // Stop signals are taken by sigwait() below; every thread the server starts
  // inherits this mask, so none of them is interrupted by one.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  rapidrpc::server server(options);
  rapidrpc::demo::add_methods(server.methods());
  try {
    server.start();
  } catch (const std::exception& e) {
    std::cerr << "rapidrpcd: " << e.what() << '\n';
    return 1;
  }
  std::printf("rapidrpcd %s listening on %s (paths %s, threads %u, workers %u, max body %zu bytes)\n",
              RAPIDRPC_VERSION, join(server.endpoints()).c_str(), join(options.paths).c_str(),
              options.threads, options.workers, lim.max_body_bytes);
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "rapidrpcd: %s received, finishing calls in flight (up to %.0f s)\n",
               sig == SIGINT ? "SIGINT" : "SIGTERM", drain_timeout);
  server.stop(std::chrono::milliseconds(static_cast<std::int64_t>(drain_timeout * 1000)));
  server.wait();
  std::fprintf(stderr, "rapidrpcd: stopped\n");
  return 0;
}
