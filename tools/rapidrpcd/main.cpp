// rapidrpcd: the rapidrpc server daemon. It parses options (options.cpp,
// config.cpp), wires the library's server with the demo service, and waits
// for a stop signal.
#include "curve.hpp"
#include "options.hpp"
#include "reload.hpp"
#include "upgrade.hpp"

#include <rapidrpc/demo.hpp>
#include <rapidrpc/server.hpp>
#include <rapidrpc/worker.hpp>

#include <malloc.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

namespace {

// The command line, for a binary upgrade's successor.
std::vector<std::string> command_line;

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
    rapidrpc::parse_users(user + ":$pbkdf2-sha256$1000$AAAAAAAAAAAAAAAAAAAAAA$" +
                          std::string(43, 'A'));
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

// The start-up line's description of the threads or processes serving.
std::string serving_shape(const rapidrpc::server_options& options) {
  switch (options.serving.mode) {
    case rapidrpc::serving_mode::async_pool:
      return "threads " + std::to_string(options.serving.threads) + ", workers " +
             std::to_string(options.workers.count) +
             (options.workers.isolate ? " (processes)" : " (threads)");
    case rapidrpc::serving_mode::fork:
    case rapidrpc::serving_mode::prefork:
      return "processes " + std::to_string(rapidrpc::count_or_cores(options.serving.processes));
    default:
      return "one thread";
  }
}

// Whether standard error is systemd's journal (JOURNAL_STREAM names its
// device and inode), which reads a "<N>" before a line as its priority.
bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  struct stat st {};
  if (stream == nullptr || ::fstat(STDERR_FILENO, &st) != 0) return false;
  unsigned long long dev = 0, ino = 0;
  return std::sscanf(stream, "%llu:%llu", &dev, &ino) == 2 && dev == st.st_dev && ino == st.st_ino;
}

// The library's own lines: to standard error as "rapidrpc: TEXT", with the
// line's level before it for the journal.
rapidrpc::log_sink stderr_lines() {
  return [journal = stderr_is_journal()](rapidrpc::log_level level, std::string_view text) {
    std::string line;
    if (journal) line = "<" + std::to_string(static_cast<int>(level)) + ">";
    line.append("rapidrpc: ").append(text) += '\n';
    std::fwrite(line.data(), 1, line.size(), stderr);
  };
}

// The process's own set-up before a server starts: the heap's thresholds,
// the signals taken by sigwait() (returned), the ignored ones.
sigset_t set_up_process() {
  // Large buffers (bodies, replies, inflated gzip, the values of a large
  // call) come from the heap, not from mappings of their own, and freeing
  // them gives nothing back at once: back-to-back large requests reuse the
  // same pages instead of faulting in fresh ones (half the CPU of a large
  // call went to that). Each loop gives the heap's free memory back to
  // the system (malloc_trim) once no large buffer has been freed for a
  // second (loop::large_buffer_freed), so what a burst of large or hostile
  // requests took still goes back. Fixed thresholds: glibc's default would
  // move them with the largest block freed. One arena: malloc_trim gives
  // back the free end (the top) of the main arena only, not of the arenas
  // glibc makes for other threads; small blocks do not take its lock (each
  // thread's tcache serves them).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_ARENA_MAX, 1);

  // Stop signals (and SIGHUP, which reloads, and SIGUSR1, which re-opens
  // the access log) are taken by sigwait(); every thread the server starts
  // inherits this mask, so none of them is interrupted by one.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);
  sigaddset(&stop_signals, SIGUSR1);
  sigaddset(&stop_signals, SIGUSR2);  // a binary upgrade (upgrade.hpp)
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // A write past a file-size limit (ulimit -f, systemd's LimitFSIZE=) fails
  // with EFBIG, which the access log reports and counts, rather than
  // killing the daemon.
  std::signal(SIGXFSZ, SIG_IGN);
  return stop_signals;
}

// The methods: the demo service's, or --python's. False (said why) if the
// Python module cannot be served.
bool add_methods(rapidrpc::server& server, const rapidrpcd::settings& settings) {
  if (!settings.python.on()) {
    rapidrpc::demo::add_methods(server.methods());
    if (settings.test_methods) rapidrpc::demo::add_test_methods(server.methods());
    return true;
  }
  try {
    rapidrpcd::add_python_methods(server.methods(), settings.python);
    return true;
  } catch (const std::exception& e) {
    std::cerr << "rapidrpcd: cannot serve --python " << settings.python.module << ": " << e.what()
              << '\n';
    return false;
  }
}

