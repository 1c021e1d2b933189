// SIGHUP with --config: the config file read again while the server runs.
#pragma once

#include "options.hpp"

namespace rapidrpcd {

/// Parses the command line and the config file again (reparse_options())
/// and compares every setting with the running one. What can change while
/// the server runs changes in `running`: deny-method (the authorizer's
/// list; not in --mode fork or prefork, whose processes are forked from a
/// copy taken at start) and
/// drain-timeout. For every other setting that changed it logs a line
/// saying it needs a restart and keeps the running value. A file that
/// cannot be used changes nothing: it logs why. Logs to standard error,
/// each line starting "rapidrpcd: reload: ". Called on the signal thread.
void reload_settings(settings& running, int argc, char** argv);

}  // namespace rapidrpcd
