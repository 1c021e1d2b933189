// The ZeroMQ client: one DEALER socket, JSON-RPC 2.0 frames, replies
// matched to calls by id.
//
// Synchronous calls (a client without an executor) send and then wait with
// zmq_poll() for the reply with their id, up to the call's deadline; any
// other reply is a late one, for a call that timed out, and is dropped.
//
// Asynchronous calls, on the caller's executor:
//   1. The request is written into a reused buffer (a value that cannot be
//      encoded throws before anything is registered) and sent at once with
//      ZMQ_DONTWAIT; at the high-water mark it waits in `unsent` for
//      ZMQ_POLLOUT. The call goes into `pending`, keyed by its id.
//   2. ZeroMQ signals readiness through ZMQ_FD, edge-triggered: the
//      descriptor only says "the socket's state may have changed", and any
//      ZeroMQ call on the socket (a send too) may consume that signal. So
//      after every wake the replies are read while ZMQ_EVENTS shows
//      ZMQ_POLLIN, and after every send ZMQ_EVENTS is checked: replies
//      already there are read in a posted handler (not inside async_call(),
//      whose caller does not expect other completions to run).
//   3. A reply's id finds its call, which leaves `pending` before its
//      completion runs. A reply for no call in flight is dropped.
// The descriptor (owned by ZeroMQ) is watched with a stream_descriptor
// that is released, never closed. While no call is in flight the wait and
// the deadline timer are cancelled, so the caller's run() can return.
//
// Timeouts: the timeout is the same for every call of a client and the
// clock is monotonic, so deadlines grow with ids: the oldest call in
// `pending` (an ordered map) is always the first due. One timer is armed for
// it; when it fires, every call past due fails with reason::timeout and the
// timer is armed for the next oldest. Calls that start or finish do not touch
// the timer.
//
// Lifetimes: the state is shared by the client and its pending handlers.
// Destroying the client closes the socket (ZMQ_LINGER 0) and terminates the
// context at once; the calls still in flight complete on the executor with
// reason::io "the client was closed".
#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/zmq_client.hpp>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <zmq.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <variant>

namespace rapidrpc {

namespace net = boost::asio;

namespace {

using clock = std::chrono::steady_clock;
using why = transport_error::reason;
using call_result = std::variant<value, fault, transport_error>;

outcome to_outcome(call_result&& r) {
  switch (r.index()) {
    case 0:
      return std::get<value>(std::move(r));
    case 1:
      return std::get<fault>(std::move(r));
    default:
      return fault(fault_code::transport_error, std::get<transport_error>(r).what());
  }
}

std::string zmq_message(std::string_view what) {
  return std::string(what) + ": " + zmq_strerror(zmq_errno());
}

// The id of a reply, if it is one of ours (a non-negative integer).
std::optional<std::uint64_t> parse_id(std::string_view text) {
  std::uint64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return id;
}

// One reply frame: its id (if it could be read) and what it means.
struct reply {
  std::optional<std::uint64_t> id;
  call_result result;
};

reply read_reply(std::string_view frame) {
  auto parsed = jsonrpc::parse_response(frame);
  if (auto* bad = std::get_if<jsonrpc::error_reply>(&parsed)) {
    return {
        parse_id(bad->id),
        transport_error(why::bad_response, "the reply is not a JSON-RPC response: " + bad->detail)};
  }
  auto& r = std::get<jsonrpc::response>(parsed);
  if (auto* f = std::get_if<fault>(&r.outcome)) return {parse_id(r.id), std::move(*f)};
  return {parse_id(r.id), std::get<value>(std::move(r.outcome))};
}

// A ZeroMQ context with one DEALER socket connected to the endpoint.
struct zmq_handles {
  void* context = nullptr;
  void* socket = nullptr;