// The start-up lines, and the service manager told it serves.
void say_serving(const rapidrpc::server& server, const rapidrpc::server_options& options) {
  for (const auto& z : server.zmq_endpoints())
    std::printf("rapidrpcd: JSON-RPC over ZeroMQ at %s\n", z.c_str());
  for (const auto& w : server.worker_endpoints())
    std::printf("rapidrpcd: worker hosts connect at %s\n", w.c_str());
  if (!options.worker_hosts.connect.empty())
    std::printf("rapidrpcd: a worker host of %s, %u calls at once\n",
                options.worker_hosts.connect.c_str(), options.workers.count);
  if (!options.relay.socket.empty())
    std::printf("rapidrpcd: relaying every request to %s\n", options.relay.socket.c_str());
  if (!options.admin.address.empty())
    std::printf("rapidrpcd: admin (/metrics, /healthz, /readyz) on %s\n",
                join(server.admin_endpoints()).c_str());
  std::printf("rapidrpcd %s listening on %s (%s, mode %s, %s, paths %s, max body %zu bytes)\n",
              RAPIDRPC_VERSION, join(server.endpoints()).c_str(),
              options.tls.enabled() ? "https" : "http",
              std::string(rapidrpc::mode_name(options.serving.mode)).c_str(),
              serving_shape(options).c_str(), join(options.http.paths).c_str(),
              options.limits.max_body_bytes);
  std::fflush(stdout);

  // Under systemd (Type=notify, NOTIFY_SOCKET set), it hears when the
  // server serves, reloads and stops; elsewhere these do nothing.
  sd_notifyf(0, "READY=1\nSTATUS=listening on %s", join(server.endpoints()).c_str());
  // Started by a binary upgrade: the predecessor may now drain.
  rapidrpcd::successor_serves();
}

// --drain-delay: serves as before, with /readyz saying 503, so that a load
// balancer stops sending calls here before connections close
// (operations.md, "Behind a load balancer"). SIGHUP still reloads, SIGUSR1
// still re-opens the access log; another stop signal changes nothing.
void announce_stop(rapidrpc::server& server, const rapidrpcd::settings& settings, int sig,
                   const sigset_t& stop_signals, const std::function<void()>& reload) {
  server.announce_stop();
  sd_notify(0, "STOPPING=1\nSTATUS=announcing the stop on /readyz");
  std::fprintf(stderr,
               "rapidrpcd: %s received, serving %.3g s more with /readyz answering 503, then "
               "finishing calls in flight (up to %.0f s)\n",
               sig == SIGINT ? "SIGINT" : "SIGTERM", settings.drain_delay, settings.drain_timeout);
  const auto until =
      std::chrono::steady_clock::now() +
      std::chrono::microseconds(static_cast<std::int64_t>(settings.drain_delay * 1e6));
  for (auto now = std::chrono::steady_clock::now(); now < until;
       now = std::chrono::steady_clock::now()) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(until - now).count();
    const timespec wait{static_cast<time_t>(left / 1000000000),
                        static_cast<long>(left % 1000000000)};
    const int received = ::sigtimedwait(&stop_signals, nullptr, &wait);
    if (received == SIGHUP) reload();
    if (received == SIGUSR1) server.reopen_logs();
  }
  sd_notify(0, "STATUS=finishing calls in flight");
}

