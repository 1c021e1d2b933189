// Private: listening sockets, as the loops, the process supervisor and the
// admin listener open them; resolving the address to listen on; the checks
// of what is handed over.
#pragma once

#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace rapidrpc::detail {

/// The address a listening socket is bound to.
boost::asio::ip::tcp::endpoint local_endpoint(int fd);

/// A close-on-exec duplicate of `fd`; throws std::system_error.
int duplicate(int fd);

/// Has the closed acceptor `a` serve a close-on-exec duplicate of the
/// listening socket `fd` (the caller keeps `fd`); returns its address.
/// Throws boost::system::system_error naming `what` ("the admin socket").
boost::asio::ip::tcp::endpoint adopt_duplicate(boost::asio::ip::tcp::acceptor& a, int fd,
                                               const char* what);

/// Opens `a` for `ep` and binds it as every listening socket of the server
/// is bound: SO_REUSEADDR, an IPv6 socket IPv6-only, and SO_REUSEPORT when
/// several sockets share the port (`shared_port`: one per loop). Throws
/// boost::system::system_error.
void bind_acceptor(boost::asio::ip::tcp::acceptor& a, const boost::asio::ip::tcp::endpoint& ep,
                   bool shared_port);

/// Throws std::system_error if something listens on `ep` already: binding
/// with SO_REUSEPORT would silently share a port with another server that
/// also set it. A port of 0 (picked by the system) is free.
void check_port_free(const boost::asio::ip::tcp::endpoint& ep);

/// Listens on each address of `host` with `listen`, which returns the
/// address bound: with port 0 the first picks the port and the others take
/// the same one. "localhost" is always 127.0.0.1 and ::1, whatever the
/// resolver says. An address the machine lacks (say ::1 with IPv6 off) is
/// skipped as long as another one works; with none, throws
/// std::system_error saying `what`.
std::vector<boost::asio::ip::tcp::endpoint> listen_on_each(
    const std::string& host, std::uint16_t port,
    const std::function<boost::asio::ip::tcp::endpoint(const boost::asio::ip::tcp::endpoint&)>&
        listen,
    const std::string& what);

/// Throws std::invalid_argument naming `fd` unless it is a listening TCP
/// socket (IPv4 or IPv6).
void check_listening_tcp(int fd);

/// One descriptor per socket: duplicates (several loops serving one socket
/// handed over) share their inode.
std::vector<int> distinct_sockets(const std::vector<int>& fds);

/// "HOST:PORT" ("[::1]:9100" for an IPv6 literal) split in two; throws
/// std::invalid_argument.
std::pair<std::string, std::uint16_t> split_host_port(const std::string& address);

/// The addresses as "host:port" ("[::1]:9100").
std::vector<std::string> host_ports(const std::vector<boost::asio::ip::tcp::endpoint>& endpoints);

}  // namespace rapidrpc::detail
