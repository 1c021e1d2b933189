// The ZeroMQ client: one DEALER socket (cppzmq), JSON-RPC 2.0 frames,
// replies matched to calls by the id rule of client/json_reply.hpp. One
// engine runs every call: synchronous calls run it on the client's own
// io_context. How it works (readiness through ZMQ_FD, the one deadline
// timer, lifetimes) is in the "Clients" section of docs/design.md.
#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/zmq_client.hpp>

#include "client/json_reply.hpp"
#include "client/sync_call.hpp"
#include "client/wire.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <zmq.hpp>

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
using client_detail::call_result;
using client_detail::request_id;
using completion = std::function<void(call_result)>;

// A DEALER socket on `context`, connected to the endpoint; ZeroMQ's refusals
// as std::runtime_error (the documented contract).
zmq::socket_t open_socket(zmq::context_t& context, const zmq_endpoint& target,
                          const zmq_client_options& options) {
  try {
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::maxmsgsize,
               options.max_response_bytes >
                       static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())
                   ? std::int64_t{-1}
                   : static_cast<std::int64_t>(options.max_response_bytes));
    if (target.address.find("://[") != std::string::npos) socket.set(zmq::sockopt::ipv6, 1);
    try {
      socket.connect(target.address);
    } catch (const zmq::error_t& e) {
      throw std::runtime_error("cannot connect to " + target.address + ": " + e.what());
    }
    return socket;
  } catch (const zmq::error_t& e) {
    throw std::runtime_error(std::string("cannot open a ZeroMQ socket: ") + e.what());
  }
}

// What the client and its pending handlers share. Used from the executor's
// thread only.
struct dealer_engine : std::enable_shared_from_this<dealer_engine> {
  dealer_engine(net::any_io_executor ex, const zmq_endpoint& target, const zmq_client_options& o)
      : executor(std::move(ex)),
        socket(open_socket(context, target, o)),
        watch(executor),
        deadlines(executor),
        options(o),
        address(target.address) {
    try {
      watch.assign(socket.get(zmq::sockopt::fd));
    } catch (const zmq::error_t& e) {
      throw std::runtime_error(std::string("ZMQ_FD: ") + e.what());
    }
  }

  struct pending_call {
    clock::time_point due;
    completion done;
    wire_trace* trace;  // a synchronous call's trace, or null
  };
  using pending_map = std::map<request_id, pending_call>;

  void start(std::string_view method, const array& params, completion done, wire_trace* trace);
  bool send_or_queue(request_id id);
  bool try_send(request_id id, std::string_view bytes);
  void watch_socket();
  void drain();
  void post_drain();
  void on_reply(std::string_view frame);
  void complete(pending_map::iterator it, call_result&& r, std::string_view frame = {});
  void arm_deadline();
  void on_deadline();
  void after_completions();
  int events() noexcept;
  void close();

  net::any_io_executor executor;
  zmq::context_t context;  // declared before the socket: outlives it
  zmq::socket_t socket;
  net::posix::stream_descriptor watch;  // ZMQ_FD; released, never closed
  net::steady_timer deadlines;
  zmq_client_options options;
  std::string address;
  pending_map pending;                                    // by id, hence by deadline
  std::deque<std::pair<request_id, std::string>> unsent;  // past the high-water mark
  std::string frame;                                      // the request being written, reused
  zmq::message_t in;                                      // the reply being read, reused
  request_id next_id = 1;
  bool waiting = false;   // a wait on `watch` is pending
  unsigned wait_gen = 0;  // bumped to disown a cancelled wait
  bool timer_armed = false;
  unsigned timer_gen = 0;
  bool draining = false;
  bool drain_posted = false;
  bool closed = false;
};

void dealer_engine::start(std::string_view method, const array& params, completion done,
                          wire_trace* trace) {
  request_id id = next_id;
  char idbuf[24];
  auto idlen = static_cast<std::size_t>(std::to_chars(idbuf, idbuf + sizeof idbuf, id).ptr - idbuf);
  frame.clear();
  jsonrpc::write_request(frame, method, params, std::string_view(idbuf, idlen));  // may throw
  ++next_id;
  if (trace) {
    trace->request = frame;
    trace->response_header.clear();
    trace->response_body.clear();
  }
  auto due =
      options.timeout.count() > 0 ? clock::now() + options.timeout : clock::time_point::max();
  pending.emplace_hint(pending.end(), id, pending_call{due, std::move(done), trace});
  if (!timer_armed && due != clock::time_point::max()) arm_deadline();
  if (!send_or_queue(id)) {
    if (!draining) after_completions();  // nothing in flight: nothing to wait for
    return;
  }
  watch_socket();
  // The send may have taken the descriptor's signal for replies already
  // waiting: look, and read them from the executor if there are any.
  if (!draining && !drain_posted && (events() & ZMQ_POLLIN)) post_drain();
}

// Sends one request without waiting: true if it went out, false if the
// socket is at its high-water mark. A failure for good completes the call
// (posted, never inside async_call()) with reason::io and counts as sent.
bool dealer_engine::try_send(request_id id, std::string_view bytes) {
  try {
    return socket.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait)
        .has_value();
  } catch (const zmq::error_t& e) {
    auto it = pending.find(id);
    if (it == pending.end()) return true;
    net::post(executor,
              [done = std::move(it->second.done),
               err = transport_error(why::io, "send to " + address + ": " + e.what())]() mutable {
                done(std::move(err));
              });
    pending.erase(it);
    return true;
  }
}

