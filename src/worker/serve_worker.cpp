#include <rapidrpc/worker.hpp>

#include "rpc/exchange.hpp"
#include "worker/frame.hpp"

#include <unistd.h>
#include <cerrno>
#include <string>

namespace rapidrpc {

namespace {

// 0: end of stream before any byte; 1: read all; -1: error or end mid-way.
int read_exact(int fd, char* p, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r == 0) {
      return got == 0 ? 0 : -1;
    } else if (errno != EINTR) {
      return -1;
    }
  }
  return 1;
}

bool write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    ssize_t r = ::write(fd, s.data() + done, s.size() - done);
    if (r > 0)
      done += static_cast<std::size_t>(r);
    else if (r < 0 && errno == EINTR)
      continue;
    else
      return false;
  }
  return true;
}

}  // namespace

int serve_worker(const registry& methods, int fd) {
  std::string doc, body, frame;
  // Ready: an empty frame, before which the server sends no call.
  detail::append_frame(frame, {});
  if (!write_all(fd, frame)) return 1;
  for (;;) {
    unsigned char header[4];
    int r = read_exact(fd, reinterpret_cast<char*>(header), 4);
    if (r == 0) return 0;
    if (r < 0) return 1;
    std::uint32_t n = detail::frame_length(header);
    if (n > max_worker_frame_bytes) return 1;
    doc.resize(n);
    if (read_exact(fd, doc.data(), n) != 1) return 1;

    body.clear();
    detail::rpc::exchange::run_here(methods, doc, body);
    frame.clear();
    detail::append_frame(frame, body);
    if (!write_all(fd, frame)) return 1;
  }
}

}  // namespace rapidrpc
