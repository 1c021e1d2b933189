#include "python.hpp"

#include <rapidrpc/worker.hpp>

#include <systemd/sd-daemon.h>
#include <unistd.h>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

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
  throw std::runtime_error("the Python worker program is neither at " + installed +
                           " (rapidrpc's Python package installed: python3-rapidrpc, or cmake "
                           "--install) nor at " +
                           built + " (the source tree it was built from)");
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

namespace {

// The describe step's command: with --warm-parent it refuses a module that
// cannot be forked from.
std::vector<std::string> describe_command(const python_settings& python) {
  auto command = python_worker_command(python);
  if (!python.spawn_workers) command.emplace_back("--warm-parent");
  return command;
}

}  // namespace

void add_python_methods(rapidrpc::registry& methods, const python_settings& python) {
  rapidrpc::add_worker_methods(methods, describe_command(python));
}

bool reload_python(rapidrpc::server& server, const python_settings& python) {
  rapidrpc::method_table table;
  try {
    table = rapidrpc::describe_worker_methods(describe_command(python));
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "rapidrpcd: reload: cannot load --python %s: %s\n"
                 "rapidrpcd: reload: the running code serves on\n",
                 python.module.c_str(), e.what());
    return false;
  }
  const std::string count =
      std::to_string(table.size()) + (table.size() == 1 ? " method" : " methods");
  std::fprintf(stderr, "rapidrpcd: reload: %s imported anew (%s)\n", python.module.c_str(),
               count.c_str());
  const bool begun =
      server.reload_workers(std::move(table), [module = python.module, count](bool reloaded) {
        if (reloaded)
          std::fprintf(stderr, "rapidrpcd: reload: every worker runs the new %s (%s)\n",
                       module.c_str(), count.c_str());
        else
          std::fprintf(stderr,
                       "rapidrpcd: reload: the new %s did not start; the running code "
                       "serves on\n",
                       module.c_str());
        sd_notify(0, "READY=1");
      });
  if (!begun)
    std::fprintf(stderr,
                 "rapidrpcd: reload: the new %s is not served: a front of worker hosts keeps the "
                 "methods and workers it started with (reload each host, then restart the front "
                 "or upgrade it: SIGUSR2)\n",
                 python.module.c_str());
  return begun;
}

}  // namespace rapidrpcd
