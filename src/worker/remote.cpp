#include "worker/remote.hpp"

#include <charconv>

namespace rapidrpc::detail::remote {

message read(std::span<const std::string_view> frames) noexcept {
  message m;
  if (frames.empty()) return m;
  const std::string_view command = frames[0];
  const auto fields = frames.subspan(1);
  if (command == ready) {
    if (fields.size() != 2 || fields[0] != version) return m;
    const std::string_view v = fields[1];
    std::uint32_t capacity = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), capacity);
    if (ec != std::errc() || end != v.data() + v.size() || capacity == 0 || capacity > max_capacity)
      return m;
    m.what = message::kind::ready_message;
    m.capacity = capacity;
  } else if (command == call || command == reply) {
    if (fields.size() != 2 || fields[0].size() != 8) return m;
    m.what = command == call ? message::kind::call_message : message::kind::reply_message;
    m.id = fields[0];
    m.document = fields[1];
  } else if (fields.empty() && command == heartbeat) {
    m.what = message::kind::heartbeat_message;
  } else if (fields.empty() && command == leaving) {
    m.what = message::kind::leaving_message;
  } else if (fields.empty() && command == who) {
    m.what = message::kind::who_message;
  }
  return m;
}

}  // namespace rapidrpc::detail::remote
