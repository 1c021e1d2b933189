#include "loadgen.hpp"

#include "response_framing.hpp"

#include <rapidrpc/client.hpp>
#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/literals.hpp>
#include <rapidrpc/localhost.hpp>
#include <rapidrpc/tls_client.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <sys/resource.h>
#include <sys/socket.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

namespace rapidrpc::cli {

void raise_descriptor_limit() noexcept {
  if (rlimit lim{}; getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

void thread_tally::record_ok(clock::time_point started, clock::time_point now) {
  auto ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - started).count());
  latency.record(ns);
  ++ok;
  auto& s = slot_at(now);
  ++s.ok;
  s.latency_sum_ns += ns;
  s.latency_max_ns = std::max(s.latency_max_ns, ns);
  last_done = std::max(last_done, now);
}

void thread_tally::record_error(clock::time_point now, std::string_view what) {
  relaxed_add(errors_so_far_, 1);
  ++slot_at(now).errors;
  last_done = std::max(last_done, now);
  if (first_error.empty()) first_error = what;
}

time_slot& thread_tally::slot_at(clock::time_point now) {
  auto idx = static_cast<std::size_t>(std::max<clock::rep>(0, (now - start_) / slot_width_));
  if (idx >= timeline.size()) timeline.resize(idx + 1);
  return timeline[idx];
}

void thread_tally::merge_into(bench_result& result) const {
  result.latency.merge(latency);
  result.ok += ok;
  result.unfinished += unfinished;
  result.errors.add(errors);
  if (result.first_error.empty()) result.first_error = first_error;
  if (timeline.size() > result.timeline.size()) result.timeline.resize(timeline.size());
  for (std::size_t i = 0; i < timeline.size(); ++i) {
    auto& s = result.timeline[i];
    s.ok += timeline[i].ok;
    s.errors += timeline[i].errors;
    s.latency_sum_ns += timeline[i].latency_sum_ns;
    s.latency_max_ns = std::max(s.latency_max_ns, timeline[i].latency_max_ns);
  }
}

void thread_tally::add_live_to(live_figures& out) const noexcept {
  latency.add_live_to(out.latency);
  out.errors += relaxed_load(errors_so_far_);
}

namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using clock = std::chrono::steady_clock;

constexpr std::size_t initial_buffer = 64 * 1024;
// Every JSON-RPC request of a run carries this id: each connection has one
// call in flight, and equal answers are equal bytes (see finish_response).
constexpr std::string_view bench_request_id = "1";
constexpr auto sweep_interval = std::chrono::milliseconds(20);
constexpr auto connect_backoff = std::chrono::milliseconds(50);

/// What every worker reads and none writes while the load runs.
struct plan {
  bench_options opts;
  std::string request;  // the whole request, head and body
  tcp::endpoint endpoint;
  std::shared_ptr<net::ssl::context> tls;  // https
  std::string host;                        // https: for SNI and the certificate check
  bool verify = true;                      // https: check the certificate and its name
  value expected;
  bool capture = false;  // warm-up: keep the first answer instead of checking it
  clock::time_point start;
  clock::time_point deadline = clock::time_point::max();  // duration mode
  clock::duration timeout;
  clock::duration max_idle;  // zero: an idle connection is reused however long it waited
  clock::duration slot_width;
};

class worker;

// One client connection. Exactly one operation (connect, write wait, read,
// or nothing while idle) is pending at a time, and every completion comes
// back to this object on its worker's thread.
class connection {
 public:
  explicit connection(worker& w);
  void next();                            // closed loop: the next call, if any
  void begin(clock::time_point started);  // starts a call measured from `started`
  void check_timeout(clock::time_point now);
  void resume_after_backoff(clock::time_point now);
  void shutdown();
  /// Ends the run for this connection; true if a call was in flight.
  bool abandon();

  enum class state : unsigned char { idle, connecting, writing, reading, backoff, done };
  state current() const noexcept { return state_; }

