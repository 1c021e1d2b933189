#include "worker/frame.hpp"

namespace rapidrpc::detail {

namespace {

void write_length(char* header, std::size_t length) noexcept {
  const auto n = static_cast<std::uint32_t>(length);
  header[0] = static_cast<char>(n >> 24);
  header[1] = static_cast<char>(n >> 16);
  header[2] = static_cast<char>(n >> 8);
  header[3] = static_cast<char>(n);
}

}  // namespace

void append_frame(std::string& out, std::string_view payload) {
  char header[4];
  write_length(header, payload.size());
  out.append(header, 4);
  out.append(payload);
}

void put_frame_length(std::string& frame) noexcept { write_length(frame.data(), frame.size() - 4); }

std::uint32_t frame_length(const unsigned char* h) noexcept {
  return (std::uint32_t{h[0]} << 24) | (std::uint32_t{h[1]} << 16) | (std::uint32_t{h[2]} << 8) |
         std::uint32_t{h[3]};
}

}  // namespace rapidrpc::detail
