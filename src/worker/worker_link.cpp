#include "worker/worker_link.hpp"

#include "memory/free_list.hpp"
#include "rpc/exchange.hpp"
#include "worker/remote.hpp"
#include "zmq/service.hpp"

#include <rapidrpc/worker.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include <boost/asio/steady_timer.hpp>

#include <zmq.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

namespace rapidrpc::detail {

namespace net = boost::asio;
using clock = std::chrono::steady_clock;

namespace {

// How long answers still queued at close may take to leave.
constexpr int close_linger_ms = 1000;

std::string_view text(const zmq::message_t& m) noexcept {
  return {static_cast<const char*>(m.data()), m.size()};
}

class worker_link final : public zmq_service {
 public:
  explicit worker_link(worker_link_settings s)
      : zmq_service(max_frames, "worker host", &settings_.lines, close_linger_ms),
        settings_(std::move(s)),
        parsers_(settings_.limits) {
    // One identity for the life of the process: after a reconnection the
    // front knows the host (and its calls in flight) by it.
    std::random_device random;
    identity_.resize(16);
    for (auto& c : identity_) c = static_cast<char>(random());
    identity_[0] |= 1;  // libzmq keeps identities starting with a zero byte for its own
    connect();
    last_heard_ = heard_;
    call_context_.loop = io_.get_executor();
    call_context_.pool = settings_.pool;
  }

  ~worker_link() override { end(); }

 private:
  // One call from the front; its exchange runs it and hands the answer back.
  struct call final : rpc::reply_sink {
    call(worker_link& l, const registry& methods, const limits& lim)
        : link(l), exchange(methods, lim) {}
    void on_reply(const rpc::reply& r) override { link.answered(*this, r); }

    worker_link& link;
    rpc::exchange exchange;
    std::array<char, 8> id{};
  };

  void connect() {
    if (socket_) {
      reader_.unwatch();
      socket_->close();
    }
    socket_.emplace(context_, zmq::socket_type::dealer);
    socket_->set(zmq::sockopt::linger, 0);
    socket_->set(zmq::sockopt::routing_id, zmq::const_buffer(identity_.data(), identity_.size()));
    socket_->set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(max_worker_frame_bytes));
    // Answers queued are bounded by the calls announced: no high-water mark
    // to drop them at.
    socket_->set(zmq::sockopt::sndhwm, 0);
    socket_->set(zmq::sockopt::rcvhwm, 0);
    if (settings_.front.find("://[") != std::string::npos) socket_->set(zmq::sockopt::ipv6, 1);
    if (!settings_.curve_secret_key.empty()) {
      std::array<char, 41> public_key{};
      zmq_curve_public(public_key.data(), settings_.curve_secret_key.c_str());
      socket_->set(zmq::sockopt::curve_serverkey, settings_.curve_front_key);
      socket_->set(zmq::sockopt::curve_publickey, std::string(public_key.data(), 40));
      socket_->set(zmq::sockopt::curve_secretkey, settings_.curve_secret_key);
    }
    try {
      socket_->connect(settings_.front);
    } catch (const zmq::error_t& e) {
      throw std::runtime_error("cannot connect to the front " + settings_.front + ": " + e.what());
    }
    watch(*socket_);
    heard_ = clock::now();
  }

  // READY offers the front all of this host's places. When the front asks
  // who this is (WHO: it dropped the host, or started again) or the host
  // connects again, the calls still running here may be ones the front has
  // failed already; offered now, their places would take calls that wait
  // behind them while other hosts are free. So READY waits until the host
  // is idle (their answers, if the front still knows them, are delivered
  // meanwhile).
  void say_ready() {
    if (draining()) return;
    if (calls_.taken() > 0) {
      if (!ready_owed_)
        settings_.lines.say(log_level::notice,
                            "worker host: announcing itself to the front once its %zu "
                            "call(s) still running end",
                            calls_.taken());
      ready_owed_ = true;
      return;
    }
    ready_owed_ = false;
    const std::string capacity = std::to_string(settings_.capacity);
    send({remote::ready, remote::version, capacity});
  }

  // Best effort: a message the socket cannot take now (nothing connected
  // yet, or the front stopped reading) is dropped; heartbeats and READY
  // are sent again, and an answer lost so is a call the front fails.
  void send(std::initializer_list<std::string_view> frames) {
    try {
      std::size_t left = frames.size();
      for (auto f : frames) {
        auto flags = --left != 0 ? zmq::send_flags::sndmore : zmq::send_flags::none;
        if (!socket_->send(zmq::const_buffer(f.data(), f.size()),
                           flags | zmq::send_flags::dontwait))
          break;  // the first frame only: a message goes whole or not at all
      }
    } catch (const zmq::error_t& e) {
      settings_.lines.say(log_level::error, "worker host: cannot send: %s", e.what());
    }
    reader_.sent();
  }

