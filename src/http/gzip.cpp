#include "http/gzip.hpp"

#include <zlib.h>

#include <algorithm>
#include <new>

namespace rapidrpc::http {

namespace {

struct inflater {
  z_stream zs{};
  bool ok = false;
  inflater() { ok = inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK; }
  ~inflater() {
    if (ok) inflateEnd(&zs);
  }
};

struct deflater {
  z_stream zs{};
  bool ok = false;
  deflater() { ok = deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK; }
  ~deflater() {
    if (ok) deflateEnd(&zs);
  }
};

}  // namespace

inflate_result gunzip(std::string_view in, std::string& out, std::size_t limit) {
  out.clear();
  inflater z;
  if (!z.ok) return inflate_result::corrupt;
  z.zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.zs.avail_in = static_cast<uInt>(in.size());
  if (in.empty()) return inflate_result::corrupt;
  for (;;) {
    std::size_t room = std::min<std::size_t>(limit + 1 - out.size(), 64 * 1024);
    std::size_t old = out.size();
    out.resize(old + room);
    z.zs.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    z.zs.avail_out = static_cast<uInt>(room);
    int rc = inflate(&z.zs, Z_NO_FLUSH);
    out.resize(old + (room - z.zs.avail_out));
    if (out.size() > limit) return inflate_result::too_large;
    if (rc == Z_STREAM_END) {
      if (z.zs.avail_in == 0) return inflate_result::ok;
      // Another gzip member follows (concatenated gzip is valid).
      if (inflateReset(&z.zs) != Z_OK) return inflate_result::corrupt;
      continue;
    }
    if (rc == Z_BUF_ERROR && z.zs.avail_in == 0) return inflate_result::corrupt;  // truncated
    if (rc != Z_OK && rc != Z_BUF_ERROR) return inflate_result::corrupt;
  }
}

void gzip(std::string_view in, std::string& out) {
  deflater z;
  if (!z.ok) throw std::bad_alloc();
  std::size_t old = out.size();
  std::size_t bound = deflateBound(&z.zs, static_cast<uLong>(in.size()));
  out.resize(old + bound);
  z.zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.zs.avail_in = static_cast<uInt>(in.size());
  z.zs.next_out = reinterpret_cast<Bytef*>(out.data() + old);
  z.zs.avail_out = static_cast<uInt>(bound);
  deflate(&z.zs, Z_FINISH);  // the bound makes one call enough
  out.resize(old + (bound - z.zs.avail_out));
}

}  // namespace rapidrpc::http
