#include "worker/remote_pool.hpp"

#include "worker/calls_ahead.hpp"
#include "worker/remote.hpp"
#include "zmq/service.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <zmq.hpp>

#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace rapidrpc::detail {

namespace {

namespace net = boost::asio;
using clock = std::chrono::steady_clock;

std::string_view text(const zmq::message_t& m) noexcept {
  return {static_cast<const char*>(m.data()), m.size()};
}

// Nothing queued for a host is waited for at the close: the calls it
// carries are dropped with their loops.
constexpr int close_linger_ms = 0;

class remote_pool_impl final : public remote_pool, public zmq_service {
 public:
  explicit remote_pool_impl(settings s)
      : zmq_service(max_frames, "worker-host endpoint", &settings_.lines, close_linger_ms),
        settings_(std::move(s)) {
    if (settings_.local_runner) local_runner_ = settings_.local_runner(&local_stats_);
    socket_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(settings_.max_message_bytes));
    socket_.set(zmq::sockopt::linger, 0);
    // A send to a host that is gone fails rather than vanishing, and a host
    // that connects again under its identity takes it over.
    socket_.set(zmq::sockopt::router_mandatory, 1);
    socket_.set(zmq::sockopt::router_handover, 1);
    // No high-water mark: what is queued for a host is bounded by the calls
    // it announced plus a few heartbeats, and a full queue would drop it.
    socket_.set(zmq::sockopt::sndhwm, 0);
    socket_.set(zmq::sockopt::rcvhwm, 0);
    if (!settings_.curve_secret_key.empty()) {
      // CurveZMQ: libzmq asks the ZAP handler bound at this inproc address
      // about every handshake (RFC 27); ours lets the listed keys in.
      for (const auto& key : settings_.curve_host_keys) {
        std::array<std::uint8_t, 32> binary{};
        zmq_z85_decode(binary.data(), key.c_str());
        allowed_.emplace(reinterpret_cast<const char*>(binary.data()), binary.size());
      }
      zap_.bind("inproc://zeromq.zap.01");
      socket_.set(zmq::sockopt::curve_server, 1);
      socket_.set(zmq::sockopt::curve_secretkey, settings_.curve_secret_key);
      socket_.set(zmq::sockopt::zap_domain, "rapidrpc-workers");
    }
    // Call ids start at a random point, so that a host still running a call
    // of this front's previous life cannot answer a new call with its reply.
    std::random_device random;
    next_id_ = (std::uint64_t{random()} << 32) ^ random();
  }

  ~remote_pool_impl() override {
    join();
    end();
    local_runner_.reset();  // its completions post to io_
    zap_notify_.release();
    zap_.close();
  }

  // It drains after the loops that hand it calls (remote_pool.hpp).
  void stop(std::chrono::milliseconds /*drain*/) override {}

  void join() override {
    net::post(io_, [this] {
      // Past the drain: the calls left are dropped with their loops.
      stopping_ = true;
      io_.stop();
    });
    zmq_service::join();
  }

  std::string bind(const std::string& address) override {
    return zmq_service::bind(socket_, address, "worker-host endpoint");
  }

  void run(pool_call c) override {
    // Framed on the caller's loop thread (the request's own document when
    // it came as one); the pool's thread moves bytes.
    auto j = std::make_unique<job>();
    j->name = c.name;
    append_call_document(j->document, c);
    j->request = j->document;                          // for the local workers, if any
    if (settings_.local_capacity == 0) c.params = {};  // else kept for local threads
    c.name = {};
    j->call = std::move(c);
    net::post(io_, [this, j = std::move(j)]() mutable { accept(std::move(j)); });
  }

 private:
  struct host;

  // A call, and the passage its local worker processes answer through.
  struct job final : passage {
    void take_document(std::string response, std::int32_t /*fault*/) override {
      answer = std::move(response);
    }

    std::uint64_t id = 0;
    std::string name;      // the method's, for its times
    std::string document;  // the methodCall
    pool_call call;        // its caller's
    std::string answer;    // the methodResponse the local workers wrote, if taken
    std::unique_ptr<net::steady_timer> timer;
    host* on = nullptr;       // the host running it
    bool local = false;       // run by the local workers
    bool local_only = false;  // too large for a host
    bool finished = false;    // the caller has its outcome (a timeout may come first)
    clock::time_point queued = clock::now();  // for the wait figure
    bool taken = false;                       // begun (its wait counted)
    clock::time_point begun{};                // when it took one of its host's places
    std::chrono::microseconds expected{0};    // how long it is expected to run there
  };

