#include "worker/warm_parent.hpp"

#include "worker/worker_pool.hpp"

#include <boost/asio/post.hpp>

#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>

extern char** environ;

namespace rapidrpc::detail {

namespace {

using clock = std::chrono::steady_clock;

// How long the parent may take to answer a fork, and a worker to be reaped
// once it has ended, before the parent is taken as stuck.
constexpr auto answer_limit = std::chrono::seconds(5);

// How long a stopping parent gets to leave (it gives its workers 2 s).
constexpr auto leave_limit = std::chrono::seconds(4);

bool parse_int(std::string_view text, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

int spawn_with_socket(std::vector<std::string>& command, int fd, int& pid) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, 3);      // dup2 clears close-on-exec
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);  // no listening socket leaks in
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (auto& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The program's signal mask is the spawning thread's (rapidrpcd's stop
  // signals stay blocked: a Ctrl-C to the process group leaves the workers
  // to the daemon), but for SIGUSR1, which rapidrpcd blocks too and which
  // the pool sends a runaway before it kills it (a Python worker prints its
  // stack on it).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  sigdelset(&mask, SIGUSR1);
  posix_spawnattr_setsigmask(&attributes, &mask);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  int rc = ::posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fd);
  return rc;
}

void reap_by(int pid, clock::time_point deadline) {
  while (::waitpid(pid, nullptr, WNOHANG) == 0) {
    if (clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return;
    }
    ::usleep(5000);
  }
}

warm_parent::warm_parent(boost::asio::io_context& io, std::vector<std::string> command,
                         std::chrono::milliseconds start_timeout, logger lines,
                         std::function<void(warm_parent&, bool)> up)
    : io_(io),
      command_(std::move(command)),
      start_timeout_(start_timeout),
      lines_(std::move(lines)),
      up_(std::move(up)) {
  command_.emplace_back("--warm-parent");
}

warm_parent::~warm_parent() { stop(); }

void warm_parent::start() {
  ready_ = false;
  killed_ = false;
  ++generation_;
  started_ = clock::now();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    lines_.say(log_level::error, "cannot start the warm parent: socketpair: %s",
               std::strerror(errno));
    return died();
  }
  int rc = spawn_with_socket(command_, sv[1], pid_);
  if (rc != 0) {
    lines_.say(log_level::error, "cannot start the warm parent %s: %s", command_[0].c_str(),
               std::strerror(rc));
    ::close(sv[0]);
    pid_ = -1;
    return died();
  }
  control_.emplace(io_, sv[0]);
  watch();
  // One that never says it is ready (stuck in its import) is replaced.
  timer_.emplace(io_, start_timeout_);
  timer_->async_wait([this, gen = generation_](const boost::system::error_code& ec) {
    if (ec || gen != generation_ || ready_) return;
    lines_.say(log_level::warning, "the warm parent %d was not ready %g s after its start", pid_,
               static_cast<double>(start_timeout_.count()) / 1000.0);
    kill_parent("killing it");
  });
}

void warm_parent::watch() {
  control_->async_wait(boost::asio::posix::descriptor_base::wait_read,
                       [this, gen = generation_](const boost::system::error_code& ec) {
                         if (ec || gen != generation_ || !control_) return;
                         if (!read_messages()) return died();
                         watch();
                       });
}

// Reads what the parent has said, without waiting; false once it has gone
// (end of stream) or broken the protocol.
bool warm_parent::read_messages() {
  for (;;) {
    char buffer[64];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    iovec iov{buffer, sizeof buffer};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(control_->native_handle(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    int fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
    if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 ||
        !handle({buffer, static_cast<std::size_t>(n)}, fd)) {
      close_fd(fd);
      kill_parent("broke the fork-server protocol; killing it");
      return false;
    }
  }
}

bool warm_parent::handle(std::string_view message, int fd) {
  int pid = 0;
  if (message == "R" && fd < 0 && !ready_) {
    ready_ = true;
    quick_deaths_ = 0;
    timer_->cancel();
    // Not from here: up() forks, which reads messages again.
    boost::asio::post(io_, [this, gen = generation_] {
      if (gen == generation_ && ready_) up_(*this, true);
    });
    return true;
  }
  if (message.starts_with('P') && fd >= 0 && parse_int(message.substr(1), pid) && pid > 0 &&
      !reply_) {
    reply_ = forked_child{pid, fd};
    // Known from now on: its end (X) may follow in the same read, before
    // fork() has returned.
    children_.try_emplace(pid);
    return true;
  }
  auto space = message.find(' ');
  int status = 0;
  if (message.starts_with('X') && fd < 0 && space != std::string_view::npos &&
      parse_int(message.substr(1, space - 1), pid) &&
      parse_int(message.substr(space + 1), status)) {
    auto it = children_.find(pid);
    if (it == children_.end()) return true;  // one it forked before a fork() gave up on it
    if (it->second.released)
      children_.erase(it);
    else
      it->second.status = status;
    return true;
  }
  return false;
}

// Waits until the parent says something or `until`; false if it does not.
bool warm_parent::await_message(clock::time_point until) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now());
    if (left.count() <= 0) return false;
    pollfd p{control_->native_handle(), POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(left.count()) + 1);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

