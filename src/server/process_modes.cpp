#include "server/process_modes.hpp"

#include "server/listen.hpp"
#include "server/socket_read.hpp"
#include "server/watchdog.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/v6_only.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace rapidrpc::detail {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using clock = std::chrono::steady_clock;

namespace {

void set_flags(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  ask_for_read_counts(fd);  // for the connections it accepts (connection.cpp's reads)
}

/// Waits for a connection on any listener; -1 once `stop_fd` is readable or
/// hung up. Listeners are non-blocking: when several processes wake for one
/// connection, the losers see EAGAIN and wait again.
int accept_one(const std::vector<int>& listeners, int stop_fd, int timeout_ms) {
  std::vector<pollfd> fds;
  fds.reserve(listeners.size() + 1);
  for (int l : listeners) fds.push_back({l, POLLIN, 0});
  fds.push_back({stop_fd, POLLIN, 0});
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return -2;  // timeout or EINTR
  if (fds.back().revents != 0) return -1;
  for (std::size_t i = 0; i + 1 < fds.size(); ++i) {
    if (!(fds[i].revents & POLLIN)) continue;
    int fd = ::accept4(fds[i].fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno == EMFILE || errno == ENFILE) ::usleep(100'000);  // never spin
  }
  return -2;
}

/// In a child: serves one connection to its end.
void serve_connection(serving_state& shared, int fd) {
  {
    loop l(shared, shared.child_shard);
    l.serve_here(fd);
  }
  // What the connection held (its last reply, say) was freed with the
  // loop, after the loop's own trim: a prefork worker lives on.
  trim_heap();
}

bool reap_one(std::vector<int>& children, int pid) {
  auto it = std::find(children.begin(), children.end(), pid);
  if (it == children.end()) return false;
  children.erase(it);
  return true;
}

}  // namespace

process_supervisor::process_supervisor(serving_state& shared, serving_mode mode, unsigned processes,
                                       respawn_rule respawn)
    : shared_(shared), mode_(mode), processes_(processes), respawn_(respawn) {
  // A socket pair, not a pipe: a word sent after the supervisor process has
  // gone is an error, not a SIGPIPE.
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control_pipe_) != 0 ||
      ::pipe2(workers_pipe_, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe");
}

process_supervisor::~process_supervisor() {
  stop(std::chrono::milliseconds(0));
  join();
  for (int fd : listeners_) ::close(fd);
  for (int fd : {control_pipe_[0], control_pipe_[1], workers_pipe_[0], workers_pipe_[1]})
    if (fd >= 0) ::close(fd);
}

tcp::endpoint process_supervisor::adopt(int fd) {
  tcp::endpoint bound = local_endpoint(fd);
  int copy = duplicate(fd);
  set_flags(copy);
  listeners_.push_back(copy);
  bound_.push_back(bound);
  return bound;
}

tcp::endpoint process_supervisor::listen(const tcp::endpoint& ep) {
  net::io_context io;
  tcp::acceptor a(io);
  bind_acceptor(a, ep, false);  // one socket per address, shared by the processes
  a.listen(net::socket_base::max_listen_connections);
  tcp::endpoint bound = a.local_endpoint();
  int fd = a.release();
  set_flags(fd);
  listeners_.push_back(fd);
  bound_.push_back(bound);
  return bound;
}

std::vector<std::string> process_supervisor::endpoints() const { return host_ports(bound_); }

std::vector<int> process_supervisor::listening_descriptors() const {
  return distinct_sockets(listeners_);
}

void process_supervisor::spawn() {
  const int pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) supervise();
  // The server keeps its copies of the listening sockets (for
  // listening_descriptors()) until stop(), and nothing of the workers'.
  ::close(control_pipe_[0]);
  control_pipe_[0] = -1;
  for (int& fd : workers_pipe_) {
    ::close(fd);
    fd = -1;
  }
  pid_ = pid;
}

void process_supervisor::send(const void* message, std::size_t size) {
  // Fails only once the supervisor process has gone, which join() reports.
  [[maybe_unused]] auto n = ::send(control_pipe_[1], message, size, MSG_NOSIGNAL);
}

void process_supervisor::start() {
  std::lock_guard lock(mutex_);
  if (pid_ < 0 || started_ || stopped_) return;
  started_ = true;
  const char go = 'g';
  send(&go, 1);
  // Its answer, once prefork's workers are forked: when start() returns the
  // processes that serve exist, as they did when the server forked them.
  // End of stream instead means it died (join() says how).
  char answer = 0;
  while (::recv(control_pipe_[1], &answer, 1, 0) < 0 && errno == EINTR) {
  }
}

