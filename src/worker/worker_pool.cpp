#include "worker/worker_pool.hpp"

#include "worker/calls_ahead.hpp"
#include "worker/frame.hpp"
#include "worker/marshal.hpp"
#include "worker/warm_parent.hpp"

#include <rapidrpc/server_options.hpp>
#include <rapidrpc/worker.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <thread>
#include <unordered_map>

namespace rapidrpc {

namespace {

namespace net = boost::asio;
using clock = std::chrono::steady_clock;
using cause = detail::metrics::restart_cause;

struct job {
  std::string frame;                      // the call, framed
  std::uint64_t sequence = 0;             // of the calls sent to its worker
  std::string name;                       // the method's (the call's own view ends with run())
  std::chrono::microseconds expected{0};  // how long it is expected to take
  detail::pool_call call;
  clock::time_point queued = clock::now();  // for the wait figure
  bool taken = false;                       // a worker has begun it (once counted)
  // Workers it was sent to that died before reading it; or, while no
  // worker was ready, that died before they were.
  unsigned deliveries = 0;
};

// How many workers a call may be sent to that die before reading it (each
// one is replaced) before the call fails: more means the workers cannot stay
// up, and the caller had better hear so.
constexpr unsigned max_deliveries = 3;

// A worker process may be sent calls_ahead calls at once, while they are
// short: the one it runs and those it finds in its socket when it has
// answered (calls_ahead.hpp).
using detail::ahead_below;
using detail::calls_ahead;

// What a frame is given room for before the call is written into it,
// beyond the method's name: enough for a few small parameters.
constexpr std::size_t small_frame_bytes = 96;

// How often a worker's memory is read, at most (after a call).
constexpr auto memory_read_interval = std::chrono::seconds(1);

// How deep the arrays and structs of a result in marshal form may nest:
// deeper than Python's own XML-RPC marshaller can write (it runs out of
// recursion at about 490), within what the host's writers recurse through.
constexpr std::size_t max_answer_depth = 1000;

class worker_pool final : public detail::pool_runner {
 public:
  worker_pool(const worker_options& o, unsigned count, detail::metrics::pool_stats* stats,
              std::chrono::milliseconds start_timeout, detail::logger lines)
      : lines_(std::move(lines)),
        command_(o.command),
        max_requests_(o.max_requests),
        max_requests_jitter_(o.max_requests_jitter),
        max_lifetime_(o.max_lifetime),
        max_memory_(o.max_memory_bytes),
        stats_(stats),
        start_timeout_(start_timeout),
        workers_(count + 1) {
    if (command_.empty()) throw std::invalid_argument("isolate needs a worker_command");
    workers_.back().vacant = true;  // where a successor starts (recycle())
    if (o.warm_parent) {
      // The workers are forked once the parent is ready (parent_up()). It
      // starts on the pool's thread, which lives as long as the pool: a
      // process dies with the thread that started it (PR_SET_PDEATHSIG).
      parent_ = new_parent();
      for (unsigned i = 0; i < count; ++i) workers_[i].awaiting = true;
      net::post(io_, [this] { parent_->start(); });
    } else {
      for (unsigned i = 0; i < count; ++i) fill(workers_[i]);
    }
    publish();
    thread_ = std::thread([this] { io_.run(); });
  }

  ~worker_pool() override {
    net::post(io_, [this] {
      stopping_ = true;
      for (auto& w : workers_) {
        ++w.generation;  // completions from here on are ignored
        // A call still running has outlived the drain deadline (its
        // connection is cut off), or a runaway is being killed: its worker is
        // killed now, not after the grace the idle ones get to leave.
        if (!w.sent.empty() || w.dying) signal(w, SIGKILL);
        w.sent.clear();
        w.timer.reset();
        w.lifetime_timer.reset();
        boost::system::error_code ec;
        if (w.socket) w.socket->close(ec);  // the worker sees end of stream and exits
        w.socket.reset();
      }
      // Its idle workers see end of stream and leave, and it with them.
      if (parent_) parent_->stop();
      if (next_parent_) next_parent_->stop();
      for (auto& p : old_parents_) p->stop();
      work_.reset();
    });
    thread_.join();
    // Idle workers leave on end of stream; one that does not is killed.
    // A warm parent's workers were its own to wait for.
    auto deadline = clock::now() + std::chrono::seconds(2);
    std::vector<int> pids;
    for (auto& r : retired_) {
      if (r.child.pidfd >= 0)
        ::close(r.child.pidfd);
      else
        pids.push_back(r.child.pid);
    }
    for (auto& w : workers_) {
      if (w.pidfd >= 0)
        ::close(w.pidfd);
      else if (w.pid > 0)
        pids.push_back(w.pid);
    }
    for (int pid : pids) detail::reap_by(pid, deadline);
  }

