#include "zmq/router.hpp"

#include "jsonrpc/dispatch.hpp"
#include "server/access.hpp"
#include "server/access_log.hpp"

#include <boost/asio/post.hpp>

#include <cstdio>
#include <unistd.h>
#include <stdexcept>
#include <utility>

namespace rapidrpc::detail {

namespace net = boost::asio;

namespace {

// A request from a DEALER arrives as [identity][payload]; through a REQ
// socket or a proxy, with more routing frames before the payload. Beyond
// this many frames a message is dropped.
constexpr std::size_t max_frames = 32;
// Messages read in one turn before the loop lets completions run.
constexpr int max_messages_per_turn = 256;
// How long replies still queued at close may take to leave.
constexpr int close_linger_ms = 1000;

std::string_view text(const zmq::message_t& m) noexcept {
  return {static_cast<const char*>(m.data()), m.size()};
}

}  // namespace

struct zmq_router::call {
  std::vector<zmq::message_t> envelope;  // the frames before the payload
  std::size_t envelope_frames = 0;
  std::string id;  // JSON text; empty: a notification, or a batch
  call_peer peer;
  call_context context;
  // For the access log only.
  std::string peer_text;
  std::string method;
  std::size_t request_bytes = 0;
  std::chrono::steady_clock::time_point start;
};

zmq_router::zmq_router(settings s) : settings_(std::move(s)), work_(net::make_work_guard(io_)) {
  call_context_.loop = io_.get_executor();
  call_context_.pool = settings_.pool ? settings_.pool : call_context_.loop;
  call_context_.runner = settings_.runner;
  // Past this size libzmq drops the sender's connection while reading the
  // size, before any of the body is stored.
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(settings_.max_message_bytes));
  socket_.set(zmq::sockopt::linger, 0);
  if (settings_.log != nullptr) log_ = std::make_unique<access_log_buffer>(*settings_.log, io_);
  frames_.resize(max_frames + 1);
}

zmq_router::~zmq_router() {
  if (thread_.joinable()) {
    stop(std::chrono::milliseconds(0));
    join();
  }
  // Nothing of io_ runs any more: handlers still queued (a pool result that
  // came after the drain deadline) are destroyed without running.
  if (!closed_) {
    notify_.release();
    socket_.close();
  }
  // libzmq leaves an ipc:// socket's file behind; a stopped server removes
  // the files it made.
  for (const auto& path : ipc_files_) ::unlink(path.c_str());
}

std::string zmq_router::bind(const std::string& address) {
  try {
    socket_.bind(address);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot bind the ZeroMQ endpoint " + address + ": " + e.what());
  }
  std::string bound = socket_.get(zmq::sockopt::last_endpoint);
  if (bound.starts_with("ipc://")) ipc_files_.push_back(bound.substr(6));
  return bound;
}

void zmq_router::start() {
  notify_.assign(socket_.get(zmq::sockopt::fd));
  schedule_pump();
  thread_ = std::thread([this] {
    io_.run();
    if (log_) log_->finish();
    // Replies already queued get a moment to leave; the context waits for
    // them when it is destroyed.
    notify_.release();
    socket_.set(zmq::sockopt::linger, close_linger_ms);
    socket_.close();
    closed_ = true;
  });
}

void zmq_router::stop(std::chrono::milliseconds drain) {
  net::post(io_, [this, drain] { begin_drain(drain); });
}

void zmq_router::join() {
  if (thread_.joinable()) thread_.join();
}

void zmq_router::schedule_pump() {
  if (pump_posted_) return;
  pump_posted_ = true;
  net::post(io_, [this] {
    pump_posted_ = false;
    pump();
  });
}

// ZMQ_FD only says that the socket's state may have changed, and only
// once: the socket must be read until it has nothing more before waiting
// again, and a send can take the notification of an arrival with it, so
// every send is followed by a pump (schedule_pump).
void zmq_router::wait_for_input() {
  if (waiting_) return;
  waiting_ = true;
  notify_.async_wait(net::posix::stream_descriptor::wait_read, [this](const boost::system::error_code& ec) {
    waiting_ = false;
    if (!ec) pump();
  });
}