  void beat() {
    if (clock::now() - heard_ > remote::peer_timeout && !draining()) {
      settings_.lines.say(log_level::warning,
                          "worker host: the front at %s stopped answering; connecting "
                          "again",
                          settings_.front.c_str());
      try {
        connect();
      } catch (const std::exception& e) {
        settings_.lines.say(log_level::error, "worker host: %s", e.what());
      }
      say_ready();
    } else {
      send({remote::heartbeat});
    }
    if (awaiting_bye_ && clock::now() - bye_sent_ > remote::peer_timeout) {
      settings_.lines.say(log_level::warning,
                          "worker host: the front did not answer BYE in %lld ms; leaving",
                          static_cast<long long>(remote::peer_timeout.count()));
      awaiting_bye_ = false;
      if (clock::now() - last_heard_ > remote::peer_timeout) drop_at_close();  // gone too
      settled();
    }
    beat_timer_.expires_after(remote::heartbeat_interval);
    beat_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) beat();
    });
  }

  void on_start() override {
    say_ready();
    beat();
  }

  // The front hears that this host is leaving and sends it no more calls;
  // until it says so (remote.hpp), calls it sent before may still come.
  // A front that has said nothing for peer_timeout (this host took it for
  // gone, or has run that long without a word from it) sends none: the
  // host leaves once its calls are answered, and drops what cannot leave.
  void on_drain() override {
    send({remote::leaving});
    const std::chrono::duration<double> silent = clock::now() - last_heard_;
    if (silent > remote::peer_timeout) {
      settings_.lines.say(log_level::notice,
                          "worker host: the front at %s has said nothing for %.1f s; leaving "
                          "without waiting for its BYE",
                          settings_.front.c_str(), silent.count());
      drop_at_close();
      return;
    }
    bye_sent_ = clock::now();
    awaiting_bye_ = true;
  }

  std::size_t in_flight() const override { return calls_.taken() + (awaiting_bye_ ? 1 : 0); }

  void on_message(std::vector<zmq::message_t>& frames, std::size_t n) override {
    if (n > max_frames) return;  // not a message of the protocol
    heard_ = last_heard_ = clock::now();
    std::array<std::string_view, max_frames> fields;
    for (std::size_t i = 0; i < n; ++i) fields[i] = text(frames[i]);
    const auto m = remote::read(std::span(fields.data(), n));
    if (m.what == remote::message::kind::call_message) {
      call& c = new_call();
      std::memcpy(c.id.data(), m.id.data(), 8);
      // The call object outlives its exchange's work (the io_context it
      // completes on stops before the link goes): a reference, not owned.
      c.exchange.start(rpc::protocol::xmlrpc, m.document, call_context_,
                       std::shared_ptr<rpc::reply_sink>(std::shared_ptr<void>(), &c));
    } else if (draining() && (m.what == remote::message::kind::leaving_message ||
                              m.what == remote::message::kind::who_message)) {
      awaiting_bye_ = false;  // the front sends no more calls
      settled();
    } else if (m.what == remote::message::kind::who_message) {
      say_ready();
    }
    // A heartbeat has done its work; anything else is ignored.
  }

  call& new_call() {
    return calls_.take([this] {
      auto c = std::make_unique<call>(*this, *settings_.methods, settings_.limits);
      c->exchange.share_parsers(parsers_);
      return c;
    });
  }

  void answered(call& c, const rpc::reply& r) {
    const std::string_view id(c.id.data(), c.id.size());
    if (r.body.size() > max_worker_frame_bytes) {
      // The front would drop the connection reading it, and the call would
      // never be answered: it gets a fault instead.
      std::string too_large;
      xmlrpc::write_fault(too_large, fault_code::internal_error,
                          "internal error: the answer is larger than a worker host may send");
      send({remote::reply, id, too_large});
    } else {
      send({remote::reply, id, r.body});
    }
    calls_.give_back(c);
    if (ready_owed_ && calls_.taken() == 0) say_ready();
    settled();
  }

  // command, up to two fields
  static constexpr std::size_t max_frames = 3;

  worker_link_settings settings_;
  std::string identity_;
  std::optional<zmq::socket_t> socket_;
  net::steady_timer beat_timer_{io_};
  rpc::parser_pool parsers_;
  call_context call_context_;
  free_list<call> calls_;         // in flight, and free ones to reuse
  clock::time_point heard_;       // the front's last word, or the last connection made
  clock::time_point last_heard_;  // the front's last word, or the link's start
  bool ready_owed_ = false;       // a READY waits for the calls running to end
  bool awaiting_bye_ = false;     // draining: calls may still come until the front's BYE
  clock::time_point bye_sent_;
};

}  // namespace

std::unique_ptr<service> open_worker_link(worker_link_settings s) {
  return std::make_unique<worker_link>(std::move(s));
}

}  // namespace rapidrpc::detail