  void run(detail::pool_call c) override {
    // Framed on the caller's loop thread (the request's own document when
    // it came as one); the pool thread only moves bytes.
    // One allocation, then a pointer moves: the call record is moved once.
    auto j = std::make_unique<job>();
    // Room for a small call's frame at once (sample.add(3, 5)'s is 40
    // bytes in marshal form, its length included): grown from the string's
    // own 15 bytes it took two reallocations a call; a large one grows from
    // here.
    j->frame.reserve(small_frame_bytes + c.name.size());
    j->frame.assign(4, '\0');  // the length, once the document is in
    // Workers that read marshal get the call so, unless a parameter has no
    // marshal form (a dateTime): then as XML-RPC, which they read too.
    if (!marshal_.load(std::memory_order_relaxed) ||
        !detail::marshal::append_call(j->frame, c.name, c.params))
      detail::append_call_document(j->frame, c);
    detail::put_frame_length(j->frame);
    j->name = c.name;
    c.params = {};  // not needed past here
    c.name = {};
    j->call = std::move(c);
    net::post(io_, [this, j = std::move(j)]() mutable {
      queue_.push_back(std::move(j));
      dispatch();
    });
  }

  bool renew(std::function<void(bool)> done) override {
    net::post(io_, [this, done = std::move(done)]() mutable {
      if (stopping_) return;
      renewals_.push_back(std::move(done));
      if (!renewing_) begin_renewal();
    });
    return true;
  }

 private:
  struct worker {
    int pid = -1;
    int pidfd = -1;                         // a warm parent's worker: its handle (warm_parent.hpp)
    detail::warm_parent* parent = nullptr;  // that parent
    std::optional<net::local::stream_protocol::socket> socket;
    // The calls sent to it and not yet answered, in order (calls_ahead at
    // most): it runs the first (or will, once it has read it); the others
    // it has not started. `sequence` numbers them as they are sent.
    std::deque<std::unique_ptr<job>> sent;
    std::uint64_t sent_count = 0;           // calls sent to this process
    std::uint64_t written_count = 0;        // of them, all in the socket
    std::uint64_t writing = 0;              // of them, in the write under way (0: none)
    std::string out;                        // the frames of the write under way
    std::string out_next;                   // frames sent while it is under way
    bool first_timed_out = false;           // the first of `sent` was failed at its timeout
    clock::time_point first_since{};        // when the first of `sent` became the first
    std::chrono::microseconds expected{0};  // what the calls of `sent` are expected to take
    std::unique_ptr<net::steady_timer> timer;
    std::unique_ptr<net::steady_timer> lifetime_timer;  // its max_lifetime's end
    std::string in;          // what the worker sent: a frame, or the start of one
    std::size_t in_len = 0;  // bytes of `in` received
    clock::time_point started{};
    unsigned quick_deaths = 0;
    std::uint64_t generation = 0;     // tells a stale completion from a live one
    std::uint64_t served = 0;         // calls answered by this process
    std::uint64_t request_limit = 0;  // max_requests with its jitter; 0: none
    clock::time_point memory_read{};  // when its memory was read last
    std::uint64_t memory = 0;         // what it held of its own then
    bool lifetime_over = false;       // past its max_lifetime
    bool renew = false;               // runs the code from before a renewal: replaced
    bool vacant = false;              // a spare slot, no process: a successor starts here
    bool awaiting = false;            // no process: one is forked once the warm parent is ready
    bool ready = false;               // it said so (an empty frame): calls may go to it
    bool peer_gone = false;           // its stream ended during a write: the write decides
    bool killed = false;              // by the pool (a runaway), not by someone else
    bool dying = false;               // past its call's timeout, being killed: no call goes there
  };

  static void finish(job& j, outcome o) {
    net::post(j.call.loop,
              [done = std::move(j.call.done), o = std::move(o)]() mutable { done(std::move(o)); });
  }

  // Starts a worker process in slot `w` (forked by the warm parent once it
  // is ready, with one); false if it cannot be started.
  bool spawn(worker& w) {
    w.awaiting = false;
    if (parent_ && !parent_->ready()) {
      w.awaiting = true;
      w.vacant = false;
      return true;
    }
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      lines_.say(log_level::error, "cannot start a worker: socketpair: %s", std::strerror(errno));
      return false;
    }
    int pidfd = -1;
    pid_t pid = -1;
    if (parent_) {
      auto child = parent_->fork(sv[1]);
      ::close(sv[1]);
      if (!child) {  // the parent is being replaced: this one is forked by the next
        ::close(sv[0]);
        w.awaiting = true;
        w.vacant = false;
        return true;
      }
      pid = child->pid;
      pidfd = child->pidfd;
      w.parent = parent_.get();
    } else if (!spawn_process(sv, pid)) {
      return false;
    }
    w.pid = pid;
    w.pidfd = pidfd;
    listed(w);
    w.killed = false;
    w.dying = false;
    w.ready = false;
    w.served = 0;
    // A write's completion may not have run when the process went (its
    // calls answered already): nothing of it is left for the next one.
    w.sent_count = w.written_count = w.writing = 0;
    w.out.clear();
    w.out_next.clear();
    w.peer_gone = w.first_timed_out = false;
    w.expected = {};
    w.vacant = false;
    w.lifetime_over = false;
    w.renew = false;
    w.memory = 0;
    w.memory_read = {};
    w.request_limit = max_requests_ == 0 ? 0 : max_requests_ + draw(max_requests_jitter_);
    w.socket.emplace(io_, net::local::stream_protocol(), sv[0]);
    w.started = clock::now();
    ++w.generation;
    w.in_len = 0;
    read_answer(w);
    if (max_lifetime_.count() > 0) {
      // Up to a tenth more, drawn per process, so that workers started
      // together do not all leave together.
      auto gen = w.generation;
      auto end =
          w.started + max_lifetime_ +
          std::chrono::milliseconds(draw(static_cast<std::uint64_t>(max_lifetime_.count()) / 10));
      w.lifetime_timer = std::make_unique<net::steady_timer>(io_, end);
      w.lifetime_timer->async_wait([this, &w, gen](const boost::system::error_code& ec) {
        if (ec || gen != w.generation) return;
        w.lifetime_over = true;
        consider(w);
      });
    }
    // One that never says it is ready (stuck in its start) is replaced.
    auto gen = w.generation;
    w.timer = std::make_unique<net::steady_timer>(io_, start_timeout_);
    w.timer->async_wait([this, &w, gen](const boost::system::error_code& ec) {
      if (ec || gen != w.generation || w.ready) return;
      lines_.say(log_level::warning,
                 "worker process %d was not ready %g s after its start; "
                 "killing it",
                 w.pid, static_cast<double>(start_timeout_.count()) / 1000.0);
      w.killed = true;
      w.dying = true;
      lost(w);
    });
    return true;
  }

