#include "server/admin.hpp"

#include "http/request_reader.hpp"
#include "http/response.hpp"
#include "server/listen.hpp"
#include "server/loop.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <unistd.h>
#include <chrono>

namespace rapidrpc::detail {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
// Admin requests are small GETs; these bound what a stray client can make
// the admin thread hold.
constexpr std::size_t max_admin_header = 8 * 1024;
constexpr std::size_t max_admin_body = 0;
constexpr std::size_t max_admin_sessions = 64;
constexpr auto admin_timeout = std::chrono::seconds(30);
}  // namespace

// One admin connection: read a request, answer it, keep alive until the
// client closes, goes quiet for admin_timeout, or breaks the framing.
class admin_listener::session : public std::enable_shared_from_this<session> {
 public:
  session(admin_listener& owner, tcp::socket s)
      : owner_(owner),
        socket_(std::move(s)),
        timer_(socket_.get_executor()),
        reader_(max_admin_header, max_admin_body) {}

  void start() {
    boost::system::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    arm_timer();
    read();
  }

  void close() {
    boost::system::error_code ec;
    socket_.close(ec);
    timer_.cancel();
  }

 private:
  void arm_timer() {
    timer_.expires_after(admin_timeout);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->close();
    });
  }

  void read() {
    const std::size_t have = in_.size();
    in_.resize(have + 4096);
    socket_.async_read_some(
        net::buffer(in_.data() + have, 4096),
        [self = shared_from_this(), have](const boost::system::error_code& ec, std::size_t n) {
          self->in_.resize(have + n);
          if (ec) return self->close();
          self->process();
        });
  }

  void process() {
    std::size_t used = 0;
    auto r = reader_.parse(in_, used);
    in_.erase(0, used);
    if (r == http::request_reader::result::need_more) return read();
    out_.clear();
    bool keep_alive = false;
    if (r == http::request_reader::result::error) {
      http::write_error(out_, owner_.server_name_, reader_.error_status(), false, false);
    } else {
      const auto& req = reader_.current();
      keep_alive = reader_.keep_alive();
      const std::string_view path = http::target_path(req.target);
      answer a = owner_.route(req.method == boost::beast::http::verb::get    ? "GET"
                              : req.method == boost::beast::http::verb::head ? "HEAD"
                                                                             : "",
                              path);
      http::response_head head;
      head.status = a.status;
      head.content_type = a.content_type;
      head.content_length = a.body.size();
      head.keep_alive = keep_alive;
      head.http10 = req.version == 10;
      head.extra = a.extra;
      http::write_head(out_, owner_.server_name_, head);
      if (req.method != boost::beast::http::verb::head) out_ += a.body;
      reader_.next();
    }
    net::async_write(
        socket_, net::buffer(out_),
        [self = shared_from_this(), keep_alive](const boost::system::error_code& ec, std::size_t) {
          if (ec || !keep_alive) return self->close();
          self->arm_timer();
          if (self->in_.empty())
            self->read();
          else
            self->process();  // a pipelined request
        });
  }

  admin_listener& owner_;
  tcp::socket socket_;
  net::steady_timer timer_;
  http::request_reader reader_;
  std::string in_;
  std::string out_;
};

admin_listener::admin_listener(std::string server_name, handlers h)
    : server_name_(std::move(server_name)), handlers_(std::move(h)) {}

admin_listener::~admin_listener() { join(); }

tcp::endpoint admin_listener::listen(const tcp::endpoint& ep) {
  auto a = std::make_unique<tcp::acceptor>(io_);
  bind_acceptor(*a, ep, false);
  a->listen(net::socket_base::max_listen_connections);
  acceptors_.push_back(std::move(a));
  bound_.push_back(acceptors_.back()->local_endpoint());
  return bound_.back();
}

tcp::endpoint admin_listener::adopt(int fd) {
  auto a = std::make_unique<tcp::acceptor>(io_);
  tcp::endpoint ep = adopt_duplicate(*a, fd, "the admin socket");
  acceptors_.push_back(std::move(a));
  bound_.push_back(ep);
  return ep;
}

std::vector<int> admin_listener::listening_fds() const {
  std::vector<int> out;
  for (const auto& a : acceptors_)
    if (a->is_open()) out.push_back(a->native_handle());
  return out;
}

std::vector<std::string> admin_listener::endpoints() const { return host_ports(bound_); }

std::vector<int> admin_listener::listening_descriptors() const {
  return distinct_sockets(listening_fds());
}

std::unique_ptr<admin_listener> make_admin_listener(const admin_options& options,
                                                    std::string server_name,
                                                    admin_listener::handlers h) {
  if (!admin_wanted(options)) return nullptr;
  auto admin = std::make_unique<admin_listener>(std::move(server_name), std::move(h));
  for (int fd : options.listen_fds) admin->adopt(fd);
  if (options.listen_fds.empty()) {
    const auto [host, port] = split_host_port(options.address);
    listen_on_each(
        host, port, [&admin](const tcp::endpoint& ep) { return admin->listen(ep); },
        "cannot listen on the admin address " + options.address);
  }
  return admin;
}

void admin_listener::start() {
  for (auto& a : acceptors_) accept(*a);
  thread_ = std::thread([this] { io_.run(); });
}

void admin_listener::join() {
  if (!thread_.joinable()) return;
  io_.stop();
  thread_.join();
}

void admin_listener::accept(tcp::acceptor& a) {
  a.async_accept([this, &a](const boost::system::error_code& ec, tcp::socket s) {
    if (ec == net::error::operation_aborted) return;
    if (!ec) {
      std::erase_if(sessions_, [](const std::weak_ptr<session>& w) { return w.expired(); });
      if (sessions_.size() < max_admin_sessions) {
        auto sess = std::make_shared<session>(*this, std::move(s));
        sessions_.push_back(sess);
        sess->start();
      }  // else the socket closes here: an admin port is not for crowds
      return accept(a);
    }
    // Out of descriptors: try again shortly rather than spin.
    auto timer = std::make_shared<net::steady_timer>(io_, std::chrono::milliseconds(100));
    timer->async_wait([this, &a, timer](const boost::system::error_code&) { accept(a); });
  });
}

admin_listener::answer admin_listener::route(std::string_view method, std::string_view path) {
  answer a;
  if (path != "/metrics" && path != "/healthz" && path != "/readyz") {
    a.status = 404;
    a.body = "not found: the admin listener serves /metrics, /healthz and /readyz\n";
    return a;
  }
  if (method.empty()) {
    a.status = 405;
    a.extra = "Allow: GET, HEAD\r\n";
    a.body = "method not allowed\n";
    return a;
  }
  if (path == "/metrics") {
    a.content_type = "text/plain; version=0.0.4; charset=utf-8";
    handlers_.metrics(a.body);
  } else if (path == "/healthz") {
    a.body = "ok\n";
  } else {
    std::string why = handlers_.not_ready();
    if (why.empty()) {
      a.body = "ready\n";
    } else {
      a.status = 503;
      a.body = "not ready: " + why + "\n";
    }
  }
  return a;
}

}  // namespace rapidrpc::detail
