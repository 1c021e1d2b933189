#include <rapidrpc/worker.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include "worker/frame.hpp"

#include <cerrno>
#include <string>
#include <unistd.h>

namespace rapidrpc {

namespace {

// 0: end of stream before any byte; 1: read all; -1: error or end mid-way.
int read_exact(int fd, char* p, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r == 0) {
      return got == 0 ? 0 : -1;
    } else if (errno != EINTR) {
      return -1;
    }
  }
  return 1;
}

bool write_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    ssize_t r = ::write(fd, s.data() + done, s.size() - done);
    if (r > 0)
      done += static_cast<std::size_t>(r);
    else if (r < 0 && errno == EINTR)
      continue;
    else
      return false;
  }
  return true;
}

}  // namespace

int serve_worker(const registry& methods, int fd) {
  std::string doc, body, frame;
  for (;;) {
    unsigned char header[4];
    int r = read_exact(fd, reinterpret_cast<char*>(header), 4);
    if (r == 0) return 0;
    if (r < 0) return 1;
    std::uint32_t n = detail::frame_length(header);
    if (n > max_worker_frame_bytes) return 1;
    doc.resize(n);
    if (read_exact(fd, doc.data(), n) != 1) return 1;

    body.clear();
    auto parsed = xmlrpc::parse_call(doc);
    if (auto* err = std::get_if<xmlrpc::parse_error>(&parsed)) {
      xmlrpc::write_fault(body, err->code, err->message);
    } else {
      auto& call = std::get<xmlrpc::method_call>(parsed);
      const method* m = methods.find(call.method);
      outcome result = m == nullptr ? outcome(fault(fault_code::method_not_found, "method not found"))
                       : !m->run     ? outcome(fault(fault_code::internal_error,
                                                     "async methods do not run in worker processes"))
                                     : call_method(*m, call.params);
      if (auto* v = std::get_if<value>(&result)) {
        try {
          xmlrpc::write_response(body, *v);
        } catch (const std::exception&) {
          body.clear();
          xmlrpc::write_fault(body, fault_code::internal_error,
                              "internal error: the result cannot be encoded");
        }
      } else {
        const auto& f = std::get<fault>(result);
        xmlrpc::write_fault(body, f.code(), f.message());
      }
    }
    frame.clear();
    detail::append_frame(frame, body);
    if (!write_all(fd, frame)) return 1;
  }
}

}  // namespace rapidrpc