  // Runs the worker command with `sv[1]` as its descriptor 3.
  bool spawn_process(int sv[2], pid_t& pid) {
    int rc = detail::spawn_with_socket(command_, sv[1], pid);
    if (rc != 0) {
      lines_.say(log_level::error, "cannot start worker %s: %s", command_[0].c_str(),
                 std::strerror(rc));
      ::close(sv[0]);
      return false;
    }
    return true;
  }

  // No process is up to take calls, and one more has died before it was
  // ready (a worker, or the warm parent): the first call waiting counts
  // it, as a call counts the workers that die before reading it, and
  // fails after three, so that the caller hears when workers cannot start.
  void count_against_first_waiting() {
    if (queue_.empty() ||
        std::any_of(workers_.begin(), workers_.end(),
                    [](const worker& o) { return o.ready && o.socket && !o.dying; }) ||
        ++queue_.front()->deliveries < max_deliveries)
      return;
    finish(*queue_.front(),
           fault(fault_code::internal_error, "internal error: the worker processes keep dying"));
    queue_.pop_front();
  }

  std::unique_ptr<detail::warm_parent> new_parent() {
    return std::make_unique<detail::warm_parent>(
        io_, command_, start_timeout_, lines_,
        [this](detail::warm_parent& p, bool up) { parent_changed(p, up); });
  }

  void parent_changed(detail::warm_parent& p, bool up) {
    if (&p == parent_.get())
      parent_up(up);
    else if (&p == next_parent_.get())
      next_parent_up(up);
    // A parent being replaced that dies takes its workers along, each
    // seen as it dies and forked again by the new parent.
  }

  // The warm parent is ready (`up`), or it died, and its workers with it.
  void parent_up(bool up) {
    if (stopping_) return;
    if (up) {
      for (auto& w : workers_)
        if (w.awaiting) fill(w);
    } else {
      count_against_first_waiting();
    }
    dispatch();
  }

  // Sends `w`'s process signal `sig`.
  static void signal(const worker& w, int sig) {
    if (w.pidfd >= 0)
      detail::warm_parent::signal({w.pid, w.pidfd}, sig);
    else if (w.pid > 0)
      ::kill(w.pid, sig);
  }

  // Waits for `w`'s process to end (it has been killed, or has died): its
  // wait status, if known (a warm parent that has gone took it along).
  std::optional<int> reap(worker& w) {
    if (w.pidfd >= 0) {
      detail::forked_child child{w.pid, w.pidfd};
      w.pidfd = -1;
      return w.parent->wait(child);
    }
    int status = 0;
    ::waitpid(w.pid, &status, 0);
    return status;
  }

  // Each call waiting goes to the worker with the fewest calls, below
  // calls_ahead: to an idle one first.
  void dispatch() {
    while (!queue_.empty()) {
      worker* best = nullptr;
      for (auto& w : workers_) {
        if (!w.socket || w.dying || !w.ready || leaving(w) || w.sent.size() >= calls_ahead ||
            (!w.sent.empty() && w.expected >= ahead_below))
          continue;
        if (best == nullptr || w.sent.size() < best->sent.size()) best = &w;
      }
      if (best == nullptr) break;
      auto j = std::move(queue_.front());
      queue_.pop_front();
      send(*best, std::move(j));
    }
    publish();
  }

  // The figures a scrape reads (metrics.hpp): after every change of the
  // queue or of a worker, on the pool's thread.
  void publish() {
    if (stats_ == nullptr) return;
    std::int64_t busy = 0;
    std::int64_t up = 0;
    // Calls queued at a worker behind its first wait for a worker too.
    auto waiting = static_cast<std::int64_t>(queue_.size());
    for (const auto& w : workers_) {
      busy += w.sent.empty() ? 0 : 1;
      waiting += w.sent.empty() ? 0 : static_cast<std::int64_t>(w.sent.size()) - 1;
      up += w.socket && !w.dying && w.ready && !leaving(w) ? 1 : 0;
    }
    stats_->queued.store(waiting, std::memory_order_relaxed);
    stats_->busy.store(busy, std::memory_order_relaxed);
    stats_->processes_up.store(up, std::memory_order_relaxed);
  }

