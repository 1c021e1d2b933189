// Benchmark peer: an XML-RPC server built on xmlrpc-c's C++ library and its
// standalone HTTP server, Abyss (xmlrpc_c::serverAbyss).  It stands for the
// "write the hot part in C++ and serve it with a standalone server" advice of
// the article "High performance XML-RPC" (about xmlrpc-c).
//
//   abyss_server --host 127.0.0.1 --port PORT [--max-conn N]
//                [--keepalive-max-requests N]
//
// Methods: sample.add(int, int) -> int, load(int) -> string (n-th Fibonacci
// number, GMP's mpz_add running the Python article's loop), echo(v) -> v, and the
// system.* methods xmlrpc-c's registry provides.  Prints
// "listening on HOST:PORT" on stdout once the socket is bound (--port 0
// picks a free port and prints it).
//
// Abyss limits, and what this peer sets (xmlrpc-c 1.33 defaults in brackets):
//
//   maxConn [15]          connections served at once; Abyss runs one thread
//                         per connection.  At the limit its accept loop stops
//                         and polls every 2 s for a finished connection, so
//                         with more keep-alive clients than this the extra
//                         ones wait seconds and throughput collapses.  Set to
//                         --max-conn (default 256, above the 64 connections
//                         the benchmark opens).
//   maxConnBacklog [15]   listen() backlog.  Same value as maxConn.
//   keepaliveMaxConn [30] despite the name, the number of requests served on
//                         one keep-alive connection before Abyss closes it.
//                         The default makes wrk reconnect every 30 requests
//                         (and read errors when a request races the close).
//                         Set to --keepalive-max-requests (default
//                         1,000,000,000: effectively unlimited).
//   keepaliveTimeout [15] seconds an idle keep-alive connection is kept.
//                         Left at 15 s (wrk never idles).
//   timeout [15]          seconds to receive a whole request.  Left at 15 s.

#include <xmlrpc-c/base.hpp>
#include <xmlrpc-c/registry.hpp>
#include <xmlrpc-c/server_abyss.hpp>

#include <arpa/inet.h>
#include <gmp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

class sample_add final : public xmlrpc_c::method {
 public:
  sample_add() {
    _signature = "i:ii";
    _help = "Return the sum of two ints.";
  }
  void execute(xmlrpc_c::paramList const& params, xmlrpc_c::value* result) override {
    int const a = params.getInt(0);
    int const b = params.getInt(1);
    params.verifyEnd(2);
    *result = xmlrpc_c::value_int(a + b);
  }
};

// The Python article's loop: fib1 = fib2 = 1; n -= 2; while n > 0: fib1, fib2 = fib2,
// fib1 + fib2; n -= 1; return str(fib2).
class load final : public xmlrpc_c::method {
 public:
  load() {
    _signature = "s:i";
    _help = "Return the n-th Fibonacci number as a decimal string.";
  }
  void execute(xmlrpc_c::paramList const& params, xmlrpc_c::value* result) override {
    int n = params.getInt(0);
    params.verifyEnd(1);
    mpz_t fib1, fib2;
    mpz_init_set_ui(fib1, 1);
    mpz_init_set_ui(fib2, 1);
    for (n -= 2; n > 0; --n) {
      mpz_add(fib1, fib1, fib2);  // fib1 + fib2, then swap: (fib2, fib1 + fib2)
      mpz_swap(fib1, fib2);
    }
    std::string text(mpz_sizeinbase(fib2, 10) + 2, '\0');
    mpz_get_str(text.data(), 10, fib2);
    text.resize(std::strlen(text.c_str()));
    mpz_clear(fib1);
    mpz_clear(fib2);
    *result = xmlrpc_c::value_string(text);
  }
};

class echo final : public xmlrpc_c::method {
 public:
  echo() {
    _signature = "?";
    _help = "Return the argument unchanged.";
  }
  void execute(xmlrpc_c::paramList const& params, xmlrpc_c::value* result) override {
    if (params.size() != 1)
      throw xmlrpc_c::fault("echo takes exactly one argument", xmlrpc_c::fault::CODE_TYPE);
    *result = params[0];
  }
};

[[noreturn]] void usage(char const* argv0) {
  std::cerr << "usage: " << argv0
            << " [--host 127.0.0.1] --port PORT [--max-conn N]"
               " [--keepalive-max-requests N]\n";
  std::exit(2);
}

// A bound (not yet listening) IPv4 socket; Abyss calls listen() itself with
// maxConnBacklog.  Binding here lets --port 0 work and the real port be
// printed.
int bind_socket(std::string const& host, unsigned port, unsigned* bound_port) {
  int const fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  int const one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    throw std::runtime_error("--host must be an IPv4 address: " + host);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error(std::string("bind: ") + std::strerror(errno));
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *bound_port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  long port = -1;
  long max_conn = 256;
  long keepalive_max_requests = 1000000000;
  for (int i = 1; i < argc; ++i) {
    std::string const arg = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    if (arg == "--host")
      host = argv[++i];
    else if (arg == "--port")
      port = std::strtol(argv[++i], nullptr, 10);
    else if (arg == "--max-conn")
      max_conn = std::strtol(argv[++i], nullptr, 10);
    else if (arg == "--keepalive-max-requests")
      keepalive_max_requests = std::strtol(argv[++i], nullptr, 10);
    else
      usage(argv[0]);
  }
  if (port < 0 || port > 65535 || max_conn < 1 || keepalive_max_requests < 1 ||
      keepalive_max_requests > 1000000000)
    usage(argv[0]);

  try {
    xmlrpc_c::registry registry;
    registry.addMethod("sample.add", xmlrpc_c::methodPtr(new sample_add));
    registry.addMethod("load", xmlrpc_c::methodPtr(new load));
    registry.addMethod("echo", xmlrpc_c::methodPtr(new echo));

    unsigned bound_port = 0;
    int const fd = bind_socket(host, static_cast<unsigned>(port), &bound_port);

    xmlrpc_c::serverAbyss server(
        xmlrpc_c::serverAbyss::constrOpt()
            .registryP(&registry)
            .socketFd(fd)
            .maxConn(static_cast<unsigned>(max_conn))
            .maxConnBacklog(static_cast<unsigned>(max_conn))
            .keepaliveMaxConn(static_cast<unsigned>(keepalive_max_requests))
            .keepaliveTimeout(15)
            .timeout(15));
    std::cout << "listening on " << host << ':' << bound_port << std::endl;
    server.run();
  } catch (std::exception const& e) {
    std::cerr << "abyss_server: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
