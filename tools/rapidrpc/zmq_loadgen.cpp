#include "zmq_loadgen.hpp"

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/zmq_client.hpp>

#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <thread>

namespace rapidrpc::cli {

namespace {

using clock = std::chrono::steady_clock;

// Request ids: id_base + generation * in_flight + slot, always 16 digits,
// so a call only rewrites those digits in its slot's pre-encoded frame.
constexpr std::uint64_t id_base = 1'000'000'000'000'000;
constexpr std::size_t id_digits = 16;
constexpr std::string_view id_member = "\"id\":";
constexpr auto sweep_interval = std::chrono::milliseconds(20);
constexpr auto send_backoff = std::chrono::milliseconds(50);

// Where the one `"id":<id>` member of `text` puts its digits, or npos if it
// is not there exactly once.
std::size_t find_id(std::string_view text, std::string_view id) {
  std::string needle(id_member);
  needle += id;
  std::size_t at = text.find(needle);
  if (at == std::string_view::npos || text.find(needle, at + 1) != std::string_view::npos)
    return std::string_view::npos;
  return at + id_member.size();
}

std::optional<std::uint64_t> digits_value(std::string_view text) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

/// What every worker reads and none writes while the load runs.
struct plan {
  bench_options opts;
  std::string frame;        // the request, with id_base as its id
  std::size_t id_at = 0;    // where the id's digits are in `frame`
  void* context = nullptr;  // the ZeroMQ context of every socket
  value expected;
  clock::time_point start;
  clock::time_point deadline = clock::time_point::max();  // duration mode
  clock::duration timeout;
  clock::duration slot_width;
};

/// One call slot of a socket: its frame, and the call in it, if any.
struct slot {
  std::string frame;
  std::uint64_t generation = 0;
  clock::time_point started{};
  clock::time_point backoff_until{};
  enum class state : unsigned char { idle, busy, backoff, done } current = state::idle;
};

/// One DEALER socket and its slots.
struct dealer {
  void* socket = nullptr;
  std::vector<slot> slots;
  std::string verified;  // a reply found right, for the fast path
  std::size_t verified_id_at = std::string::npos;
};

class worker : public thread_tally {
 public:
  worker(const plan& p, const thread_share& share)
      : thread_tally(p.start, p.slot_width),
        plan_(p),
        schedule_(p.opts, share, p.start, p.deadline) {
    const std::size_t sockets = share.connections;
    const std::size_t n = p.opts.in_flight;
    int hwm = static_cast<int>(std::max<std::size_t>(1000, 2 * n));
    int linger = 0;
    dealers_.resize(sockets);
    try {
      open_sockets(p, hwm, linger);
    } catch (...) {
      close_sockets();  // or the context would wait for them forever
      throw;
    }
    items_.resize(sockets);
    for (std::size_t i = 0; i < sockets; ++i) items_[i] = {dealers_[i].socket, 0, ZMQ_POLLIN, 0};
    active_ = sockets * n;
    zmq_msg_init(&in_);
  }

  ~worker() {
    zmq_msg_close(&in_);
    close_sockets();
  }
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  void open_sockets(const plan& p, int hwm, int linger) {
    const std::size_t n = p.opts.in_flight;
    for (auto& d : dealers_) {
      d.socket = zmq_socket(p.context, ZMQ_DEALER);
      if (!d.socket)
        throw bench_error(std::string("cannot open a ZeroMQ socket: ") + zmq_strerror(zmq_errno()));
      zmq_setsockopt(d.socket, ZMQ_LINGER, &linger, sizeof linger);
      zmq_setsockopt(d.socket, ZMQ_SNDHWM, &hwm, sizeof hwm);
      zmq_setsockopt(d.socket, ZMQ_RCVHWM, &hwm, sizeof hwm);
      if (p.opts.url.find("://[") != std::string::npos) {
        int on = 1;
        zmq_setsockopt(d.socket, ZMQ_IPV6, &on, sizeof on);
      }
      if (zmq_connect(d.socket, p.opts.url.c_str()) != 0)
        throw bench_error("cannot connect to " + p.opts.url + ": " + zmq_strerror(zmq_errno()));
      d.slots.resize(n);
      for (auto& s : d.slots) s.frame = p.frame;
    }
  }