  struct host {
    std::string identity;
    std::string peer;  // its address, for the log
    std::uint32_t capacity = 0;
    clock::time_point heard;
    bool leaving = false;
    // The ids of those in flight, in the order sent: the first `capacity`
    // take its places, the others wait there behind them (calls_ahead.hpp).
    std::vector<std::uint64_t> calls;
    std::chrono::microseconds expected{0};  // what the calls of `calls` are expected to take
  };

  void finish(job& j, outcome o) {
    if (j.finished) return;
    j.finished = true;
    if (j.timer) j.timer->cancel();
    net::post(j.call.loop,
              [done = std::move(j.call.done), o = std::move(o)]() mutable { done(std::move(o)); });
  }

  // With the methodResponse a worker wrote, passed on as it is when the
  // caller takes documents.
  void finish(job& j, std::string_view document) {
    if (j.finished) return;
    j.finished = true;
    if (j.timer) j.timer->cancel();
    finish_with_document(j.call, document, "internal error: an answer that cannot be read");
  }

  void accept(std::unique_ptr<job> j) {
    if (stopping_) return;
    if (j->document.size() > settings_.max_message_bytes) {
      // A host would drop the connection reading it: the front's own
      // workers may run it, if there are any.
      if (settings_.local_capacity == 0) {
        finish(*j, fault(fault_code::internal_error,
                         "internal error: the call is larger than a worker host may take"));
        return;
      }
      j->local_only = true;
    }
    if (settings_.local_capacity == 0 && hosts_.empty()) {
      // Nothing could run it: said now rather than after a timeout.
      finish(*j, fault(fault_code::internal_error, "internal error: no worker host is connected"));
      return;
    }
    j->id = next_id_++;
    if (j->call.timeout.count() > 0) {
      j->timer = std::make_unique<net::steady_timer>(io_, j->call.timeout);
      j->timer->async_wait([this, id = j->id](const boost::system::error_code& ec) {
        if (!ec) timed_out(id);
      });
    }
    queue_.push_back(j->id);
    jobs_.emplace(j->id, std::move(j));
    dispatch();
  }

  void timed_out(std::uint64_t id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return;
    job& j = *it->second;
    finish(j, call_timeout());
    // A call still queued goes now; one running keeps its place until its
    // host answers or is dropped (a host or thread cannot be interrupted).
    if (!j.on && !j.local) {
      std::erase(queue_, id);
      jobs_.erase(it);
      publish();
    }
  }

  // Sends queued calls, least loaded worker first, while any has room.
  void dispatch() {
    while (!queue_.empty()) {
      host* best = nullptr;
      bool local = false;
      // Loads compare as fractions a/b < c/d, i.e. a*d < c*b.
      std::uint64_t load_num = 1;
      std::uint64_t load_den = 1;  // 1/1: full
      if (local_busy_ < settings_.local_capacity) {
        local = true;
        load_num = local_busy_;
        load_den = settings_.local_capacity;
      }
      job& j = *jobs_.at(queue_.front());
      for (auto& [identity, h] : hosts_) {
        if (h.leaving || h.calls.size() >= h.capacity || j.local_only) continue;
        if (h.calls.size() * load_den < load_num * h.capacity) {
          best = &h;
          local = false;
          load_num = h.calls.size();
          load_den = h.capacity;
        }
      }
      if (!local && best == nullptr) best = host_ahead(j);
      if (!local && best == nullptr) break;
      queue_.pop_front();
      if (local) {
        begin(j);
        run_local(j);
      } else {
        send_call(*best, j);
      }
    }
    publish();
  }

  // Every place taken: the host whose calls are expected to end soonest,
  // per place, if another may wait there behind them (calls_ahead.hpp).
  host* host_ahead(const job& j) {
    if (j.local_only) return nullptr;
    host* best = nullptr;
    for (auto& [identity, h] : hosts_) {
      if (h.leaving || h.calls.size() >= calls_ahead * h.capacity ||
          h.expected >= ahead_below * h.capacity)
        continue;
      if (best == nullptr || h.expected * best->capacity < best->expected * h.capacity) best = &h;
    }
    return best;
  }