  zmq_handles(const zmq_endpoint& target, const zmq_client_options& options) {
    context = zmq_ctx_new();
    if (!context) throw std::runtime_error(zmq_message("zmq_ctx_new"));
    socket = zmq_socket(context, ZMQ_DEALER);
    if (!socket) {
      std::string msg = zmq_message("zmq_socket");
      zmq_ctx_term(context);
      throw std::runtime_error(msg);
    }
    int linger = 0;
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
    std::int64_t max_size =
        options.max_response_bytes >
                static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
            ? -1
            : static_cast<std::int64_t>(options.max_response_bytes);
    zmq_setsockopt(socket, ZMQ_MAXMSGSIZE, &max_size, sizeof max_size);
    if (target.address.find("://[") != std::string::npos) {
      int on = 1;
      zmq_setsockopt(socket, ZMQ_IPV6, &on, sizeof on);
    }
    if (zmq_connect(socket, target.address.c_str()) != 0) {
      std::string msg = zmq_message("cannot connect to " + target.address);
      close();
      throw std::runtime_error(msg);
    }
  }
  zmq_handles(const zmq_handles&) = delete;
  zmq_handles& operator=(const zmq_handles&) = delete;
  ~zmq_handles() { close(); }

  void close() noexcept {
    if (socket) zmq_close(socket);
    socket = nullptr;
    if (context) zmq_ctx_term(context);  // prompt: the socket is closed and lingers 0 ms
    context = nullptr;
  }
};

// A received frame, its buffer reused from one message to the next.
class message {
 public:
  message() { zmq_msg_init(&msg_); }
  ~message() { zmq_msg_close(&msg_); }
  message(const message&) = delete;
  message& operator=(const message&) = delete;

  // One frame without waiting; false if none is there (or on error).
  bool receive(void* socket) { return zmq_msg_recv(&msg_, socket, ZMQ_DONTWAIT) >= 0; }
  std::string_view view() const {
    return {static_cast<const char*>(zmq_msg_data(const_cast<zmq_msg_t*>(&msg_))),
            zmq_msg_size(const_cast<zmq_msg_t*>(&msg_))};
  }

 private:
  zmq_msg_t msg_;
};

int socket_events(void* socket) {
  int events = 0;
  std::size_t len = sizeof events;
  if (zmq_getsockopt(socket, ZMQ_EVENTS, &events, &len) != 0) return 0;
  return events;
}

}  // namespace

// ---- the asynchronous engine ----------------------------------------------------------

namespace {

struct async_state : std::enable_shared_from_this<async_state> {
  async_state(net::any_io_executor ex, const zmq_endpoint& target, const zmq_client_options& o)
      : executor(std::move(ex)),
        handles(target, o),
        watch(executor),
        deadlines(executor),
        options(o),
        address(target.address) {
    int fd = -1;
    std::size_t len = sizeof fd;
    if (zmq_getsockopt(handles.socket, ZMQ_FD, &fd, &len) != 0)
      throw std::runtime_error(zmq_message("ZMQ_FD"));
    watch.assign(fd);
  }

  struct pending_call {
    clock::time_point due;
    std::function<void(outcome)> done;
  };

  void start(std::string_view method, const array& params, std::function<void(outcome)> done);
  bool send_or_queue(std::uint64_t id);
  void watch_socket();
  void drain();
  void post_drain();
  void complete(std::uint64_t id, call_result&& r);
  void complete(std::map<std::uint64_t, pending_call>::iterator it, call_result&& r);
  void arm_deadline();
  void on_deadline();
  void after_completions();
  void close();

