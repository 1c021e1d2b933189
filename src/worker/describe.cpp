// The describe step of the worker protocol (worker.hpp): the worker
// program run once, its method table read and registered.
#include <rapidrpc/worker.hpp>

#include <rapidrpc/xmlrpc.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

extern char** environ;

namespace rapidrpc {

namespace {

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
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);  // as the worker processes: nothing else
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

const value& member(const structure& s, const char* name) {
  auto it = s.find(name);
  if (it == s.end()) throw std::runtime_error(std::string("the method table has no ") + name);
  return it->second;
}

std::vector<std::string> strings(const value& v) {
  std::vector<std::string> out;
  for (const auto& item : v.as<array>()) out.push_back(item.as<std::string>());
  return out;
}

}  // namespace

method_table describe_worker_methods(const std::vector<std::string>& command,
                                     std::chrono::milliseconds limit) {
  auto argv = command;
  argv.emplace_back("--describe");
  run_result r = run_captured(argv, limit);
  if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
    std::string how = WIFEXITED(r.status)
                          ? "exited with status " + std::to_string(WEXITSTATUS(r.status))
                          : "died from signal " + std::to_string(WTERMSIG(r.status));
    throw std::runtime_error("the worker program " + how + (r.err.empty() ? "" : ":\n" + r.err));
  }
  auto parsed = xmlrpc::parse_response(r.out);
  const auto* table = std::get_if<outcome>(&parsed);
  if (table == nullptr || !std::holds_alternative<value>(*table))
    throw std::runtime_error("the worker program's method table cannot be read" +
                             (r.err.empty() ? std::string() : ":\n" + r.err));
  method_table read;
  try {
    for (const auto& entry : std::get<value>(*table).as<array>()) {
      const auto& s = entry.as<structure>();
      method m;
      m.where = execution::pool;
      m.help = member(s, "help").as<std::string>();
      m.signature = strings(member(s, "signature"));
      m.param_names = strings(member(s, "params"));
      const auto least = static_cast<std::size_t>(member(s, "min").as<std::int32_t>());
      const auto most = member(s, "max").as<std::int32_t>();
      m.param_count = {least, most < 0 ? method::any_count : static_cast<std::size_t>(most)};
      // Pool methods run in the worker processes, never here.
      m.run = [](const array&) -> value {
        throw fault(fault_code::internal_error, "internal error");
      };
      read.insert_or_assign(member(s, "name").as<std::string>(), std::move(m));
    }
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the worker program's method table is malformed: ") +
                             e.what());
  }
  return read;
}

void add_worker_methods(registry& methods, const std::vector<std::string>& command,
                        std::chrono::milliseconds limit) {
  methods.add_reloadable(describe_worker_methods(command, limit));
}

}  // namespace rapidrpc
