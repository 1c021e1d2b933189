#include "server/listen.hpp"

#include <rapidrpc/localhost.hpp>

#include <boost/asio/ip/v6_only.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>

namespace rapidrpc::detail {

namespace net = boost::asio;
using tcp = net::ip::tcp;

tcp::endpoint local_endpoint(int fd) {
  tcp::endpoint ep;
  socklen_t len = static_cast<socklen_t>(ep.capacity());
  if (::getsockname(fd, ep.data(), &len) != 0)
    throw std::system_error(errno, std::generic_category(), "getsockname");
  ep.resize(len);
  return ep;
}

int duplicate(int fd) {
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) throw std::system_error(errno, std::generic_category(), "dup");
  return copy;
}

tcp::endpoint adopt_duplicate(tcp::acceptor& a, int fd, const char* what) {
  tcp::endpoint ep = local_endpoint(fd);
  int copy = duplicate(fd);
  boost::system::error_code ec;
  a.assign(ep.protocol(), copy, ec);
  if (ec) {
    ::close(copy);
    throw boost::system::system_error(ec, std::string("cannot serve ") + what + " handed over");
  }
  return ep;
}

void bind_acceptor(tcp::acceptor& a, const tcp::endpoint& ep, bool shared_port) {
  a.open(ep.protocol());
  a.set_option(tcp::acceptor::reuse_address(true));
  if (shared_port)
    a.set_option(net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true));
  if (ep.protocol() == tcp::v6()) a.set_option(net::ip::v6_only(true));
  a.bind(ep);
}

void check_port_free(const tcp::endpoint& ep) {
  if (ep.port() == 0) return;
  net::io_context io;
  tcp::acceptor probe(io);
  bind_acceptor(probe, ep, false);
}

namespace {

std::vector<tcp::endpoint> resolve(const std::string& host, std::uint16_t port) {
  std::vector<tcp::endpoint> out;
  if (is_localhost(host)) {
    // Always the loopback addresses, whatever /etc/hosts says (or whether
    // there is one): "localhost" must not depend on the resolver.
    out.emplace_back(net::ip::address_v4::loopback(), port);
    out.emplace_back(net::ip::address_v6::loopback(), port);
    return out;
  }
  boost::system::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (!ec) {
    out.emplace_back(address, port);
    return out;
  }
  net::io_context io;
  tcp::resolver resolver(io);
  auto results = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec) throw std::system_error(ec, "cannot resolve host \"" + host + "\"");
  for (const auto& r : results) {
    if (std::find(out.begin(), out.end(), r.endpoint()) == out.end()) out.push_back(r.endpoint());
  }
  // IPv4 first: with port 0 the first address picks the port.
  std::stable_partition(out.begin(), out.end(), [](const auto& e) { return e.address().is_v4(); });
  return out;
}

}  // namespace

std::vector<tcp::endpoint> listen_on_each(
    const std::string& host, std::uint16_t port,
    const std::function<tcp::endpoint(const tcp::endpoint&)>& listen, const std::string& what) {
  std::vector<tcp::endpoint> bound;
  std::error_code first_error;
  for (auto ep : resolve(host, port)) {
    ep.port(port);
    try {
      ep = listen(ep);
    } catch (const boost::system::system_error& e) {
      if (!first_error) first_error = e.code();
      continue;
    }
    bound.push_back(ep);
    port = ep.port();
  }
  if (bound.empty())
    throw std::system_error(
        first_error ? first_error : std::make_error_code(std::errc::address_not_available), what);
  return bound;
}

void check_listening_tcp(int fd) {
  const auto option = [fd](int name) {
    int v = -1;
    socklen_t len = sizeof v;
    return ::getsockopt(fd, SOL_SOCKET, name, &v, &len) == 0 ? v : -1;
  };
  const int domain = option(SO_DOMAIN);
  if (option(SO_ACCEPTCONN) != 1 || option(SO_TYPE) != SOCK_STREAM ||
      (domain != AF_INET && domain != AF_INET6))
    throw std::invalid_argument("listen.fds, admin.listen_fds: descriptor " + std::to_string(fd) +
                                " is not a listening TCP socket");
}

std::vector<int> distinct_sockets(const std::vector<int>& fds) {
  std::vector<int> out;
  std::vector<std::pair<dev_t, ino_t>> seen;
  for (int fd : fds) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) continue;
    const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
    seen.push_back(id);
    out.push_back(fd);
  }
  return out;
}

std::pair<std::string, std::uint16_t> split_host_port(const std::string& address) {
  const auto colon = address.rfind(':');
  const auto bad = [&address] {
    return std::invalid_argument("\"" + address + "\" is not HOST:PORT");
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) throw bad();
  std::string host = address.substr(0, colon);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') throw bad();
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  for (char c : address.substr(colon + 1)) {
    if (c < '0' || c > '9') throw bad();
    port = port * 10 + static_cast<unsigned>(c - '0');
    if (port > 65535) throw bad();
  }
  return {host, static_cast<std::uint16_t>(port)};
}

std::vector<std::string> host_ports(const std::vector<tcp::endpoint>& endpoints) {
  std::vector<std::string> out;
  for (const auto& ep : endpoints) {
    auto a = ep.address();
    out.push_back(a.is_v6() ? "[" + a.to_string() + "]:" + std::to_string(ep.port())
                            : a.to_string() + ":" + std::to_string(ep.port()));
  }
  return out;
}

}  // namespace rapidrpc::detail
