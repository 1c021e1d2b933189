// How a server is set up: server_options, grouped by feature, and the one
// check of their combinations that server::start() and rapidrpcd both make.
#pragma once

#include <rapidrpc/access.hpp>
#include <rapidrpc/limits.hpp>
#include <rapidrpc/registry.hpp>
#include <rapidrpc/serving_mode.hpp>
#include <rapidrpc/tls_options.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc {

/// How much a line the server logs matters: syslog's levels (journald
/// reads them as "<3>", "<4>" and "<5>" before a line).
enum class log_level : std::uint8_t {
  error = 3,    ///< something failed: a worker died, a log cannot be written
  warning = 4,  ///< something was cut short or refused: a drain deadline, a handshake
  notice = 5,   ///< a normal but significant event: a worker host came or left
};

/// Where a server's own lines go (see log_options::lines).
using log_sink = std::function<void(log_level level, std::string_view text)>;

/// Where a server takes its HTTP connections (server_options::listen).
struct listen_options {
  /// Host name or address to listen on; a name is resolved and the server
  /// listens on each of its addresses ("localhost": 127.0.0.1 and ::1).
  std::string host = "localhost";
  /// TCP port; 0 picks a free one (see server::port()).
  std::uint16_t port = 6677;
  /// Listening TCP sockets to serve instead of binding `host` and `port`,
  /// as a parent process (or a service manager's socket activation) hands
  /// them over. The server serves duplicates of them: the caller keeps its
  /// own descriptors. start() throws std::invalid_argument for a
  /// descriptor that is not a listening TCP socket.
  std::vector<int> fds;
};

/// What the server answers over HTTP (server_options::http).
struct http_options {
  /// Request paths that serve XML-RPC, and JSON-RPC 2.0 when `jsonrpc` is
  /// on: a request is JSON-RPC if its Content-Type is application/json, or
  /// if it has no XML Content-Type and its body starts with '{' or '['.
  /// "*" stands for every path.
  std::vector<std::string> paths = {"/RPC2", "/"};
  /// Serve JSON-RPC 2.0 (docs/jsonrpc.md) on `paths` and `jsonrpc_paths`.
  bool jsonrpc = true;
  /// Request paths that serve JSON-RPC only, whatever the Content-Type.
  std::vector<std::string> jsonrpc_paths = {"/jsonrpc"};
  /// Responses at least this large are gzip-compressed when the client
  /// accepts gzip; 0 turns compression off.
  std::size_t gzip_min_bytes = 1024;
  /// The Server header's value.
  std::string server_name = "rapidrpc";
  /// A GET (or HEAD) on a request path from a browser, one whose Accept
  /// header lists text/html, gets an HTML page: every method with its
  /// signature and help (escaped: markup shows as text), and, with
  /// `jsonrpc`, a form that calls a method with JSON-RPC on that path. The
  /// page is made once, at start(), and loads nothing from elsewhere (its
  /// Content-Security-Policy allows only its own script and style and
  /// requests to its origin). Other GETs, and every GET when this is off,
  /// get 405. Access control applies to it as to calls.
  bool api_page = true;
};

/// How connections and methods are served (server_options::serving).
struct serving_options {
  /// The mode (serving_mode.hpp).
  serving_mode mode = serving_mode::async_pool;
  /// Event-loop threads of async-pool; 0 means one per core.
  unsigned threads = 0;
  /// Processes for the fork (most at once) and prefork (how many) modes;
  /// 0 means one per core.
  unsigned processes = 0;
  /// prefork: a worker that dies within a second of its start, again and
  /// again, is replaced ever later, so a crash loop does not eat the
  /// machine: at once the first time, then after `respawn_backoff` times
  /// 2^n for the n-th such death in a row (4x, 8x, ...), at most
  /// `respawn_backoff_max`. start() throws std::invalid_argument for a
  /// value other than these defaults in another mode.
  std::chrono::milliseconds respawn_backoff{100};
  std::chrono::milliseconds respawn_backoff_max{5000};
};