 private:
  void connect();
  void on_connect(const boost::system::error_code& ec);
  void handshake();
  void ready();
  void write();
  void read();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void finish_response(const response_frame& frame);
  std::optional<outcome> parse_answer(std::string_view body, clock::time_point now);
  bool process_buffer(bool eof);
  enum class fail_kind : unsigned char { connect, io, timeout, http_status, bad_response };
  void fail(fail_kind kind, std::string_view what);
  void close_socket();
  void call_done();

  worker& w_;
  tcp::socket socket_;
  std::optional<net::ssl::stream<tcp::socket&>> tls_;  // https: over socket_, anew per connection
  state state_ = state::idle;
  bool timed_out_ = false;
  bool connected_ = false;
  clock::time_point started_{};
  clock::time_point idle_since_{};  // the end of its last answer
  clock::time_point backoff_until_{};
  std::size_t sent_ = 0;
  std::unique_ptr<char[]> in_;
  std::size_t cap_ = 0, begin_ = 0, end_ = 0;
  std::string chunk_scratch_;
  std::string verified_body_;  // the last answer that parsed to the expected result
  xmlrpc::parser xml_{xmlrpc::document_type::response};
};

class worker : public thread_tally {
 public:
  worker(const plan& p, const thread_share& share)
      : thread_tally(p.start, p.slot_width),
        plan_(p),
        io_(1),
        sweep_(io_),
        rate_timer_(io_),
        schedule_(p.opts, share, p.start, p.deadline) {
    conns_.reserve(share.connections);
    for (std::size_t i = 0; i < share.connections; ++i)
      conns_.push_back(std::make_unique<connection>(*this));
    active_ = share.connections;
  }

  void run() {
    if (conns_.empty()) return;
    arm_sweep();
    if (!plan_.opts.requests) {
      // A timed run ends at its deadline, as wrk's does: calls still in
      // flight then are abandoned, counted apart, and not waited for.
      end_timer_.expires_at(plan_.deadline);
      end_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) end_run();
      });
    }
    if (schedule_.open_loop()) {
      for (auto& c : conns_) idle_.push_back(c.get());
      tick();
    } else {
      for (auto& c : conns_) c->next();
    }
    io_.run();
  }

  // -- called by connections ---------------------------------------------------

  net::io_context& io() noexcept { return io_; }
  const plan& the_plan() const noexcept { return plan_; }

  // Closed loop: may another call start now?
  bool take(clock::time_point now) noexcept { return schedule_.take(now); }

  // A connection has finished a call and is free.
  void connection_free(connection& c) {
    if (schedule_.open_loop()) {
      if (auto due = schedule_.take_deferred()) return c.begin(*due);
      if (schedule_.over()) return retire(c);
      idle_.push_back(&c);
      return;
    }
    c.next();
  }

  void retire(connection& c) {
    c.shutdown();
    if (--active_ == 0) {
      sweep_.cancel();
      rate_timer_.cancel();
      end_timer_.cancel();
    }
  }

  // The result check; counts a fault or a mismatch. True if it is the expected one.
  bool check(outcome& r, clock::time_point now) {
    if (plan_.capture) {
      if (!captured) captured = std::move(r);
      return true;
    }
    if (auto* f = std::get_if<fault>(&r)) {
      ++errors.fault;
      record_error(now, "fault " + std::to_string(f->code()) + ": " + f->message());
      return false;
    }
    if (std::get<value>(r) != plan_.expected) {
      ++errors.mismatch;
      record_error(now, "unexpected result: " + to_debug_string(std::get<value>(r)));
      return false;
    }
    return true;
  }

  // -- results, read after run() returns ---------------------------------------

  std::optional<outcome> captured;

 private:
  void arm_sweep() {
    sweep_.expires_after(sweep_interval);
    sweep_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || active_ == 0) return;
      auto now = clock::now();
      for (auto& c : conns_) {
        c->check_timeout(now);
        c->resume_after_backoff(now);
      }
      if (active_) arm_sweep();
    });
  }

  // Open loop: starts every call that is due, on an idle connection or, if
  // none is free, queued with its scheduled time (its latency runs from then).
  void tick() {
    const auto now = clock::now();
    while (auto due = schedule_.take_due(now)) {
      if (!idle_.empty()) {
        connection* c = idle_.back();
        idle_.pop_back();
        c->begin(*due);
      } else {
        schedule_.defer(*due);
      }
    }
    if (schedule_.over()) return finish_issuing();
    rate_timer_.expires_at(schedule_.next_due());
    rate_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) tick();
    });
  }

  void end_run() {
    schedule_.end();
    rate_timer_.cancel();
    sweep_.cancel();
    schedule_.drop_deferred();
    idle_.clear();
    for (auto& c : conns_)
      if (c->current() != connection::state::done && c->abandon()) ++unfinished;
    active_ = 0;
  }

  void finish_issuing() {
    schedule_.end();
    rate_timer_.cancel();
    auto idle = std::move(idle_);
    idle_.clear();
    for (auto* c : idle) retire(*c);
  }

  const plan& plan_;
  net::io_context io_;
  net::steady_timer sweep_;
  net::steady_timer rate_timer_;
  net::steady_timer end_timer_{io_};
  std::vector<std::unique_ptr<connection>> conns_;
  std::size_t active_ = 0;
  call_schedule schedule_;
  std::vector<connection*> idle_;  // open loop: connections waiting for a due call
};

