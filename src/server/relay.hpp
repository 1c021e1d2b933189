// Private: the relay (server_options::relay; docs/design.md, "The relay").
// Each client connection that has a request to relay gets a relay_channel:
// one Unix stream connection to the program behind, opened for the
// client's first request, kept for its next ones while the program keeps
// it (connection affinity), and closed with the client connection.
//
// Threading: a channel lives on its client connection's loop thread; every
// member function runs there, all its I/O is asynchronous on that loop.
#pragma once

#include "http/request_parser.hpp"
#include "http/response_reader.hpp"
#include "log/log.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include <sys/types.h>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rapidrpc::detail {

/// Where and how requests are relayed (from server_options).
struct relay_target {
  std::string socket;  ///< the Unix socket's path; empty: no relay
  /// The process never killed after a timeout (0: none).
  pid_t keep_pid = 0;
  /// How long a relayed request may take once written (0: no limit).
  std::chrono::milliseconds timeout{0};
  logger lines;  ///< where the relay says what went wrong
};

/// How a relayed request ended when it brought no response.
enum class relay_failure : std::uint8_t {
  none,         ///< a response came
  unreachable,  ///< the socket could not be connected (503)
  broken,       ///< the connection ended before a whole response (502)
  timed_out,    ///< past relay_target::timeout (the caller answers a fault)
};

/// Receives the outcome of relay_channel::send().
class relay_sink {
 public:
  /// Called once per send(), on the loop thread, never from within send():
  /// the response (valid during the call) or, with it null, the failure.
  virtual void on_relayed(http::response* r, relay_failure why) = 0;

 protected:
  ~relay_sink() = default;
};

/// The PROXY protocol v1 line for a client at `client` connected to
/// `local` (TCP4 or TCP6, as the addresses are; an IPv4-mapped IPv6
/// address stays IPv6, as the kernel reports it).
std::string proxy_line(const boost::asio::ip::tcp::endpoint& client,
                       const boost::asio::ip::tcp::endpoint& local);

/// The request to write to the program: `req`'s head as received (its
/// `head`) and its body; a chunked body de-chunked and sent with a
/// Content-Length field in place of Transfer-Encoding, which is dropped.
void write_relayed_request(std::string& out, const http::request& req);

/// The response to write to the client: status and reason and every field
/// as the program wrote them except Connection, Keep-Alive and
/// Transfer-Encoding (the server's own decision: `keep_alive`, `http10`),
/// with a Content-Length when the program framed the body otherwise.
void write_relayed_response(std::string& out, const http::response& r, bool keep_alive,
                            bool http10);

/// One client connection's Unix connection to the program behind.
class relay_channel final : public std::enable_shared_from_this<relay_channel> {
 public:
  /// `proxy` is the PROXY line sent first on each new Unix connection.
  relay_channel(boost::asio::io_context& io, const relay_target& target, std::string proxy);

  /// Relays one request (its bytes: write_relayed_request()), a HEAD one
  /// if `to_head`; the outcome goes to `sink`, which is held until then.
  /// With `last`, the Unix connection's sending side is shut down once the
  /// bytes are written: the program reads the end of its stream after
  /// them (a request the client cut short, still answered if it can be).
  void send(std::string request, bool to_head, std::shared_ptr<relay_sink> sink, bool last = false);

  /// Closes the Unix connection (the client connection has ended): a
  /// request in flight is dropped, its sink released.
  void close();

 private:
  void connect();
  void write();
  void read();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void take_input();
  void on_timeout();
  void finish(http::response* r, relay_failure why);
  void drop_connection();

  boost::asio::io_context& io_;
  const relay_target& target_;
  std::string proxy_;
  boost::asio::local::stream_protocol::socket socket_;
  boost::asio::steady_timer timer_;  // the request's timeout
  boost::asio::steady_timer retry_;  // connecting again while the backlog is full
  std::string out_;                  // the bytes being written
  std::string in_;                   // received, not yet consumed
  std::size_t in_used_ = 0;
  http::response_reader reader_;
  std::shared_ptr<relay_sink> sink_;  // while a request is in flight
  std::uint64_t seq_ = 0;             // which request a timer's or retry's handler belongs to
  std::uint64_t generation_ = 0;  // which Unix connection a read's or write's handler belongs to
  pid_t pid_ = 0;                 // the process serving this Unix connection (0: not said yet)
  bool pid_read_ = false;
  bool writing_ = false;  // a write is pending on the Unix connection
  bool reading_ = false;  // a read is pending on the Unix connection
  bool last_ = false;     // send()'s `last`: shut the sending side down after out_
  bool closed_ = false;
};

}  // namespace rapidrpc::detail
