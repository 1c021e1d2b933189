#include "worker/frame.hpp"

namespace rapidrpc::detail {

void append_frame(std::string& out, std::string_view payload) {
  auto n = static_cast<std::uint32_t>(payload.size());
  char header[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16),
                    static_cast<char>(n >> 8), static_cast<char>(n)};
  out.append(header, 4);
  out.append(payload);
}

std::uint32_t frame_length(const unsigned char* h) noexcept {
  return (std::uint32_t{h[0]} << 24) | (std::uint32_t{h[1]} << 16) | (std::uint32_t{h[2]} << 8) |
         std::uint32_t{h[3]};
}

}  // namespace rapidrpc::detail