connection::connection(worker& w) : w_(w), socket_(w.io()) {
  cap_ = initial_buffer;
  in_ = std::make_unique_for_overwrite<char[]>(cap_);
}

void connection::shutdown() {
  state_ = state::done;
  close_socket();
}

bool connection::abandon() {
  bool in_flight =
      state_ == state::connecting || state_ == state::writing || state_ == state::reading;
  shutdown();
  return in_flight;
}

void connection::close_socket() {
  boost::system::error_code ec;
  socket_.close(ec);
  connected_ = false;
  begin_ = end_ = 0;
}

void connection::next() {
  auto now = clock::now();
  if (!w_.take(now)) {
    w_.retire(*this);
    return;
  }
  begin(now);
}

void connection::begin(clock::time_point started) {
  started_ = started;
  sent_ = 0;
  // A server (or a proxy) closes a keep-alive connection once it has been
  // idle for its keep-alive timeout, at a moment the client cannot know: a
  // call sent on it just then is lost unanswered, and the client cannot tell
  // whether it ran. One idle for max_idle, shorter than the server's
  // timeout, is closed here and opened anew: no call is sent on a
  // connection the server may be closing.
  const auto max_idle = w_.the_plan().max_idle;
  if (connected_ && max_idle != clock::duration::zero() && clock::now() - idle_since_ >= max_idle)
    close_socket();
  if (!connected_) {
    connect();
  } else {
    write();
  }
}

void connection::connect() {
  state_ = state::connecting;
  begin_ = end_ = 0;
  socket_.async_connect(w_.the_plan().endpoint,
                        [this](const boost::system::error_code& ec) { on_connect(ec); });
}

void connection::on_connect(const boost::system::error_code& ec) {
  if (state_ == state::done) return;  // the run ended
  if (timed_out_) {
    timed_out_ = false;
    return fail(fail_kind::timeout, "no connection within the timeout");
  }
  if (ec) return fail(fail_kind::connect, "connect: " + ec.message());
  connected_ = true;
  // async_connect left the descriptor in non-blocking mode, which write()'s
  // plain send() relies on; saying so again would cost an ioctl per call.
  const auto& p = w_.the_plan();
  if (p.opts.keep_alive) {
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
  }
  if (p.tls) return handshake();
  ready();
}

