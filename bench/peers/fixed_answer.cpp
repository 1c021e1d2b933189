// Benchmark peer: the fixed methodResponse of sample.add(3, 5) for every
// HTTP/1.1 request, as bench/nginx's config answers it, served through
// epoll or through io_uring, so that bench/kernel_paths can say what each
// way of crossing into the kernel costs a request on this machine, apart
// from any server's own work.
//
//   fixed_answer epoll|uring PORT [THREADS]
//
// Each thread has its own listening socket on 127.0.0.1:PORT (SO_REUSEPORT)
// and its own loop. A request is a head ending in an empty line and the
// body its Content-Length gives; requests that arrive together (pipelined)
// are answered with one send.
//
// - epoll: level-triggered; each readable connection gets one recv into a
//   16 KiB buffer and one send of its answers, one epoll_wait per turn.
// - uring: a multishot accept and, per connection, a multishot recv whose
//   data lands in a ring of provided buffers; the sends of a turn go out
//   with the one io_uring_submit_and_wait that also waits for the next
//   completions.
//
// It prints "listening on PORT" once every thread listens, and runs until
// killed. Errors end it with a message on stderr.
#include <liburing.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

constexpr std::string_view body =
    "<?xml version=\"1.0\"?>\n<methodResponse><params><param><value><int>8</int></value>"
    "</param></params></methodResponse>";

const std::string answer =
    "HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: " + std::to_string(body.size()) +
    "\r\nConnection: keep-alive\r\n\r\n" + std::string(body);

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "fixed_answer: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

int listen_on(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) die("socket");
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("bind");
  if (::listen(fd, 1024) != 0) die("listen");
  return fd;
}

// What a connection has read of a request not yet whole, and how many
// whole requests `in` held: each gets the fixed answer.
struct requests {
  std::string pending;

  // Takes `data`, returns the requests it completes.
  std::size_t take(std::string_view data) {
    std::string_view buf = data;
    if (!pending.empty()) {
      pending.append(data);
      buf = pending;
    }
    std::size_t done = 0, at = 0;
    for (;;) {
      const std::size_t head_end = buf.find("\r\n\r\n", at);
      if (head_end == std::string_view::npos) break;
      const std::string_view head = buf.substr(at, head_end - at);
      std::size_t length = 0;
      for (std::size_t line = head.find("\r\n"); line != std::string_view::npos;
           line = head.find("\r\n", line + 2)) {
        const std::string_view rest = head.substr(line + 2);
        if (rest.size() > 15 && strncasecmp(rest.data(), "content-length:", 15) == 0) {
          length = std::strtoul(std::string(rest.substr(15, 20)).c_str(), nullptr, 10);
          break;
        }
      }
      const std::size_t end = head_end + 4 + length;
      if (end > buf.size()) break;
      at = end;
      ++done;
    }
    if (!pending.empty())
      pending.erase(0, at);
    else if (at < buf.size())
      pending.assign(buf.substr(at));
    return done;
  }
};

// The answers to n requests, appended to `out`.
void append_answers(std::string& out, std::size_t n) {
  out.reserve(out.size() + answer.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += answer;
}

void serve_epoll(int listener) {
  int ep = ::epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = listener;
  ::epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
  std::unordered_map<int, requests> conns;
  std::vector<char> buf(16384);
  epoll_event events[64];
  for (;;) {
    int n = ::epoll_wait(ep, events, 64, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("epoll_wait");
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listener) {
        int c = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK);
        if (c < 0) continue;
        int one = 1;
        ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ev.events = EPOLLIN;
        ev.data.fd = c;
        ::epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
        conns[c];
        continue;
      }
      ssize_t got = ::recv(fd, buf.data(), buf.size(), 0);
      if (got <= 0) {
        if (got < 0 && errno == EAGAIN) continue;
        ::close(fd);  // also leaves the epoll set
        conns.erase(fd);
        continue;
      }
      const std::size_t whole = conns[fd].take(std::string_view(buf.data(), std::size_t(got)));
      if (whole == 0) continue;
      std::string several;  // pipelined requests; one is answered from `answer` itself
      if (whole > 1) append_answers(several, whole);
      const std::string& out = whole == 1 ? answer : several;
      // An answer this small fits the socket's buffer: a short send means
      // the client is gone.
      if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) {
        ::close(fd);
        conns.erase(fd);
      }
    }
  }
}

// io_uring: completions carry what they are for in their user data.
enum : std::uint64_t { op_accept = 1, op_recv = 2, op_send = 3 };
constexpr std::uint64_t tag(std::uint64_t op, int fd) { return op << 32 | std::uint32_t(fd); }

constexpr unsigned ring_entries = 1024;
constexpr unsigned buffers = 512;  // provided buffers, a power of two
constexpr unsigned buffer_size = 4096;
constexpr int buffer_group = 0;

struct uring_conn {
  requests in;
  std::string out;       // the answers of the send under way
  std::string out_next;  // answers due while it is
  bool sending = false;
  bool closing = false;
};

