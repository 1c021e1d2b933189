// The HTTP client: one asynchronous state machine per call (call_op), used
// by both the asynchronous and the synchronous API. The order of one call,
// the retry rule, timeouts and lifetimes are described in the "Clients"
// section of docs/design.md.
#include <rapidrpc/client.hpp>
#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/localhost.hpp>
#include <rapidrpc/tls_client.hpp>

#include "client/sync_call.hpp"
#include "client/wire.hpp"
#include "http/gzip.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <sys/socket.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>
#include <unordered_set>

namespace rapidrpc {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using client_detail::call_result;

namespace {

using clock = std::chrono::steady_clock;
using why = transport_error::reason;
using completion = std::function<void(call_result)>;

constexpr std::size_t read_chunk = std::size_t{16} * 1024;
constexpr std::size_t max_read_chunk = std::size_t{1024} * 1024;
constexpr std::uint32_t max_response_header_bytes = std::uint32_t{64} * 1024;
// A connection idle for this long is checked before it is reused; one used
// more recently is taken as is (the retry rule covers the rare race).
constexpr auto check_idle_after = std::chrono::seconds(1);

class call_op;

// https: the TLS stream owns the socket.
using tls_stream = net::ssl::stream<tcp::socket>;

struct idle_connection {
  tcp::socket socket;               // http
  std::unique_ptr<tls_stream> tls;  // https
  clock::time_point since;

  tcp::socket& lowest() noexcept { return tls ? tls->next_layer() : socket; }
};

// What the client and its calls in flight share. Used from the executor's
// thread only.
struct client_state : std::enable_shared_from_this<client_state> {
  client_state(net::any_io_executor ex, url u, client_options o, bool own)
      : executor(std::move(ex)),
        target(std::move(u)),
        options(std::move(o)),
        head(target, options),
        authority(target.host + ":" + target.port),
        own_loop(own),
        deadlines(executor) {
    if (target.scheme == "https")
      tls = make_tls_client_context({options.tls_ca_file, options.tls_verify});
    boost::system::error_code ec;
    auto address = net::ip::make_address(target.host, ec);
    const auto port = static_cast<unsigned short>(std::stoul(target.port));
    if (!ec) {
      literal = tcp::endpoint(address, port);
    } else if (is_localhost(target.host)) {
      // The loopback addresses without the resolver (RFC 6761), as the
      // server binds them: "localhost" works with no /etc/hosts too.
      loopback = {tcp::endpoint(net::ip::address_v4::loopback(), port),
                  tcp::endpoint(net::ip::address_v6::loopback(), port)};
    }
  }

  // Makes sure the deadline timer fires by `due`.
  void schedule(clock::time_point due);
  // A call ended: with none left, a client on a caller's executor stops its
  // timer so that the caller's run() can return.
  void call_ended(call_op* op);
  void on_deadline(const boost::system::error_code& ec);
  void schedule_earliest();