  void close_sockets() noexcept {
    for (auto& d : dealers_) {
      if (d.socket) zmq_close(d.socket);
      d.socket = nullptr;
    }
  }

  void run() {
    if (dealers_.empty()) return;
    auto now = clock::now();
    next_sweep_ = now + sweep_interval;
    if (schedule_.open_loop()) {
      for (std::size_t d = 0; d < dealers_.size(); ++d)
        for (std::size_t k = 0; k < dealers_[d].slots.size(); ++k) idle_.emplace_back(d, k);
      tick(now);
    } else {
      for (std::size_t d = 0; d < dealers_.size(); ++d)
        for (std::size_t k = 0; k < dealers_[d].slots.size(); ++k) next(d, k, now);
    }
    while (active_ > 0) {
      // Read what is there first; only an empty round waits in zmq_poll.
      bool got = false;
      for (std::size_t d = 0; d < dealers_.size() && active_ > 0; ++d) got |= receive_all(d);
      now = clock::now();
      if (now >= plan_.deadline) {
        end_run();
        break;
      }
      if (now >= next_sweep_) sweep(now);
      const bool scheduling = schedule_.open_loop() && !schedule_.over();
      if (scheduling && schedule_.next_due() <= now) tick(now);
      if (got || active_ == 0) continue;
      auto until = std::min(next_sweep_, plan_.deadline);
      if (scheduling) until = std::min(until, schedule_.next_due());
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
      zmq_poll(items_.data(), static_cast<int>(items_.size()),
               std::max<long>(0, static_cast<long>(ms)));
    }
  }

 private:
  // Closed loop: may another call start now?
  void next(std::size_t d, std::size_t k, clock::time_point now) {
    if (!schedule_.take(now)) return retire(d, k);
    begin(d, k, now);
  }

  void retire(std::size_t d, std::size_t k) {
    dealers_[d].slots[k].current = slot::state::done;
    --active_;
  }

  void begin(std::size_t d, std::size_t k, clock::time_point started) {
    auto& dl = dealers_[d];
    auto& s = dl.slots[k];
    ++s.generation;
    std::uint64_t id = id_base + s.generation * plan_.opts.in_flight + k;
    std::to_chars(s.frame.data() + plan_.id_at, s.frame.data() + plan_.id_at + id_digits, id);
    s.started = started;
    s.current = slot::state::busy;
    if (zmq_send(dl.socket, s.frame.data(), s.frame.size(), ZMQ_DONTWAIT) < 0) {
      ++errors.io;
      record_error(clock::now(), std::string("send: ") + zmq_strerror(zmq_errno()));
      // Do not spin on a socket that refuses: retry from the sweep.
      s.current = slot::state::backoff;
      s.backoff_until = clock::now() + send_backoff;
    }
  }

  // A slot is free again.
  void call_done(std::size_t d, std::size_t k, clock::time_point now) {
    dealers_[d].slots[k].current = slot::state::idle;
    if (schedule_.open_loop()) {
      if (auto due = schedule_.take_deferred()) return begin(d, k, *due);
      if (schedule_.over()) return retire(d, k);
      idle_.emplace_back(d, k);
      return;
    }
    next(d, k, now);
  }

  // Reads every reply waiting on socket `d`; true if there was one.
  bool receive_all(std::size_t d) {
    bool got = false;
    while (zmq_msg_recv(&in_, dealers_[d].socket, ZMQ_DONTWAIT) >= 0) {
      got = true;
      on_reply(d,
               std::string_view(static_cast<const char*>(zmq_msg_data(&in_)), zmq_msg_size(&in_)),
               clock::now());
    }
    return got;
  }