// https: the handshake is part of connecting.
void connection::handshake() {
  const auto& p = w_.the_plan();
  tls_.emplace(socket_, *p.tls);
  if (!set_tls_client_host(tls_->native_handle(), p.host, p.verify))
    return fail(fail_kind::connect, "cannot check the certificate of \"" + p.host + "\"");
  tls_->async_handshake(net::ssl::stream_base::client, [this](
                                                           const boost::system::error_code& hec) {
    if (state_ == state::done) return;  // the run ended
    if (timed_out_) {
      timed_out_ = false;
      return fail(fail_kind::timeout, "no TLS handshake within the timeout");
    }
    if (hec)
      return fail(fail_kind::connect,
                  "TLS handshake: " + tls_handshake_failure(tls_->native_handle(), hec.message()));
    ready();
  });
}

void connection::ready() {
  const auto& p = w_.the_plan();
  // A closed-loop call on a kept connection is timed from its first byte,
  // as other load generators do; the open loop keeps the scheduled time.
  if (p.opts.keep_alive && p.opts.rate <= 0) started_ = clock::now();
  write();
}

void connection::write() {
  state_ = state::writing;
  const std::string& req = w_.the_plan().request;
  if (tls_) {
    net::async_write(*tls_, net::buffer(req),
                     [this](const boost::system::error_code& ec, std::size_t) {
                       if (state_ == state::done) return;  // the run ended
                       if (timed_out_) {
                         timed_out_ = false;
                         return fail(fail_kind::timeout, "request not sent within the timeout");
                       }
                       if (ec) return fail(fail_kind::io, "write: " + ec.message());
                       read();
                     });
    return;
  }
  int fd = socket_.native_handle();
  while (sent_ < req.size()) {
    ssize_t n = ::send(fd, req.data() + sent_, req.size() - sent_, MSG_NOSIGNAL);
    if (n > 0) {
      sent_ += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      socket_.async_wait(tcp::socket::wait_write, [this](const boost::system::error_code& ec) {
        if (state_ == state::done) return;  // the run ended
        if (timed_out_) {
          timed_out_ = false;
          return fail(fail_kind::timeout, "request not sent within the timeout");
        }
        if (ec) return fail(fail_kind::io, "write: " + ec.message());
        write();
      });
      return;
    }
    return fail(fail_kind::io, std::string("send: ") + std::strerror(errno));
  }
  read();
}

void connection::read() {
  state_ = state::reading;
  if (end_ == cap_) {
    // Make room: drop consumed bytes, then grow.
    if (begin_ > 0) {
      std::memmove(in_.get(), in_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    } else {
      auto grown = std::make_unique_for_overwrite<char[]>(cap_ * 2);
      std::memcpy(grown.get(), in_.get(), end_);
      in_ = std::move(grown);
      cap_ *= 2;
    }
  }
  auto buffer = net::buffer(in_.get() + end_, cap_ - end_);
  auto done = [this](const boost::system::error_code& ec, std::size_t n) {
    // A TLS server that closes without close_notify: an end of stream.
    if (ec == net::ssl::error::stream_truncated) return on_read(net::error::eof, n);
    on_read(ec, n);
  };
  if (tls_)
    tls_->async_read_some(buffer, done);
  else
    socket_.async_read_some(buffer, done);
}

void connection::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (state_ == state::done) return;  // the run ended
  if (timed_out_) {
    timed_out_ = false;
    return fail(fail_kind::timeout, "no response within the timeout");
  }
  if (ec == net::error::eof) {
    if (!process_buffer(true)) return;
    return;
  }
  if (ec) return fail(fail_kind::io, "read: " + ec.message());
  end_ += n;
  if (process_buffer(false)) return;
  read();
}

// True if the call is over (answered or failed); false if more bytes are needed.
bool connection::process_buffer(bool eof) {
  response_frame frame;
  std::string_view data(in_.get() + begin_, end_ - begin_);
  switch (frame_response(data, eof, frame, chunk_scratch_)) {
    case frame_status::need_more:
      return false;
    case frame_status::bad:
      if (eof && data.empty())
        fail(fail_kind::io, "the server closed the connection");
      else
        fail(fail_kind::bad_response, std::string("bad HTTP response: ") + frame.error);
      return true;
    case frame_status::complete:
      begin_ += frame.consumed;
      if (begin_ == end_) begin_ = end_ = 0;
      if (eof) frame.keep_alive = false;
      finish_response(frame);
      return true;
  }
  return true;
}

