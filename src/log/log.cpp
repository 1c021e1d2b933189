#include "log/log.hpp"

#include <cstdarg>
#include <cstdio>
#include <string>

namespace rapidrpc::detail {

logger::logger(log_sink sink) {
  if (sink) sink_ = std::make_shared<const log_sink>(std::move(sink));
}

void logger::say(log_level level, const char* format, ...) const {
  std::va_list args;
  va_start(args, format);
  std::va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string text(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(text.data(), text.size() + 1, format, again);
  va_end(again);
  if (sink_) {
    (*sink_)(level, text);
    return;
  }
  // One write, so that lines from several threads do not interleave.
  text.insert(0, "rapidrpc: ");
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace rapidrpc::detail
