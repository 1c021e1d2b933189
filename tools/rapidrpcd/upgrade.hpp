// rapidrpcd's binary upgrade (SIGUSR2, docs/operations.md): the running
// process starts its successor from the executable's path (a new binary
// installed there, and the config as it is now), hands it its listening
// sockets, waits until it serves, then finishes its own calls and exits.
// No connection is refused meanwhile: the sockets stay open across the
// hand-over, and connections waiting in their queues are taken by the
// successor.
#pragma once

#include <sys/types.h>
#include <chrono>
#include <string>
#include <vector>

namespace rapidrpcd {

/// Starts `exe` with `argv` (less any --listen-fd), handing it `rpc_fds`
/// and `admin_fds` by systemd's LISTEN_FDS protocol (the admin ones named
/// "admin"), and waits up to `timeout` for it to report that it serves
/// (successor_serves()). Returns its pid then; -1 if it could not be
/// started, exited, or did not report in time (it is killed then), each
/// reason written to standard error. Call it from the thread that has the
/// stop signals blocked: the successor is started with none blocked.
pid_t start_successor(const std::string& exe, const std::vector<std::string>& argv,
                      const std::vector<int>& rpc_fds, const std::vector<int>& admin_fds,
                      std::chrono::seconds timeout);

/// In a successor, at start-up: takes the channel to the process that
/// started it (RAPIDRPCD_UPGRADE_FD) out of the environment, so that no
/// process started later sees it, and out of reach of exec'd programs.
/// Returns whether this process is a successor.
bool take_predecessor_channel();

/// Whether take_predecessor_channel() found this process to be a successor.
bool is_successor();

/// In a successor: tells the process that started it that it serves. Does
/// nothing in a process not started by start_successor().
void successor_serves();

}  // namespace rapidrpcd