void zmq_router::pump() {
  if (draining_) return;
  pumping_ = true;
  struct done_pumping {
    bool& flag;
    ~done_pumping() { flag = false; }
  } guard{pumping_};
  for (int i = 0; i < max_messages_per_turn; ++i) {
    std::size_t frames = 0;
    try {
      if (!(socket_.get(zmq::sockopt::events) & ZMQ_POLLIN)) {
        wait_for_input();
        return;
      }
      frames = receive();
    } catch (const zmq::error_t& e) {
      // Not expected while the context lives (signals are blocked, so no
      // EINTR); said, and the endpoint keeps waiting rather than going deaf.
      std::fprintf(stderr, "rapidrpc: ZeroMQ endpoint: cannot read: %s\n", e.what());
      wait_for_input();
      return;
    }
    if (frames == 0) continue;  // dropped as it was read
    handle(frames);
  }
  // More may be waiting; let the completions queued meanwhile go first.
  schedule_pump();
}

// Reads one message into frames_; returns its number of frames, or 0 if
// it was dropped (too many frames).
std::size_t zmq_router::receive() {
  std::size_t n = 0;
  bool more = true;
  while (more) {
    zmq::message_t& f = frames_[n < max_frames ? n : max_frames];
    if (!socket_.recv(f, zmq::recv_flags::dontwait)) return 0;  // no message after all
    more = f.more();
    ++n;
  }
  if (n > max_frames) {
    note_drop("too many frames");
    return 0;
  }
  return n;
}

void zmq_router::handle(std::size_t frames) {
  if (frames < 2) {
    note_drop("no payload frame");  // a ROUTER always adds the identity frame
    return;
  }
  const zmq::message_t& payload = frames_[frames - 1];
  const std::string_view body = text(payload);

  // The peer's address (tcp; none over ipc), for the allowlist, the
  // authorization hook and the log.
  const char* peer_address = zmq_msg_gets(payload.handle(), "Peer-Address");
  boost::asio::ip::address address;
  if (peer_address != nullptr) {
    boost::system::error_code ec;
    address = boost::asio::ip::make_address(peer_address, ec);
  }
  if (settings_.access != nullptr && peer_address != nullptr && !settings_.access->allowed(address))
    return reply_error(frames, "null", fault_code::not_authorized, "");

  auto parsed = jsonrpc::parse_request(body, settings_.limits);
  if (auto* bad = std::get_if<jsonrpc::error_reply>(&parsed))
    return reply_error(frames, bad->id, bad->code, bad->detail);
  auto& msg = std::get<jsonrpc::message>(parsed);

  if (msg.batch) {
    call& c = new_call(frames, settings_.log ? "[batch:" + std::to_string(msg.entries.size()) + "]" : "");
    c.peer.address = address;
    jsonrpc::detail::run_batch(*settings_.methods, c.context, std::move(msg),
                               [this, cp = &c](std::string reply) { finish(*cp, reply, 0); });
    return;
  }
  auto& entry = msg.entries.front();
  if (auto* bad = std::get_if<jsonrpc::error_reply>(&entry))
    return reply_error(frames, bad->id, bad->code, bad->detail);
  auto& r = std::get<jsonrpc::request>(entry);
  call& c = new_call(frames, r.method);
  c.peer.address = address;
  c.id = std::move(r.id);
  auto done = [this, cp = &c](outcome o) {
    out_.clear();
    if (!cp->id.empty()) jsonrpc::detail::write_outcome(out_, cp->id, o);
    const auto* f = std::get_if<fault>(&o);
    finish(*cp, out_, f != nullptr ? f->code() : 0);
  };
  if (auto f = jsonrpc::detail::bind_named(*settings_.methods, r)) return done(std::move(*f));
  settings_.methods->invoke(c.context, r.method, std::move(r.params), std::move(done));
}

