#include "peers.hpp"

#include <rapidrpc/xmlrpc.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <regex>
#include <stdexcept>

namespace rapidrpc::test {

namespace {

constexpr int socket_timeout_seconds = 20;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) { return lower(x) == lower(y); });
}

void set_timeouts(int fd) {
  timeval tv{socket_timeout_seconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

int listen_on_loopback(unsigned short& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0) {
    ::close(fd);
    throw std::runtime_error("bind/listen on 127.0.0.1 failed");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

int connect_loopback(unsigned short port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

// ---- raw HTTP ---------------------------------------------------------------------

std::optional<std::string> raw_request::header(std::string_view name) const {
  std::size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    std::size_t start = pos + 2;
    std::size_t end = head.find("\r\n", start);
    if (end == std::string::npos || end == start) break;
    std::string_view line(head.data() + start, end - start);
    auto colon = line.find(':');
    if (colon != std::string_view::npos && iequals(line.substr(0, colon), name)) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return std::string(v);
    }
    pos = end;
  }
  return std::nullopt;
}

std::optional<raw_request> read_request(int fd) {
  raw_request req;
  std::string in;
  char buf[64 * 1024];
  std::size_t head_end;
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return std::nullopt;
    in.append(buf, static_cast<std::size_t>(n));
  }
  req.head = in.substr(0, head_end + 4);
  req.body = in.substr(head_end + 4);
  std::size_t length = 0;
  if (auto cl = req.header("Content-Length")) length = std::stoul(*cl);
  while (req.body.size() < length) {
    ssize_t n = ::recv(fd, buf, std::min(sizeof buf, length - req.body.size()), 0);
    if (n <= 0) return std::nullopt;
    req.body.append(buf, static_cast<std::size_t>(n));
  }
  return req;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string http_response(std::string_view body, int status, std::string_view extra_headers) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Error") +
                    "\r\nContent-Type: text/xml\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\n";
  out += extra_headers;
  out += "\r\n";
  out += body;
  return out;
}

std::string result_document(const value& v) {
  std::string out;
  xmlrpc::write_response(out, v);
  return out;
}

void echo_script(int fd) {
  while (auto req = read_request(fd)) {
    auto parsed = xmlrpc::parse_call(req->body);
    std::string doc;
    if (auto* call = std::get_if<xmlrpc::method_call>(&parsed)) {
      if (call->method == "fault")
        xmlrpc::write_fault(doc, -1, "requested");
      else
        xmlrpc::write_response(doc, call->params.empty() ? value{} : call->params[0]);
    } else {
      xmlrpc::write_fault(doc, -32700, std::get<xmlrpc::parse_error>(parsed).message);
    }
    if (!write_all(fd, http_response(doc))) return;
  }
}

// ---- scripted_server ------------------------------------------------------------------

scripted_server::scripted_server(script s) : script_(std::move(s)) {
  listen_fd_ = listen_on_loopback(port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

scripted_server::~scripted_server() {
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  ::close(listen_fd_);
  {
    std::lock_guard lock(mutex_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);  // wakes the scripts
  }
  for (auto& t : threads_) t.join();
  for (int fd : open_fds_) ::close(fd);
}

std::string scripted_server::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

void scripted_server::accept_loop() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    set_timeouts(fd);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int index = accepted_++;
    std::lock_guard lock(mutex_);
    open_fds_.push_back(fd);
    threads_.emplace_back([this, fd, index] {
      script_(fd, index);
      ::shutdown(fd, SHUT_RDWR);  // closed for the peer; the fd is closed at the end
    });
  }
}

// ---- counting_proxy -------------------------------------------------------------------

counting_proxy::counting_proxy(unsigned short upstream_port)
    : upstream_(upstream_port), server_([this](int client_fd, int) {
        int up = connect_loopback(upstream_);
        if (up < 0) return;
        set_timeouts(up);
        // One direction on a thread of its own, the other on this one.
        auto pump = [](int from, int to) {
          char buf[64 * 1024];
          for (;;) {
            ssize_t n = ::recv(from, buf, sizeof buf, 0);
            if (n <= 0 || !write_all(to, std::string_view(buf, static_cast<std::size_t>(n)))) break;
          }
          ::shutdown(to, SHUT_WR);
          ::shutdown(from, SHUT_RD);
        };
        std::thread upward(pump, client_fd, up);
        pump(up, client_fd);
        ::shutdown(up, SHUT_RDWR);
        ::shutdown(client_fd, SHUT_RDWR);
        upward.join();
        ::close(up);
      }) {}

counting_proxy::~counting_proxy() = default;

std::string counting_proxy::url(std::string_view path) const { return server_.url(path); }

// ---- child_server ---------------------------------------------------------------------

child_server::child_server(std::vector<std::string> argv) {
  for (const auto& a : argv) command_ += a + ' ';
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    // The child: dies with the test process, so no server outlives a test.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  stdout_fd_ = pipe_fds[0];

  // Wait for "listening on HOST:PORT".
  std::string out;
  static const std::regex listening(R"(listening on \S+:(\d+))");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (port_ == 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{stdout_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    std::smatch m;
    if (std::regex_search(out, m, listening)) port_ = static_cast<unsigned short>(std::stoi(m[1]));
  }
  if (port_ == 0) {
    stop(std::chrono::seconds(2));
    throw std::runtime_error("the server did not start: " + command_ + "\noutput: " + out);
  }
  startup_output_ = std::move(out);
}

child_server::~child_server() { stop(); }

std::string child_server::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

int child_server::stop(std::chrono::seconds timeout) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  int result = -1;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      result = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
  stdout_fd_ = -1;
  return result;
}

}  // namespace rapidrpc::test