/// Where pool methods run (server_options::workers).
struct worker_options {
  /// Worker-pool threads (or worker processes with `isolate`); 0 means one
  /// per core (none with worker_hosts.listen set: see there).
  unsigned count = 0;
  /// async_pool only: run pool methods in `count` supervised worker
  /// processes instead of threads. A crash there fails that call with
  /// fault_code::internal_error and the worker is replaced; a call past its
  /// timeout gets fault_code::timeout and its worker is killed and replaced.
  /// start() throws std::invalid_argument for `isolate` in another mode.
  bool isolate = false;
  /// With `isolate` (and only with it; start() throws
  /// std::invalid_argument for one without the other): the command that
  /// starts one worker process. Its file descriptor 3 is a socket speaking
  /// the worker protocol (rapidrpc/worker.hpp); rapidrpc::serve_worker()
  /// implements the worker side. rapidrpcd passes itself with --worker.
  std::vector<std::string> command;
  /// With `isolate`: `command`, with "--warm-parent" appended, starts one
  /// process, the warm parent, which loads the methods' code once and then
  /// forks each worker process on request (the fork-server protocol,
  /// rapidrpc/worker.hpp): a worker starts in milliseconds and shares the
  /// parent's memory. rapidrpcd's Python worker program is one
  /// (rapidrpcd --python sets it). If the parent dies, its workers die with
  /// it and another parent starts.
  bool warm_parent = false;
  /// With `isolate`, recycling: a worker process past one of these limits
  /// is replaced between calls, one worker at a time. Its successor starts
  /// first, while it serves on; once the successor is ready, it takes no
  /// more calls and leaves after the one it has (end of stream), so no call
  /// waits for a worker to start and no fewer workers serve. It bounds what
  /// a leaking method can hold. Each replacement is counted by its cause
  /// (metrics: rapidrpc_worker_restarts_total) and said to log.lines.
  ///
  /// The calls a worker answers before it is replaced; 0: no limit.
  std::uint64_t max_requests = 0;
  /// Adds to each worker process's max_requests a number drawn from 0 to
  /// this, so that workers under even load are not replaced together.
  std::uint64_t max_requests_jitter = 0;
  /// How long a worker process serves before it is replaced, plus up to a
  /// tenth of it drawn for each process; zero: for ever.
  std::chrono::milliseconds max_lifetime{0};
  /// The memory a worker process may hold of its own (what it shares with
  /// no other process: Private_Clean and Private_Dirty of
  /// /proc/PID/smaps_rollup), read after a call, at most once a second;
  /// past it the worker is replaced. 0: no limit.
  std::uint64_t max_memory_bytes = 0;
  /// How long a pool call, a coroutine method's call (or a relayed
  /// request) may run when its method sets no timeout; zero means no limit.
  std::chrono::milliseconds method_timeout{0};
};

/// The relay to a program behind a Unix socket (server_options::relay).
struct relay_options {
  /// Relay every request to the program listening on this Unix stream
  /// socket instead of answering any itself (docs/design.md, "The relay"):
  /// the server keeps the connections, their framing, limits, TLS and
  /// access control; the program answers each request as it came (any
  /// method, any path; http.paths, the API page, JSON-RPC and gzip do not
  /// apply). One Unix connection per client connection, opened for its
  /// first request and kept while the program keeps it; a PROXY protocol
  /// v1 line first, then the requests; the program says its pid first,
  /// then answers each request in turn. A program that cannot be reached
  /// is a 503, a connection that ends before a whole response a 502; a
  /// request past workers.method_timeout is answered with
  /// fault_code::timeout and the process that had it is killed (SIGUSR1,
  /// then SIGKILL 0.2 s later) unless it is `keep_pid`. Empty: off. Mode
  /// async-pool only, and not with workers.isolate, zmq, worker_hosts.listen
  /// or worker_hosts.connect: start() throws std::invalid_argument.
  std::string socket;
  /// With `socket`: the process never killed after a timeout (the
  /// program's own, whose children serve the requests); 0: none.
  int keep_pid = 0;
};

