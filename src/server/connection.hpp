// Private: one HTTP connection on one loop thread.
//
// Its life: owned by the handlers that refer to it (a pending socket wait, a
// call in flight); when none is left it is destroyed. The loop keeps a
// non-owning list for timeouts and draining. Every member function runs on
// the loop thread.
#pragma once

#include "access/access.hpp"
#include "access/access_log.hpp"
#include "http/request_reader.hpp"
#include "http/response.hpp"
#include "registry/caller_watch.hpp"
#include "rpc/exchange.hpp"
#include "server/byte_buffer.hpp"
#include "server/loop.hpp"
#include "server/relay.hpp"
#include "server/socket_read.hpp"

#include <rapidrpc/registry.hpp>

#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace rapidrpc::detail {

namespace tls {
class session;
}

class connection final : public std::enable_shared_from_this<connection>,
                         private http::header_hook,
                         public rpc::reply_sink,
                         public relay_sink,
                         private caller_watch {
 public:
  using clock = std::chrono::steady_clock;

  connection(loop& owner, loop_socket socket, const boost::asio::ip::tcp::endpoint& peer);
  ~connection();

  /// Starts serving (after construction, from the loop thread).
  void start();
  /// Closes the socket; pending work is dropped as it completes.
  void close();
  /// Closes the connection if it has been stuck past its deadline.
  void check_deadline(clock::time_point now);
  /// Draining (called until the connection is gone): closes an idle
  /// connection once it has been quiet for drain_quiet, so that a request
  /// the client sent as the drain began is answered rather than cut off;
  /// a request in progress is answered with "Connection: close".
  void drain(clock::time_point now);
  /// What holds the connection open, for the log line of a drain that
  /// reached its deadline: the peer and "in a call", "sending its reply",
  /// or "mid-request" with the bytes buffered, what of a body of announced
  /// length is still to come, and whether its client has finished sending.
  std::string state_text() const;
  /// How long an idle connection must have been quiet before a drain closes it.
  static constexpr std::chrono::milliseconds drain_quiet{250};
  /// Parks the connection if it has been idle for park_after: gives back its
  /// input block and frees what past requests left (request, reply and
  /// output strings), and waits for its next request with a bare readiness
  /// wait, which needs no buffer (docs/design.md, "Lifetimes").
  void park(clock::time_point now);
  /// The size of what a connection holds while it serves requests (its
  /// loop's serving_slots()).
  static std::size_t serving_bytes() noexcept;
  /// How long a connection must have been idle before park() parks it. A
  /// busy keep-alive connection keeps its block and its read wait: a bare
  /// wait would cost an epoll_ctl per request.
  static constexpr std::chrono::milliseconds park_after{1000};

 private:
  enum class phase : std::uint8_t { idle, request, call, write };

  void drive();
  void process_requests();
  void handle_request(bool keep_alive);
  void on_reply(const rpc::reply& r) override;
  void watch(std::weak_ptr<boost::asio::cancellation_signal> call) override;
  void watch_caller();
  void on_watch(const boost::system::error_code& ec);
  void relay_request();
  void on_relayed(http::response* r, relay_failure why) override;
  void write_response(const rpc::reply& r);
  bool send_in_place(const http::response_head& head);
  void write_api_page(const api_page& page, bool head_only);
  void http_error(int status, bool close, std::string_view extra = {});
  int on_header(const http::request& r) override;
  void log_response(int status, std::int32_t fault, std::size_t response_bytes,
                    std::string_view method = {});
  bool read_some();
  bool read_tls();
  std::size_t read_size();
  bool flush();
  void wait_readable();
  void on_read(const boost::system::error_code& ec, std::size_t n, read_left left);
  void read_left_over(const socket_read& r, std::size_t asked);
  void wait_writable();
  void wait_parked();
  void release_idle_memory();
  void set_phase(phase p, clock::time_point now);

  loop& loop_;
  loop_socket socket_;
  int fd_;
  std::unique_ptr<tls::session> tls_;  // HTTPS: the TLS session on fd_

  byte_buffer in_;
  std::string out_;
  std::size_t out_sent_ = 0;

  // What serving a request takes: made for the first request after the
  // connection opened or was parked, in a slot of its loop's
  // serving_slots(), and given back when it parks (an idle connection is
  // kept small).
  struct serving {
    serving(loop& owner, http::header_hook* hook, const call_peer* peer, caller_watch* caller);
    http::request_reader reader;
    rpc::exchange exchange;  // the request's call, from its body to the reply's
    call_context context;    // the calls' view of the connection
    watched_calls watched;   // its coroutine calls, cancelled if the client goes
    std::string scratch;     // gzip in or out
    access_entry log_entry;  // the access log's view of the request (only with a log)
  };
  struct give_back_serving {
    slot_pool* slots;
    void operator()(serving* s) const noexcept;
  };
  std::unique_ptr<serving, give_back_serving> serving_;
  serving& serve();
  http::request_reader& reader() { return serve().reader; }
  rpc::exchange& exchange() { return serve().exchange; }
  bool in_request() const noexcept { return serving_ && serving_->reader.in_request(); }
  // Bytes of a request are here: one begun in the reader, or read and not
  // yet parsed.
  bool request_begun() const noexcept { return in_request() || !in_.empty(); }
  std::shared_ptr<relay_channel>
      relay_;  // server_options::relay.socket: this client's Unix connection

  clock::time_point deadline_{};
  clock::time_point idle_since_{};  // when it last became idle
  std::uint64_t answered_ = 0;      // requests handled so far
  std::size_t last_read_size_ = 0;
  phase phase_ = phase::idle;
  // (The flags together: a parked connection is kept small.)
  // The request whose call is in flight.
  bool keep_alive_ = true;
  bool http10_ = false;
  bool gzip_reply_ = false;
  bool can_read_ = false;       // the socket may have unread bytes
  bool drained_ = false;        // the last read returned bytes and drained the socket
  bool resume_posted_ = false;  // a drive() is queued on the loop (fairness)
  bool wait_read_ = false;      // an async_wait for reading is pending
  bool wait_write_ = false;     // an async_wait for writing is pending
  bool busy_ = false;           // a call is in flight
  bool closing_ = false;        // close once the output is written
  bool eof_ = false;            // the peer has finished sending
  bool closed_ = false;
  bool in_drive_ = false;
  bool parking_ = false;               // the read wait is being cancelled, to park
  bool parked_ = false;                // waiting with a bare readiness wait, no input block
  bool tls_read_wants_write_ = false;  // a TLS read waits for the socket to be writable
  bool tls_write_wants_read_ = false;  // a TLS write waits for the socket to be readable

  // Who is calling (access.hpp), as calls see it in their context.
  call_peer peer_;
  peer_access access_;
  std::string peer_text_;  // the access log's name for the peer (only with a log)
};

}  // namespace rapidrpc::detail
