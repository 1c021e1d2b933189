#include "zmq/router.hpp"

#include "access/access.hpp"
#include "access/access_log.hpp"

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace rapidrpc::detail {

namespace {

// How long replies still queued at close may take to leave.
constexpr int close_linger_ms = 1000;

std::string_view text(const zmq::message_t& m) noexcept {
  return {static_cast<const char*>(m.data()), m.size()};
}

}  // namespace

// One request in flight; its exchange runs the call and hands the reply back.
struct zmq_router::call final : rpc::reply_sink {
  call(zmq_router& r, const registry& methods, const limits& lim)
      : router(r), exchange(methods, lim) {}
  void on_reply(const rpc::reply& r) override { router.finish(*this, r); }

  zmq_router& router;
  rpc::exchange exchange;
  std::vector<zmq::message_t> envelope;  // the frames before the payload
  std::size_t envelope_frames = 0;
  call_peer peer;
  call_context context;
  // For the access log only.
  std::string peer_text;
  access_entry log_entry;
  std::size_t request_bytes = 0;
};

zmq_router::zmq_router(settings s)
    : zmq_service(max_frames, "ZeroMQ endpoint", &settings_.lines, close_linger_ms),
      settings_(std::move(s)) {
  if (settings_.metrics != nullptr) stats_ = settings_.metrics->at(settings_.metrics_shard);
  call_context_.loop = io_.get_executor();
  call_context_.pool = settings_.pool;
  // Past this size libzmq drops the sender's connection while reading the
  // size, before any of the body is stored.
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(settings_.max_message_bytes));
  socket_.set(zmq::sockopt::linger, 0);
  if (settings_.log != nullptr) log_ = std::make_unique<access_log_buffer>(*settings_.log, io_);
}

zmq_router::~zmq_router() {
  end();
  // libzmq leaves an ipc:// socket's file behind; a stopped server removes
  // the files it made.
  for (const auto& path : ipc_files_) ::unlink(path.c_str());
}

std::string zmq_router::bind(const std::string& address) {
  std::string bound = zmq_service::bind(socket_, address, "ZeroMQ endpoint");
  if (bound.starts_with("ipc://")) ipc_files_.push_back(bound.substr(6));
  return bound;
}

void zmq_router::on_close() {
  trimmer_.finish();
  if (log_) log_->finish();
}

void zmq_router::on_message(std::vector<zmq::message_t>& frames, std::size_t count) {
  if (count > max_frames) {
    note_drop("too many frames");
    return;
  }
  if (count < 2) {
    note_drop("no payload frame");  // a ROUTER always adds the identity frame
    return;
  }
  const zmq::message_t& payload = frames[count - 1];
  const std::string_view body = text(payload);

  // The peer's address (tcp; none over ipc), for the allowlist, the
  // authorization hook and the log.
  const char* peer_address = zmq_msg_gets(payload.handle(), "Peer-Address");
  boost::asio::ip::address address;
  if (peer_address != nullptr) {
    boost::system::error_code ec;
    address = boost::asio::ip::make_address(peer_address, ec);
  }
  call& c = new_call(frames, count);
  c.peer.address = address;
  c.request_bytes = body.size();
  stats_.received(body.size());
  if (settings_.access != nullptr && peer_address != nullptr &&
      !settings_.access->allowed(address)) {
    stats_.rejected(metrics::rejection::allowlist);
    return c.exchange.refuse(rpc::protocol::jsonrpc, fault(fault_code::not_authorized, ""), c);
  }
  // The router outlives its calls (the io_context they complete on is
  // stopped before it goes): the sink is a reference that owns nothing.
  c.exchange.start(rpc::protocol::jsonrpc, body, c.context,
                   std::shared_ptr<rpc::reply_sink>(std::shared_ptr<void>(), &c));
}

zmq_router::call& zmq_router::new_call(std::vector<zmq::message_t>& frames, std::size_t count) {
  call* c = &calls_.take([this] {
    auto made = std::make_unique<call>(*this, *settings_.methods, settings_.limits);
    if (settings_.metrics != nullptr) made->exchange.count_into(*settings_.metrics, stats_);
    return made;
  });
  // The routing frames move to the call (a move of the message handle, no
  // copy); they go back out in front of the reply.
  const std::size_t n = count - 1;
  if (c->envelope.size() < n) c->envelope.resize(n);
  for (std::size_t i = 0; i < n; ++i) c->envelope[i].swap(frames[i]);
  c->envelope_frames = n;
  c->peer = {};
  c->context = call_context_;
  c->context.peer = &c->peer;
  if (log_) {
    const char* peer_address = zmq_msg_gets(frames[count - 1].handle(), "Peer-Address");
    c->peer_text = peer_address != nullptr ? peer_address : "-";
    c->log_entry.begin(frames[count - 1].size());
  }
  return *c;
}

void zmq_router::finish(call& c, const rpc::reply& r) {
  if (!closed() && !r.body.empty()) {
    send(c.envelope, c.envelope_frames, r.body);
    stats_.sent(r.body.size());
  }
  if (log_)
    log_->add(c.log_entry.finish(c.peer_text, {}, c.exchange.method(), r.body.empty() ? 204 : 200,
                                 r.fault, r.body.size()));
  calls_.give_back(c);
  // What a large call's values took goes back to the system once large
  // calls stop (the daemon keeps freed memory in the heap otherwise).
  if (std::max(c.request_bytes, r.body.size()) >= large_buffer_bytes) trimmer_.large_freed();
  settled();
}

void zmq_router::send(std::vector<zmq::message_t>& envelope, std::size_t count,
                      std::string_view body) {
  try {
    // A ROUTER drops, without blocking, a reply to a peer that has gone or
    // whose queue is full (it stopped reading): nothing to wait for here.
    for (std::size_t i = 0; i < count; ++i)
      socket_.send(envelope[i], zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    socket_.send(zmq::const_buffer(body.data(), body.size()), zmq::send_flags::dontwait);
  } catch (const zmq::error_t& e) {
    settings_.lines.say(log_level::error, "ZeroMQ endpoint: cannot send a reply: %s", e.what());
  }
}

// A message that gets no answer: one line a second at most, with a count.
void zmq_router::note_drop(const char* why) {
  ++dropped_;
  auto now = std::chrono::steady_clock::now();
  if (now - last_drop_log_ < std::chrono::seconds(1)) return;
  settings_.lines.say(log_level::warning, "ZeroMQ endpoint dropped %llu message(s) (%s)",
                      static_cast<unsigned long long>(dropped_), why);
  dropped_ = 0;
  last_drop_log_ = now;
}

// Requests not read yet stay unread (and unanswered), as connections a
// closed listener never accepted; calls in flight get their replies.
void zmq_router::on_drain() { reader_.pause(); }

}  // namespace rapidrpc::detail
