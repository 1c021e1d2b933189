#include "upgrade.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

extern char** environ;

namespace rapidrpcd {

namespace {

constexpr const char* ready_variable = "RAPIDRPCD_UPGRADE_FD";
// How long a successor that did not serve gets to end before SIGKILL.
constexpr std::chrono::seconds end_grace{5};

bool starts_with(const char* s, std::string_view prefix) {
  return std::strncmp(s, prefix.data(), prefix.size()) == 0;
}

// The command line again, without the sockets of the old one: the
// successor takes the ones handed to it (LISTEN_FDS) instead.
std::vector<std::string> without_listen_fds(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--listen-fd") {
      ++i;
      continue;
    }
    if (starts_with(argv[i].c_str(), "--listen-fd=")) continue;
    out.push_back(argv[i]);
  }
  return out;
}

// The successor's environment: this one's, with the handed sockets
// (LISTEN_FDS, LISTEN_FDNAMES: the first `rpc` ones "rpc", the rest
// "admin"), the ready pipe's descriptor, and LISTEN_PID last, left for the
// child to write its pid into.
std::vector<std::string> successor_environment(std::size_t rpc, std::size_t count,
                                               int ready_target) {
  std::vector<std::string> env_text;
  std::size_t env_count = 0;
  while (environ[env_count] != nullptr) ++env_count;
  env_text.reserve(env_count + 4);
  for (char** e = environ; *e != nullptr; ++e) {
    if (starts_with(*e, "LISTEN_PID=") || starts_with(*e, "LISTEN_FDS=") ||
        starts_with(*e, "LISTEN_FDNAMES=") || starts_with(*e, "RAPIDRPCD_UPGRADE_FD="))
      continue;
    env_text.emplace_back(*e);
  }
  std::string names;
  for (std::size_t i = 0; i < count; ++i)
    names += std::string(i == 0 ? "" : ":") + (i < rpc ? "rpc" : "admin");
  env_text.push_back("LISTEN_FDS=" + std::to_string(count));
  env_text.push_back("LISTEN_FDNAMES=" + names);
  env_text.push_back(std::string(ready_variable) + "=" + std::to_string(ready_target));
  env_text.push_back("LISTEN_PID=" + std::string(20, '\0'));  // the child writes its pid
  return env_text;
}