  net::any_io_executor executor;
  url target;
  client_options options;
  client_detail::request_head head;
  std::string authority;                   // host:port, for messages
  std::optional<tcp::endpoint> literal;    // the host is an IP address: no resolver
  std::vector<tcp::endpoint> loopback;     // the host is "localhost": no resolver either
  std::shared_ptr<net::ssl::context> tls;  // https
  bool own_loop;                           // the client runs its own io_context
  std::vector<idle_connection> idle;       // keep-alive connections, most recent last
  std::unordered_set<call_op*> active;     // calls in flight
  // One timer for all the calls' deadlines, armed for the earliest. A later
  // deadline leaves it alone, so back-to-back calls do not re-arm it.
  net::steady_timer deadlines;
  clock::time_point armed = clock::time_point::max();
  xmlrpc::parser response_parser{xmlrpc::document_type::response};
  std::uint64_t next_id = 1;  // JSON-RPC request ids
  std::string scratch;        // the inflated body
  bool closed = false;
};

// True if an idle connection can take a request: the server has neither
// closed it nor sent anything unasked.
bool idle_connection_usable(idle_connection& idle) {
  tcp::socket& s = idle.lowest();
  char c;
  ssize_t n = ::recv(s.native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

bool is_closed_by_peer(const boost::system::error_code& ec) {
  return ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::error::connection_aborted;
}

class call_op : public std::enable_shared_from_this<call_op> {
 public:
  call_op(std::shared_ptr<client_state> state, std::string body, bool gzip_body,
          std::optional<std::uint64_t> json_id, completion done, wire_trace* trace)
      : state_(std::move(state)),
        body_(std::move(body)),
        gzip_body_(gzip_body),
        json_id_(json_id),
        done_(std::move(done)),
        trace_(trace),
        socket_(state_->executor) {}

  void start() {
    state_->active.insert(this);
    const auto& opt = state_->options;
    if (opt.timeout.count() > 0) deadline_ = clock::now() + opt.timeout;
    if (state_->closed) {
      // Not reachable through the public API (a closed client is gone), but
      // a call must complete on the executor all the same.
      net::post(state_->executor, [self = shared_from_this()] { self->fail_closed(); });
      return;
    }
    auto now = clock::now();
    while (opt.keep_alive && !state_->idle.empty()) {
      idle_connection c = std::move(state_->idle.back());
      state_->idle.pop_back();
      if (now - c.since >= check_idle_after && !idle_connection_usable(c))
        continue;  // the server closed it: drop it
      socket_ = std::move(c.socket);
      tls_ = std::move(c.tls);
      reused_ = true;
      set_due(deadline_);
      return send();
    }
    connect();
  }

  // The client is going away: stop everything; the pending handlers then
  // complete the call.
  void abort() {
    boost::system::error_code ec;
    lowest().close(ec);
    if (resolver_) resolver_->cancel();
  }

  // When the call fails unless done: the nearer of the total deadline and,
  // while connecting, the connect deadline.
  clock::time_point due() const noexcept { return due_; }

  void on_timeout() {
    const auto& opt = state_->options;
    auto ms = [](std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; };
    if (connecting_ && due_ < deadline_)
      return finish(transport_error(
          why::timeout,
          "connecting to " + state_->authority + " took longer than " + ms(opt.connect_timeout)));
    finish(transport_error(
        why::timeout, "the call to " + state_->authority + " took longer than " + ms(opt.timeout)));
  }

 private:
  // ---- connecting --------------------------------------------------------------

  void connect() {
    connecting_ = true;
    auto limit = state_->options.connect_timeout;  // zero: only the total timeout applies
    set_due(limit.count() > 0 ? std::min(deadline_, clock::now() + limit) : deadline_);
    if (state_->literal) {
      socket_.async_connect(*state_->literal, [self = shared_from_this(),
                                               gen = gen_](const boost::system::error_code& ec) {
        if (self->stale(gen)) return;
        self->on_connected(ec);
      });
      return;
    }
    if (!state_->loopback.empty()) {
      net::async_connect(socket_, state_->loopback,
                         [self = shared_from_this(), gen = gen_](
                             const boost::system::error_code& ec, const tcp::endpoint&) {
                           if (self->stale(gen)) return;
                           self->on_connected(ec);
                         });
      return;
    }
    if (!resolver_) resolver_.emplace(state_->executor);
    resolver_->async_resolve(
        state_->target.host, state_->target.port, tcp::resolver::numeric_service,
        [self = shared_from_this(), gen = gen_](const boost::system::error_code& ec,
                                                const tcp::resolver::results_type& results) {
          if (self->stale(gen)) return;
          if (ec) {
            if (self->state_->closed) return self->fail_closed();
            return self->finish(transport_error(
                why::connect, "cannot resolve " + self->state_->target.host + ": " + ec.message()));
          }
          net::async_connect(
              self->socket_, results,
              [self, gen](const boost::system::error_code& ec2, const tcp::endpoint&) {
                if (self->stale(gen)) return;
                self->on_connected(ec2);
              });
        });
  }

  void on_connected(const boost::system::error_code& ec) {
    if (ec) {
      if (state_->closed) return fail_closed();
      return finish(transport_error(
          why::connect, "cannot connect to " + state_->authority + ": " + ec.message()));
    }
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    if (state_->tls) return handshake();
    connecting_ = false;
    set_due(deadline_);
    send();
  }

  // https: the handshake is part of connecting (connect_timeout covers it).
  void handshake() {
    tls_ = std::make_unique<tls_stream>(std::move(socket_), *state_->tls);
    if (!set_tls_client_host(tls_->native_handle(), state_->target.host,
                             state_->options.tls_verify)) {
      return net::post(state_->executor, [self = shared_from_this(), gen = gen_] {
        if (self->stale(gen)) return;
        self->finish(transport_error(
            why::connect, "cannot check the certificate of \"" + self->state_->target.host + "\""));
      });
    }
    tls_->async_handshake(net::ssl::stream_base::client, [self = shared_from_this(), gen = gen_](
                                                             const boost::system::error_code& ec) {
      if (self->stale(gen)) return;
      self->on_handshake(ec);
    });
  }

  void on_handshake(const boost::system::error_code& ec) {
    if (ec) {
      if (state_->closed) return fail_closed();
      return finish(transport_error(
          why::connect, "the TLS handshake with " + state_->authority + " failed: " +
                            tls_handshake_failure(tls_->native_handle(), ec.message())));
    }
    connecting_ = false;
    set_due(deadline_);
    send();
  }

  // ---- the exchange ------------------------------------------------------------

  void send() {
    head_.clear();
    state_->head.write(head_, body_.size(), gzip_body_);
    if (trace_) {
      *trace_ = wire_trace{};
      trace_->request.reserve(head_.size() + body_.size());
      trace_->request = head_;
      trace_->request += body_;
    }
    parser_.emplace();
    parser_->header_limit(max_response_header_bytes);
    parser_->body_limit(state_->options.max_response_bytes);
    in_.clear();
    got_bytes_ = false;
    written_ = false;

    if (tls_) {
      // The write and the read run at once here too, so an early answer is
      // seen while the body is still going out.
      std::array<net::const_buffer, 2> buffers{net::buffer(head_), net::buffer(body_)};
      net::async_write(*tls_, buffers,
                       [self = shared_from_this(), gen = gen_](const boost::system::error_code& wec,
                                                               std::size_t) {
                         if (self->stale(gen)) return;
                         self->on_written(wec);
                       });
      return read();
    }

    // Head and body in one sendmsg() now; the socket's buffer takes a
    // request of any ordinary size, so there is no write to wait for. Only
    // what does not fit is left to an asynchronous write.
    boost::system::error_code ec;
    if (!socket_.non_blocking()) socket_.non_blocking(true, ec);
    std::array<net::const_buffer, 2> buffers{net::buffer(head_), net::buffer(body_)};
    std::size_t sent = ec ? 0 : socket_.send(buffers, 0, ec);
    if (ec == net::error::would_block || ec == net::error::try_again ||
        ec == net::error::interrupted)
      ec = {};
    if (ec) {
      // Completed on the executor, never inside async_call().
      net::post(state_->executor, [self = shared_from_this(), gen = gen_, ec] {
        if (self->stale(gen)) return;
        self->on_io_error(ec);
      });
      return;
    }
    if (sent == head_.size() + body_.size()) {
      written_ = true;
    } else {
      if (sent < head_.size()) {
        buffers[0] = net::buffer(head_) + sent;
      } else {
        buffers[0] = net::const_buffer();
        buffers[1] = net::buffer(body_) + (sent - head_.size());
      }
      net::async_write(socket_, buffers,
                       [self = shared_from_this(), gen = gen_](const boost::system::error_code& wec,
                                                               std::size_t) {
                         if (self->stale(gen)) return;
                         self->on_written(wec);
                       });
    }
    read();
  }

  void on_written(const boost::system::error_code& ec) {
    if (!ec) {
      written_ = true;
      return;
    }
    // With part of a response in, the read decides how the call ends (an
    // early error status, say); else the connection is gone.
    if (!got_bytes_) on_io_error(ec);
  }

  void read() {
    std::size_t want = read_chunk;
    if (parser_->is_header_done()) {
      if (auto remaining = parser_->content_length_remaining())
        want = std::clamp<std::size_t>(*remaining, read_chunk, max_read_chunk);
    }
    auto done = [self = shared_from_this(), gen = gen_](const boost::system::error_code& ec,
                                                        std::size_t n) {
      if (self->stale(gen)) return;
      // A TLS server that closes without close_notify: an end of stream
      // all the same (a response cut short still fails its framing).
      if (ec == net::ssl::error::stream_truncated) return self->on_read(net::error::eof, n);
      self->on_read(ec, n);
    };
    if (tls_)
      tls_->async_read_some(in_.prepare(want), std::move(done));
    else
      socket_.async_read_some(in_.prepare(want), std::move(done));
  }

  void on_read(const boost::system::error_code& ec, std::size_t n) {
    if (ec == net::error::eof && got_bytes_) {
      // The end of a response delimited by the end of the stream, or a
      // response cut short.
      boost::system::error_code eof_ec;
      parser_->put_eof(eof_ec);
      if (!eof_ec && parser_->is_done()) return on_response();
      return finish(transport_error(why::io, "the connection to " + state_->authority +
                                                 " closed in the middle of the response"));
    }
    if (ec) return on_io_error(ec);
    in_.commit(n);
    got_bytes_ = got_bytes_ || n > 0;
    while (in_.size() > 0 && !parser_->is_done()) {
      bool in_header = !parser_->is_header_done();
      boost::system::error_code perr;
      std::size_t used = parser_->put(in_.data(), perr);
      if (trace_ && in_header && used > 0)
        trace_->response_header.append(static_cast<const char*>(in_.data().data()), used);
      in_.consume(used);
      if (perr == bhttp::error::need_more) break;
      if (perr) return on_parse_error(perr);
      if (in_header && parser_->is_header_done()) {
        auto status = static_cast<int>(parser_->get().result_int());
        if (status >= 100 && status < 200) {
          // An interim response (100 Continue, 103): the real one follows.
          parser_.emplace();
          parser_->header_limit(max_response_header_bytes);
          parser_->body_limit(state_->options.max_response_bytes);
          continue;
        }
      }
      if (used == 0) break;
    }
    if (parser_->is_done()) return on_response();
    read();
  }

  void on_parse_error(const boost::system::error_code& ec) {
    if (ec == bhttp::error::body_limit)
      return finish(transport_error(
          why::bad_response, "the response body is larger than " +
                                 std::to_string(state_->options.max_response_bytes) + " bytes"));
    if (ec == bhttp::error::header_limit)
      return finish(transport_error(why::bad_response, "the response header is too large"));
    finish(transport_error(why::bad_response, "the response is not valid HTTP: " + ec.message()));
  }

  void on_io_error(const boost::system::error_code& ec) {
    if (state_->closed || ec == net::error::operation_aborted) return fail_closed();
    if (reused_ && !retried_ && !got_bytes_ && is_closed_by_peer(ec)) return retry();
    std::string message =
        got_bytes_ || ec != net::error::eof
            ? "the connection to " + state_->authority + " failed: " + ec.message()
            : "the server " + state_->authority + " closed the connection without answering";
    finish(transport_error(why::io, message));
  }

  // The one retry of a call whose reused connection turned out closed.
  void retry() {
    retried_ = true;
    reused_ = false;
    ++gen_;  // handlers of the old connection are now stale
    boost::system::error_code ec;
    lowest().close(ec);
    tls_.reset();
    if (trace_) *trace_ = wire_trace{};
    connect();
  }

  void on_response() {
    auto& res = parser_->get();
    const auto& opt = state_->options;
    bool reusable = opt.keep_alive && parser_->keep_alive() && written_ && in_.size() == 0 &&
                    !state_->closed && state_->idle.size() < opt.max_idle_connections;
    call_result r = !json_id_
                        ? client_detail::interpret_response(
                              static_cast<int>(res.result_int()), res.reason(),
                              res[bhttp::field::content_encoding], res.body(),
                              opt.max_response_bytes, state_->response_parser, state_->scratch)
                        : client_detail::interpret_json_response(
                              static_cast<int>(res.result_int()), res.reason(),
                              res[bhttp::field::content_encoding], res.body(),
                              opt.max_response_bytes, *json_id_, state_->scratch);
    if (trace_) trace_->response_body = res.body();
    if (state_->scratch.capacity() > max_read_chunk) std::string().swap(state_->scratch);
    if (reusable) state_->idle.push_back({std::move(socket_), std::move(tls_), clock::now()});
    finish(std::move(r));
  }

  // ---- completion ------------------------------------------------------------

  bool stale(std::uint32_t gen) const noexcept { return finished_ || gen != gen_; }

  tcp::socket& lowest() noexcept { return tls_ ? tls_->next_layer() : socket_; }

  void fail_closed() { finish(transport_error(why::io, "the client was closed")); }

  void set_due(clock::time_point due) {
    due_ = due;
    state_->schedule(due);
  }

  void finish(call_result r) {
    if (finished_) return;
    finished_ = true;
    state_->call_ended(this);
    if (resolver_) resolver_->cancel();
    boost::system::error_code ec;
    if (lowest().is_open()) lowest().close(ec);
    // Free the large buffers now; the op itself lives until its last
    // cancelled handler has run.
    parser_.reset();
    in_ = {};
    std::string().swap(body_);
    std::string().swap(head_);
    completion done = std::move(done_);
    done(std::move(r));
  }

  std::shared_ptr<client_state> state_;
  std::string body_;
  bool gzip_body_;
  std::optional<std::uint64_t> json_id_;  // the JSON-RPC request's id; none for XML-RPC
  completion done_;
  wire_trace* trace_;
  tcp::socket socket_;               // http; https until the handshake
  std::unique_ptr<tls_stream> tls_;  // https: owns the socket from the handshake on
  std::optional<tcp::resolver> resolver_;
  clock::time_point deadline_ = clock::time_point::max();
  clock::time_point due_ = clock::time_point::max();
  std::string head_;
  std::optional<bhttp::response_parser<bhttp::string_body>> parser_;
  boost::beast::flat_buffer in_;
  std::uint32_t gen_ = 0;  // which connection attempt handlers belong to
  bool reused_ = false;
  bool retried_ = false;
  bool connecting_ = false;
  bool written_ = false;
  bool got_bytes_ = false;
  bool finished_ = false;
};

void client_state::schedule(clock::time_point due) {
  if (due >= armed || closed) return;
  armed = due;
  deadlines.expires_at(due);
  deadlines.async_wait(
      [self = shared_from_this()](const boost::system::error_code& ec) { self->on_deadline(ec); });
}

void client_state::call_ended(call_op* op) {
  active.erase(op);
  if (active.empty() && !own_loop && armed != clock::time_point::max()) {
    armed = clock::time_point::max();
    deadlines.cancel();
  }
}

void client_state::on_deadline(const boost::system::error_code& ec) {
  if (ec || closed) return;  // re-armed or cancelled: a newer wait is pending, or none is needed
  if (deadlines.expiry() > clock::now()) return;
  armed = clock::time_point::max();
  auto now = clock::now();
  std::vector<std::shared_ptr<call_op>> expired;
  for (call_op* op : active)
    if (op->due() <= now) expired.push_back(op->shared_from_this());
  for (auto& op : expired) {
    try {
      op->on_timeout();
    } catch (...) {
      schedule_earliest();  // a caller's completion threw: the calls left still time out
      throw;
    }
  }
  schedule_earliest();
}

void client_state::schedule_earliest() {
  auto next = clock::time_point::max();
  for (call_op* op : active) next = std::min(next, op->due());
  schedule(next);
}

// ---- client -------------------------------------------------------------------

// The client's engine: the calls' shared state on the executor.
class http_engine final : public client_detail::executor_engine {
 public:
  http_engine(std::optional<net::any_io_executor> ex, std::string_view u, client_options options)
      : executor_engine(std::move(ex), "rapidrpc::client"),
        state(std::make_shared<client_state>(executor(), url::parse(u), std::move(options),
                                             own_loop())) {}

  ~http_engine() override {
    state->closed = true;
    try {
      for (call_op* op : state->active) op->abort();
      state->deadlines.cancel();  // its handler holds the state
    } catch (...) {
      // Asio's cancel() throws only if the reactor itself failed.
    }
    boost::system::error_code ec;
    for (auto& c : state->idle) c.lowest().close(ec);
    state->idle.clear();
    state.reset();
    // The io_context of a client without an executor goes last (the base's):
    // its destructor destroys the handlers still queued (and the calls they own).
  }
  http_engine(const http_engine&) = delete;
  http_engine& operator=(const http_engine&) = delete;
  http_engine(http_engine&&) = delete;
  http_engine& operator=(http_engine&&) = delete;

  std::shared_ptr<client_state> state;

 private:
  void begin(std::string_view method, const array& params, completion done,
             wire_trace* trace) override {
    std::string body;
    std::optional<std::uint64_t> json_id;
    if (state->options.protocol == protocol::jsonrpc) {
      json_id = state->next_id;
      jsonrpc::write_request(body, method, params,
                             std::to_string(*json_id));  // throws std::invalid_argument
      ++state->next_id;
    } else {
      xmlrpc::write_call(body, method, params);  // throws std::invalid_argument
    }
    bool gzip_body = false;
    std::size_t min = state->options.gzip_request_min_bytes;
    if (min > 0 && body.size() >= min) {
      std::string packed;
      http::gzip(body, packed);
      body.swap(packed);
      gzip_body = true;
    }
    std::make_shared<call_op>(state, std::move(body), gzip_body, json_id, std::move(done), trace)
        ->start();
  }
};

}  // namespace

client::client(std::string_view url, client_options options)
    : client_base(std::make_unique<http_engine>(std::nullopt, url, std::move(options))) {}

client::client(net::any_io_executor executor, std::string_view url, client_options options)
    : client_base(std::make_unique<http_engine>(std::move(executor), url, std::move(options))) {}

std::vector<outcome> client::multicall(const std::vector<std::pair<std::string, array>>& calls) {
  value result = call("system.multicall", client_detail::multicall_params(calls));
  return client_detail::split_multicall(std::move(result), calls.size());
}

const rapidrpc::url& client::target() const noexcept {
  static const rapidrpc::url none;
  const auto* e = static_cast<const http_engine*>(engine());
  return e ? e->state->target : none;
}

}  // namespace rapidrpc