  // The call takes a worker's place: its wait ends (counted once, however
  // often it was sent) and its run time starts.
  void begin(job& j) {
    j.begun = clock::now();
    if (settings_.stats != nullptr && !j.taken) settings_.stats->waited(j.begun - j.queued);
    j.taken = true;
  }

  // The local workers answer on io_; worker processes through the job's
  // passage, with the document they wrote.
  void run_local(job& j) {
    j.local = true;
    ++local_busy_;
    auto id = j.id;
    pool_call c{j.call.m,
                {},
                std::move(j.call.params),
                {},
                io_.get_executor(),
                [this, id](outcome o) { local_done(id, std::move(o)); },
                nullptr,
                j.call.keep};
    // Threads cannot be stopped: a call of theirs keeps its place until it
    // returns, whatever its timeout said to its caller.
    if (settings_.local_timeouts) c.timeout = j.call.timeout;
    c.through = &j;
    local_runner_->run(std::move(c));
  }

  void local_done(std::uint64_t id, outcome o) {
    --local_busy_;
    if (auto it = jobs_.find(id); it != jobs_.end()) {
      job& j = *it->second;
      if (!j.answer.empty())
        finish(j, std::string_view(j.answer));
      else
        finish(j, std::move(o));
      jobs_.erase(it);
    }
    dispatch();
  }

  void send_call(host& h, job& j) {
    char id[8];
    std::memcpy(id, &j.id, sizeof id);
    if (!send(h.identity, {remote::call, std::string_view(id, sizeof id), j.document})) {
      // Not sent, so it did not run: it waits for the next worker.
      queue_.push_front(j.id);
      drop(h, "cannot be reached");
      return;
    }
    j.on = &h;
    h.calls.push_back(j.id);
    j.expected = method_times_.expected(j.name);
    h.expected += j.expected;
    if (h.calls.size() <= h.capacity) begin(j);
  }

  // One message to `identity`, without waiting: false if it could not go
  // (the host is gone, or its queue is full: it stopped reading).
  bool send(const std::string& identity, std::initializer_list<std::string_view> frames) {
    try {
      if (!socket_.send(zmq::const_buffer(identity.data(), identity.size()),
                        zmq::send_flags::sndmore | zmq::send_flags::dontwait))
        return false;
      std::size_t left = frames.size();
      for (auto f : frames) {
        auto flags = --left != 0 ? zmq::send_flags::sndmore : zmq::send_flags::none;
        socket_.send(zmq::const_buffer(f.data(), f.size()), flags | zmq::send_flags::dontwait);
      }
    } catch (const zmq::error_t&) {
      return false;  // EHOSTUNREACH (router_mandatory): gone
    }
    reader_.sent();
    return true;
  }

  // The host is dropped: the calls it was running fail (they may have run),
  // and it gets no more until it says READY again.
  void drop(host& h, const char* why) {
    if (h.leaving && h.calls.empty())
      settings_.lines.say(log_level::notice, "worker host %s left", h.peer.c_str());
    else
      settings_.lines.say(log_level::error, "worker host %s %s; %zu call(s) in flight there fail",
                          h.peer.c_str(), why, h.calls.size());
    fail_calls(h, "internal error: the worker host running this call stopped answering");
    const std::string identity = h.identity;  // not a reference into the node erased
    hosts_.erase(identity);
    if (hosts_.empty() && settings_.local_capacity == 0) {
      // Nothing is left to run the calls waiting: they fail now.
      for (auto id : queue_) {
        finish(*jobs_.at(id),
               fault(fault_code::internal_error, "internal error: no worker host is connected"));
        jobs_.erase(id);
      }
      queue_.clear();
    }
    publish();
  }