  // The slot a reply's id names, if its call is still in flight there.
  std::optional<std::size_t> slot_of(std::size_t d, std::uint64_t id) const {
    if (id < id_base) return std::nullopt;
    std::uint64_t rel = id - id_base;
    std::size_t n = plan_.opts.in_flight;
    std::size_t k = rel % n;
    const auto& s = dealers_[d].slots[k];
    if (s.current != slot::state::busy || s.generation != rel / n) return std::nullopt;
    return k;
  }

  void on_reply(std::size_t d, std::string_view bytes, clock::time_point now) {
    auto& dl = dealers_[d];
    // The fast path: the very bytes of a verified reply but for the id.
    std::size_t at = dl.verified_id_at;
    if (at != std::string::npos && bytes.size() == dl.verified.size() &&
        std::memcmp(bytes.data(), dl.verified.data(), at) == 0 &&
        std::memcmp(bytes.data() + at + id_digits, dl.verified.data() + at + id_digits,
                    bytes.size() - at - id_digits) == 0) {
      if (auto id = digits_value(bytes.substr(at, id_digits))) {
        if (auto k = slot_of(d, *id)) return finish_ok(d, *k, now);
        return;  // a late reply: its call timed out and was counted
      }
    }
    auto parsed = jsonrpc::parse_response(bytes);
    if (auto* bad = std::get_if<jsonrpc::error_reply>(&parsed)) {
      auto id = digits_value(bad->id);
      auto k = id ? slot_of(d, *id) : std::nullopt;
      ++errors.bad_response;
      record_error(now, "bad JSON-RPC response: " + bad->detail);
      if (k) call_done(d, *k, now);
      return;
    }
    auto& r = std::get<jsonrpc::response>(parsed);
    auto id = digits_value(r.id);
    if (!id || *id < id_base) {
      // No call of ours: counted, and the call it was meant for times out.
      ++errors.bad_response;
      record_error(now, "a JSON-RPC response for another id: " + r.id.substr(0, 40));
      return;
    }
    auto k = slot_of(d, *id);
    if (!k) return;  // a late reply
    if (auto* f = std::get_if<fault>(&r.outcome)) {
      ++errors.fault;
      record_error(now, "fault " + std::to_string(f->code()) + ": " + f->message());
      return call_done(d, *k, now);
    }
    if (std::get<value>(r.outcome) != plan_.expected) {
      ++errors.mismatch;
      record_error(now, "unexpected result: " + to_debug_string(std::get<value>(r.outcome)));
      return call_done(d, *k, now);
    }
    if (dl.verified_id_at == std::string::npos || dl.verified.size() != bytes.size()) {
      std::size_t found = find_id(bytes, r.id);
      if (found != std::string::npos && r.id.size() == id_digits) {
        dl.verified.assign(bytes);
        dl.verified_id_at = found;
      }
    }
    finish_ok(d, *k, now);
  }

  void finish_ok(std::size_t d, std::size_t k, clock::time_point now) {
    record_ok(dealers_[d].slots[k].started, now);
    call_done(d, k, now);
  }

  // Timeouts and the end of backoffs.
  void sweep(clock::time_point now) {
    next_sweep_ = now + sweep_interval;
    for (std::size_t d = 0; d < dealers_.size(); ++d) {
      for (std::size_t k = 0; k < dealers_[d].slots.size(); ++k) {
        auto& s = dealers_[d].slots[k];
        if (s.current == slot::state::busy && now - s.started >= plan_.timeout) {
          ++errors.timeout;
          record_error(now, "no reply within the timeout");
          call_done(d, k, now);
        } else if (s.current == slot::state::backoff && now >= s.backoff_until) {
          call_done(d, k, now);
        }
      }
    }
  }

  // Open loop: starts every call that is due, on an idle slot or, if none
  // is free, queued with its scheduled time (its latency runs from then).
  void tick(clock::time_point now) {
    while (auto due = schedule_.take_due(now)) {
      if (!idle_.empty()) {
        auto [d, k] = idle_.back();
        idle_.pop_back();
        begin(d, k, *due);
      } else {
        schedule_.defer(*due);
      }
    }
    if (schedule_.over()) finish_issuing();
  }