  net::any_io_executor executor;
  zmq_handles handles;
  net::posix::stream_descriptor watch;  // ZMQ_FD; released, never closed
  net::steady_timer deadlines;
  zmq_client_options options;
  std::string address;
  std::map<std::uint64_t, pending_call> pending;             // by id, hence by deadline
  std::deque<std::pair<std::uint64_t, std::string>> unsent;  // past the high-water mark
  std::string frame;                                         // the request being written, reused
  message in;
  std::uint64_t next_id = 1;
  bool waiting = false;   // a wait on `watch` is pending
  unsigned wait_gen = 0;  // bumped to disown a cancelled wait
  bool timer_armed = false;
  unsigned timer_gen = 0;
  bool draining = false;
  bool drain_posted = false;
  bool closed = false;
};

void async_state::start(std::string_view method, const array& params,
                        std::function<void(outcome)> done) {
  std::uint64_t id = next_id;
  char idbuf[24];
  auto idlen = static_cast<std::size_t>(std::to_chars(idbuf, idbuf + sizeof idbuf, id).ptr - idbuf);
  frame.clear();
  jsonrpc::write_request(frame, method, params, std::string_view(idbuf, idlen));  // may throw
  ++next_id;
  auto due =
      options.timeout.count() > 0 ? clock::now() + options.timeout : clock::time_point::max();
  pending.emplace_hint(pending.end(), id, pending_call{due, std::move(done)});
  if (!timer_armed && due != clock::time_point::max()) arm_deadline();
  if (!send_or_queue(id)) {
    if (!draining) after_completions();  // nothing in flight: nothing to wait for
    return;
  }
  watch_socket();
  // The send may have taken the descriptor's signal for replies already
  // waiting: look, and read them from the executor if there are any.
  if (!draining && !drain_posted && (socket_events(handles.socket) & ZMQ_POLLIN)) post_drain();
}

// False if the send failed for good: the call then completes (posted) with
// reason::io.
bool async_state::send_or_queue(std::uint64_t id) {
  if (unsent.empty()) {
    if (zmq_send(handles.socket, frame.data(), frame.size(), ZMQ_DONTWAIT) >= 0) return true;
    if (zmq_errno() != EAGAIN) {
      transport_error e(why::io, zmq_message("send to " + address));
      auto it = pending.find(id);
      auto fn = std::move(it->second.done);
      pending.erase(it);
      net::post(executor, [fn = std::move(fn), e = std::move(e)]() mutable {
        fn(to_outcome(call_result(std::move(e))));
      });
      return false;
    }
  }
  unsent.emplace_back(id, frame);
  return true;
}

void async_state::watch_socket() {
  if (waiting || closed) return;
  waiting = true;
  watch.async_wait(
      net::posix::stream_descriptor::wait_read,
      [self = shared_from_this(), gen = wait_gen](const boost::system::error_code& ec) {
        if (gen != self->wait_gen) return;  // cancelled, and perhaps re-armed since
        self->waiting = false;
        if (ec || self->closed) return;
        if (!self->pending.empty()) self->watch_socket();  // first: a completion may throw
        self->drain();
      });
}

void async_state::post_drain() {
  drain_posted = true;
  net::post(executor, [self = shared_from_this()] {
    self->drain_posted = false;
    if (!self->closed) self->drain();
  });
}

// Sends what waits for room and reads every reply there is, until
// ZMQ_EVENTS shows nothing more to read.
void async_state::drain() {
  if (draining || closed) return;
  draining = true;
  try {
    for (;;) {
      int events = socket_events(handles.socket);
      if ((events & ZMQ_POLLOUT) && !unsent.empty()) {
        while (!unsent.empty()) {
          auto& [id, bytes] = unsent.front();
          if (pending.count(id)) {
            if (zmq_send(handles.socket, bytes.data(), bytes.size(), ZMQ_DONTWAIT) < 0) break;
          }
          unsent.pop_front();
        }
        continue;
      }
      if (!(events & ZMQ_POLLIN)) break;
      if (!in.receive(handles.socket)) continue;  // EAGAIN after all: look again
      reply r = read_reply(in.view());
      if (r.id) {
        complete(*r.id, std::move(r.result));
      } else if (pending.size() == 1) {
        // A reply without a usable id (a server's parse error, say) can only
        // be for the one call in flight.
        complete(pending.begin(), std::move(r.result));
      }
      if (closed) break;  // a completion destroyed the client
    }
  } catch (...) {
    draining = false;
    // Replies may still be queued and the descriptor will not signal them.
    if (!closed) post_drain();
    after_completions();
    throw;
  }
  draining = false;
  after_completions();
}

void async_state::complete(std::uint64_t id, call_result&& r) {
  auto it = pending.find(id);
  if (it == pending.end()) return;  // a late reply, for a call that timed out
  complete(it, std::move(r));
}

void async_state::complete(std::map<std::uint64_t, pending_call>::iterator it, call_result&& r) {
  auto fn = std::move(it->second.done);
  pending.erase(it);
  fn(to_outcome(std::move(r)));
}

void async_state::arm_deadline() {
  timer_armed = true;
  deadlines.expires_at(pending.begin()->second.due);
  deadlines.async_wait(
      [self = shared_from_this(), gen = timer_gen](const boost::system::error_code& ec) {
        if (gen != self->timer_gen) return;
        self->timer_armed = false;
        if (ec || self->closed) return;
        self->on_deadline();
      });
}

void async_state::on_deadline() {
  auto now = clock::now();
  auto ms = std::to_string(options.timeout.count());
  try {
    while (!pending.empty() && pending.begin()->second.due <= now) {
      complete(pending.begin(),
               transport_error(why::timeout, "no reply from " + address + " within " + ms + " ms"));
      if (closed) return;
    }
  } catch (...) {
    after_completions();  // the timer again, for the calls left
    throw;
  }
  after_completions();
}

// With no call in flight, nothing may keep the caller's run() going; with
// some, the timer must be armed for the oldest.
void async_state::after_completions() {
  if (closed) return;
  if (pending.empty()) {
    if (waiting) {
      waiting = false;
      ++wait_gen;
      watch.cancel();
    }
    if (timer_armed) {
      timer_armed = false;
      ++timer_gen;
      deadlines.cancel();
    }
    unsent.clear();
    return;
  }
  if (!timer_armed && pending.begin()->second.due != clock::time_point::max()) arm_deadline();
}

void async_state::close() {
  if (closed) return;
  closed = true;
  ++wait_gen;
  ++timer_gen;
  waiting = timer_armed = false;
  watch.release();  // cancels the wait; the descriptor is ZeroMQ's
  deadlines.cancel();
  handles.close();
  for (auto& [id, call] : pending) {
    net::post(executor, [fn = std::move(call.done)] {
      fn(fault(fault_code::transport_error, "the client was closed"));
    });
  }
  pending.clear();
  unsent.clear();
}

}  // namespace

// ---- zmq_endpoint ---------------------------------------------------------------------

bool zmq_endpoint::is_zmq_url(std::string_view text) noexcept {
  return text.starts_with("tcp://") || text.starts_with("ipc://");
}

zmq_endpoint zmq_endpoint::parse(std::string_view text) {
  zmq_endpoint out;
  if (text.starts_with("ipc://")) {
    if (text.size() == 6) throw std::invalid_argument("ipc:// needs a path: ipc:///run/x.sock");
    out.scheme = "ipc";
  } else if (text.starts_with("tcp://")) {
    std::string_view rest = text.substr(6);
    std::size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
      throw std::invalid_argument("expected tcp://host:port, got '" + std::string(text) + "'");
    std::string_view host = rest.substr(0, colon), port = rest.substr(colon + 1);
    if (host.front() == '[' && host.back() != ']')
      throw std::invalid_argument("an IPv6 host goes in brackets: tcp://[::1]:5555");
    if (host.front() != '[' && host.find(':') != std::string_view::npos)
      throw std::invalid_argument("an IPv6 host goes in brackets: tcp://[::1]:5555");
    unsigned n = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || n == 0 ||
        n > 65535)
      throw std::invalid_argument("bad port in '" + std::string(text) + "' (1 to 65535)");
    out.scheme = "tcp";
  } else {
    throw std::invalid_argument("expected a tcp://host:port or ipc://path URL, got '" +
                                std::string(text) + "'");
  }
  if (text.find_first_of(std::string_view("\0 \t\r\n", 5)) != std::string_view::npos)
    throw std::invalid_argument("a ZeroMQ URL cannot hold spaces or control characters");
  out.address = std::string(text);
  return out;
}

