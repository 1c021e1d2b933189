#include "server/connection.hpp"

#include "http/gzip.hpp"
#include "http/response.hpp"
#include "server/socket_read.hpp"
#include "server/tls.hpp"
#include "server/watchdog.hpp"

#include <rapidrpc/fault.hpp>

#include <boost/asio/post.hpp>
#include <boost/beast/http/error.hpp>

#include <sys/socket.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

namespace rapidrpc::detail {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

namespace {
constexpr std::size_t read_chunk = 16 * 1024;
constexpr std::size_t max_read_chunk = 1024 * 1024;
// Buffers larger than this are freed once a large request is done with.
constexpr std::size_t keep_buffer_bytes = 64 * 1024;
// Room for a reply's head (status line, Server, Date, Content-Type, ...).
constexpr std::size_t reply_head_bytes = 512;
// Output storage larger than this is freed once sent, not kept for the loop.
constexpr std::size_t max_spare_output = 256 * 1024;
// Stop parsing further pipelined requests while this much output is unsent.
constexpr std::size_t output_high_water = 1024 * 1024;

// A connection keeps no string storage between requests: while it writes
// a reply or reads a body, it borrows its loop's spare storage, and gives
// it back once done (or frees its own). So idle connections hold none, and
// a keep-alive request allocates none.
//
// (Moves, not swaps: a move hands over the pointer, a swap also copies the
// strings' inline buffers.)
const std::size_t inline_capacity = std::string().capacity();

// Lends `spare`'s storage to `s` (empty, with none of its own).
void borrow(std::string& s, std::string& spare) noexcept {
  if (s.empty() && s.capacity() == inline_capacity && spare.capacity() > inline_capacity) {
    s = std::move(spare);
    spare.clear();
  }
}
// Takes back the storage of `s` (its content done with) into `spare` if
// that has none and it is no larger than `keep`; else frees it.
void give_back(std::string& s, std::string& spare, std::size_t keep) noexcept {
  s.clear();
  if (s.capacity() == inline_capacity) return;
  if (spare.capacity() == inline_capacity && s.capacity() <= keep) {
    spare = std::move(s);
    s.clear();
  } else {
    std::string().swap(s);
  }
}

// Whether a request on a path serving both protocols is JSON-RPC: its
// Content-Type says so, or it has no XML Content-Type and its body starts
// like a JSON object or array.
bool is_json(http::media type, std::string_view body) {
  if (type == http::media::json) return true;
  if (type == http::media::xml) return false;
  for (char c : body) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// ADDRESS:PORT, an IPv6 address in brackets.
std::string peer_name(const call_peer& peer) {
  const auto& a = peer.address;
  std::string text = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
  return text + ':' + std::to_string(peer.port);
}

}  // namespace

connection::connection(loop& owner, loop_socket socket, const net::ip::tcp::endpoint& peer)
    : loop_(owner),
      socket_(std::move(socket)),
      fd_(socket_.native_handle()),
      in_(&owner.blocks()),
      peer_{peer.address(), peer.port(), {}} {
  if (const auto* access = owner.shared().access) access_.allowed = access->allowed(peer_.address);
  if (owner.log() != nullptr) peer_text_ = peer_name(peer_);
  loop_.attach(this);
  ++loop_.shared().connections;
  loop_.stats().connection_opened();
}

connection::serving::serving(loop& owner, http::header_hook* hook, const call_peer* peer,
                             caller_watch* caller)
    : reader(owner.shared().limits.max_header_bytes, owner.shared().limits.max_body_bytes,
             owner.shared().limits.max_request_line_bytes, owner.shared().limits.max_header_fields,
             owner.shared().access != nullptr ? hook : nullptr),
      exchange(*owner.shared().methods, owner.shared().limits),
      context(owner.context()) {
  context.peer = peer;
  context.caller = caller;
  if (!owner.shared().relay.socket.empty()) reader.keep_head(true);
  exchange.share_parsers(owner.parsers());
  if (const auto* store = owner.shared().metrics) exchange.count_into(*store, owner.stats());
}

std::size_t connection::serving_bytes() noexcept { return sizeof(serving); }

void connection::give_back_serving::operator()(serving* s) const noexcept {
  s->~serving();
  slots->give(s);
}

connection::serving& connection::serve() {
  if (serving_) return *serving_;
  slot_pool& slots = loop_.serving_slots();
  void* p = slots.take();
  try {
    serving_ = {new (p) serving(loop_, static_cast<http::header_hook*>(this), &peer_,
                                static_cast<caller_watch*>(this)),
                {&slots}};
  } catch (...) {
    slots.give(p);
    throw;
  }
  return *serving_;
}

connection::~connection() {
  if (relay_) relay_->close();
  loop_.stats().connection_closed();
  loop_.detach(this);
  --loop_.shared().connections;
}

void connection::start() {
  boost::system::error_code ec;
  socket_.set_option(net::ip::tcp::no_delay(true), ec);
  socket_.non_blocking(true, ec);
  if (const tls::context* ctx = loop_.shared().tls) {
    tls_ = std::make_unique<tls::session>(ctx->native(), fd_);
    // The handshake belongs to the first request: both must be done within
    // the request timeout.
    set_phase(phase::request, clock::now());
  } else {
    set_phase(phase::idle, clock::now());
  }
  drive();
}

void connection::close() {
  if (closed_) return;
  closed_ = true;
  if (relay_) relay_->close();     // the program's handler sees the end of its stream
  if (tls_) tls_->close_notify();  // best effort, never waits
  boost::system::error_code ec;
  socket_.close(ec);                       // pending waits complete with operation_aborted
  if (serving_) serving_->watched.gone();  // no one will read their replies
}

void connection::set_phase(phase p, clock::time_point now) {
  if (p == phase_ && p != phase::idle) return;  // a request's deadline runs from its first byte
  phase_ = p;
  const auto& lim = loop_.shared().limits;
  switch (p) {
    case phase::idle:
      idle_since_ = now;
      deadline_ = now + lim.idle_timeout;
      break;
    case phase::request:
      deadline_ = now + lim.request_timeout;
      break;
    case phase::write:
      deadline_ = now + lim.write_timeout;
      break;
    case phase::call:
      deadline_ = clock::time_point::max();
      break;
  }
}

void connection::check_deadline(clock::time_point now) {
  if (closed_ || now < deadline_) return;
  if (phase_ == phase::request && !wait_write_ && out_sent_ == out_.size() &&
      (!tls_ || tls_->established())) {
    // Tell the client why, if it is still listening; then close.
    out_.clear();
    out_sent_ = 0;
    http_error(408, true);
    flush();
  }
  close();
}

void connection::drain(clock::time_point now) {
  if (closed_) return;
  if (!busy_ && !request_begun() && out_sent_ == out_.size()) {
    // A keep-alive client may have sent its next request just now: closing
    // would cut it off (the client sees a reset, and cannot know whether the
    // call ran). Its request is answered with "Connection: close" instead;
    // a connection quiet for drain_quiet is closed.
    if (phase_ == phase::idle && now - idle_since_ < drain_quiet) return;
    close();
    return;
  }
  // A request in progress is still answered, with "Connection: close"
  // (handle_request() sees the loop draining).
  if (busy_) keep_alive_ = false;
}

std::string connection::state_text() const {
  std::string text = peer_name(peer_);
  if (busy_) return text + " in a call";
  if (out_sent_ != out_.size())
    return text + " sending its reply (" + std::to_string(out_.size() - out_sent_) + " bytes left)";
  if (request_begun()) {
    // What is buffered is what the reader has not taken yet: a body it
    // reads is counted by what is still to come.
    text += " mid-request (" + std::to_string(in_.size()) + " bytes buffered";
    if (auto remaining = in_request() ? serving_->reader.body_remaining() : std::nullopt)
      text += ", " + std::to_string(*remaining) + " bytes of its body still to come";
    return text + (eof_ ? ", its client done sending)" : ")");
  }
  return text + " idle";
}

void connection::park(clock::time_point now) {
  if (closed_ || parked_ || parking_ || phase_ != phase::idle || now - idle_since_ < park_after)
    return;
  if (busy_ || in_drive_ || resume_posted_ || wait_write_ || !wait_read_ || closing_ || eof_ ||
      request_begun() || out_sent_ != out_.size())
    return;
  // A TLS session parks with nothing buffered (no record begun), and not
  // while a read of OpenSSL's waits for the socket to be writable.
  if (tls_ && (tls_read_wants_write_ || !tls_->holds_nothing())) return;
  // The pending read refers to in_'s block (with TLS, the session's
  // buffer): it must end first. It completes with operation_aborted
  // (on_read() then parks), or has already read a request, which is
  // served as usual.
  parking_ = true;
  boost::system::error_code ec;
  socket_.cancel(ec);
  if (ec) parking_ = false;
}

void connection::release_idle_memory() {
  in_.shrink(0);
  std::string().swap(out_);
  out_sent_ = 0;
  serving_.reset();
  if (tls_) tls_->release_buffers();
  loop_.idle_memory_freed();
}

// A parked connection's wait: readiness only, with no buffer; its next
// request is read into a fresh block (the epoll_ctl this wait costs is paid
// once per parking, not per request).
void connection::wait_parked() {
  wait_read_ = true;
  socket_.async_wait(net::socket_base::wait_read,
                     [self = shared_from_this()](const boost::system::error_code& ec) {
                       self->wait_read_ = false;
                       self->parked_ = false;
                       if (self->closed_) return;
                       if (ec) return self->close();
                       self->can_read_ = true;
                       self->drive();
                     });
}

// ---- the connection's state machine ------------------------------------------

// Reads, parses and answers as much as can be done now, then waits for the
// socket or for a call to complete. Everything that moves the connection on
// comes back here.
void connection::drive() {
  if (in_drive_ || closed_ || resume_posted_) return;
  in_drive_ = true;
  const std::uint64_t answered_before = answered_;
  bool yield = false;
  for (;;) {
    process_requests();
    if (!flush() || closed_) break;        // waiting for the peer to read
    if (busy_ || closing_ || eof_) break;  // nothing more to read for now
    // Once a read has drained the socket the reactor waits for epoll's
    // next report (drained_read.hpp). The kernel's count of what a read
    // left says whether the end of the stream came with its bytes
    // (socket_read.hpp); a reset that came with them is in no count, and
    // without a count neither is the end: either is not reported again.
    // So mid-request, where a close must end the request now, not at its
    // timeout, a drained socket is read once more first: nothing, more
    // bytes, the end or the reset. (Between requests the reply's send
    // meets a reset, and the parking's readiness wait finds an end no
    // count gave, within two seconds.)
    if (!can_read_ && !(drained_ && request_begun())) break;
    // Fairness: once this turn has answered a request, the next one waits
    // for the other connections' turns. Reads that fill the buffer (large
    // bodies read to the byte) would otherwise keep one fast client on the
    // loop while the others starve.
    if (answered_ != answered_before) {
      yield = true;
      break;
    }
    // The end of the stream goes round once more: a request it cut short
    // is ended there (process_requests()).
    if (!read_some() && !eof_) break;
  }
  in_drive_ = false;
  if (closed_ || wait_write_) return;
  if (yield) {
    // The socket may hold more: edge-triggered readiness will not say so
    // again, so come back after the handlers already queued.
    resume_posted_ = true;
    net::post(loop_.io(), [self = shared_from_this()] {
      self->resume_posted_ = false;
      self->drive();
    });
    return;
  }

  auto now = clock::now();
  if (busy_) {
    set_phase(phase::call, now);
    return;  // finish_call() drives on
  }
  if (closing_ || eof_) {
    close();
    return;
  }
  // With TLS, the handshake and the first request share the request
  // timeout: a client that completes the handshake and then says nothing is
  // not idle yet.
  bool mid_request = request_begun() || (tls_ && (!tls_->established() || answered_ == 0));
  set_phase(mid_request ? phase::request : phase::idle, now);
  in_.shrink(keep_buffer_bytes);
  if (!wait_read_) wait_readable();
}

// One read into the input buffer. False if nothing was read (would block,
// end of stream, or error).
bool connection::read_some() {
  if (tls_) return read_tls();
  std::size_t want = read_size();
  const socket_read r = read_socket(fd_, in_.prepare(want), want);
  const ssize_t n = r.n;
  if (n > 0) {
    in_.commit(static_cast<std::size_t>(n));
    loop_.stats().received(static_cast<std::size_t>(n));
    read_left_over(r, want);
    return true;
  }
  can_read_ = false;
  drained_ = false;
  if (n == 0) {
    eof_ = true;
  } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    close();
  } else if (errno == EINTR) {
    can_read_ = true;
  }
  return false;
}

// After a read of `asked` bytes that returned some: once it drained the
// socket, with edge-triggered readiness the next arrival wakes the loop
// again, so no read is wasted on EAGAIN (socket_read.hpp).
void connection::read_left_over(const socket_read& r, std::size_t asked) {
  can_read_ = !r.drained(asked);
  drained_ = !can_read_;
}

// read_some() with TLS: OpenSSL reads the socket (and runs the handshake
// within the first reads). It may need to write first (the handshake's
// answer into a full socket): the next readiness wait is then for writing.
bool connection::read_tls() {
  std::size_t want = read_size();
  std::size_t n = 0;
  can_read_ = drained_ = false;
  switch (tls_->read(in_.prepare(want), want, n)) {
    case tls::session::status::ok:
      in_.commit(n);
      loop_.stats().received(n);
      // OpenSSL may hold decrypted or read-ahead bytes: read on until the
      // socket is known to be drained.
      can_read_ = !tls_->drained();
      drained_ = !can_read_;
      return true;
    case tls::session::status::want_read:
      break;
    case tls::session::status::want_write:
      tls_read_wants_write_ = true;
      break;
    case tls::session::status::eof:
      eof_ = true;
      break;
    case tls::session::status::failed:
      close();
      break;  // a failed handshake ends here
  }
  return false;
}

void connection::process_requests() {
  while (!busy_ && !closing_ && !closed_ && !in_.empty() &&
         out_.size() - out_sent_ < output_high_water) {
    std::size_t used = 0;
    serving& sv = serve();  // the same for the whole request
    http::request_reader& rd = sv.reader;
    if (!rd.in_request()) borrow(rd.current().body, loop_.spare_body());
    auto r = rd.parse(std::string_view(in_.data(), in_.size()), used);
    in_.consume(used);
    if (r == http::request_reader::result::error) {
      // A framing error, or a request refused from its header (whose body
      // is not read): the rest of the stream cannot be trusted.
      int status = rd.error_status();
      http_error(status, true, status == 401 ? auth_challenge : std::string_view{});
      break;
    }
    if (r == http::request_reader::result::need_more) {
      // The client may be holding the body back until it hears from us.
      if (rd.take_continue()) {
        borrow(out_, loop_.spare_output());
        out_ += "HTTP/1.1 100 Continue\r\n\r\n";
      }
      break;
    }
    handle_request(rd.keep_alive());
    rd.next();
    // The body has been decoded (its call runs on what was read from it).
    const bool large =
        std::max(rd.current().body.capacity(), sv.scratch.capacity()) >= large_buffer_bytes;
    give_back(rd.current().body, loop_.spare_body(), keep_buffer_bytes);
    if (sv.scratch.capacity() > keep_buffer_bytes) std::string().swap(sv.scratch);
    if (large) loop_.large_buffer_freed();
  }
  if (eof_ && in_request() && !busy_ && !closing_) {
    // The peer ended the stream inside a request: nothing can be answered,
    // except by a program behind the relay, which reads the stream itself.
    // A request with its whole head and part of a Content-Length body goes
    // to it as it came, then the end of the stream (as the program's own
    // server would have seen it); its answer goes to the client, if still
    // there.
    if (!loop_.shared().relay.socket.empty() && reader().body_remaining()) handle_request(false);
    reader().next();
    closing_ = true;
  }
}

void connection::handle_request(bool keep_alive) {
  ++answered_;
  const auto& shared = loop_.shared();
  const http::request& req = reader().current();
  set_phase(phase::call, clock::time_point{});  // no deadline while the call runs
  if (loop_.log() != nullptr) serve().log_entry.begin(req.body.size());
  keep_alive_ = keep_alive && !loop_.draining() && !shared.close_after_response;
  http10_ = req.version == 10;
  if (!shared.relay.socket.empty()) return relay_request();

  const std::string_view path = http::target_path(req.target);
  bool known = false;
  bool json_only = false;
  for (const auto& p : shared.paths) known = known || p == path || p == "*";
  if (!known) {
    for (const auto& p : shared.json_paths) json_only = json_only || p == path;
    if (!json_only) return http_error(404, !keep_alive_);
  }
  if (req.method != bhttp::verb::post) {
    // A browser opening the URL gets the API page (server_options::http.api_page).
    const bool head = req.method == bhttp::verb::head;
    if ((head || req.method == bhttp::verb::get) && req.accepts_html)
      if (auto page = shared.page.get()) return write_api_page(*page, head);
    return http_error(405, !keep_alive_, "Allow: POST\r\n");
  }
  if (req.bad_expect) return http_error(417, !keep_alive_);
  if (req.unsupported_encoding) return http_error(415, !keep_alive_);

  std::string_view document = req.body;
  if (req.gzip_body) {
    switch (http::gunzip(req.body, serve().scratch, shared.limits.max_body_bytes)) {
      case http::inflate_result::ok:
        break;
      case http::inflate_result::too_large:
        return http_error(413, true);
      case http::inflate_result::corrupt:
        return http_error(400, !keep_alive_);
    }
    document = serve().scratch;
  }
  gzip_reply_ = req.accepts_gzip && shared.gzip_min_bytes != 0;

  const auto protocol = json_only || (shared.jsonrpc && is_json(req.content_type, document))
                            ? rpc::protocol::jsonrpc
                            : rpc::protocol::xmlrpc;
  busy_ = true;
  if (shared.process_mode) watchdog::watch(fd_, shared.server_name, &exchange());
  exchange().start(protocol, document, serve().context, shared_from_this());
}

// server_options::relay.socket: the request goes to the program behind as it came
// (docs/design.md, "The relay"), on this client's Unix connection.
void connection::relay_request() {
  const http::request& req = reader().current();
  if (!relay_) {
    boost::system::error_code ec;
    const auto local = socket_.local_endpoint(ec);
    relay_ = std::make_shared<relay_channel>(
        loop_.io(), loop_.shared().relay,
        proxy_line(net::ip::tcp::endpoint(peer_.address, peer_.port), local));
  }
  std::string bytes;
  write_relayed_request(bytes, req);
  busy_ = true;
  // Still in the request: the stream ended inside its body
  // (process_requests()), and nothing follows it.
  const bool last = reader().in_request();
  relay_->send(std::move(bytes), req.method == bhttp::verb::head, shared_from_this(), last);
}

void connection::on_relayed(http::response* r, relay_failure why) {
  busy_ = false;
  if (closed_) return;
  switch (why) {
    case relay_failure::none:
      borrow(out_, loop_.spare_output());
      write_relayed_response(out_, *r, keep_alive_, http10_);
      if (!keep_alive_) closing_ = true;
      log_response(r->status, 0, r->bodyless ? 0 : r->body.size());
      break;
    case relay_failure::unreachable:
      http_error(503, !keep_alive_);
      break;
    case relay_failure::broken:
      http_error(502, true);
      break;
    case relay_failure::timed_out: {
      // The fault the worker pool answers a call past its timeout with.
      std::string body;
      http::response_head head;
      head.content_type = exchange().timeout_reply(body);
      head.content_length = body.size();
      head.keep_alive = keep_alive_;
      head.http10 = http10_;
      borrow(out_, loop_.spare_output());
      http::write_head(out_, loop_.shared().server_name, head);
      out_ += body;
      if (!keep_alive_) closing_ = true;
      log_response(head.status, fault_code::timeout, body.size());
      break;
    }
  }
  drive();
}

// The reply to the request's call, on the loop thread: synchronously from
// handle_request() for inline methods and requests answered without a call,
// later for pool and async ones.
void connection::on_reply(const rpc::reply& r) {
  busy_ = false;
  if (closed_) return;
  write_response(r);
  drive();  // (nothing to do when called from within drive())
}

// A coroutine call has started (spawn_coroutine): it is cancelled if the
// client goes before the reply, which a wait for its next bytes tells.
void connection::watch(std::weak_ptr<net::cancellation_signal> call) {
  serve().watched.add(std::move(call));
  if (!wait_read_ && !closed_) watch_caller();
}

// While a coroutine call runs: the end of the client's stream (or a reset)
// before the reply means that it gave up, and its calls are cancelled and
// the connection closed, as nginx takes a client's close during a request.
// Bytes are its next request: it is there. (Over TLS a client's
// close_notify is bytes too: such a close is seen only once the call ends.)
// When the call is done the wait is the connection's next read wait, as
// wait_readable()'s.
void connection::watch_caller() {
  wait_read_ = true;
  socket_.async_wait(
      net::socket_base::wait_read,
      [self = shared_from_this()](const boost::system::error_code& ec) { self->on_watch(ec); });
}

void connection::on_watch(const boost::system::error_code& ec) {
  wait_read_ = false;
  if (closed_) return;
  if (parking_) {  // the call is long done: park() cancelled this wait
    parking_ = false;
    if (ec == net::error::operation_aborted) {
      release_idle_memory();
      parked_ = true;
      return wait_parked();
    }
  }
  if (ec) return close();
  if (busy_) {
    char byte = 0;
    const ssize_t n = ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      return close();
    if (n < 0 && serving_ && serving_->watched.any()) return watch_caller();  // not yet
  }
  can_read_ = true;
  drive();
}

void connection::write_response(const rpc::reply& r) {
  const auto& shared = loop_.shared();
  http::response_head head;
  head.keep_alive = keep_alive_;
  head.http10 = http10_;
  head.content_type = r.content_type;
  if (r.body.empty()) head.status = 204;  // JSON-RPC notifications only
  std::string_view payload = r.body;
  if (gzip_reply_ && payload.size() >= shared.gzip_min_bytes) {
    std::string& scratch = serve().scratch;
    scratch.clear();
    http::gzip(payload, scratch);
    payload = scratch;
    head.gzip = true;
  }
  head.content_length = payload.size();
  if (payload.size() >= large_buffer_bytes && payload.data() == r.body.data() &&
      out_sent_ == out_.size() && send_in_place(head)) {
    log_response(head.status, r.fault, payload.size(), exchange().method());
    return;
  }
  borrow(out_, loop_.spare_output());
  out_.reserve(out_.size() + reply_head_bytes + payload.size());  // at most one allocation
  http::write_head(out_, shared.server_name, head);
  out_ += payload;
  if (!keep_alive_) closing_ = true;
  log_response(head.status, r.fault, payload.size(), exchange().method());
}

// A large body goes out from the exchange's storage, where it was written:
// the head fills the room in front of it, and the storage becomes the
// output (the exchange gets the old output's storage), so the body is not
// copied behind a head. Only with all earlier output sent. False if the
// reply has no room for this head (it is then copied as any other).
bool connection::send_in_place(const http::response_head& head) {
  std::string* storage = exchange().reply_storage();
  if (storage == nullptr) return false;
  std::string text;
  http::write_head(text, loop_.shared().server_name, head);
  if (text.size() > rpc::exchange::head_room) return false;
  out_.swap(*storage);
  out_sent_ = rpc::exchange::head_room - text.size();
  std::memcpy(out_.data() + out_sent_, text.data(), text.size());
  if (!keep_alive_) closing_ = true;
  return true;
}

// The page made at start(), gzipped when the client takes gzip and the page
// is past gzip_min_bytes; HEAD gets the same head and no body.
void connection::write_api_page(const api_page& page, bool head_only) {
  const auto& shared = loop_.shared();
  const http::request& req = reader().current();
  http::response_head head;
  head.keep_alive = keep_alive_;
  head.http10 = http10_;
  head.content_type = "text/html; charset=utf-8";
  head.extra = page.headers;
  std::string_view payload = page.html;
  if (req.accepts_gzip && !page.gzipped.empty()) {
    payload = page.gzipped;
    head.gzip = true;
  }
  head.content_length = payload.size();
  borrow(out_, loop_.spare_output());
  http::write_head(out_, shared.server_name, head);
  if (!head_only) out_ += payload;
  if (!keep_alive_) closing_ = true;
  log_response(head.status, 0, head_only ? 0 : payload.size());
}

void connection::http_error(int status, bool close_after, std::string_view extra) {
  if (metrics::rejection why{}; metrics::rejection_for_status(status, why))
    loop_.stats().rejected(why);
  if (close_after) keep_alive_ = false;
  borrow(out_, loop_.spare_output());
  // A HEAD request's answer has no body, errors too: a body would be read
  // as the start of the next response.
  const bool head_only = reader().current().method == bhttp::verb::head;
  http::write_error(out_, loop_.shared().server_name, status, !close_after, http10_, extra,
                    head_only);
  if (close_after) closing_ = true;
  log_response(status, 0, http::reason(status).size() + 1);  // write_error's body
}

// One access-log line for the response just queued (nothing without a log).
void connection::log_response(int status, std::int32_t fault, std::size_t response_bytes,
                              std::string_view method) {
  if (access_log_buffer* log = loop_.log())
    log->add(
        serve().log_entry.finish(peer_text_, peer_.user, method, status, fault, response_bytes));
}

// The access checks, when a request's header is complete (before its body).
int connection::on_header(const http::request& r) {
  // Two Authorization headers are no credentials.
  std::string_view credentials = r.repeated_authorization ? std::string_view{} : r.authorization;
  int status = loop_.shared().access->check_header(access_, credentials);
  peer_.user = access_.user != nullptr ? std::string_view(*access_.user) : std::string_view{};
  return status;
}

// Writes what it can. False if the rest must wait for the socket (a wait is
// then pending) or the connection closed.
bool connection::flush() {
  while (out_sent_ < out_.size()) {
    if (tls_) {
      std::size_t sent = 0;
      auto status = tls_->write(out_.data() + out_sent_, out_.size() - out_sent_, sent);
      if (status == tls::session::status::ok) {
        out_sent_ += sent;
        loop_.stats().sent(sent);
        continue;
      }
      if (status != tls::session::status::want_write && status != tls::session::status::want_read) {
        close();
        return false;
      }
      tls_write_wants_read_ = status == tls::session::status::want_read;
      set_phase(phase::write, clock::now());
      if (!wait_write_) wait_writable();
      return false;
    }
    ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
    if (n > 0) {
      out_sent_ += static_cast<std::size_t>(n);
      loop_.stats().sent(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      set_phase(phase::write, clock::now());
      if (!wait_write_) wait_writable();
      return false;
    }
    close();  // the peer is gone
    return false;
  }
  if (!out_.empty()) {
    const bool large = out_.capacity() >= large_buffer_bytes;
    if (large) exchange().keep_storage(out_);  // send_in_place()'s, back for the next reply
    give_back(out_, loop_.spare_output(), max_spare_output);
    if (large) loop_.large_buffer_freed();
  }
  out_sent_ = 0;
  return true;
}

// Waits for input with a read, not a bare readiness wait: Asio re-arms the
// descriptor (an epoll_ctl call) for every bare wait, while a read queued
// after a short one (drained_read.hpp) waits without a syscall until epoll
// reports new data. So a keep-alive request costs one recv() and one send().
void connection::wait_readable() {
  wait_read_ = true;
  if (tls_) {
    if (tls_read_wants_write_) {
      socket_.async_wait(net::socket_base::wait_write,
                         [self = shared_from_this()](const boost::system::error_code& ec) {
                           self->wait_read_ = false;
                           self->tls_read_wants_write_ = false;
                           if (self->closed_) return;
                           if (ec) return self->close();
                           self->can_read_ = true;
                           self->drive();
                         });
      return;
    }
    // The same readiness read, of ciphertext, which OpenSSL then takes
    // before it reads the socket itself.
    loop_.reader().read(
        socket_, net::buffer(tls_->space(), tls::session::capacity()),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n,
                                    read_left left) { self->on_read(ec, n, left); });
    return;
  }
  std::size_t want = read_size();
  loop_.reader().read(
      socket_, net::buffer(in_.prepare(want), want),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n,
                                  read_left left) { self->on_read(ec, n, left); });
}

