#include "python.hpp"

#include <rapidrpc/worker.hpp>

#include <unistd.h>
#include <climits>
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
  throw std::runtime_error("the Python worker program is neither at " + installed + " nor at " +
                           built);
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
  auto command = python_worker_command(python);
  // Its describe step refuses a module that cannot be forked from.
  if (!python.spawn_workers) command.emplace_back("--warm-parent");
  rapidrpc::add_worker_methods(methods, command);
}

}  // namespace rapidrpcd