// Waits for the successor `pid` to say it serves on `ready_fd` (closed
// here): its pid if it does; -1 if it ends first or does not within
// `timeout`, then reaped (killed if it lingers), saying why.
pid_t await_successor(pid_t pid, int ready_fd, const std::string& exe,
                      std::chrono::seconds timeout) {
  // It serves once it writes a byte; its end of the pipe closing first
  // means it ended (a bad binary, a config it refused).
  pollfd p{ready_fd, POLLIN, 0};
  int polled;
  do {
    polled = ::poll(&p, 1, static_cast<int>(timeout.count() * 1000));
  } while (polled < 0 && errno == EINTR);
  char byte = 0;
  const bool served = polled > 0 && ::read(ready_fd, &byte, 1) == 1;
  ::close(ready_fd);
  if (served) return pid;
  if (polled == 0) {
    std::fprintf(stderr,
                 "rapidrpcd: upgrade: process %d did not serve within %lld s; stopping it\n",
                 static_cast<int>(pid), static_cast<long long>(timeout.count()));
    ::kill(pid, SIGTERM);
  }
  // It is given a few seconds to end (of SIGTERM, or of its own accord once
  // its end of the pipe closed), then killed: this thread takes the stop
  // signals, so waiting on a process that ignores SIGTERM, or that closed
  // the pipe and lives on, would leave this one unable to stop or upgrade.
  int status = 0;
  const auto kill_at = std::chrono::steady_clock::now() + end_grace;
  pid_t reaped = 0;
  while ((reaped = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < kill_at)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (reaped == 0) {
    std::fprintf(stderr, "rapidrpcd: upgrade: process %d did not end within %lld s; killing it\n",
                 static_cast<int>(pid), static_cast<long long>(end_grace.count()));
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  if (WIFEXITED(status))
    std::fprintf(stderr, "rapidrpcd: upgrade: process %d (%s) exited with status %d\n",
                 static_cast<int>(pid), exe.c_str(), WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    std::fprintf(stderr, "rapidrpcd: upgrade: process %d (%s) ended by signal %d\n",
                 static_cast<int>(pid), exe.c_str(), WTERMSIG(status));
  return -1;
}

}  // namespace

pid_t start_successor(const std::string& exe, const std::vector<std::string>& argv,
                      const std::vector<int>& rpc_fds, const std::vector<int>& admin_fds,
                      std::chrono::seconds timeout) {
  std::vector<int> fds = rpc_fds;
  fds.insert(fds.end(), admin_fds.begin(), admin_fds.end());
  const int count = static_cast<int>(fds.size());
  const int ready_target = 3 + count;  // the successor's end of the ready pipe

  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    std::perror("rapidrpcd: upgrade: pipe");
    return -1;
  }
  // Everything the child will move into place, first out of the way of
  // the places (3 ...), so that no dup2() overwrites a source.
  std::vector<int> high;
  high.reserve(fds.size());
  for (int fd : fds) high.push_back(::fcntl(fd, F_DUPFD_CLOEXEC, ready_target + 1));
  const int ready_high = ::fcntl(ready[1], F_DUPFD_CLOEXEC, ready_target + 1);
  ::close(ready[1]);
  const auto close_high = [&] {
    for (int fd : high)
      if (fd >= 0) ::close(fd);
    if (ready_high >= 0) ::close(ready_high);
  };
  for (int fd : high) {
    if (fd < 0 || ready_high < 0) {
      std::perror("rapidrpcd: upgrade: dup");
      close_high();
      ::close(ready[0]);
      return -1;
    }
  }

  // Everything the child needs is made here: after fork() it may only make
  // async-signal-safe calls.
  std::vector<std::string> env_text =
      successor_environment(rpc_fds.size(), fds.size(), ready_target);
  std::vector<char*> envp;
  envp.reserve(env_text.size() + 1);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  char* pid_digits = env_text.back().data() + std::strlen("LISTEN_PID=");
  std::vector<std::string> args = without_listen_fds(argv);
  std::vector<char*> args_p;
  args_p.reserve(args.size() + 1);
  for (auto& a : args) args_p.push_back(a.data());
  args_p.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) {
    for (int i = 0; i < count; ++i) ::dup2(high[static_cast<std::size_t>(i)], 3 + i);
    ::dup2(ready_high, ready_target);  // dup2 leaves the copies inheritable
    ::close_range(static_cast<unsigned>(ready_target) + 1, ~0U, 0);
    // LISTEN_PID is this process's pid: sd_listen_fds() checks it.
    char digits[20];
    int n = 0;
    for (pid_t p = ::getpid(); p > 0; p /= 10) digits[n++] = static_cast<char>('0' + p % 10);
    for (int i = 0; i < n; ++i) pid_digits[i] = digits[n - 1 - i];
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(exe.c_str(), args_p.data(), envp.data());
    ::_exit(127);
  }
  close_high();
  if (pid < 0) {
    std::perror("rapidrpcd: upgrade: fork");
    ::close(ready[0]);
    return -1;
  }

  return await_successor(pid, ready[0], exe, timeout);
}

namespace {
int predecessor_fd = -1;  // the write end of the predecessor's ready pipe
}  // namespace

bool take_predecessor_channel() {
  const char* text = std::getenv(ready_variable);
  if (text == nullptr) return false;
  const int fd = std::atoi(text);
  ::unsetenv(ready_variable);
  if (fd < 3 || ::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return false;
  predecessor_fd = fd;
  return true;
}

bool is_successor() { return predecessor_fd >= 0; }

void successor_serves() {
  if (predecessor_fd < 0) return;
  [[maybe_unused]] auto n = ::write(predecessor_fd, "1", 1);
  ::close(predecessor_fd);
  predecessor_fd = -1;
}

}  // namespace rapidrpcd
