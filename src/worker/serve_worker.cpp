#include <rapidrpc/worker.hpp>

#include "registry/pool.hpp"
#include "rpc/exchange.hpp"
#include "worker/frame.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <unistd.h>
#include <cerrno>
#include <memory>
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

// Pool methods run at once, on the worker's one thread: the server bounds
// them (it kills a worker past its call's timeout).
class at_once final : public detail::pool_runner {
 public:
  void run(detail::pool_call c) override { c.done(call_method(*c.m, c.params)); }
};

// Keeps the body of the one reply in flight.
class reply_body final : public detail::rpc::reply_sink {
 public:
  void on_reply(const detail::rpc::reply& r) override {
    body.assign(r.body);
    answered = true;
  }
  std::string body;
  bool answered = false;
};

}  // namespace

int serve_worker(const registry& methods, int fd) {
  // Each call runs through an exchange, as on any transport; the worker's
  // io_context runs what completes later (an async method's timer, or its
  // reply from another thread) until the call is answered.
  boost::asio::io_context io{1};
  const auto work = boost::asio::make_work_guard(io);
  at_once here;
  const detail::pool_target pool{&here};
  const call_context context{io.get_executor(), nullptr, &pool};
  detail::rpc::exchange calls(methods, limits{});
  auto reply = std::make_shared<reply_body>();
  std::string doc;
  std::string frame;
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

    reply->answered = false;
    calls.start(detail::rpc::protocol::xmlrpc, doc, context, reply);
    while (!reply->answered) io.run_one();
    frame.clear();
    detail::append_frame(frame, reply->body);
    if (!write_all(fd, frame)) return 1;
  }
}

}  // namespace rapidrpc