/// The JSON-RPC endpoint over ZeroMQ (server_options::zmq; docs/zmq.md).
struct zmq_options {
  /// ZeroMQ endpoints to serve JSON-RPC 2.0 on, besides HTTP:
  /// "tcp://127.0.0.1:5555", "tcp://127.0.0.1:*" (a free port; see
  /// zmq_endpoints()), "ipc:///run/app.sock". One ROUTER socket bound to
  /// all of them, on a thread of its own; same registry, same limits (a
  /// message past max_body_bytes drops its sender's connection). Modes
  /// async-pool and async only; not with access.users (ZeroMQ carries no
  /// credentials). start() throws std::invalid_argument for those, and
  /// std::runtime_error for an address that cannot be bound.
  std::vector<std::string> endpoints;
};

/// Worker hosts: a front and the servers that run its pool calls
/// (server_options::worker_hosts; docs/scale-out.md).
struct worker_host_options {
  /// Be the front of worker hosts: bind a ZeroMQ endpoint at each of these
  /// addresses ("tcp://10.0.0.1:7000", "tcp://127.0.0.1:*": see
  /// worker_endpoints()) where other servers connect with `connect`. Pool
  /// calls then go to the least loaded of the local workers and the hosts
  /// connected, by calls in flight over what each runs at once; with this
  /// set, workers.count = 0 means no local workers at all (not one per
  /// core). A host silent for 2 s is dropped: the calls it was running
  /// fail with fault_code::internal_error, those not sent yet wait for
  /// another. Mode async-pool only; start() throws std::invalid_argument
  /// for another, and std::runtime_error for an address that cannot be
  /// bound.
  std::vector<std::string> listen;
  /// Be a worker host: connect to the front at this ZeroMQ address (its
  /// `listen`), announce workers.count calls at once, and run the pool
  /// calls it sends with this server's methods and pool (threads, or
  /// processes with workers.isolate), connecting again by itself after a
  /// fault. The server serves its own listeners as well. Mode async-pool
  /// only, and not with `listen`; start() throws std::invalid_argument.
  std::string connect;
  /// CurveZMQ on the worker-host link: encryption, and authentication of
  /// worker hosts, for links that leave the machine. Keys are Z85 text, 40
  /// characters, as zmq_curve_keypair() makes them. With `secret_key`
  /// empty (the default) the link is plain ZeroMQ.
  struct curve_keys {
    /// This server's secret key (its public key is derived from it).
    std::string secret_key;
    /// A worker host's: the front's public key.
    std::string front_public_key;
    /// A front's: the public keys of the hosts allowed to connect; any other
    /// host is refused at its handshake. At least one.
    std::vector<std::string> host_public_keys;
  };
  /// start() throws std::invalid_argument for a key that is not Z85, for a
  /// front without host keys or a host without the front's key, and for a
  /// key where it would be ignored (a front's key on a front, hosts' keys on
  /// a host, public keys without a secret key).
  curve_keys curve;
};

/// Who may call (server_options::access; docs/access.md).
struct access_options {
  /// HTTP Basic authentication: user names and their password hashes
  /// (hash_password(), load_users()). When not empty, a request without
  /// valid credentials gets 401 with `WWW-Authenticate: Basic
  /// realm="rapidrpc"` and the connection is closed, decided from its
  /// header before any of its body is read. start() throws
  /// std::invalid_argument for a malformed entry.
  users_table users;
  /// Peers allowed to connect; when not empty, a request from any other
  /// address gets 403 and the connection is closed. IPv4-mapped IPv6 peers
  /// count as their IPv4 address. Over ZeroMQ tcp:// a message from another
  /// address gets error -32002 (ipc:// peers are local: the socket file's
  /// permissions decide).
  std::vector<ip_network> allow;
  /// Asked before every call, each system.multicall entry too (see
  /// rapidrpc::authorizer; the peer carries the authenticated user). Empty:
  /// no check. start() installs it with registry::set_authorizer().
  authorizer authorize;
};

