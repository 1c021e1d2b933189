#include "python.hpp"

#include <rapidrpc/xmlrpc.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

extern char** environ;

namespace rapidrpcd {

namespace {

// The worker program: the installed one beside an installed rapidrpcd
// (PREFIX/bin/../RAPIDRPC_PYTHON_INSTALL_DIR), else the one in the source
// tree this rapidrpcd was built from.
std::string worker_program() {
  std::string exe = self_executable();
  std::string installed =
      exe.substr(0, exe.rfind('/') + 1) + RAPIDRPC_PYTHON_FROM_BIN + "/rapidrpc/_worker.py";
  if (::access(installed.c_str(), R_OK) == 0) {
    char clean[PATH_MAX];
    return ::realpath(installed.c_str(), clean) != nullptr ? std::string(clean) : installed;
  }
  std::string built = RAPIDRPC_PYTHON_DIR "/rapidrpc/_worker.py";
  if (::access(built.c_str(), R_OK) == 0) return built;
  throw std::runtime_error("the Python worker program is neither at " + installed + " nor at " +
                           built);
}

struct run_result {
  std::string out, err;
  int status = 0;
};

// Runs `argv` with its standard output and error captured, for at most
// `limit`; throws if it cannot be started or does not end in time.
run_result run_captured(const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error(std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  run_result r;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open = 2;
  bool late = false;
  while (open > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      late = true;
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  if (late) ::kill(pid, SIGKILL);
  ::waitpid(pid, &r.status, 0);
  if (late)
    throw std::runtime_error(argv[0] + " did not describe the methods within " +
                             std::to_string(limit.count() / 1000) + " s" +
                             (r.err.empty() ? std::string() : ":\n" + r.err));
  return r;
}

const rapidrpc::value& member(const rapidrpc::structure& s, const char* name) {
  auto it = s.find(name);
  if (it == s.end()) throw std::runtime_error(std::string("the method table has no ") + name);
  return it->second;
}

std::vector<std::string> strings(const rapidrpc::value& v) {
  std::vector<std::string> out;
  for (const auto& item : v.as<rapidrpc::array>()) out.push_back(item.as<std::string>());
  return out;
}

// The fork server's connection, for the SIGUSR1 handler.
int fork_server = -1;

// SIGUSR1 (the pool's "print your stack" before it kills a runaway) goes on
// to the Python worker, through the fork server.
void pass_on_usr1(int) {
  const char u = 'u';
  [[maybe_unused]] auto n = ::write(fork_server, &u, 1);
}

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t done = ::write(fd, p, n);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) return false;
    p += done;
    n -= static_cast<std::size_t>(done);
  }
  return true;
}

// Reads exactly `n` bytes; false at end of stream or on an error.
bool read_all(int fd, unsigned char* p, std::size_t n) {
  while (n > 0) {
    ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

int connect_unix(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

// Sends the request byte 'w' with descriptor `handed` attached.
bool send_with_fd(int fd, int handed) {
  char tag = 'w';
  iovec iov{&tag, 1};
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
  std::memcpy(CMSG_DATA(c), &handed, sizeof(int));
  ssize_t n;
  do {
    n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == 1;
}

}  // namespace

int serve_attached_worker(const std::string& socket, bool describe) {
  // Killed with rapidrpcd: the fork server then kills the Python worker.
  const pid_t host = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != host) return 1;
  int fd = connect_unix(socket);
  if (fd < 0) {
    std::fprintf(stderr, "rapidrpcd: cannot reach the Python program's fork server at %s: %s\n",
                 socket.c_str(), std::strerror(errno));
    return 1;
  }
  if (describe) {
    if (!write_all(fd, "d", 1)) return 1;
    char buf[65536];
    for (;;) {
      ssize_t got = ::read(fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return 1;
      if (got == 0) return 0;
      if (!write_all(STDOUT_FILENO, buf, static_cast<std::size_t>(got))) return 1;
    }
  }
  // The handler is in place before the worker exists. This process keeps
  // its descriptor 3 open until it ends, so the pool sees the stream end
  // only after this process has taken the worker's way of ending.
  fork_server = fd;
  struct sigaction usr1 {};
  usr1.sa_handler = pass_on_usr1;
  usr1.sa_flags = SA_RESTART;
  sigemptyset(&usr1.sa_mask);
  ::sigaction(SIGUSR1, &usr1, nullptr);
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_UNBLOCK, &all, nullptr);  // the pool's thread had stop signals blocked
  if (!send_with_fd(fd, 3)) {
    std::fprintf(stderr, "rapidrpcd: cannot hand a worker socket to the Python fork server: %s\n",
                 std::strerror(errno));
    return 1;
  }
  // The fork server's answer when the worker ends: 'x' and its exit
  // status, or 's' and the signal that ended it.
  unsigned char end[2];
  if (!read_all(fd, end, 2)) {
    std::fprintf(stderr, "rapidrpcd: the Python program's fork server went away\n");
    return 1;
  }
  if (end[0] == 'x') return end[1];
  const int sig = end[1];
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // the worker dumped its own core, if any
  ::signal(sig, SIG_DFL);
  ::raise(sig);
  return 128 + sig;
}

std::string self_executable() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("cannot find its own executable (/proc/self/exe)");
  return {self, static_cast<std::size_t>(n)};
}

std::vector<std::string> python_worker_command(const python_settings& python) {
  if (!python.attach.empty()) return {self_executable(), "--python-attach-worker", python.attach};
  std::vector<std::string> argv{python.exe, worker_program(), "--module", python.module};
  for (const auto& p : python.paths) {
    argv.emplace_back("--path");
    argv.push_back(p);
  }
  return argv;
}

void add_python_methods(rapidrpc::registry& methods, const python_settings& python) {
  auto argv = python_worker_command(python);
  argv.emplace_back("--describe");
  run_result r = run_captured(argv, std::chrono::seconds(5));
  if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
    std::string how = WIFEXITED(r.status)
                          ? "exited with status " + std::to_string(WEXITSTATUS(r.status))
                          : "died from signal " + std::to_string(WTERMSIG(r.status));
    throw std::runtime_error("the Python worker " + how + (r.err.empty() ? "" : ":\n" + r.err));
  }
  auto parsed = rapidrpc::xmlrpc::parse_response(r.out);
  const auto* table = std::get_if<rapidrpc::outcome>(&parsed);
  if (table == nullptr || !std::holds_alternative<rapidrpc::value>(*table))
    throw std::runtime_error("the Python worker's method table cannot be read" +
                             (r.err.empty() ? std::string() : ":\n" + r.err));
  try {
    for (const auto& entry : std::get<rapidrpc::value>(*table).as<rapidrpc::array>()) {
      const auto& s = entry.as<rapidrpc::structure>();
      rapidrpc::method m;
      m.where = rapidrpc::execution::pool;
      m.help = member(s, "help").as<std::string>();
      m.signature = strings(member(s, "signature"));
      m.param_names = strings(member(s, "params"));
      const auto least = static_cast<std::size_t>(member(s, "min").as<std::int32_t>());
      const auto most = member(s, "max").as<std::int32_t>();
      m.param_count = {least,
                       most < 0 ? rapidrpc::method::any_count : static_cast<std::size_t>(most)};
      // Pool methods run in the worker processes, never here.
      m.run = [](const rapidrpc::array&) -> rapidrpc::value {
        throw rapidrpc::fault(rapidrpc::fault_code::internal_error, "internal error");
      };
      methods.add_method(member(s, "name").as<std::string>(), std::move(m));
    }
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the Python worker's method table is malformed: ") +
                             e.what());
  }
}

}  // namespace rapidrpcd