// False if the send failed for good: the call then completes (posted) with
// reason::io.
bool dealer_engine::send_or_queue(request_id id) {
  if (unsent.empty()) {
    if (try_send(id, frame)) return pending.count(id) != 0;
  }
  unsent.emplace_back(id, frame);
  return true;
}

void dealer_engine::watch_socket() {
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

void dealer_engine::post_drain() {
  drain_posted = true;
  net::post(executor, [self = shared_from_this()] {
    self->drain_posted = false;
    if (!self->closed) self->drain();
  });
}

int dealer_engine::events() noexcept {
  try {
    return socket.get(zmq::sockopt::events);
  } catch (const zmq::error_t&) {
    return 0;
  }
}

// Sends what waits for room and reads every reply there is, until
// ZMQ_EVENTS shows nothing more to read.
void dealer_engine::drain() {
  if (draining || closed) return;
  draining = true;
  try {
    for (;;) {
      int ready = events();
      if ((ready & ZMQ_POLLOUT) && !unsent.empty()) {
        while (!unsent.empty()) {
          auto& [id, bytes] = unsent.front();
          if (pending.count(id) && !try_send(id, bytes)) break;
          unsent.pop_front();
        }
        continue;
      }
      if (!(ready & ZMQ_POLLIN)) break;
      zmq::recv_result_t got;
      try {
        got = socket.recv(in, zmq::recv_flags::dontwait);
      } catch (const zmq::error_t&) {
        got.reset();
      }
      if (!got) continue;  // EAGAIN after all: look again
      on_reply({static_cast<const char*>(in.data()), in.size()});
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

// One reply frame: the call it answers under the id rule, if that call is
// still in flight, completes; any other reply is late or stray, and dropped.
void dealer_engine::on_reply(std::string_view frame_text) {
  client_detail::json_reply r = client_detail::read_json_reply(frame_text);
  std::optional<request_id> sole;
  if (pending.size() == 1) sole = pending.begin()->first;
  auto id = client_detail::answered_call(r, sole);
  if (!id) return;
  auto it = pending.find(*id);
  if (it == pending.end()) return;  // a late reply, for a call that timed out
  complete(it, std::move(r.result), frame_text);
}

void dealer_engine::complete(pending_map::iterator it, call_result&& r,
                             std::string_view frame_text) {
  auto done = std::move(it->second.done);
  if (wire_trace* t = it->second.trace) t->response_body.assign(frame_text);
  pending.erase(it);
  done(std::move(r));
}

void dealer_engine::arm_deadline() {
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

void dealer_engine::on_deadline() {
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
void dealer_engine::after_completions() {
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

void dealer_engine::close() {
  if (closed) return;
  closed = true;
  ++wait_gen;
  ++timer_gen;
  waiting = timer_armed = false;
  watch.release();  // cancels the wait; the descriptor is ZeroMQ's
  deadlines.cancel();
  socket.close();
  context.close();  // prompt: the socket is closed and lingers 0 ms
  for (auto& [id, call] : pending) {
    net::post(executor, [done = std::move(call.done)] {
      done(transport_error(why::io, "the client was closed"));
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

namespace {

// The client's engine: the DEALER socket's engine on the executor.
class zmq_engine final : public client_detail::executor_engine {
 public:
  zmq_engine(std::optional<net::any_io_executor> ex, std::string_view url,
             const zmq_client_options& o)
      : executor_engine(std::move(ex), "rapidrpc::zmq_client"),
        target(zmq_endpoint::parse(url)),
        dealer(std::make_shared<dealer_engine>(executor(), target, o)) {}
  ~zmq_engine() override {
    try {
      dealer->close();
    } catch (...) {
      // Asio's release() and cancel() throw only if the reactor itself
      // failed; posting the completions, only if memory ran out.
    }
    dealer.reset();
    // The io_context of a client without an executor goes last (the base's):
    // its destructor destroys the handlers still queued.
  }
  zmq_engine(const zmq_engine&) = delete;
  zmq_engine& operator=(const zmq_engine&) = delete;
  zmq_engine(zmq_engine&&) = delete;
  zmq_engine& operator=(zmq_engine&&) = delete;

  zmq_endpoint target;
  std::shared_ptr<dealer_engine> dealer;

 private:
  void begin(std::string_view method, const array& params, completion done,
             wire_trace* trace) override {
    dealer->start(method, params, std::move(done), trace);
  }
};

}  // namespace

zmq_client::zmq_client(std::string_view url, zmq_client_options options)
    : client_base(std::make_unique<zmq_engine>(std::nullopt, url, options)) {}

zmq_client::zmq_client(net::any_io_executor executor, std::string_view url,
                       zmq_client_options options)
    : client_base(std::make_unique<zmq_engine>(std::move(executor), url, options)) {}

const zmq_endpoint& zmq_client::target() const noexcept {
  static const zmq_endpoint none;
  const auto* e = static_cast<const zmq_engine*>(engine());
  return e ? e->target : none;
}

}  // namespace rapidrpc
