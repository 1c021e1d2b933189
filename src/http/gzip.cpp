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
  deflater() {
    ok = deflateInit2(&zs, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~deflater() {
    if (ok) deflateEnd(&zs);
  }
};

}  // namespace

namespace {

enum class pass_result { ok, too_large, corrupt, past_cap };

// One inflation of `in` (one or more gzip members), stopping with too_large
// once the output passes `limit`. With `out` (reserved for cap + 1 bytes), the
// output goes there and the pass stops with past_cap once it passes `cap`, so
// the string is never reallocated; without, the output is only counted.
pass_result inflate_pass(std::string_view in, std::size_t limit, std::string* out, std::size_t cap,
                         std::size_t& total) {
  total = 0;
  if (in.empty()) return pass_result::corrupt;
  inflater z;
  if (!z.ok) return pass_result::corrupt;
  z.zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.zs.avail_in = static_cast<uInt>(in.size());
  char discard[16 * 1024];
  for (;;) {
    std::size_t room = sizeof discard;
    char* to = discard;
    if (out) {
      room = std::min<std::size_t>(cap + 1 - total, 64 * 1024);
      out->resize(total + room);
      to = out->data() + total;
    }
    z.zs.next_out = reinterpret_cast<Bytef*>(to);
    z.zs.avail_out = static_cast<uInt>(room);
    int rc = inflate(&z.zs, Z_NO_FLUSH);
    total += room - z.zs.avail_out;
    if (out) out->resize(total);
    if (total > limit) return pass_result::too_large;
    if (out && total > cap) return pass_result::past_cap;
    if (rc == Z_STREAM_END) {
      if (z.zs.avail_in == 0) return pass_result::ok;
      // Another gzip member follows (concatenated gzip is valid).
      if (inflateReset(&z.zs) != Z_OK) return pass_result::corrupt;
      continue;
    }
    if (rc == Z_BUF_ERROR && z.zs.avail_in == 0) return pass_result::corrupt;  // truncated
    if (rc != Z_OK && rc != Z_BUF_ERROR) return pass_result::corrupt;
  }
}

inflate_result result_of(pass_result r) {
  return r == pass_result::ok          ? inflate_result::ok
         : r == pass_result::too_large ? inflate_result::too_large
                                       : inflate_result::corrupt;
}

}  // namespace

// The last member's trailer gives its size (mod 2^32). Trusted, it sizes the
// output in one allocation. Not trusted: if the output passes it (several
// members, or a lie), or it is past the limit, a first pass only counts, and
// the second inflates into exactly that much. So a bomb costs at most what
// its size field claims (up to the limit), never a growing string's copies.
namespace {

inflate_result inflate_all(std::string_view in, std::string& out, std::size_t limit) {
  std::size_t total = 0;
  if (in.size() >= 4) {
    const auto* p = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
    const std::size_t claimed =
        p[0] | p[1] << 8 | p[2] << 16 | static_cast<std::size_t>(p[3]) << 24;
    if (claimed <= limit) {
      out.reserve(claimed + 1);
      auto r = inflate_pass(in, limit, &out, claimed, total);
      if (r != pass_result::past_cap) return result_of(r);
      std::string().swap(out);
    }
  }
  auto r = inflate_pass(in, limit, nullptr, 0, total);
  if (r != pass_result::ok) return result_of(r);
  out.reserve(total + 1);
  return result_of(inflate_pass(in, limit, &out, total, total));
}

}  // namespace

inflate_result gunzip(std::string_view in, std::string& out, std::size_t limit) {
  out.clear();
  const inflate_result r = inflate_all(in, out, limit);
  // Which pass failed (the one that counts, or the one that keeps the
  // output) depends on the size the trailer claims; the caller sees no
  // difference.
  if (r != inflate_result::ok) std::string().swap(out);
  return r;
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