class uring_loop {
 public:
  explicit uring_loop(int listener) : listener_(listener) {
    io_uring_params p{};
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (int r = io_uring_queue_init_params(ring_entries, &ring_, &p); r < 0) {
      errno = -r;
      die("io_uring_queue_init_params");
    }
    // The ring of provided buffers (liburing 2.3 has no helper for it).
    void* ring_memory = ::mmap(nullptr, sizeof(io_uring_buf) * buffers, PROT_READ | PROT_WRITE,
                               MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (ring_memory == MAP_FAILED) die("mmap");
    br_ = static_cast<io_uring_buf_ring*>(ring_memory);
    io_uring_buf_ring_init(br_);
    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<std::uint64_t>(ring_memory);
    reg.ring_entries = buffers;
    reg.bgid = buffer_group;
    if (int r = io_uring_register_buf_ring(&ring_, &reg, 0); r < 0) {
      errno = -r;
      die("io_uring_register_buf_ring");
    }
    memory_ = std::make_unique<char[]>(std::size_t{buffers} * buffer_size);
    for (unsigned i = 0; i < buffers; ++i)
      io_uring_buf_ring_add(br_, memory_.get() + std::size_t{i} * buffer_size, buffer_size,
                            static_cast<unsigned short>(i), io_uring_buf_ring_mask(buffers),
                            static_cast<int>(i));
    io_uring_buf_ring_advance(br_, buffers);
  }

  void run() {
    arm_accept();
    for (;;) {
      int r = io_uring_submit_and_wait(&ring_, 1);
      if (r < 0 && r != -EINTR) {
        errno = -r;
        die("io_uring_submit_and_wait");
      }
      io_uring_cqe* cqe;
      unsigned head, seen = 0;
      io_uring_for_each_cqe(&ring_, head, cqe) {
        ++seen;
        completed(cqe);
      }
      io_uring_cq_advance(&ring_, seen);
    }
  }

 private:
  io_uring_sqe* sqe() {
    io_uring_sqe* s = io_uring_get_sqe(&ring_);
    if (s == nullptr) {
      io_uring_submit(&ring_);
      s = io_uring_get_sqe(&ring_);
      if (s == nullptr) die("no submission entry");
    }
    return s;
  }

  void arm_accept() {
    io_uring_sqe* s = sqe();
    io_uring_prep_multishot_accept(s, listener_, nullptr, nullptr, SOCK_NONBLOCK);
    io_uring_sqe_set_data64(s, tag(op_accept, listener_));
  }

  void arm_recv(int fd) {
    io_uring_sqe* s = sqe();
    io_uring_prep_recv_multishot(s, fd, nullptr, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = buffer_group;
    io_uring_sqe_set_data64(s, tag(op_recv, fd));
  }

  void send(int fd, uring_conn& c) {
    c.sending = true;
    io_uring_sqe* s = sqe();
    io_uring_prep_send(s, fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    io_uring_sqe_set_data64(s, tag(op_send, fd));
  }

  void close_conn(int fd) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    if (it->second.sending) {  // the send's completion closes it
      it->second.closing = true;
      return;
    }
    // The multishot recv still armed ends with the shutdown (its last
    // completion finds no connection); a close alone would not end it.
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    conns_.erase(it);
  }

  void completed(io_uring_cqe* cqe) {
    const std::uint64_t data = io_uring_cqe_get_data64(cqe);
    const int fd = static_cast<int>(data & 0xFFFFFFFFU);
    const bool more = (cqe->flags & IORING_CQE_F_MORE) != 0;
    switch (data >> 32) {
      case op_accept:
        if (cqe->res >= 0) {
          int one = 1;
          ::setsockopt(cqe->res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          conns_[cqe->res];
          arm_recv(cqe->res);
        }
        if (!more) arm_accept();
        return;
      case op_recv: {
        if (cqe->res <= 0) {
          if (cqe->res == -ENOBUFS) {  // the ring ran dry for a moment: read on
            arm_recv(fd);
            return;
          }
          if (!more) close_conn(fd);
          return;
        }
        const unsigned id = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        char* at = memory_.get() + std::size_t{id} * buffer_size;
        auto it = conns_.find(fd);
        if (it != conns_.end() && !it->second.closing) {
          uring_conn& c = it->second;
          const std::size_t whole = c.in.take(std::string_view(at, std::size_t(cqe->res)));
          if (whole != 0) {
            std::string& into = c.sending ? c.out_next : c.out;
            append_answers(into, whole);
            if (!c.sending) send(fd, c);
          }
        }
        io_uring_buf_ring_add(br_, at, buffer_size, static_cast<unsigned short>(id),
                              io_uring_buf_ring_mask(buffers), 0);
        io_uring_buf_ring_advance(br_, 1);
        if (!more && it != conns_.end()) arm_recv(fd);
        return;
      }
      case op_send: {
        auto it = conns_.find(fd);
        if (it == conns_.end()) return;
        uring_conn& c = it->second;
        c.sending = false;
        if (c.closing || cqe->res != static_cast<int>(c.out.size())) return close_conn(fd);
        c.out.clear();
        if (!c.out_next.empty()) {
          c.out.swap(c.out_next);
          send(fd, c);
        }
        return;
      }
    }
  }

  int listener_;
  io_uring ring_{};
  io_uring_buf_ring* br_ = nullptr;
  std::unique_ptr<char[]> memory_;
  std::unordered_map<int, uring_conn> conns_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || (std::strcmp(argv[1], "epoll") != 0 && std::strcmp(argv[1], "uring") != 0)) {
    std::fprintf(stderr, "usage: fixed_answer epoll|uring PORT [THREADS]\n");
    return 2;
  }
  const bool uring = std::strcmp(argv[1], "uring") == 0;
  const int port = std::atoi(argv[2]);
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  std::vector<int> listeners;
  for (int i = 0; i < threads; ++i) listeners.push_back(listen_on(port));
  std::printf("listening on %d\n", port);
  std::fflush(stdout);
  std::vector<std::thread> loops;
  for (int fd : listeners)
    loops.emplace_back([fd, uring] {
      if (uring)
        uring_loop(fd).run();
      else
        serve_epoll(fd);
    });
  for (auto& t : loops) t.join();
}