void process_supervisor::stop(std::chrono::milliseconds drain) {
  std::lock_guard lock(mutex_);
  if (stopped_) return;
  stopped_ = true;
  // New connections are refused once every copy of the listening sockets
  // is closed: these, the supervisor's, and a busy prefork worker's when
  // its connection ends.
  for (int fd : listeners_) ::close(fd);
  listeners_.clear();
  if (pid_ < 0) return;
  char message[1 + sizeof(std::chrono::milliseconds::rep)] = {'s'};
  const auto ms = drain.count();
  std::memcpy(message + 1, &ms, sizeof ms);
  send(message, sizeof message);
}

void process_supervisor::join() {
  int pid;
  {
    std::lock_guard lock(mutex_);
    pid = pid_;
  }
  if (pid < 0) return;
  int status = 0;
  int r;
  while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  std::lock_guard lock(mutex_);
  if (pid_ != pid) return;  // another thread reaped it
  pid_ = -1;
  if (r == pid && WIFSIGNALED(status))
    shared_.lines.say(log_level::error, "the process supervisor %d died from signal %d", pid,
                      WTERMSIG(status));
}

// The supervisor process: it waits for start(), supervises, drains, and
// leaves with _exit() (the server's objects are the server's to destroy).
void process_supervisor::supervise() {
  ::close(control_pipe_[1]);
  control_pipe_[1] = -1;
  char word = 0;
  ssize_t n;
  while ((n = ::read(control_pipe_[0], &word, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1 && word == 'g') {
    if (mode_ == serving_mode::fork)
      supervise_fork();
    else
      supervise_prefork();
  }
  ::_exit(0);
}

// Tells start() the supervisor is serving.
void process_supervisor::started() {
  const char word = 'r';
  [[maybe_unused]] auto n = ::send(control_pipe_[0], &word, 1, MSG_NOSIGNAL);
}

// A child of fork or prefork counts into the metrics shard of its slot,
// after the ZeroMQ endpoint's (shard 0); the slot's gauges are zeroed when
// the child is reaped, since it may have died in the middle of a call.
namespace {
std::size_t slot_shard(std::size_t slot) { return 1 + slot; }
}  // namespace

void process_supervisor::supervise_fork() {
  started();
  std::vector<int> slots(processes_, -1);  // each slot's child
  for (;;) {
    int pid;
    while ((pid = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
      reap_one(children_, pid);
      for (std::size_t i = 0; i < slots.size(); ++i) {
        if (slots[i] != pid) continue;
        slots[i] = -1;
        if (shared_.metrics != nullptr) shared_.metrics->reset_gauges(slot_shard(i));
      }
    }
    if (children_.size() >= processes_) {
      // At the cap, accepting waits (the ForkingMixIn behaviour) until a
      // child exits: a pidfd becomes readable then, so the next connection
      // is taken at once rather than at the next poll.
      std::vector<pollfd> fds{{control_pipe_[0], POLLIN, 0}};
      for (int child : children_) {
        int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
        if (pidfd >= 0) fds.push_back({pidfd, POLLIN, 0});
      }
      int ready = ::poll(fds.data(), fds.size(), 200);
      bool stopping = ready > 0 && fds[0].revents != 0;
      for (std::size_t i = 1; i < fds.size(); ++i) ::close(fds[i].fd);
      if (stopping) break;
      continue;
    }
    int fd = accept_one(listeners_, control_pipe_[0], 200);
    if (fd == -1) break;
    if (fd < 0) continue;
    const std::size_t slot =
        static_cast<std::size_t>(std::find(slots.begin(), slots.end(), -1) - slots.begin());
    pid = ::fork();
    if (pid == 0) {
      shared_.child_shard = slot_shard(slot);
      ::close(control_pipe_[0]);
      for (int l : listeners_) ::close(l);
      watchdog::install(shared_.tls == nullptr);
      serve_connection(shared_, fd);
      ::_exit(0);
    }
    ::close(fd);
    if (pid > 0) {
      children_.push_back(pid);
      if (slot < slots.size()) slots[slot] = pid;
    }
  }
  drain_children();
}

int process_supervisor::spawn_prefork_worker(std::size_t slot) {
  int pid = ::fork();
  if (pid != 0) return pid;
  shared_.child_shard = slot_shard(slot);
  // The worker: its own copy of the listening sockets; it stops when the
  // supervisor's end of workers_pipe_ closes.
  ::close(workers_pipe_[1]);
  ::close(control_pipe_[0]);
  watchdog::install(shared_.tls == nullptr);
  for (;;) {
    int fd = accept_one(listeners_, workers_pipe_[0], -1);
    if (fd == -1) break;
    if (fd < 0) continue;
    serve_connection(shared_, fd);
  }
  ::_exit(0);
}

void process_supervisor::supervise_prefork() {
  struct slot {
    int pid = -1;
    clock::time_point started{};
    clock::time_point restart_at{};
    unsigned quick_deaths = 0;
  };
  std::vector<slot> slots(processes_);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    slots[i].pid = spawn_prefork_worker(i);
    slots[i].started = clock::now();
    if (slots[i].pid > 0) children_.push_back(slots[i].pid);
  }
  started();
  for (;;) {
    pollfd p{control_pipe_[0], POLLIN, 0};
    if (::poll(&p, 1, 20) > 0) break;
    int status = 0;
    int pid;
    auto now = clock::now();
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      reap_one(children_, pid);
      for (std::size_t i = 0; i < slots.size(); ++i) {
        auto& s = slots[i];
        if (s.pid != pid) continue;
        s.pid = -1;
        if (auto* m = shared_.metrics) {
          m->reset_gauges(slot_shard(i));
          // The watchdog ends a process whose call ran past its timeout
          // with status 3 (watchdog.cpp).
          const bool timed_out = WIFEXITED(status) && WEXITSTATUS(status) == 3;
          m->pool().restarted(timed_out ? metrics::restart_cause::timeout
                                        : metrics::restart_cause::crash);
        }
        // A worker that dies young, again and again, is restarted ever more
        // slowly (by default up to 5 s), so a crash loop does not eat the
        // machine.
        auto delay = respawn_.died(s.quick_deaths, s.started, now);
        s.restart_at = now + delay;
        // The delay is said, so a crash loop shows in the log as one.
        if (WIFSIGNALED(status)) {
          if (delay.count() == 0)
            shared_.lines.say(log_level::error,
                              "prefork worker %d died from signal %d; replacing it", pid,
                              WTERMSIG(status));
          else
            shared_.lines.say(log_level::error,
                              "prefork worker %d died from signal %d; replacing it in %g s "
                              "(%u quick deaths in a row)",
                              pid, WTERMSIG(status), static_cast<double>(delay.count()) / 1000.0,
                              s.quick_deaths);
        }
      }
    }
    std::int64_t up = 0;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      auto& s = slots[i];
      if (s.pid == -1 && now >= s.restart_at) {
        s.pid = spawn_prefork_worker(i);
        s.started = now;
        if (s.pid > 0) children_.push_back(s.pid);
      }
      up += s.pid > 0 ? 1 : 0;
    }
    if (auto* m = shared_.metrics) m->pool().processes_up.store(up, std::memory_order_relaxed);
  }
  drain_children();
}