  void finish_issuing() {
    schedule_.end();
    auto idle = std::move(idle_);
    idle_.clear();
    for (auto [d, k] : idle) retire(d, k);
  }

  // A timed run ends at its deadline: calls in flight are abandoned.
  void end_run() {
    schedule_.end();
    for (auto& d : dealers_)
      for (auto& s : d.slots)
        if (s.current == slot::state::busy) ++unfinished;
    active_ = 0;
  }

  const plan& plan_;
  std::vector<dealer> dealers_;
  std::vector<zmq_pollitem_t> items_;
  zmq_msg_t in_;
  std::size_t active_ = 0;  // slots not retired
  clock::time_point next_sweep_{};
  call_schedule schedule_;
  std::vector<std::pair<std::size_t, std::size_t>>
      idle_;  // open loop: slots waiting for a due call
};

// The context of a run, terminated when the workers are gone.
struct context_guard {
  void* context;
  ~context_guard() { zmq_ctx_term(context); }
};

}  // namespace

bool is_zmq_bench(const bench_options& options) noexcept {
  return zmq_endpoint::is_zmq_url(options.url);
}

bench_result run_zmq_bench(const bench_options& options, live_line* live) {
  bench_result result;
  result.options = options;
  const auto& o = options;
  if (o.connections == 0) throw bench_error("--connections must be at least 1");
  if (o.in_flight == 0) throw bench_error("--in-flight must be at least 1");
  try {
    zmq_endpoint::parse(o.url);
  } catch (const std::invalid_argument& e) {
    throw bench_error(std::string("bad URL: ") + e.what());
  }
  raise_descriptor_limit();

  plan p;
  p.opts = o;
  p.opts.protocol = protocol::jsonrpc;
  result.options.protocol = protocol::jsonrpc;
  const std::string base_id = std::to_string(id_base);
  try {
    jsonrpc::write_request(p.frame, o.method, o.params, base_id);
  } catch (const std::invalid_argument& e) {
    throw bench_error(std::string("cannot encode the call: ") + e.what());
  }
  p.id_at = find_id(p.frame, base_id);
  if (p.id_at == std::string::npos) throw bench_error("cannot find the id in the encoded request");
  p.timeout = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(o.timeout));
  p.slot_width = result.slot_width;
  result.request_bytes = p.frame.size();
  result.request_bytes_sample = p.frame.size() > 2000 ? p.frame.substr(0, 2000) + "..." : p.frame;

  if (o.expect) {
    p.expected = *o.expect;
  } else {
    zmq_client_options copts;
    copts.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(p.timeout);
    try {
      zmq_client warm(o.url, copts);
      p.expected = expected_from_warmup(warm.try_call(o.method, o.params));
    } catch (const std::runtime_error& e) {
      if (dynamic_cast<const bench_error*>(&e)) throw;
      throw bench_error(std::string("the warm-up call failed: ") + e.what());
    }
  }
  result.expected = p.expected;

  const unsigned threads = load_threads(o);
  p.context = zmq_ctx_new();
  if (!p.context) throw bench_error(std::string("zmq_ctx_new: ") + zmq_strerror(zmq_errno()));
  context_guard guard{p.context};
  zmq_ctx_set(p.context, ZMQ_IO_THREADS, static_cast<int>(threads));
  zmq_ctx_set(p.context, ZMQ_MAX_SOCKETS,
              static_cast<int>(std::min<std::size_t>(o.connections + 64, 1 << 20)));

  result.started_at = utc_now();
  p.start = clock::now();
  if (o.requests == 0)
    p.deadline = p.start + std::chrono::duration_cast<clock::duration>(
                               std::chrono::duration<double>(o.duration));
  std::vector<std::unique_ptr<worker>> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.push_back(std::make_unique<worker>(p, share_of(o, threads, t)));
  }
  run_workers_on_threads(workers, live);
  merge_workers(workers, p.start, result);
  workers.clear();  // the sockets close before the context terminates
  return result;
}

}  // namespace rapidrpc::cli