  // The scrape reads each worker's memory by its slot's process.
  void listed(const worker& w) {
    if (stats_ != nullptr)
      stats_->slot(static_cast<std::size_t>(&w - workers_.data()), std::max(w.pid, 0));
  }

  void restarted(detail::metrics::restart_cause why) {
    if (stats_ != nullptr) stats_->restarted(why);
  }

  // The call goes behind those the worker has; its frame goes out with
  // the next write (at once, unless one is under way).
  void send(worker& w, std::unique_ptr<job> j) {
    j->sequence = w.sent_count++;
    j->expected = method_times_.expected(j->name);
    w.expected += j->expected;
    (w.writing == 0 ? w.out : w.out_next) += j->frame;
    w.sent.push_back(std::move(j));
    if (w.sent.size() == 1) time_first(w);
    if (w.writing == 0) write(w);
  }

  // The answer is read by the read every live worker has pending
  // (read_answer()). A write that fails found the worker already dead.
  void write(worker& w) {
    w.writing = w.sent_count - w.written_count;
    auto gen = w.generation;
    net::async_write(*w.socket, net::buffer(w.out),
                     [this, &w, gen](const boost::system::error_code& ec, std::size_t) {
                       if (gen != w.generation) return;
                       if (ec) return lost(w, first_written(w));
                       w.written_count += w.writing;
                       w.writing = 0;
                       if (w.peer_gone) return lost(w, true);
                       w.out.clear();
                       if (w.out_next.empty()) return;
                       w.out.swap(w.out_next);
                       write(w);
                     });
  }

  // The worker's first call was all in its socket before the write under
  // way (or none is): it may have started it.
  static bool first_written(const worker& w) {
    return !w.sent.empty() && w.sent.front()->sequence < w.written_count;
  }

  // The first call sent to a worker is the one it runs: its timeout runs
  // from when it became the first (the worker answered the one before).
  void time_first(worker& w) {
    w.first_since = clock::now();
    // Its wait for a worker ends now, not when it was sent.
    if (!w.dying && !w.sent.empty() && !w.sent.front()->taken) {
      if (stats_ != nullptr) stats_->waited(w.first_since - w.sent.front()->queued);
      w.sent.front()->taken = true;
    }
    if (w.timer) w.timer->cancel();
    if (w.dying || w.sent.empty() || w.sent.front()->call.timeout.count() == 0) return;
    // The handler judges the call it was armed for: when the pool's thread
    // was held up, the answer to that call and its deadline can be ready
    // together, and the answer, handled first, makes another call the first,
    // whose timer this is not (cancelling a timer that has expired does not
    // stop its handler).
    auto gen = w.generation;
    auto armed = w.sent.front()->sequence;
    w.timer = std::make_unique<net::steady_timer>(io_, w.sent.front()->call.timeout);
    w.timer->async_wait([this, &w, gen, armed](const boost::system::error_code& ec) {
      if (ec || gen != w.generation || w.sent.empty() || w.sent.front()->sequence != armed ||
          w.first_timed_out)
        return;
      // A runaway: the caller hears now, the process is killed and
      // replaced. SIGUSR1 first: a Python worker prints its stack
      // (faulthandler) and goes on, a C++ worker ends at once; then
      // SIGKILL, unless it is gone by then. The calls behind it wait for
      // its end: the worker may yet answer them.
      finish(*w.sent.front(), detail::call_timeout());
      w.first_timed_out = true;
      w.killed = true;
      w.dying = true;
      publish();
      lines_.say(log_level::warning, "worker process %d ran past its call's timeout; killing it",
                 w.pid);
      signal(w, SIGUSR1);
      auto grace = std::make_shared<net::steady_timer>(io_, std::chrono::milliseconds(200));
      grace->async_wait([this, &w, gen, grace](const boost::system::error_code&) {
        if (gen != w.generation) return;  // it ended already
        signal(w, SIGKILL);
        lost(w);
      });
    });
  }

  // Every live worker has this read pending, busy or idle: a busy one's
  // answers arrive here, and so does an idle one's death (end of stream),
  // so a dead worker is replaced before a call is sent to it. Answers of a
  // few KiB come in one read, headers and all, several at once when the
  // worker has written them before the pool reads.
  void read_answer(worker& w) {
    constexpr std::size_t chunk = 64 * 1024;
    if (w.in.size() < w.in_len + chunk) w.in.resize(w.in_len + chunk);
    auto gen = w.generation;
    w.socket->async_read_some(net::buffer(w.in.data() + w.in_len, w.in.size() - w.in_len),
                              [this, &w, gen](const boost::system::error_code& ec, std::size_t n) {
                                if (gen != w.generation) return;
                                if (ec) return stream_ended(w, ec);
                                w.in_len += n;
                                if (!w.ready) return hello(w);
                                read_frames(w);
                              });
  }