void connection::finish_response(const response_frame& frame) {
  auto now = clock::now();
  const auto& p = w_.the_plan();
  bool good = false;
  if (frame.status != 200) {
    ++w_.errors.http_status;
    w_.record_error(now, "HTTP status " + std::to_string(frame.status));
  } else if (frame.gzip) {
    ++w_.errors.bad_response;
    w_.record_error(now, "gzip response (not requested)");
  } else if (!verified_body_.empty() && frame.body == verified_body_) {
    // The very bytes of an answer already parsed and found right: the same
    // answer. Servers repeat themselves, so this skips most parses, and the
    // load generator stays far cheaper than any server it measures.
    good = true;
  } else {
    std::optional<outcome> answer = parse_answer(frame.body, now);
    if (answer) {
      good = w_.check(*answer, now);
      if (good && !p.capture) verified_body_.assign(frame.body);
    }
  }
  if (good) w_.record_ok(started_, now);
  if (!frame.keep_alive || !p.opts.keep_alive) close_socket();
  idle_since_ = now;
  call_done();
}

// The result or fault in a response body; nothing (an error counted) if the
// body is not a response of the plan's protocol.
std::optional<outcome> connection::parse_answer(std::string_view body, clock::time_point now) {
  if (w_.the_plan().opts.protocol == protocol::jsonrpc) {
    auto r = jsonrpc::parse_response(body);
    if (auto* bad = std::get_if<jsonrpc::error_reply>(&r)) {
      ++w_.errors.bad_response;
      w_.record_error(now, "bad JSON-RPC response: " + bad->detail);
      return std::nullopt;
    }
    auto& answer = std::get<jsonrpc::response>(r);
    if (answer.id != bench_request_id) {
      ++w_.errors.bad_response;
      w_.record_error(now, "a JSON-RPC response for another id: " + answer.id.substr(0, 40));
      return std::nullopt;
    }
    return std::move(answer.outcome);
  }
  xml_.reset();
  if (!xml_.parse(body)) {
    ++w_.errors.bad_response;
    w_.record_error(now, "bad XML-RPC response: " + xml_.error().message);
    return std::nullopt;
  }
  return std::move(xml_.response());
}

void connection::fail(fail_kind kind, std::string_view what) {
  auto now = clock::now();
  switch (kind) {
    case fail_kind::connect:
      ++w_.errors.connect;
      break;
    case fail_kind::io:
      ++w_.errors.io;
      break;
    case fail_kind::timeout:
      ++w_.errors.timeout;
      break;
    case fail_kind::http_status:
      ++w_.errors.http_status;
      break;
    case fail_kind::bad_response:
      ++w_.errors.bad_response;
      break;
  }
  w_.record_error(now, what);
  close_socket();
  if (kind == fail_kind::connect) {
    // Do not spin against a server that refuses: retry from the sweep.
    state_ = state::backoff;
    backoff_until_ = now + connect_backoff;
    return;
  }
  call_done();
}

void connection::call_done() {
  state_ = state::idle;
  w_.connection_free(*this);
}

void connection::check_timeout(clock::time_point now) {
  if (state_ != state::connecting && state_ != state::writing && state_ != state::reading) return;
  if (timed_out_ || now - started_ < w_.the_plan().timeout) return;
  timed_out_ = true;
  boost::system::error_code ec;
  socket_.close(ec);  // the pending operation completes with operation_aborted
  connected_ = false;
}

void connection::resume_after_backoff(clock::time_point now) {
  if (state_ != state::backoff || now < backoff_until_) return;
  call_done();
}