// The read wait_readable() queued has completed: `n` bytes of plaintext in
// in_, or of ciphertext for the TLS session.
void connection::on_read(const boost::system::error_code& ec, std::size_t n, read_left left) {
  wait_read_ = false;
  if (closed_) return;
  if (parking_) {
    parking_ = false;
    if (ec == net::error::operation_aborted) {
      release_idle_memory();
      parked_ = true;
      return wait_parked();
    }
  }
  if (ec == net::error::eof) {
    eof_ = true;
  } else if (ec) {
    return close();
  } else if (tls_) {
    tls_->received(n, left);
    can_read_ = true;
  } else {
    in_.commit(n);
    loop_.stats().received(n);
    read_left_over({static_cast<ssize_t>(n), left}, last_read_size_);
  }
  drive();
}

// 16 KiB holds any ordinary request; a large body is read in larger pieces.
std::size_t connection::read_size() {
  std::size_t want = read_chunk;
  if (auto remaining = serving_ ? serving_->reader.body_remaining() : std::nullopt)
    want =
        static_cast<std::size_t>(std::clamp<std::uint64_t>(*remaining, read_chunk, max_read_chunk));
  last_read_size_ = want;
  return want;
}

void connection::wait_writable() {
  wait_write_ = true;
  // (A TLS write may first need to read, never so without renegotiation;
  // it is handled all the same.)
  socket_.async_wait(
      tls_write_wants_read_ ? net::socket_base::wait_read : net::socket_base::wait_write,
      [self = shared_from_this()](const boost::system::error_code& ec) {
        self->wait_write_ = false;
        if (ec || self->closed_) return;
        self->drive();
      });
}

}  // namespace rapidrpc::detail
