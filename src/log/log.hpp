// Private: the server's own lines (a worker replaced, a host gone, a drain
// cut short), to server_options::log.lines or, without one, to standard error as
// "rapidrpc: TEXT". Below every other folder: each part that says something
// holds a logger.
#pragma once

#include <rapidrpc/server_options.hpp>

#include <memory>

namespace rapidrpc::detail {

/// A handle on where the lines go; copies share the sink. Any thread.
class logger {
 public:
  logger() = default;  ///< standard error
  /// To `sink`; an empty one: standard error.
  explicit logger(log_sink sink);

  /// Says one line, made as printf makes it, without a newline.
  void say(log_level level, const char* format, ...) const __attribute__((format(printf, 3, 4)));

 private:
  std::shared_ptr<const log_sink> sink_;
};

}  // namespace rapidrpc::detail