  // The calls in flight on `h` fail with `why`: they may have run.
  void fail_calls(host& h, const char* why) {
    for (auto id : h.calls) {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) continue;
      finish(*it->second, fault(fault_code::internal_error, why));
      jobs_.erase(it);
    }
    h.calls.clear();
    h.expected = {};
  }

  // Every heartbeat_interval: silent hosts are dropped, the others hear
  // from the front, and the figures are published.
  void beat() {
    const auto now = clock::now();
    std::vector<host*> silent;
    for (auto& [identity, h] : hosts_) {
      if (now - h.heard > remote::peer_timeout)
        silent.push_back(&h);
      else
        send(h.identity, {remote::heartbeat});
    }
    for (host* h : silent) drop(*h, "stopped answering");
    publish();
    beat_timer_.expires_after(remote::heartbeat_interval);
    beat_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) beat();
    });
  }

  void publish() {
    auto* stats = settings_.stats;
    if (stats == nullptr) return;
    std::int64_t busy = local_busy_;
    std::int64_t up = 0;
    // Calls waiting at a host behind those running wait for a worker too.
    auto waiting = static_cast<std::int64_t>(queue_.size());
    for (const auto& [identity, h] : hosts_) {
      const std::size_t running = std::min<std::size_t>(h.calls.size(), h.capacity);
      busy += static_cast<std::int64_t>(running);
      waiting += static_cast<std::int64_t>(h.calls.size() - running);
      up += h.leaving ? 0 : 1;
    }
    stats->queued.store(waiting, std::memory_order_relaxed);
    stats->busy.store(busy, std::memory_order_relaxed);
    stats->hosts_up.store(up, std::memory_order_relaxed);
    if (local_runner_) {
      // Worker processes count into a figure of their own, copied here.
      stats->processes_up.store(local_stats_.processes_up.load(std::memory_order_relaxed),
                                std::memory_order_relaxed);
      for (std::size_t i = 0; i < local_stats_.restarts.size(); ++i)
        stats->restarts[i].store(local_stats_.restarts[i].load(std::memory_order_relaxed),
                                 std::memory_order_relaxed);
    }
  }

  void on_start() override {
    watch(socket_);
    if (!settings_.curve_secret_key.empty()) {
      zap_notify_.assign(zap_.get(zmq::sockopt::fd));
      answer_zap();
    }
    publish();
    beat();
  }

  void on_message(std::vector<zmq::message_t>& frames, std::size_t n) override {
    if (n < 2 || n > max_frames) return;  // not a message of the protocol
    const std::string identity(text(frames[0]));
    std::array<std::string_view, max_frames - 1> fields;
    for (std::size_t i = 1; i < n; ++i) fields[i - 1] = text(frames[i]);
    const auto m = remote::read(std::span(fields.data(), n - 1));
    auto it = hosts_.find(identity);
    if (fields[0] == remote::ready) {
      if (m.what != remote::message::kind::ready_message) {
        settings_.lines.say(log_level::warning,
                            "worker-host endpoint: a READY that cannot be read");
        return;
      }
      const std::uint32_t capacity = m.capacity;
      if (it == hosts_.end()) {
        it = hosts_.emplace(identity, host{}).first;
        it->second.identity = identity;
        const char* address = zmq_msg_gets(frames[1].handle(), "Peer-Address");
        it->second.peer = address != nullptr ? address : "(local)";
        settings_.lines.say(log_level::notice, "worker host %s connected, %u at once",
                            it->second.peer.c_str(), capacity);
      } else if (!it->second.calls.empty()) {
        // It announced itself again, so it is idle (a host says READY only
        // with no call running): the answers of the calls still counted
        // here were lost with its old connection. They fail now rather
        // than wait for an answer that will never come.
        fail_calls(it->second, "internal error: the worker host running this call connected again");
      }
      it->second.capacity = capacity;
      it->second.leaving = false;
      it->second.heard = clock::now();
      dispatch();
      return;
    }
    if (it == hosts_.end()) {
      // Dropped here (or never seen: this front started again): the host
      // announces itself again.
      send(identity, {remote::who});
      return;
    }
    host& h = it->second;
    h.heard = clock::now();
    if (m.what == remote::message::kind::reply_message) {
      std::uint64_t id;
      std::memcpy(&id, m.id.data(), 8);
      auto call = std::find(h.calls.begin(), h.calls.end(), id);
      if (call == h.calls.end()) return;  // not a call of this host's
      // The host starts its calls in order: when one of those running
      // ends, the first waiting there takes its place.
      const bool ran = call - h.calls.begin() < std::ptrdiff_t{h.capacity};
      h.calls.erase(call);
      if (ran && h.calls.size() >= h.capacity) begin(*jobs_.at(h.calls[h.capacity - 1]));
      if (auto j = jobs_.find(id); j != jobs_.end()) {
        job& done = *j->second;
        h.expected -= done.expected;
        if (ran)
          method_times_.timed(done.name, clock::now() - done.begun);
        else
          begin(done);  // run in another's place: its time there is not known
        finish(done, m.document);
        jobs_.erase(j);
      }
      if (h.leaving && h.calls.empty()) return drop(h, "");
      dispatch();
    } else if (m.what == remote::message::kind::leaving_message) {
      send(h.identity, {remote::leaving});  // no call follows this
      h.leaving = true;
      settings_.lines.say(log_level::notice, "worker host %s is leaving", h.peer.c_str());
      if (h.calls.empty()) drop(h, "");
      publish();
    }
    // A heartbeat has done its work; anything else is ignored.
  }

  // Answers the ZAP requests waiting (RFC 27: version, request id, domain,
  // address, routing id, mechanism, then the client's public key), then
  // waits for more.
  void answer_zap() {
    try {
      while (zap_.get(zmq::sockopt::events) & ZMQ_POLLIN) {
        std::array<zmq::message_t, 8> f;
        std::size_t n = 0;
        bool more = true;
        while (more) {
          zmq::message_t& m = f[n < f.size() - 1 ? n : f.size() - 1];
          if (!zap_.recv(m, zmq::recv_flags::dontwait)) break;
          more = m.more();
          ++n;
        }
        const bool curve = n == 7 && text(f[5]) == "CURVE";
        const bool allowed = curve && allowed_.contains(std::string(text(f[6])));
        if (!allowed) refused(n >= 4 ? text(f[3]) : std::string_view("?"));
        const std::string_view request_id = n >= 2 ? text(f[1]) : std::string_view();
        const std::array<std::string_view, 6> reply{
            "1.0", request_id, allowed ? "200" : "400", allowed ? "OK" : "not an allowed key",
            "",    ""};
        for (std::size_t i = 0; i < reply.size(); ++i)
          zap_.send(zmq::const_buffer(reply[i].data(), reply[i].size()),
                    i + 1 < reply.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
      }
    } catch (const zmq::error_t& e) {
      settings_.lines.say(log_level::error, "worker-host endpoint: authentication: %s", e.what());
    }
    zap_notify_.async_wait(net::posix::stream_descriptor::wait_read,
                           [this](const boost::system::error_code& ec) {
                             if (!ec) answer_zap();
                           });
  }

  // A host refused at its handshake: said once a minute at most, with a
  // count, since it will try again every few hundred milliseconds.
  void refused(std::string_view address) {
    ++refusals_;
    const auto now = clock::now();
    if (now - last_refusal_log_ < std::chrono::minutes(1)) return;
    settings_.lines.say(log_level::warning,
                        "worker-host endpoint: refused %llu handshake(s) without an allowed "
                        "key, the last from %.*s",
                        static_cast<unsigned long long>(refusals_),
                        static_cast<int>(address.size()), address.data());
    refusals_ = 0;
    last_refusal_log_ = now;
  }

  // identity, command, up to two fields
  static constexpr std::size_t max_frames = 4;

  settings settings_;
  metrics::pool_stats local_stats_;  // the local worker processes' figures
  std::unique_ptr<pool_runner> local_runner_;
  zmq::socket_t socket_{context_, zmq::socket_type::router};
  zmq::socket_t zap_{context_, zmq::socket_type::rep};  // with CurveZMQ
  net::posix::stream_descriptor zap_notify_{io_};
  std::unordered_set<std::string> allowed_;  // the hosts' public keys, 32 bytes each
  std::uint64_t refusals_ = 0;
  clock::time_point last_refusal_log_{};
  net::steady_timer beat_timer_{io_};
  std::map<std::string, host> hosts_;
  std::unordered_map<std::uint64_t, std::unique_ptr<job>> jobs_;
  std::deque<std::uint64_t> queue_;
  method_times method_times_;  // each method's, by name, as the hosts run them
  std::uint64_t next_id_ = 0;
  unsigned local_busy_ = 0;
  bool stopping_ = false;
};

}  // namespace

std::unique_ptr<remote_pool> make_remote_pool(remote_pool::settings s) {
  return std::make_unique<remote_pool_impl>(std::move(s));
}

}  // namespace rapidrpc::detail