  void read_frames(worker& w) {
    const auto gen = w.generation;
    std::size_t at = 0;
    while (w.in_len > at) {
      if (w.sent.empty()) {  // bytes from an idle worker break the protocol
        lines_.say(log_level::warning, "worker process %d wrote while idle; replacing it", w.pid);
        w.killed = true;
        return lost(w);
      }
      if (w.in_len - at < 4) break;
      const std::uint32_t length =
          detail::frame_length(reinterpret_cast<const unsigned char*>(w.in.data() + at));
      if (length > max_worker_frame_bytes) {
        w.killed = true;
        return lost(w);
      }
      if (w.in_len - at < 4 + std::size_t{length}) {
        if (w.in.size() < at + 4 + std::size_t{length}) w.in.resize(at + 4 + std::size_t{length});
        break;
      }
      answered(w, std::string_view(w.in).substr(at + 4, length));
      if (gen != w.generation) return;  // it left, or was lost
      at += 4 + std::size_t{length};
    }
    if (at != 0) {
      std::memmove(w.in.data(), w.in.data() + at, w.in_len - at);
      w.in_len -= at;
    }
    read_answer(w);
  }

  // A worker's first words, once it can take calls: an empty frame, or
  // marshal::hello from one that reads and writes the compact form. No call
  // goes to it before, so the time it takes to start (a Python worker
  // importing its module) counts against no call's timeout. The pool sends
  // the compact form once a worker has said it reads it, and none has said
  // it does not: every worker of a pool runs one program, so one that
  // differs (a worker program of another version) is refused.
  void hello(worker& w) {
    if (w.in_len < 4) return read_answer(w);
    const std::uint32_t length =
        detail::frame_length(reinterpret_cast<const unsigned char*>(w.in.data()));
    if (length > detail::marshal::hello.size()) return not_hello(w);
    if (w.in_len < 4 + std::size_t{length}) return read_answer(w);
    const std::string_view said(w.in.data() + 4, length);
    if (w.in_len > 4 + std::size_t{length} || (length != 0 && said != detail::marshal::hello))
      return not_hello(w);
    if (length == 0 && marshal_.load(std::memory_order_relaxed)) {
      lines_.say(log_level::error,
                 "worker process %d reads only XML-RPC calls, and the pool's other workers "
                 "read marshal: is its program another version's? Replacing it",
                 w.pid);
      w.killed = true;
      return lost(w);
    }
    if (length == 0)
      xml_only_ = true;
    else if (!xml_only_)
      marshal_.store(true, std::memory_order_relaxed);
    w.in_len = 0;
    w.ready = true;
    if (w.timer) w.timer->cancel();
    read_answer(w);
    if (&w == successor_) {
      successor_ = nullptr;  // the one it replaces leaves now, or after its call
      // One being killed past its call's timeout is left to that (lost()).
      if (leaver_ != nullptr && leaver_->sent.empty() && !leaver_->dying) leave(*leaver_);
      if (leaver_ == nullptr) recycle_next();
    } else {
      consider(w);  // its lifetime may have ended while it started
    }
    dispatch();
  }

  void not_hello(worker& w) {
    lines_.say(log_level::warning,
               "worker process %d did not begin with an empty frame (ready); "
               "replacing it",
               w.pid);
    w.killed = true;
    lost(w);
  }

  // The worker's stream ended (it died, or was killed). Did it start the
  // first call it was sent? A reset says no when that call was its only
  // one: the kernel's word for a peer that closed with some of what was
  // sent to it unread. An end read during a write says no too, once the
  // write has failed, if the call was in that write: the write decides.
  // Otherwise it may have.
  void stream_ended(worker& w, const boost::system::error_code& ec) {
    if (w.sent.empty()) return lost(w);
    if (ec == net::error::connection_reset && w.sent.size() == 1) return lost(w, false);
    if (w.writing != 0) {
      w.peer_gone = true;
      return;
    }
    lost(w, true);
  }

  // The worker answered its first call. One whose timeout failed it
  // already has its answer dropped.
  void answered(worker& w, std::string_view response) {
    auto j = std::move(w.sent.front());
    w.sent.pop_front();
    w.expected -= j->expected;
    w.quick_deaths = 0;
    method_times_.timed(j->name, clock::now() - w.first_since);
    if (w.first_timed_out) {
      w.first_timed_out = false;
    } else if (!response.empty() && (response[0] == detail::marshal::result_tag ||
                                     response[0] == detail::marshal::fault_tag)) {
      finish_with_marshal(*j, w.pid, response);
    } else {
      detail::finish_with_document(j->call, response, "internal error");
    }
    ++w.served;
    time_first(w);
    if (leaving(w)) {
      if (w.sent.empty() && !w.dying) leave(w);  // a runaway killed is lost()
    } else {
      consider(w);
    }
    dispatch();
  }

  // An answer in marshal form is read on the call's loop, not on the pool's
  // one thread. One that cannot be read fails its call alone, as Python's
  // own marshaller fails a result it cannot write; the worker serves on.
  void finish_with_marshal(job& j, int pid, std::string_view response) {
    net::post(j.call.loop, [done = std::move(j.call.done), answer = std::string(response),
                            name = std::move(j.name), pid, lines = lines_]() mutable {
      auto read = detail::marshal::read_answer(answer, max_answer_depth);
      if (auto* o = std::get_if<outcome>(&read)) return done(std::move(*o));
      const auto& why = std::get<detail::marshal::unreadable>(read);
      if (why.malformed) {
        lines.say(log_level::error,
                  "worker process %d answered %s with what is not marshal's form (%s); the "
                  "call fails",
                  pid, name.c_str(), why.why.c_str());
        return done(fault(fault_code::internal_error, "internal error"));
      }
      lines.say(log_level::error, "the result of %s cannot be encoded: %s", name.c_str(),
                why.why.c_str());
      done(fault(fault_code::internal_error, "internal error: the result cannot be encoded"));
    });
  }

