// Private: the admin listener (server_options::admin): GET /metrics,
// /healthz and /readyz on an address of its own, for Prometheus and load
// balancers. It runs on a thread of its own with its own io_context, so it
// answers while the loops are busy, and it keeps answering while the server
// drains: it stops last, once the loops have ended.
//
// make_admin_listener() is the admin options group's factory: the one call
// the server's assembly makes (server.cpp).
#pragma once

#include <rapidrpc/server_options.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "service/service.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace rapidrpc::detail {

class admin_listener final : public service {
 public:
  struct handlers {
    /// Appends the metrics exposition (on the admin thread).
    std::function<void(std::string& out)> metrics;
    /// Why the server does not take calls now ("starting", "draining", ...),
    /// or empty when it does (on the admin thread).
    std::function<std::string()> not_ready;
  };

  admin_listener(std::string server_name, handlers h);
  ~admin_listener() override;
  admin_listener(const admin_listener&) = delete;
  admin_listener& operator=(const admin_listener&) = delete;

  /// Binds and listens on `ep` (before start()); returns the address bound.
  /// Throws boost::system::system_error.
  boost::asio::ip::tcp::endpoint listen(const boost::asio::ip::tcp::endpoint& ep);
  /// Serves a duplicate of the listening socket `fd` (before start());
  /// returns its address.
  boost::asio::ip::tcp::endpoint adopt(int fd);
  /// The listening sockets' descriptors.
  std::vector<int> listening_fds() const;
  /// "host:port" of each address listened on.
  std::vector<std::string> endpoints() const override;
  /// listening_fds(), a socket adopted twice listed once.
  std::vector<int> listening_descriptors() const override;
  /// Starts the admin thread.
  void start() override;
  /// Changes nothing: the listener answers through the drain (/readyz 503
  /// "draining", /metrics counting the drain) and closes in join(), after
  /// every service started after it (service.hpp).
  void stop(std::chrono::milliseconds /*drain*/) override {}
  /// Closes the listener and every admin connection, ends the thread and
  /// joins it. Any thread but the admin thread; idempotent.
  void join() override;

  /// The request's answer: status, content type and body (for tests).
  struct answer {
    int status = 200;
    std::string_view content_type = "text/plain; charset=utf-8";
    std::string body;
    std::string_view extra;  // header lines
  };
  answer route(std::string_view method, std::string_view path);

 private:
  class session;
  void accept(boost::asio::ip::tcp::acceptor& a);

  std::string server_name_;
  handlers handlers_;
  boost::asio::io_context io_{1};
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
  std::vector<boost::asio::ip::tcp::endpoint> bound_;
  std::vector<std::weak_ptr<session>> sessions_;
  std::thread thread_;
};

/// Whether `options` ask for an admin listener (an address or descriptors).
inline bool admin_wanted(const admin_options& options) {
  return !options.address.empty() || !options.listen_fds.empty();
}

/// The admin listener `options` ask for (listen_fds, else address's
/// HOST:PORT on each of its addresses), answering with `server_name` in
/// its Server header, bound and not yet started; null when they ask for
/// none. Throws std::system_error when an address cannot be bound or a
/// descriptor served.
std::unique_ptr<admin_listener> make_admin_listener(const admin_options& options,
                                                    std::string server_name,
                                                    admin_listener::handlers h);

}  // namespace rapidrpc::detail
