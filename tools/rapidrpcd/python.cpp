#include "python.hpp"

#include <rapidrpc/xmlrpc.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
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
  std::string built = std::string(source_python_dir) + "/rapidrpc/_worker.py";
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

}  // namespace

std::string self_executable() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("cannot find its own executable (/proc/self/exe)");
  return {self, static_cast<std::size_t>(n)};
}

std::vector<std::string> python_worker_command(const python_settings& python) {
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