  // Recycling: a worker past its max_requests (with its jitter), its
  // max_lifetime or its max_memory is replaced between calls, one at a
  // time. Its successor starts in the spare slot while it serves on; once
  // the successor is ready, it takes no more calls and leaves after the one
  // it has. So the pool never has fewer workers serving than it had, and
  // no call waits for a worker to start. A successor that cannot start is
  // replaced as any worker is (the back-off included), the one it replaces
  // serving meanwhile.

  // Whether `w` has been replaced and leaves after its call.
  bool leaving(const worker& w) const { return &w == leaver_ && successor_ == nullptr; }

  std::uint64_t draw(std::uint64_t most) {
    return most == 0 ? 0 : std::uniform_int_distribution<std::uint64_t>(0, most)(random_);
  }

  // Why `w` is to be replaced, if it is; between calls.
  std::optional<cause> due(worker& w) {
    if (w.renew) return cause::reload;
    if (w.request_limit != 0 && w.served >= w.request_limit) return cause::max_requests;
    if (w.lifetime_over) return cause::max_lifetime;
    if (max_memory_ != 0) {
      auto now = clock::now();
      if (now - w.memory_read >= memory_read_interval) {
        w.memory_read = now;
        w.memory = detail::metrics::own_memory(w.pid);
      }
      if (w.memory > max_memory_) return cause::max_memory;
    }
    return std::nullopt;
  }

  // `w` is replaced if it is due and no other replacement is under way
  // (that one's end looks again: recycle_next()). It serves on until its
  // successor is ready, and leaves once it has answered the calls it has.
  void consider(worker& w) {
    if (stopping_ || leaver_ != nullptr || !w.socket || !w.ready || w.dying) return;
    auto why = due(w);
    if (why) recycle(w, *why);
  }

  void recycle_next() {
    for (auto& w : workers_) {
      if (leaver_ != nullptr) return;
      consider(w);
    }
  }

  void recycle(worker& w, cause why) {
    auto spare =
        std::find_if(workers_.begin(), workers_.end(), [](const worker& o) { return o.vacant; });
    if (spare == workers_.end()) return;  // one is vacant whenever no replacement is under way
    switch (why) {
      case cause::max_requests:
        lines_.say(log_level::notice,
                   "worker process %d answered %llu calls (its limit: %llu); starting its "
                   "successor",
                   w.pid, static_cast<unsigned long long>(w.served),
                   static_cast<unsigned long long>(w.request_limit));
        break;
      case cause::max_lifetime:
        lines_.say(log_level::notice, "worker process %d has run %.1f s; starting its successor",
                   w.pid, std::chrono::duration<double>(clock::now() - w.started).count());
        break;
      case cause::reload:
        lines_.say(log_level::notice,
                   "worker process %d runs the code from before the reload; "
                   "starting its successor",
                   w.pid);
        break;
      default:
        lines_.say(log_level::notice,
                   "worker process %d holds %.1f MiB of its own (the limit: %.1f MiB); starting "
                   "its successor",
                   w.pid, static_cast<double>(w.memory) / 1048576.0,
                   static_cast<double>(max_memory_) / 1048576.0);
        break;
    }
    leaver_ = &w;
    leave_cause_ = why;
    successor_ = &*spare;
    if (!spawn(*spare)) {
      spare->vacant = true;
      leaver_ = successor_ = nullptr;
      // Tried again after the worker's next call, unless it was a reload's.
      if (why == cause::reload) renewal_failed("a worker process cannot be started");
    }
    publish();
  }

  // Renewal (a reload): every worker is replaced as recycling replaces
  // one, one at a time and between calls, its successor running the code
  // loaded anew: forked by a new warm parent, which starts first (if it
  // cannot load the code, nothing else changes), or started anew. Once no
  // worker runs the old code, the renewal is done; a warm parent replaced
  // ends once its last worker has left.
  void begin_renewal() {
    renewing_ = true;
    if (parent_) {
      lines_.say(log_level::notice, "reload: starting a new warm parent");
      next_parent_ = new_parent();
      next_parent_->respawn(false);  // its code may not load: then the old serves on
      next_parent_->start();
      return;
    }
    lines_.say(log_level::notice, "reload: replacing the worker processes");
    mark_for_renewal();
    replace_marked();
  }

  void next_parent_up(bool up) {
    if (stopping_) return;
    if (!up) {
      // Not destroyed from within its own call: the next renewal, if any,
      // starts from a handler of its own.
      return renewal_failed("the new warm parent ended before it was ready");
    }
    lines_.say(log_level::notice,
               "reload: the new warm parent %d is ready; replacing the worker processes",
               next_parent_->pid());
    parent_->respawn(false);
    old_parents_.push_back(std::move(parent_));
    parent_ = std::move(next_parent_);
    parent_->respawn(true);
    mark_for_renewal();
    for (auto& w : workers_)
      if (w.awaiting) fill(w);
    replace_marked();
  }

  // Every process running now runs the old code. A replacement under way
  // for another cause goes on; its successor, if it started before the
  // renewal, is replaced in turn.
  void mark_for_renewal() {
    for (auto& w : workers_) w.renew = w.pid > 0;
  }