// An answer that needs no call: a text that is not a request, a peer
// outside the allowed ranges.
void zmq_router::reply_error(std::size_t frames, std::string_view id, std::int32_t code,
                               std::string_view detail) {
  call& c = new_call(frames, "");
  out_.clear();
  jsonrpc::write_error(out_, id, code, detail);
  finish(c, out_, code);
}

zmq_router::call& zmq_router::new_call(std::size_t frames, std::string_view method) {
  call* c;
  if (!free_calls_.empty()) {
    c = free_calls_.back();
    free_calls_.pop_back();
  } else {
    calls_.push_back(std::make_unique<call>());
    c = calls_.back().get();
  }
  // The routing frames move to the call (a move of the message handle, no
  // copy); they go back out in front of the reply.
  const std::size_t n = frames - 1;
  if (c->envelope.size() < n) c->envelope.resize(n);
  for (std::size_t i = 0; i < n; ++i) c->envelope[i].swap(frames_[i]);
  c->envelope_frames = n;
  c->id.clear();
  c->peer = {};
  c->context = call_context_;
  c->context.peer = &c->peer;
  if (log_) {
    const char* peer_address = zmq_msg_gets(frames_[frames - 1].handle(), "Peer-Address");
    c->peer_text = peer_address != nullptr ? peer_address : "-";
    c->method = method;
    c->request_bytes = frames_[frames - 1].size();
    c->start = std::chrono::steady_clock::now();
  }
  ++in_flight_;
  return *c;
}

void zmq_router::finish(call& c, const std::string& body, std::int32_t fault_code) {
  if (!closed_ && !body.empty()) send(c.envelope, c.envelope_frames, body);
  if (log_) {
    access_record r;
    r.when = std::chrono::system_clock::now();
    r.peer = c.peer_text;
    r.method = c.method;
    r.status = body.empty() ? 204 : 200;
    r.fault = fault_code;
    r.request_bytes = c.request_bytes;
    r.response_bytes = body.size();
    r.duration = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - c.start);
    log_->add(r);
  }
  free_calls_.push_back(&c);
  --in_flight_;
  if (draining_) return finish_if_drained();
  // A send may have taken the notification of a message that arrived; in a
  // pump, the pump looks again anyway.
  if (!pumping_) schedule_pump();
}

void zmq_router::send(std::vector<zmq::message_t>& envelope, std::size_t count, const std::string& body) {
  try {
    // A ROUTER drops, without blocking, a reply to a peer that has gone or
    // whose queue is full (it stopped reading): nothing to wait for here.
    for (std::size_t i = 0; i < count; ++i) socket_.send(envelope[i], zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    socket_.send(zmq::const_buffer(body.data(), body.size()), zmq::send_flags::dontwait);
  } catch (const zmq::error_t& e) {
    std::fprintf(stderr, "rapidrpc: ZeroMQ endpoint: cannot send a reply: %s\n", e.what());
  }
}

// A message that gets no answer: one line a second at most, with a count.
void zmq_router::note_drop(const char* why) {
  ++dropped_;
  auto now = std::chrono::steady_clock::now();
  if (now - last_drop_log_ < std::chrono::seconds(1)) return;
  std::fprintf(stderr, "rapidrpc: ZeroMQ endpoint dropped %llu message(s) (%s)\n",
               static_cast<unsigned long long>(dropped_), why);
  dropped_ = 0;
  last_drop_log_ = now;
}

void zmq_router::begin_drain(std::chrono::milliseconds drain) {
  if (draining_) return;
  // Requests not read yet stay unread (and unanswered), as connections a
  // closed listener never accepted; calls in flight get their replies.
  draining_ = true;
  boost::system::error_code ignored;
  notify_.cancel(ignored);
  drain_timer_.expires_after(drain);
  drain_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) io_.stop();  // past the deadline: the calls left get no reply
  });
  finish_if_drained();
}

void zmq_router::finish_if_drained() {
  if (in_flight_ != 0) return;
  drain_timer_.cancel();
  io_.stop();
}

}  // namespace rapidrpc::detail