std::string encode_request(const bench_options& o, const url& u) {
  std::string body;
  const bool json = o.protocol == protocol::jsonrpc;
  try {
    if (json)
      jsonrpc::write_request(body, o.method, o.params, bench_request_id);
    else
      xmlrpc::write_call(body, o.method, o.params);
  } catch (const std::invalid_argument& e) {
    throw bench_error(std::string("cannot encode the call: ") + e.what());
  }
  std::string host = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  if (u.port != (u.scheme == "https" ? "443" : "80")) host += ":" + u.port;
  std::string req;
  req.reserve(body.size() + 256);
  req += "POST " + u.path + " HTTP/1.1\r\nHost: " + host +
         "\r\nUser-Agent: rapidrpc-bench\r\nContent-Type: " +
         (json ? "application/json" : "text/xml") +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  if (!o.keep_alive) req += "Connection: close\r\n";
  if (!u.user.empty() || !u.password.empty()) {
    req += "Authorization: Basic ";
    append_base64(req, u.user + ":" + u.password);
    req += "\r\n";
  }
  for (const auto& [name, val] : o.headers)
    req.append(name).append(": ").append(val).append("\r\n");
  req += "\r\n";
  req += body;
  return req;
}

// Runs `p` on `threads` workers, shown by `live` if given; returns them
// after they end.
std::vector<std::unique_ptr<worker>> run_workers(plan& p, live_line* live = nullptr) {
  const auto& o = p.opts;
  const unsigned threads = load_threads(o);
  std::vector<std::unique_ptr<worker>> workers;
  p.start = clock::now();
  if (o.requests == 0)
    p.deadline = p.start + std::chrono::duration_cast<clock::duration>(
                               std::chrono::duration<double>(o.duration));
  for (unsigned t = 0; t < threads; ++t) {
    workers.push_back(std::make_unique<worker>(p, share_of(o, threads, t)));
  }
  run_workers_on_threads(workers, live);
  return workers;
}

}  // namespace

bench_result run_bench(const bench_options& options, live_line* live) {
  bench_result result;
  result.options = options;
  if (options.connections == 0) throw bench_error("--connections must be at least 1");
  url u;
  try {
    u = url::parse(options.url);
  } catch (const std::invalid_argument& e) {
    throw bench_error(std::string("bad URL: ") + e.what());
  }

  raise_descriptor_limit();

  plan p;
  p.opts = options;
  if (u.scheme == "https") {
    p.host = u.host;
    p.verify = !options.insecure;
    try {
      p.tls = make_tls_client_context({options.ca_file, p.verify});
    } catch (const std::invalid_argument& e) {
      throw bench_error(e.what());
    }
  }
  p.request = encode_request(options, u);
  p.timeout =
      std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(options.timeout));
  p.max_idle =
      std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(options.max_idle));
  p.slot_width = result.slot_width;
  {
    net::io_context io;
    tcp::resolver resolver(io);
    boost::system::error_code ec;
    // "localhost" is the loopback without the resolver, the library's rule;
    // the load goes to its IPv4 address, the first the server listens on.
    auto found = resolver.resolve(is_localhost(u.host) ? "127.0.0.1" : u.host, u.port, ec);
    if (ec || found.empty()) throw bench_error("cannot resolve " + u.host + ": " + ec.message());
    p.endpoint = found.begin()->endpoint();
  }
  result.request_bytes = p.request.size();
  result.request_bytes_sample = p.request.substr(0, p.request.find("\r\n\r\n"));

  if (options.expect) {
    p.expected = *options.expect;
  } else {
    plan warm = p;
    warm.opts.connections = 1;
    warm.opts.threads = 1;
    warm.opts.requests = 1;
    warm.opts.rate = 0;
    warm.capture = true;
    auto workers = run_workers(warm);
    auto& w = *workers[0];
    if (!w.captured) throw bench_error("the warm-up call failed: " + w.first_error);
    p.expected = expected_from_warmup(*w.captured);
  }
  result.expected = p.expected;

  result.started_at = utc_now();
  auto workers = run_workers(p, live);
  merge_workers(workers, p.start, result);
  return result;
}

}  // namespace rapidrpc::cli