// ---- zmq_client -----------------------------------------------------------------------

struct zmq_client::impl {
  impl(std::string_view url, zmq_client_options o) : target(zmq_endpoint::parse(url)), options(o) {}
  ~impl() {
    try {
      if (async) async->close();
    } catch (...) {
      // Asio's release() and cancel() throw only if the reactor itself
      // failed; posting the completions, only if memory ran out.
    }
  }
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;

  // One synchronous call.
  call_result run(std::string_view method, const array& params);

  zmq_endpoint target;
  zmq_client_options options;
  std::optional<zmq_handles> sync;     // a synchronous client
  std::shared_ptr<async_state> async;  // a client on an executor
  std::uint64_t next_id = 1;
  std::string frame;
  message in;
  wire_trace* trace = nullptr;
};

call_result zmq_client::impl::run(std::string_view method, const array& params) {
  if (!sync) throw std::logic_error("synchronous calls need a zmq_client without an executor");
  std::uint64_t id = next_id;
  frame.clear();
  jsonrpc::write_request(frame, method, params, std::to_string(id));  // may throw
  ++next_id;
  if (trace) {
    trace->request = frame;
    trace->response_header.clear();
    trace->response_body.clear();
  }
  const bool limited = options.timeout.count() > 0;
  const auto due = limited ? clock::now() + options.timeout : clock::time_point::max();
  auto timed_out = [&] {
    return transport_error(why::timeout, "no reply from " + target.address + " within " +
                                             std::to_string(options.timeout.count()) + " ms");
  };
  // Waits for `events` on the socket until the deadline; false on timeout.
  auto wait_for = [&](short events) -> std::optional<bool> {
    for (;;) {
      long ms = -1;
      if (limited) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(due - clock::now()).count();
        if (left <= 0) return false;
        ms = static_cast<long>(left);
      }
      zmq_pollitem_t item{sync->socket, 0, events, 0};
      int rc = zmq_poll(&item, 1, ms);
      if (rc > 0) return true;
      if (rc == 0) return false;
      if (zmq_errno() != EINTR) return std::nullopt;
    }
  };
  for (;;) {
    if (zmq_send(sync->socket, frame.data(), frame.size(), ZMQ_DONTWAIT) >= 0) break;
    if (zmq_errno() == EINTR) continue;
    if (zmq_errno() != EAGAIN)
      return transport_error(why::io, zmq_message("send to " + target.address));
    auto ready = wait_for(ZMQ_POLLOUT);
    if (!ready) return transport_error(why::io, zmq_message("zmq_poll"));
    if (!*ready) return timed_out();
  }
  for (;;) {
    auto ready = wait_for(ZMQ_POLLIN);
    if (!ready) return transport_error(why::io, zmq_message("zmq_poll"));
    if (!*ready) return timed_out();
    if (!in.receive(sync->socket)) continue;
    reply r = read_reply(in.view());
    if (r.id && *r.id != id) continue;  // late: for a call that timed out
    if (trace) trace->response_body.assign(in.view());
    return std::move(r.result);
  }
}

