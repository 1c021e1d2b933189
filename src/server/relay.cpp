#include "server/relay.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace rapidrpc::detail {

namespace net = boost::asio;

namespace {
constexpr std::size_t read_chunk = 16 * 1024;
// Received bytes consumed past this are dropped from the front of the buffer.
constexpr std::size_t compact_after = 64 * 1024;
// The longest pid line taken ("4242\n"; a pid has at most 10 digits).
constexpr std::size_t max_pid_line = 16;
// While the program's listen backlog is full: how often to try again.
constexpr std::chrono::milliseconds connect_retry{5};

bool iequals(std::string_view a, std::string_view b) { return boost::beast::iequals(a, b); }

// The name of a header line ("Name: value\r\n"), or empty for a line
// continuing the one before it (obsolete folding).
std::string_view field_name(std::string_view line) {
  if (line.empty() || line.front() == ' ' || line.front() == '\t') return {};
  return line.substr(0, line.find(':'));
}
}  // namespace

std::string proxy_line(const net::ip::tcp::endpoint& client, const net::ip::tcp::endpoint& local) {
  if (client.port() == 0 || client.address().is_unspecified() ||
      client.address().is_v4() != local.address().is_v4())
    return "PROXY UNKNOWN\r\n";
  std::string out = client.address().is_v4() ? "PROXY TCP4 " : "PROXY TCP6 ";
  out += client.address().to_string();
  out += ' ';
  out += local.address().to_string();
  out += ' ';
  out += std::to_string(client.port());
  out += ' ';
  out += std::to_string(local.port());
  out += "\r\n";
  return out;
}

void write_relayed_request(std::string& out, const http::request& req) {
  if (!req.chunked) {
    out.reserve(out.size() + req.head.size() + req.body.size());
    out += req.head;
    out += req.body;
    return;
  }
  // The head without Transfer-Encoding (and its folded continuations), a
  // Content-Length before the blank line.
  std::string_view head = req.head;
  out.reserve(out.size() + head.size() + 32 + req.body.size());
  bool dropping = false;
  bool first = true;
  while (!head.empty()) {
    const std::size_t lf = head.find('\n');
    const std::size_t len = lf == std::string_view::npos ? head.size() : lf + 1;
    const std::string_view line = head.substr(0, len);
    head.remove_prefix(len);
    if (line == "\r\n" || line == "\n") {
      out += "Content-Length: ";
      out += std::to_string(req.body.size());
      out += "\r\n";
      out += line;
      break;
    }
    if (!first) {
      const std::string_view name = field_name(line);
      if (!name.empty()) dropping = iequals(name, "transfer-encoding");
    }
    first = false;
    if (!dropping) out += line;
  }
  out += req.body;
}

void write_relayed_response(std::string& out, const http::response& r, bool keep_alive,
                            bool http10) {
  out.reserve(out.size() + 256 + r.body.size());
  out += http10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(r.status);
  out += ' ';
  out += r.reason;
  out += "\r\n";
  for (const auto& [name, value] : r.fields) {
    if (iequals(name, "connection") || iequals(name, "keep-alive") ||
        iequals(name, "transfer-encoding"))
      continue;
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  if (!r.content_length && !r.bodyless) {
    out += "Content-Length: ";
    out += std::to_string(r.body.size());
    out += "\r\n";
  }
  if (!keep_alive)
    out += "Connection: close\r\n";
  else if (http10)
    out += "Connection: keep-alive\r\n";
  out += "\r\n";
  if (!r.bodyless) out += r.body;
}

relay_channel::relay_channel(net::io_context& io, const relay_target& target, std::string proxy)
    : io_(io), target_(target), proxy_(std::move(proxy)), socket_(io), timer_(io), retry_(io) {}

void relay_channel::send(std::string request, bool to_head, std::shared_ptr<relay_sink> sink,
                         bool last) {
  sink_ = std::move(sink);
  last_ = last;
  reader_.start(to_head);
  out_ = std::move(request);
  ++seq_;
  if (target_.timeout.count() > 0) {
    timer_.expires_after(target_.timeout);
    timer_.async_wait([self = shared_from_this(), seq = seq_](const boost::system::error_code& ec) {
      if (!ec && seq == self->seq_ && self->sink_) self->on_timeout();
    });
  }
  if (socket_.is_open()) {
    write();
    return;
  }
  connect();
}

void relay_channel::connect() {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string& path = target_.socket;
  int fd = -1;
  if (path.size() < sizeof addr.sun_path) {
    std::memcpy(addr.sun_path, path.data(), path.size());
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  }
  if (fd >= 0 && ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    boost::system::error_code ec;
    socket_.assign(net::local::stream_protocol(), fd, ec);
    if (!ec) {
      ++generation_;
      pid_ = 0;
      pid_read_ = false;
      in_.clear();
      in_used_ = 0;
      out_.insert(0, proxy_);
      read();
      write();
      return;
    }
    errno = ec.value();
  }
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (fd >= 0 && (err == EAGAIN || err == EINTR)) {
    // The program's listen backlog is full: it queues, so do we (until
    // the request's timeout, if it has one).
    retry_.expires_after(connect_retry);
    retry_.async_wait([self = shared_from_this(), seq = seq_](const boost::system::error_code& ec) {
      if (!ec && seq == self->seq_ && self->sink_ && !self->closed_) self->connect();
    });
    return;
  }
  // Never from within send(): the sink hears later.
  net::post(io_, [self = shared_from_this(), seq = seq_] {
    if (seq == self->seq_ && self->sink_) self->finish(nullptr, relay_failure::unreachable);
  });
}

void relay_channel::write() {
  writing_ = true;
  net::async_write(socket_, net::buffer(out_),
                   [self = shared_from_this(), gen = generation_](
                       const boost::system::error_code& ec, std::size_t) {
                     // A failed write found the program gone: the read that
                     // is always pending says so and decides.
                     if (gen != self->generation_) return;
                     self->writing_ = false;
                     if (!ec && self->last_) {
                       boost::system::error_code ignored;
                       self->socket_.shutdown(net::socket_base::shutdown_send, ignored);
                     }
                   });
}

void relay_channel::read() {
  reading_ = true;
  const std::size_t from = in_.size();
  in_.resize(from + read_chunk);
  socket_.async_read_some(net::buffer(in_.data() + from, read_chunk),
                          [self = shared_from_this(), gen = generation_, from](
                              const boost::system::error_code& ec, std::size_t n) {
                            if (gen != self->generation_ || self->closed_) return;
                            self->reading_ = false;
                            self->in_.resize(from + n);
                            self->on_read(ec, n);
                          });
}

void relay_channel::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (ec || n == 0) {
    // The program has closed the Unix connection (or it broke).
    if (sink_) {
      if (pid_read_ && in_used_ == in_.size() &&
          reader_.finish() == http::response_reader::result::complete) {
        drop_connection();
        return finish(&reader_.current(), relay_failure::none);
      }
      target_.lines.say(log_level::warning,
                        "relay: process %d ended its connection before a whole response",
                        static_cast<int>(pid_));
      drop_connection();
      return finish(nullptr, relay_failure::broken);
    }
    drop_connection();
    return;
  }
  take_input();
  // (take_input() may have handed over a response and the client's next
  // request been sent meanwhile, on a new connection with its own read.)
  if (socket_.is_open() && !reading_) read();
}