// Serves until SIGINT or SIGTERM, or until SIGUSR2's successor serves
// (upgrade.hpp); SIGHUP reads the config file again and re-opens the access
// log, SIGUSR1 only re-opens it (logrotate's signal: the config file and
// --python's code stay as they are). `argv` is read again on SIGHUP.
int serve(rapidrpcd::settings& settings, int argc, char** argv) {
  settings.server.log.lines = stderr_lines();
  const auto& options = settings.server;
  const sigset_t stop_signals = set_up_process();
  // The executable's path now: a binary upgrade starts whatever is
  // installed there then (the running one's file may be gone by then).
  std::string executable;
  try {
    executable = rapidrpcd::self_executable();
  } catch (const std::exception&) {
  }

  // Relaying to the program that started it (--relay-keep-pid names its
  // parent), rapidrpcd ends with that program: SIGTERM, taken below.
  if (!options.relay.socket.empty() && options.relay.keep_pid != 0 &&
      options.relay.keep_pid == ::getppid()) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != options.relay.keep_pid) return 1;
  }

  rapidrpc::server server(options);
  if (!add_methods(server, settings)) return 1;
  try {
    server.start();
  } catch (const std::exception& e) {
    std::cerr << "rapidrpcd: " << e.what() << '\n';
    return 1;
  }
  // The server serves its own duplicates; worker processes get none.
  for (int fd : options.listen.fds) ::close(fd);
  for (int fd : options.admin.listen_fds) ::close(fd);
  say_serving(server, options);

  const std::function<void()> reload = [&] {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%lld",
               static_cast<long long>(now.tv_sec) * 1000000 + now.tv_nsec / 1000);
    if (!settings.config_file.empty()) rapidrpcd::reload_settings(settings, argc, argv);
    server.reopen_logs();
    // READY=1 once the workers run the new code, if they are being replaced.
    if (settings.python.on() && rapidrpcd::reload_python(server, settings.python)) return;
    sd_notify(0, "READY=1");
  };
  int sig = 0;
  pid_t successor = -1;
  while (sigwait(&stop_signals, &sig) == 0) {
    if (sig == SIGHUP) {
      reload();
      continue;
    }
    if (sig == SIGUSR1) {
      std::fputs("rapidrpcd: SIGUSR1 received: re-opening the access log\n", stderr);
      server.reopen_logs();
      continue;
    }
    if (sig == SIGUSR2) {
      std::fprintf(stderr, "rapidrpcd: SIGUSR2 received: starting %s to take over\n",
                   executable.c_str());
      successor =
          rapidrpcd::start_successor(executable, command_line, server.listening_descriptors(),
                                     server.admin_descriptors(), std::chrono::seconds(30));
      if (successor > 0) break;
      std::fprintf(stderr, "rapidrpcd: upgrade failed; this process goes on serving\n");
      continue;
    }
    break;
  }
  if (successor > 0) {
    // The successor serves on the same sockets: this process hands it the
    // service (under systemd it becomes the main process) and drains.
    sd_notifyf(0, "MAINPID=%d", static_cast<int>(successor));
    std::fprintf(stderr,
                 "rapidrpcd: process %d serves now; finishing calls in flight (up to %.0f s)\n",
                 static_cast<int>(successor), settings.drain_timeout);
  } else if (settings.drain_delay > 0) {
    announce_stop(server, settings, sig, stop_signals, reload);
  } else {
    sd_notify(0, "STOPPING=1\nSTATUS=finishing calls in flight");
    std::fprintf(stderr, "rapidrpcd: %s received, finishing calls in flight (up to %.0f s)\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM", settings.drain_timeout);
  }
  server.stop(std::chrono::milliseconds(static_cast<std::int64_t>(settings.drain_timeout * 1000)));
  server.wait();
  std::fprintf(stderr, "rapidrpcd: stopped\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  command_line.assign(argv, argv + argc);
  rapidrpcd::take_predecessor_channel();  // before anything can start a process
  auto parsed = rapidrpcd::parse_options(argc, argv);
  if (const int* status = std::get_if<int>(&parsed)) return *status;
  auto& settings = std::get<rapidrpcd::settings>(parsed);
  switch (settings.what) {
    case rapidrpcd::task::hash_password:
      try {
        return hash_password_line(settings.hash_user, settings.hash_iterations);
      } catch (const std::exception& e) {
        std::cerr << "rapidrpcd: " << e.what() << '\n';
        return 2;
      }
    case rapidrpcd::task::curve_keygen:
      return rapidrpcd::write_curve_key_files(settings.keygen_name);
    case rapidrpcd::task::worker: {
      // A worker process of --isolate: the same methods, served over fd 3.
      rapidrpc::registry methods;
      rapidrpc::demo::add_methods(methods);
      if (settings.test_methods) rapidrpc::demo::add_test_methods(methods);
      return rapidrpc::serve_worker(methods, 3);
    }
    case rapidrpcd::task::serve:
      break;
  }
  return serve(settings, argc, argv);
}