std::optional<forked_child> warm_parent::fork(int fd) {
  if (!ready_ || !control_) return std::nullopt;
  char f = 'F';
  iovec iov{&f, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  if (::sendmsg(control_->native_handle(), &msg, MSG_NOSIGNAL) != 1) {
    kill_parent("cannot be asked to fork; killing it");
    return std::nullopt;
  }
  reply_.reset();
  auto until = clock::now() + answer_limit;
  while (!reply_) {
    if (!await_message(until)) {
      kill_parent("did not answer a fork within 5 s; killing it");
      return std::nullopt;
    }
    if (!read_messages()) {  // died() follows from watch()
      if (reply_) {
        children_.erase(reply_->pid);
        close_fd(reply_->pidfd);
        reply_.reset();
      }
      return std::nullopt;
    }
  }
  forked_child child = *reply_;
  reply_.reset();
  return child;
}

std::optional<int> warm_parent::wait(forked_child& child) {
  std::optional<int> status;
  pollfd p{child.pidfd, POLLIN, 0};
  while (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(answer_limit).count())) < 0 &&
         errno == EINTR) {
  }
  auto until = clock::now() + answer_limit;
  for (;;) {
    auto it = children_.find(child.pid);
    if (it == children_.end()) break;  // the parent went, and its statuses with it
    if (it->second.status) {
      status = it->second.status;
      children_.erase(it);
      break;
    }
    if (!control_ || !await_message(until) || !read_messages()) {
      children_.erase(child.pid);
      break;
    }
  }
  close_fd(child.pidfd);
  return status;
}

bool warm_parent::ended(const forked_child& child) noexcept {
  pollfd p{child.pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;
}

void warm_parent::release(forked_child& child) noexcept {
  auto it = children_.find(child.pid);
  if (it != children_.end()) {
    if (it->second.status)
      children_.erase(it);
    else
      it->second.released = true;
  }
  close_fd(child.pidfd);
}

void warm_parent::signal(const forked_child& child, int sig) noexcept {
  // glibc 2.36's <sys/pidfd.h> declares it without C linkage.
  if (child.pidfd >= 0) ::syscall(SYS_pidfd_send_signal, child.pidfd, sig, nullptr, 0);
}

void warm_parent::kill_parent(const char* why) {
  if (pid_ <= 0 || stopped_) return;
  lines_.say(log_level::error, "the warm parent %d %s", pid_, why);
  ::kill(pid_, SIGKILL);  // its stream ends: died() follows from watch()
  ready_ = false;
  killed_ = true;
}

// The parent has gone: its workers go with it (they end as their parent
// does), and so do their statuses. Another starts (with respawn()), at once
// unless parents keep dying young.
void warm_parent::died() {
  ready_ = false;
  ++generation_;
  boost::system::error_code ec;
  if (control_) control_->close(ec);
  control_.reset();
  if (timer_) timer_->cancel();
  for (auto it = children_.begin(); it != children_.end();)
    it = it->second.status ? std::next(it) : children_.erase(it);
  if (pid_ > 0) {
    int status = 0;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    const char* then = respawn_ ? "; starting another" : "";
    if (killed_)
      lines_.say(log_level::notice, "the warm parent %d was killed%s", pid_, then);
    else if (WIFSIGNALED(status))
      lines_.say(log_level::error, "the warm parent %d died from signal %d%s", pid_,
                 WTERMSIG(status), then);
    else if (WIFEXITED(status))
      lines_.say(log_level::error, "the warm parent %d exited with status %d%s", pid_,
                 WEXITSTATUS(status), then);
    pid_ = -1;
  }
  if (stopped_) return;
  up_(*this, false);
  if (!respawn_) return;
  auto delay = worker_respawn.died(quick_deaths_, started_, clock::now());
  timer_.emplace(io_, delay);
  timer_->async_wait([this, gen = generation_](const boost::system::error_code& e) {
    if (!e && gen == generation_ && !stopped_ && respawn_) start();
  });
}

void warm_parent::stop() {
  if (stopped_) return;
  stopped_ = true;
  ++generation_;
  boost::system::error_code ec;
  if (control_) control_->close(ec);  // end of stream: it leaves
  control_.reset();
  timer_.reset();
  if (pid_ <= 0) return;
  reap_by(pid_, clock::now() + leave_limit);
  pid_ = -1;
}

}  // namespace rapidrpc::detail
