#include "metrics/metrics.hpp"

#include "text/text.hpp"

#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <new>
#include <sstream>
#include <system_error>

namespace rapidrpc::detail::metrics {

namespace {

constexpr std::array<std::string_view, rejection_count> rejection_names = {"bad_request",
                                                                           "auth",
                                                                           "allowlist",
                                                                           "not_found",
                                                                           "method_not_allowed",
                                                                           "request_timeout",
                                                                           "body_too_large",
                                                                           "request_line_too_large",
                                                                           "unsupported_encoding",
                                                                           "expectation_failed",
                                                                           "header_too_large",
                                                                           "connections",
                                                                           "method_denied",
                                                                           "invalid_request"};

constexpr std::array<std::string_view, outcome_count> outcome_names = {"ok", "fault", "timeout"};
constexpr std::array<std::string_view, protocol_count> protocol_names = {"xmlrpc", "jsonrpc"};
constexpr std::array<std::string_view, restart_cause_count> restart_names = {
    "crash",        "idle_death",   "timeout",    "protocol",
    "max_requests", "max_lifetime", "max_memory", "reload"};

constexpr std::size_t line_words = 64 / sizeof(std::uint64_t);

// Bucket upper bounds in nanoseconds, for call_finished(): bucket_bounds.
constexpr std::array<std::int64_t, bucket_bounds.size()> bucket_ns = {
    50'000,      100'000,       250'000,       500'000,       1'000'000,     2'500'000,
    5'000'000,   10'000'000,    25'000'000,    50'000'000,    100'000'000,   250'000'000,
    500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
static_assert([] {
  for (std::size_t i = 0; i < bucket_ns.size(); ++i) {
    const double ns = bucket_bounds[i] * 1e9;
    if (ns < static_cast<double>(bucket_ns[i]) - 1 || ns > static_cast<double>(bucket_ns[i]) + 1)
      return false;
  }
  return true;
}());

void append_double(std::string& out, double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// A label value as the text format wants it: backslash, quote and newline
// escaped.
void append_label(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, std::string_view name, std::uint64_t v) {
  out += name;
  out += ' ';
  append_decimal(out, v);
  out += '\n';
}

// Fills `f` from /proc/self (throws std::invalid_argument or
// std::out_of_range for text it cannot read).
void read_proc_self(process_figures& f);

}  // namespace

std::string_view name(rejection r) noexcept { return rejection_names[static_cast<std::size_t>(r)]; }

bool rejection_for_status(int status, rejection& out) noexcept {
  switch (status) {
    case 400:
      out = rejection::bad_request;
      return true;
    case 401:
      out = rejection::auth;
      return true;
    case 403:
      out = rejection::allowlist;
      return true;
    case 404:
      out = rejection::not_found;
      return true;
    case 405:
      out = rejection::method_not_allowed;
      return true;
    case 408:
      out = rejection::request_timeout;
      return true;
    case 413:
      out = rejection::body_too_large;
      return true;
    case 414:
      out = rejection::request_line_too_large;
      return true;
    case 415:
      out = rejection::unsupported_encoding;
      return true;
    case 417:
      out = rejection::expectation_failed;
      return true;
    case 431:
      out = rejection::header_too_large;
      return true;
    case 503:
      out = rejection::connections;
      return true;
    default:
      return false;
  }
}

void pool_stats::waited(std::chrono::steady_clock::duration d) noexcept {
  const std::int64_t ns =
      std::max<std::int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(), 0);
  waits.fetch_add(1, std::memory_order_relaxed);
  wait_ns.fetch_add(static_cast<std::uint64_t>(ns), std::memory_order_relaxed);
  const auto* b = std::lower_bound(bucket_ns.begin(), bucket_ns.end(), ns);
  if (b != bucket_ns.end())
    wait_buckets[static_cast<std::size_t>(b - bucket_ns.begin())].fetch_add(
        1, std::memory_order_relaxed);
}

std::uint64_t own_memory(int pid) noexcept {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/smaps_rollup", pid);
  std::FILE* f = std::fopen(path, "re");
  if (f == nullptr) return 0;
  std::uint64_t kib = 0;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long n = 0;
    if (std::sscanf(line, "Private_Clean: %llu kB", &n) == 1 ||
        std::sscanf(line, "Private_Dirty: %llu kB", &n) == 1)
      kib += n;
  }
  std::fclose(f);
  return kib * 1024;
}

void shard::call_finished(protocol p, std::size_t method, outcome o,
                          std::chrono::nanoseconds elapsed) noexcept {
  if (base_ == nullptr) return;
  bump(in_flight_at, ~std::uint64_t{0});
  const std::size_t cell =
      cells_at +
      (static_cast<std::size_t>(p) * methods_ + std::min(method, methods_ - 1)) * cell_words;
  bump(cell + static_cast<std::size_t>(o), 1);
  const std::int64_t ns = std::max<std::int64_t>(elapsed.count(), 0);
  bump(cell + sum_in_cell, static_cast<std::uint64_t>(ns));
  const auto* b = std::lower_bound(bucket_ns.begin(), bucket_ns.end(), ns);
  if (b != bucket_ns.end())
    bump(cell + buckets_in_cell + static_cast<std::size_t>(b - bucket_ns.begin()), 1);
}

store::store(std::vector<std::string> methods, std::size_t shards)
    : methods_(std::move(methods)), shards_(std::max<std::size_t>(shards, 1)) {
  const std::size_t registered = methods_.size();
  methods_.emplace_back(batch_method);
  methods_.emplace_back(other_method);
  for (std::size_t i = 0; i < registered; ++i) index_.emplace(methods_[i], i);
  const std::size_t words = shard::cells_at + protocol_count * methods_.size() * shard::cell_words;
  shard_words_ = (words + line_words - 1) / line_words * line_words;
  const std::size_t shard_bytes = shards_ * shard_words_ * sizeof(std::uint64_t);
  static_assert(std::atomic<std::int64_t>::is_always_lock_free,
                "pool_stats is shared between processes");
  mapped_bytes_ = shard_bytes + sizeof(pool_stats);
  void* p =
      ::mmap(nullptr, mapped_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw std::system_error(errno, std::generic_category(), "cannot map the metrics");
  words_ = static_cast<std::uint64_t*>(p);  // zero-filled by the kernel
  // Cache lines are a multiple of 8 bytes, and so is the shards' size.
  pool_ = new (static_cast<char*>(p) + shard_bytes) pool_stats{};
}

store::~store() {
  pool_->~pool_stats();
  ::munmap(words_, mapped_bytes_);
}

std::size_t store::method_index(std::string_view name) const noexcept {
  auto it = index_.find(name);
  return it == index_.end() ? methods_.size() - 1 : it->second;
}

shard store::at(std::size_t i) noexcept {
  return {words_ + std::min(i, shards_ - 1) * shard_words_, methods_.size()};
}

void store::reset_gauges(std::size_t i) noexcept {
  if (i >= shards_) return;
  std::uint64_t* base = words_ + i * shard_words_;
  std::atomic_ref<std::uint64_t>(base[shard::connections_open_at])
      .store(0, std::memory_order_relaxed);
  std::atomic_ref<std::uint64_t>(base[shard::in_flight_at]).store(0, std::memory_order_relaxed);
}

std::uint64_t store::read(std::size_t s, std::size_t at) const noexcept {
  return std::atomic_ref<std::uint64_t>(words_[s * shard_words_ + at])
      .load(std::memory_order_relaxed);
}

std::uint64_t store::total(std::size_t at) const noexcept {
  std::uint64_t sum = 0;
  for (std::size_t s = 0; s < shards_; ++s) sum += read(s, at);
  return sum;
}

void store::write_exposition(std::string& out, const process_figures& process) const {
  const std::size_t methods = methods_.size();
  const std::size_t cells = protocol_count * methods;
  // Every cell added up over the shards once, so that the counters and the
  // histogram of one scrape agree with each other.
  std::vector<std::uint64_t> sums(cells * shard::cell_words, 0);
  for (std::size_t s = 0; s < shards_; ++s)
    for (std::size_t w = 0; w < sums.size(); ++w) sums[w] += read(s, shard::cells_at + w);

  family(out, "rapidrpc_calls_total", "counter",
         "Calls answered, by protocol, method (registered names; others as \"(other)\") and "
         "outcome.");
  for (std::size_t c = 0; c < cells; ++c) {
    const std::uint64_t* cell = &sums[c * shard::cell_words];
    if (cell[0] + cell[1] + cell[2] == 0) continue;
    for (std::size_t o = 0; o < outcome_count; ++o) {
      out += "rapidrpc_calls_total{protocol=\"";
      out += protocol_names[c / methods];
      out += "\",method=\"";
      append_label(out, methods_[c % methods]);
      out += "\",outcome=\"";
      out += outcome_names[o];
      out += "\"} ";
      append_decimal(out, cell[o]);
      out += '\n';
    }
  }

  family(out, "rapidrpc_call_duration_seconds", "histogram",
         "Time from a call's request document to its reply, by protocol and method.");
  for (std::size_t c = 0; c < cells; ++c) {
    const std::uint64_t* cell = &sums[c * shard::cell_words];
    const std::uint64_t count = cell[0] + cell[1] + cell[2];
    if (count == 0) continue;
    std::string labels = "protocol=\"";
    labels += protocol_names[c / methods];
    labels += "\",method=\"";
    append_label(labels, methods_[c % methods]);
    labels += '"';
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < bucket_bounds.size(); ++b) {
      cumulative += cell[shard::buckets_in_cell + b];
      out += "rapidrpc_call_duration_seconds_bucket{" + labels + ",le=\"";
      append_double(out, bucket_bounds[b]);
      out += "\"} ";
      append_decimal(out, std::min(cumulative, count));
      out += '\n';
    }
    out += "rapidrpc_call_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} ";
    append_decimal(out, count);
    out += "\nrapidrpc_call_duration_seconds_sum{" + labels + "} ";
    append_double(out, static_cast<double>(cell[shard::sum_in_cell]) / 1e9);
    out += "\nrapidrpc_call_duration_seconds_count{" + labels + "} ";
    append_decimal(out, count);
    out += '\n';
  }

  family(out, "rapidrpc_calls_in_flight", "gauge", "Calls started and not yet answered.");
  out += "rapidrpc_calls_in_flight ";
  append_decimal(out, static_cast<std::int64_t>(total(shard::in_flight_at)));
  out += '\n';
  family(out, "rapidrpc_connections_open", "gauge", "Client connections open now.");
  out += "rapidrpc_connections_open ";
  append_decimal(out, static_cast<std::int64_t>(total(shard::connections_open_at)));
  out += '\n';
  family(out, "rapidrpc_connections_total", "counter", "Client connections accepted.");
  sample(out, "rapidrpc_connections_total", total(shard::connections_total_at));

  family(out, "rapidrpc_rejections_total", "counter",
         "Requests and connections turned away, by reason: each limit, access control, "
         "malformed requests.");
  for (std::size_t r = 0; r < rejection_count; ++r) {
    out += "rapidrpc_rejections_total{reason=\"";
    out += rejection_names[r];
    out += "\"} ";
    append_decimal(out, total(shard::rejections_at + r));
    out += '\n';
  }

  family(out, "rapidrpc_received_bytes_total", "counter",
         "Bytes read from clients: HTTP requests (after TLS decryption) and ZeroMQ payloads.");
  sample(out, "rapidrpc_received_bytes_total", total(shard::bytes_in_at));
  family(out, "rapidrpc_sent_bytes_total", "counter",
         "Bytes written to clients: HTTP responses (before TLS encryption) and ZeroMQ payloads.");
  sample(out, "rapidrpc_sent_bytes_total", total(shard::bytes_out_at));

  family(out, "rapidrpc_pool_queue_depth", "gauge", "Pool calls waiting for a worker.");
  out += "rapidrpc_pool_queue_depth ";
  append_decimal(out, std::max<std::int64_t>(pool_->queued.load(std::memory_order_relaxed), 0));
  out += '\n';
  family(out, "rapidrpc_pool_busy_workers", "gauge",
         "Workers (threads or processes) running a pool call.");
  out += "rapidrpc_pool_busy_workers ";
  append_decimal(out, std::max<std::int64_t>(pool_->busy.load(std::memory_order_relaxed), 0));
  out += '\n';
  family(out, "rapidrpc_pool_wait_seconds", "histogram",
         "Time pool calls waited for a worker (thread, process or host) to take them.");
  {
    const std::uint64_t count = pool_->waits.load(std::memory_order_relaxed);
    std::uint64_t cumulative = 0;
    for (std::size_t b = 0; b < bucket_bounds.size(); ++b) {
      cumulative += pool_->wait_buckets[b].load(std::memory_order_relaxed);
      out += "rapidrpc_pool_wait_seconds_bucket{le=\"";
      append_double(out, bucket_bounds[b]);
      out += "\"} ";
      append_decimal(out, std::min(cumulative, count));
      out += '\n';
    }
    out += "rapidrpc_pool_wait_seconds_bucket{le=\"+Inf\"} ";
    append_decimal(out, count);
    out += "\nrapidrpc_pool_wait_seconds_sum ";
    append_double(out, static_cast<double>(pool_->wait_ns.load(std::memory_order_relaxed)) / 1e9);
    out += "\nrapidrpc_pool_wait_seconds_count ";
    append_decimal(out, count);
    out += '\n';
  }
  if (const std::int64_t up = pool_->processes_up.load(std::memory_order_relaxed); up >= 0) {
    family(out, "rapidrpc_worker_memory_bytes", "gauge",
           "Memory each worker process holds of its own (unshared), by its slot in the pool.");
    for (std::size_t i = 0; i < pool_->pids.size(); ++i) {
      const int pid = pool_->pids[i].load(std::memory_order_relaxed);
      if (pid <= 0) continue;
      out += "rapidrpc_worker_memory_bytes{worker=\"";
      append_decimal(out, static_cast<std::uint64_t>(i));
      out += "\"} ";
      append_decimal(out, own_memory(pid));
      out += '\n';
    }
    family(out, "rapidrpc_worker_processes_up", "gauge", "Worker processes alive and serving.");
    out += "rapidrpc_worker_processes_up ";
    append_decimal(out, up);
    out += '\n';
  }
  if (const std::int64_t up = pool_->hosts_up.load(std::memory_order_relaxed); up >= 0) {
    family(out, "rapidrpc_worker_hosts_up", "gauge",
           "Worker hosts connected and taking calls (--worker-listen).");
    out += "rapidrpc_worker_hosts_up ";
    append_decimal(out, up);
    out += '\n';
  }
  family(out, "rapidrpc_worker_restarts_total", "counter",
         "Worker processes (--isolate, --python, prefork) replaced, by cause.");
  for (std::size_t c = 0; c < restart_cause_count; ++c) {
    out += "rapidrpc_worker_restarts_total{cause=\"";
    out += restart_names[c];
    out += "\"} ";
    append_decimal(out, pool_->restarts[c].load(std::memory_order_relaxed));
    out += '\n';
  }

  family(out, "process_cpu_seconds_total", "counter",
         "Total user and system CPU time spent in seconds.");
  out += "process_cpu_seconds_total ";
  append_double(out, process.cpu_seconds);
  out += '\n';
  family(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  sample(out, "process_resident_memory_bytes", process.resident_bytes);
  family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
  sample(out, "process_virtual_memory_bytes", process.virtual_bytes);
  family(out, "process_open_fds", "gauge", "Number of open file descriptors.");
  sample(out, "process_open_fds", process.open_fds);
  family(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
  sample(out, "process_max_fds", process.max_fds);
  family(out, "process_start_time_seconds", "gauge",
         "Start time of the process since unix epoch in seconds.");
  out += "process_start_time_seconds ";
  append_double(out, process.start_time_seconds);
  out += '\n';
}

process_figures read_process_figures() {
  process_figures f;
  try {
    read_proc_self(f);
  } catch (const std::exception&) {
    // A /proc this process cannot read as expected: zeros, not an error
    // on the admin thread.
  }
  return f;
}

namespace {

void read_proc_self(process_figures& f) {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  {
    std::ifstream stat("/proc/self/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // The command name may hold spaces and parentheses: fields are counted
    // from the last ')'.
    if (auto close = text.rfind(')'); close != std::string::npos) {
      std::istringstream fields(text.substr(close + 2));
      std::string field;
      std::vector<std::string> v;
      while (fields >> field) v.push_back(field);
      // v[0] is field 3 (state): utime is field 14, stime 15, starttime 22,
      // vsize 23, rss 24.
      if (v.size() > 21) {
        f.cpu_seconds = (std::stod(v[11]) + std::stod(v[12])) / ticks;
        const double started_after_boot = std::stod(v[19]) / ticks;
        f.virtual_bytes = std::stoull(v[20]);
        f.resident_bytes = static_cast<std::uint64_t>(std::stod(v[21]) * page);
        std::ifstream proc_stat("/proc/stat");
        std::string key;
        double boot = 0;
        while (proc_stat >> key) {
          if (key == "btime") {
            proc_stat >> boot;
            break;
          }
        }
        f.start_time_seconds = boot + started_after_boot;
      }
    }
  }
  if (DIR* d = ::opendir("/proc/self/fd")) {
    std::uint64_t n = 0;
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    f.open_fds = n > 0 ? n - 1 : 0;  // less the directory's own descriptor
  }
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0) f.max_fds = nofile.rlim_cur;
}

}  // namespace

}  // namespace rapidrpc::detail::metrics
