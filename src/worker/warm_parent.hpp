// Private: the host's side of a warm parent (worker_options::warm_parent):
// one process that has loaded the methods' code once and forks the worker
// processes on request, so that a worker starts in milliseconds and shares
// its parent's memory, copy-on-write.
//
// The fork-server protocol, over a SOCK_SEQPACKET socket pair (the parent's
// descriptor 3), one message per packet:
//   parent -> host  "R"                 it can fork (its code is loaded)
//   host -> parent  "F" + a descriptor  fork a worker that serves the worker
//                                       protocol (rapidrpc/worker.hpp) there
//   parent -> host  "P<pid>" + a pidfd  the worker forked
//   parent -> host  "X<pid> <status>"   a worker ended; its wait status
// End of stream ends the parent; its workers end with it (they die with
// their parent: PR_SET_PDEATHSIG).
#pragma once

#include "log/log.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace rapidrpc::detail {

/// A worker process the warm parent forked: its pid, and its pidfd, which
/// signals it and sees it end with no risk of the pid being another's by
/// then (the parent, not the host, reaps it).
struct forked_child {
  int pid = -1;
  int pidfd = -1;
};

/// Starts `command` (argv[0] a path) with `fd` as its descriptor 3 and no
/// descriptor past it (no listening socket leaks in); closes `fd`. Returns
/// posix_spawn's error, 0 once started.
int spawn_with_socket(std::vector<std::string>& command, int fd, int& pid);

/// Waits for the child `pid` to end, killing it (SIGKILL) at `deadline`.
void reap_by(int pid, std::chrono::steady_clock::time_point deadline);

/// Runs on one io_context's thread (the pool's); every member is called
/// there. The blocking ones (fork(), wait()) wait for the parent's answer,
/// which it gives at once.
class warm_parent {
 public:
  /// `up(*this, true)` once the parent can fork; `up(*this, false)` when
  /// it has died (its workers die with it), and another is starting unless
  /// respawn(false). `command` is the worker program's, run with
  /// "--warm-parent".
  warm_parent(boost::asio::io_context& io, std::vector<std::string> command,
              std::chrono::milliseconds start_timeout, logger lines,
              std::function<void(warm_parent&, bool up)> up);
  warm_parent(const warm_parent&) = delete;
  warm_parent& operator=(const warm_parent&) = delete;
  ~warm_parent();

  /// Starts the parent process.
  void start();
  /// Whether it can fork now.
  bool ready() const noexcept { return ready_; }
  /// Whether another parent starts when this one dies (the default): not
  /// for a reload's new parent until it is ready (its code may not load),
  /// nor for the parent it replaces.
  void respawn(bool on) noexcept { respawn_ = on; }
  /// The parent process, or -1 between two.
  int pid() const noexcept { return pid_; }

  /// Forks a worker whose socket is `fd` (the host closes its copy after);
  /// nothing if the parent cannot (it is killed and replaced then: up()).
  std::optional<forked_child> fork(int fd);
  /// Waits for `child` to end (it has been sent SIGKILL, or has died) and
  /// returns its wait status, as its parent reaped it; nothing if the
  /// parent went first. Closes its pidfd.
  std::optional<int> wait(forked_child& child);
  /// Whether `child` has ended, without waiting.
  static bool ended(const forked_child& child) noexcept;
  /// Done with `child` without waiting for its status: closes its pidfd.
  void release(forked_child& child) noexcept;
  /// Sends `child` signal `sig`.
  static void signal(const forked_child& child, int sig) noexcept;

  /// Ends the parent (end of stream): its idle workers leave, and it with
  /// them; killed if it has not within a few seconds. After the
  /// io_context has stopped.
  void stop();

 private:
  struct child_state {
    std::optional<int> status;  // from "X"
    bool released = false;      // the host wants no status: forget it when it comes
  };

  bool read_messages();
  bool handle(std::string_view message, int fd);
  bool await_message(std::chrono::steady_clock::time_point until);
  void watch();
  void died();
  void kill_parent(const char* why);

  boost::asio::io_context& io_;
  std::vector<std::string> command_;
  std::chrono::milliseconds start_timeout_;
  logger lines_;
  std::function<void(warm_parent&, bool)> up_;
  std::optional<boost::asio::posix::stream_descriptor> control_;
  std::optional<boost::asio::steady_timer> timer_;  // its start's limit; its replacement's delay
  int pid_ = -1;
  std::uint64_t generation_ = 0;
  bool ready_ = false;
  bool stopped_ = false;
  bool killed_ = false;  // by the host (kill_parent())
  bool respawn_ = true;
  std::chrono::steady_clock::time_point started_{};
  unsigned quick_deaths_ = 0;
  std::optional<forked_child> reply_;  // "P", while fork() waits for it
  std::unordered_map<int, child_state> children_;
};

}  // namespace rapidrpc::detail