  void replace_marked() {
    recycle_next();
    renewal_step();
    dispatch();
  }

  // Ends the renewal under way once no worker runs the old code.
  void renewal_step() {
    drop_old_parents();
    if (!renewing_ || stopping_ || next_parent_ ||
        std::any_of(workers_.begin(), workers_.end(), [](const worker& w) { return w.renew; }))
      return;
    lines_.say(log_level::notice, "reload: every worker process runs the new code");
    finish_renewal(true);
  }

  void renewal_failed(const char* why) {
    if (!renewing_ || stopping_) return;
    lines_.say(log_level::error, "reload failed: %s; the worker processes running serve on", why);
    for (auto& w : workers_) w.renew = false;
    finish_renewal(false);
  }

  void finish_renewal(bool renewed) {
    auto done = std::move(renewals_.front());
    renewals_.pop_front();
    renewing_ = false;
    // A new parent that failed goes from a handler of its own (this may be
    // its call); so does the next renewal start.
    net::post(io_, [this, failed = std::move(next_parent_)]() mutable {
      failed.reset();
      if (!renewing_ && !renewals_.empty() && !stopping_) begin_renewal();
    });
    done(renewed);
  }

  // A replaced warm parent ends once none of its workers is left.
  void drop_old_parents() {
    std::erase_if(old_parents_, [this](const std::unique_ptr<detail::warm_parent>& p) {
      const auto* parent = p.get();
      if (std::any_of(workers_.begin(), workers_.end(),
                      [parent](const worker& w) { return w.parent == parent; }) ||
          std::any_of(retired_.begin(), retired_.end(),
                      [parent](const retired_worker& r) { return r.parent == parent; }))
        return false;
      p->stop();
      return true;
    });
  }

  // The replaced worker leaves: its socket is closed (it sees end of stream
  // and exits), its slot is the spare one, and the process is reaped in the
  // background (killed if it has not left within 2 s).
  void leave(worker& w) {
    restarted(leave_cause_);
    boost::system::error_code ec;
    w.socket->close(ec);
    w.socket.reset();
    if (w.timer) w.timer->cancel();
    w.lifetime_timer.reset();
    ++w.generation;
    retired_.push_back({{w.pid, w.pidfd}, w.parent});
    w.pid = -1;
    w.pidfd = -1;
    w.parent = nullptr;
    w.renew = false;
    listed(w);
    w.ready = false;
    w.vacant = true;
    leaver_ = nullptr;
    lines_.say(log_level::notice, "worker process %d left; its successor serves",
               retired_.back().child.pid);
    reap_retired(clock::now() + std::chrono::seconds(2));
    publish();
    recycle_next();
    renewal_step();
  }

  void reap_retired(clock::time_point kill_at) {
    std::erase_if(retired_, [&](retired_worker& r) {
      if (r.child.pidfd >= 0) {  // a warm parent's worker: it reaps it
        if (!detail::warm_parent::ended(r.child)) {
          if (clock::now() < kill_at) return false;
          detail::warm_parent::signal(r.child, SIGKILL);
        }
        r.parent->release(r.child);
        return true;
      }
      if (::waitpid(r.child.pid, nullptr, WNOHANG) != 0) return true;
      if (clock::now() < kill_at) return false;
      ::kill(r.child.pid, SIGKILL);
      ::waitpid(r.child.pid, nullptr, 0);
      return true;
    });
    drop_old_parents();
    if (retired_.empty() || stopping_) return;
    auto timer = std::make_shared<net::steady_timer>(io_, std::chrono::milliseconds(20));
    timer->async_wait([this, timer, kill_at](const boost::system::error_code&) {
      if (!stopping_) reap_retired(kill_at);
    });
  }