// Takes what has been received: the pid line first, then the response.
void relay_channel::take_input() {
  std::string_view data(in_.data() + in_used_, in_.size() - in_used_);
  if (!pid_read_) {
    const std::size_t lf = data.substr(0, max_pid_line).find('\n');
    if (lf == std::string_view::npos) {
      if (data.size() < max_pid_line) return;
    } else {
      pid_t pid = 0;
      bool ok = lf > 0 && lf <= 10;
      for (char c : data.substr(0, lf)) {
        ok = ok && c >= '0' && c <= '9';
        if (ok) pid = pid * 10 + (c - '0');
      }
      if (ok && pid > 0) {
        pid_ = pid;
        pid_read_ = true;
        in_used_ += lf + 1;
        data.remove_prefix(lf + 1);
      }
    }
    if (!pid_read_) {
      target_.lines.say(log_level::error, "relay: the program did not announce its pid");
      drop_connection();
      if (sink_) finish(nullptr, relay_failure::broken);
      return;
    }
  }
  if (data.empty()) return;
  if (!sink_) {
    // Bytes no request asked for: the stream cannot be trusted.
    drop_connection();
    return;
  }
  std::size_t used = 0;
  const auto result = reader_.parse(data, used);
  in_used_ += used;
  if (result == http::response_reader::result::need_more) {
    if (in_used_ >= compact_after) {
      in_.erase(0, in_used_);
      in_used_ = 0;
    }
    return;
  }
  if (result == http::response_reader::result::error) {
    target_.lines.say(log_level::error, "relay: process %d sent a response that cannot be read",
                      static_cast<int>(pid_));
    drop_connection();
    return finish(nullptr, relay_failure::broken);
  }
  http::response& r = reader_.current();
  // The Unix connection is kept for the client's next request only if the
  // program keeps it, said nothing more, and has taken the whole request.
  if (!r.keep_alive || in_used_ != in_.size() || writing_) drop_connection();
  in_.clear();
  in_used_ = 0;
  finish(&r, relay_failure::none);
}

void relay_channel::on_timeout() {
  const pid_t pid = pid_;
  drop_connection();
  if (pid > 0 && pid != target_.keep_pid && pid != ::getpid()) {
    // As the worker pool does: SIGUSR1 first (a Python process prints its
    // stack), SIGKILL 0.2 s later unless it is gone by then.
    target_.lines.say(log_level::warning,
                      "relay: process %d ran past the request's timeout; killing it",
                      static_cast<int>(pid));
    ::kill(pid, SIGUSR1);
    auto grace = std::make_shared<net::steady_timer>(io_, std::chrono::milliseconds(200));
    grace->async_wait([grace, pid](const boost::system::error_code&) { ::kill(pid, SIGKILL); });
  } else {
    target_.lines.say(log_level::warning,
                      "relay: process %d ran past the request's timeout; its connection is "
                      "closed",
                      static_cast<int>(pid));
  }
  finish(nullptr, relay_failure::timed_out);
}

void relay_channel::finish(http::response* r, relay_failure why) {
  timer_.cancel();
  retry_.cancel();
  ++seq_;
  auto sink = std::move(sink_);
  sink_.reset();
  if (sink) sink->on_relayed(r, why);
}

void relay_channel::drop_connection() {
  ++generation_;  // the pending read and write of this connection are ignored
  writing_ = false;
  reading_ = false;
  boost::system::error_code ignored;
  socket_.close(ignored);
}

void relay_channel::close() {
  if (closed_) return;
  closed_ = true;
  drop_connection();
  timer_.cancel();
  retry_.cancel();
  ++seq_;
  // Released later, not here: the sink is the client connection, which
  // may be closing itself from within its own member function.
  if (sink_) net::post(io_, [sink = std::move(sink_)] {});
  sink_.reset();
}

}  // namespace rapidrpc::detail
