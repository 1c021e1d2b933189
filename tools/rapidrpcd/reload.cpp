#include "reload.hpp"

#include <algorithm>
#include <iostream>
#include <string>
#include <variant>

namespace rapidrpcd {

void reload_settings(settings& running, int argc, char** argv) {
  auto reread = reparse_options(argc, argv);
  if (const auto* why = std::get_if<std::string>(&reread)) {
    std::cerr << "rapidrpcd: reload: " << *why << "; keeping the running settings\n";
    return;
  }
  const auto& fresh = std::get<settings>(reread);
  int changed = 0;
  for (auto& value : running.values) {
    auto now = std::find_if(fresh.values.begin(), fresh.values.end(),
                            [&](const setting_value& v) { return v.key == value.key; });
    if (now == fresh.values.end() || now->toml == value.toml) continue;
    ++changed;
    if (value.key == "deny-method" && running.denied && fresh.denied &&
        running.server.serving.mode != rapidrpc::serving_mode::prefork &&
        running.server.serving.mode != rapidrpc::serving_mode::fork) {
      running.denied->replace(fresh.denied->get());
    } else if (value.key == "drain-timeout") {
      running.drain_timeout = fresh.drain_timeout;
    } else if (value.key == "drain-delay") {
      running.drain_delay = fresh.drain_delay;
    } else {
      std::cerr << "rapidrpcd: reload: " << value.key
                << " changed in the file; it needs a restart or an upgrade (SIGUSR2), keeping "
                << value.toml << '\n';
      continue;
    }
    std::cerr << "rapidrpcd: reload: " << value.key << " = " << now->toml << '\n';
    value.toml = now->toml;
  }
  std::cerr << "rapidrpcd: reload: " << running.config_file << " read"
            << (changed ? "" : ", no setting changed") << '\n';
}

}  // namespace rapidrpcd