  // The worker died (or was killed) and a new one starts. Its first call
  // fails if it may have started (`started`); one it never read goes to
  // another worker, up to max_deliveries times, and so do the calls behind
  // it, which it had not started.
  void lost(worker& w, bool started = true) {
    const bool idle = w.sent.empty();
    const cause why = w.dying    ? cause::timeout
                      : w.killed ? cause::protocol
                      : idle     ? cause::idle_death
                                 : cause::crash;
    if (w.timer) w.timer->cancel();
    boost::system::error_code ec;
    if (w.socket) w.socket->close(ec);
    w.socket.reset();
    ++w.generation;
    if (w.pid > 0) {
      signal(w, SIGKILL);  // no-op if it is already dead; a broken stream ends it either way
      auto status = reap(w);
      // Every death is logged but the pool's own kills (a runaway, a worker
      // that broke the protocol): a crash, the OOM killer's SIGKILL, an exit.
      const char* when = idle ? " while idle" : "";
      if (!w.killed && !status)
        lines_.say(log_level::error, "worker process %d ended with its warm parent%s; replacing it",
                   w.pid, when);
      else if (!w.killed && WIFSIGNALED(*status))
        lines_.say(log_level::error, "worker process %d died from signal %d%s; replacing it", w.pid,
                   WTERMSIG(*status), when);
      else if (!w.killed && WIFEXITED(*status))
        lines_.say(log_level::error, "worker process %d exited with status %d%s; replacing it",
                   w.pid, WEXITSTATUS(*status), when);
      w.pid = -1;
      w.parent = nullptr;
      listed(w);
    }
    // Counted once the process is gone and before the caller hears: a
    // scrape that sees the restart sees the old process no more, and one
    // after the caller's fault sees the restart.
    restarted(why);
    if (!w.ready) count_against_first_waiting();
    if (!w.sent.empty()) {
      auto& first = w.sent.front();
      if (w.first_timed_out || (!started && ++first->deliveries < max_deliveries)) {
        if (w.first_timed_out) first.reset();  // answered at its timeout
      } else {
        finish(*first, fault(fault_code::internal_error,
                             started ? "internal error: the worker process running this call died"
                                     : "internal error: the worker processes keep dying"));
        first.reset();
      }
      // The others go back first in the queue, in their order.
      for (auto it = w.sent.rbegin(); it != w.sent.rend(); ++it)
        if (*it) queue_.push_front(std::move(*it));
      w.sent.clear();
    }
    w.expected = {};
    w.first_timed_out = false;
    w.peer_gone = false;
    w.writing = 0;
    w.out.clear();
    w.out_next.clear();
    w.renew = false;  // its replacement runs the new code
    // A slot left vacant is the spare, which the next replacement may take
    // at once (recycle_next()): it is filled no other way.
    bool vacated = false;
    if (&w == leaver_) {  // being replaced: its successor takes its place
      leaver_ = nullptr;
      w.vacant = vacated = true;
      w.ready = false;
      if (successor_ == nullptr) recycle_next();
    } else if (&w == successor_ && !w.ready && leave_cause_ == cause::reload && !parent_) {
      // The reloaded code does not start (a warm parent's failure shows
      // before: next_parent_up()): the workers running serve on.
      w.vacant = vacated = true;
      successor_ = leaver_ = nullptr;
      renewal_failed("its first worker process did not start");
    }
    renewal_step();
    publish();
    if (stopping_) return;
    if (vacated) return dispatch();  // a call handed back goes to a free worker
    // Replaced at once, unless workers keep dying young: then ever more
    // slowly, up to 5 s, so a crash loop does not eat the machine.
    fill_after(w, worker_respawn.died(w.quick_deaths, w.started, clock::now()));
    dispatch();  // a call handed back goes to a free worker meanwhile
  }

  // Starts a process in slot `w`. One that cannot be started (no
  // descriptor or memory left, the program gone) is tried again as a
  // worker that died young is replaced, ever more slowly up to 5 s, each
  // failure counted against the first call waiting while none is up: the
  // slot is never left empty for good, nor a call waiting for ever.
  void fill(worker& w) {
    if (spawn(w)) return;
    w.started = clock::now();
    count_against_first_waiting();
    fill_after(w, worker_respawn.died(w.quick_deaths, w.started, clock::now()));
  }

  void fill_after(worker& w, std::chrono::milliseconds delay) {
    auto timer = std::make_shared<net::steady_timer>(io_, delay);
    timer->async_wait([this, &w, timer](const boost::system::error_code&) {
      if (stopping_) return;
      fill(w);
      dispatch();
    });
  }

  detail::logger lines_;
  std::vector<std::string> command_;
  std::uint64_t max_requests_;  // 0: a worker serves for ever
  std::uint64_t max_requests_jitter_;
  std::chrono::milliseconds max_lifetime_;  // 0: for ever
  std::uint64_t max_memory_;                // bytes; 0: no limit
  detail::metrics::pool_stats* stats_;      // null: not counted
  std::chrono::milliseconds start_timeout_;
  struct retired_worker {
    detail::forked_child child;
    detail::warm_parent* parent = nullptr;  // null: a process the pool spawned itself
  };
  std::vector<retired_worker> retired_;  // replaced by recycling, not yet reaped
  net::io_context io_{1};
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_{
      net::make_work_guard(io_)};
  std::vector<worker> workers_;
  std::unique_ptr<detail::warm_parent> parent_;
  // The calls go in marshal form (hello()); read on the callers' loops.
  std::atomic<bool> marshal_{false};
  bool xml_only_ = false;              // a worker said it reads only XML-RPC
  detail::method_times method_times_;  // each method's, by name
  // A renewal's new parent, until it is ready; then the parents it
  // replaced, until their workers have left.
  std::unique_ptr<detail::warm_parent> next_parent_;
  std::vector<std::unique_ptr<detail::warm_parent>> old_parents_;
  std::deque<std::function<void(bool)>> renewals_;  // the first is under way, if renewing_
  bool renewing_ = false;
  std::deque<std::unique_ptr<job>> queue_;
  worker* leaver_ = nullptr;     // being replaced (recycle()), serving until its successor is ready
  worker* successor_ = nullptr;  // starting in the spare slot, to take its place
  cause leave_cause_ = cause::max_requests;
  std::mt19937_64 random_{std::random_device{}()};
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<detail::pool_runner> make_worker_pool(const worker_options& options,
                                                      unsigned workers,
                                                      detail::metrics::pool_stats* stats,
                                                      std::chrono::milliseconds start_timeout,
                                                      detail::logger lines) {
  return std::make_unique<worker_pool>(options, count_or_cores(workers), stats, start_timeout,
                                       std::move(lines));
}

}  // namespace rapidrpc