zmq_client::zmq_client(std::string_view url, zmq_client_options options)
    : impl_(std::make_unique<impl>(url, options)) {
  impl_->sync.emplace(impl_->target, impl_->options);
}

zmq_client::zmq_client(net::any_io_executor executor, std::string_view url,
                       zmq_client_options options)
    : impl_(std::make_unique<impl>(url, options)) {
  impl_->async = std::make_shared<async_state>(std::move(executor), impl_->target, impl_->options);
}

zmq_client::~zmq_client() = default;
zmq_client::zmq_client(zmq_client&&) noexcept = default;
zmq_client& zmq_client::operator=(zmq_client&&) noexcept = default;

namespace {

template <class Impl>
Impl& checked(const std::unique_ptr<Impl>& p) {
  if (!p) throw std::logic_error("rapidrpc::zmq_client: use of a moved-from client");
  return *p;
}

}  // namespace

value zmq_client::call(std::string_view method, const array& params) {
  call_result r = checked(impl_).run(method, params);
  switch (r.index()) {
    case 0:
      return std::get<value>(std::move(r));
    case 1:
      throw std::get<fault>(std::move(r));
    default:
      throw std::get<transport_error>(std::move(r));
  }
}

outcome zmq_client::try_call(std::string_view method, const array& params) {
  return to_outcome(checked(impl_).run(method, params));
}

// By value, as client::async_call() takes them; the request is written at
// once, so a caller's move costs nothing more.
void zmq_client::async_call(std::string method,  // NOLINT(performance-unnecessary-value-param)
                            array params,        // NOLINT(performance-unnecessary-value-param)
                            std::function<void(outcome)> done) {
  auto& self = checked(impl_);
  if (!self.async) throw std::logic_error("async_call needs a zmq_client built on an executor");
  self.async->start(method, params, std::move(done));
}

void zmq_client::trace(wire_trace* trace) noexcept {
  if (impl_) impl_->trace = trace;
}

const zmq_endpoint& zmq_client::target() const noexcept {
  static const zmq_endpoint none;
  return impl_ ? impl_->target : none;
}

void zmq_client::throw_result_type(std::string_view got) {
  throw transport_error(transport_error::reason::bad_response,
                        "the result has an unexpected type: " + std::string(got));
}

}  // namespace rapidrpc