/// What the server writes down (server_options::log).
struct log_options {
  /// The access log's path ("-": standard output); empty: no log. One line
  /// per answered request (docs/access.md has the format); start() throws
  /// std::system_error if it cannot be opened.
  std::string access_log;
  /// The access log's lines: access_log_format::text (fields separated by
  /// spaces) or access_log_format::json (one JSON object a line, for log
  /// shippers); docs/access.md has both.
  access_log_format format = access_log_format::text;
  /// Where the server's own lines go (not the access log's): a worker
  /// process replaced, a worker host come or gone, a drain deadline
  /// reached, an access log that cannot be written. `text` is one line,
  /// with no newline and no "rapidrpc: " before it. Called on the thread
  /// that saw the event (a loop, a worker pool's, the ZeroMQ endpoint's),
  /// from several at once (so it must be thread-safe), and in fork and
  /// prefork also in the supervisor process. Empty: each line goes to
  /// standard error as "rapidrpc: TEXT".
  log_sink lines;
};

/// Operations: metrics and the admin listener (server_options::admin;
/// docs/operations.md).
struct admin_options {
  /// The admin listener's address, "HOST:PORT" ("127.0.0.1:9100",
  /// "[::1]:9100", "localhost:0" for a free port; see admin_endpoints());
  /// empty: none. It serves GET /metrics (the Prometheus text format),
  /// /healthz (200 while the process serves) and /readyz (200 while the
  /// server takes calls; 503 before start() has finished, from stop() on,
  /// and while no worker process is up), on a thread of its own, never on
  /// the RPC port, and it answers until wait() returns. start() throws
  /// std::invalid_argument for an address it cannot read and
  /// std::system_error for one it cannot bind. Turns `metrics` on.
  std::string address;
  /// Listening TCP sockets to serve the admin listener on instead of
  /// binding `address`, as handed over by a parent process (a binary
  /// upgrade) or a service manager; the caller keeps its own descriptors.
  /// Turns `metrics` on. start() throws std::invalid_argument for a
  /// descriptor that is not a listening TCP socket.
  std::vector<int> listen_fds;
  /// Count calls, connections, rejections and bytes (docs/operations.md has
  /// the metrics), for the admin listener or write_metrics(). Each thread
  /// counts into memory of its own: no lock and no shared cache line per
  /// call.
  bool metrics = false;
};

/// How a server is set up, one group per feature. Every field has a
/// working default.
struct server_options {
  listen_options listen;
  http_options http;
  /// HTTPS when set (see tls_options); the request timeout also bounds the
  /// TLS handshake.
  tls_options tls;
  /// Limits and timeouts of requests and connections.
  rapidrpc::limits limits;
  serving_options serving;
  worker_options workers;
  relay_options relay;
  zmq_options zmq;
  worker_host_options worker_hosts;
  access_options access;
  log_options log;
  admin_options admin;
};

/// What a count of 0 means in the options (serving.threads, workers.count,
/// serving.processes): one per core. `n` itself when it is not 0; otherwise the
/// number of cores (std::thread::hardware_concurrency(), at least 1).
unsigned count_or_cores(unsigned n) noexcept;

/// How options_refusal() names an option in its sentence: given the field's
/// path ("workers.isolate", "worker_hosts.curve.secret_key"), the name its
/// reader knows.
/// Empty: the field's name. rapidrpcd passes its flags' names ("--isolate",
/// "--worker-curve-key").
using option_namer = std::function<std::string(std::string_view field)>;

/// The first combination of `options` that server::start() would not
/// honour, as one sentence naming the options with `name`, or std::nullopt
/// if there is none. start() throws it as std::invalid_argument, with the
/// fields' names, before it sets anything up; rapidrpcd says it and exits
/// with status 2. It checks the groups in turn, each its own combinations:
/// serving (the respawn back-off), workers (isolate, command,
/// max_requests), relay, worker_hosts (listen, connect, curve: the keys are
/// Z85), zmq and admin (HOST:PORT). It reads only `options`: whether a handed-over descriptor is
/// a listening socket, or a file can be read, start() finds out.
std::optional<std::string> options_refusal(const server_options& options,
                                           const option_namer& name = {});

}  // namespace rapidrpc