// Stop: no new connections; children finish theirs until the deadline.
void process_supervisor::drain_children() {
  for (int fd : listeners_) ::close(fd);
  listeners_.clear();
  ::close(workers_pipe_[1]);
  workers_pipe_[1] = -1;
  // The stop word says the drain; without it (the server gone) the default.
  char message[1 + sizeof drain_ms_] = {};
  if (::recv(control_pipe_[0], message, sizeof message, MSG_WAITALL) ==
          static_cast<ssize_t>(sizeof message) &&
      message[0] == 's')
    std::memcpy(&drain_ms_, message + 1, sizeof drain_ms_);
  auto deadline = clock::now() + std::chrono::milliseconds(drain_ms_);
  while (!children_.empty() && clock::now() < deadline) {
    int pid = ::waitpid(-1, nullptr, WNOHANG);
    if (pid > 0) {
      reap_one(children_, pid);
      continue;
    }
    ::usleep(10'000);
  }
  if (!children_.empty())
    shared_.lines.say(log_level::warning,
                      "drain deadline reached; killing %zu process(es) still serving",
                      children_.size());
  for (int pid : children_) ::kill(pid, SIGKILL);
  for (int pid : children_) ::waitpid(pid, nullptr, 0);
  children_.clear();
}

}  // namespace rapidrpc::detail
