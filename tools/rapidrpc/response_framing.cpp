#include "response_framing.hpp"

#include <cstring>

namespace rapidrpc::cli {

namespace {

char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// True if the comma-separated list `list` holds `token` (case-insensitive).
bool has_token(std::string_view list, std::string_view token) noexcept {
  while (!list.empty()) {
    auto comma = list.find(',');
    if (iequals(trim(list.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// The last coding of a Transfer-Encoding list.
std::string_view last_token(std::string_view list) noexcept {
  auto comma = list.rfind(',');
  return trim(comma == std::string_view::npos ? list : list.substr(comma + 1));
}

frame_status bad(response_frame& out, const char* why) {
  out.error = why;
  return frame_status::bad;
}

// De-chunks `data` (starting at a chunk-size line) into `scratch`.
frame_status dechunk(std::string_view data, std::size_t& used, std::string& scratch,
                     response_frame& out) {
  scratch.clear();
  std::size_t pos = 0;
  for (;;) {
    auto eol = data.find("\r\n", pos);
    if (eol == std::string_view::npos) {
      if (data.size() - pos > 1024) return bad(out, "chunk-size line too long");
      return frame_status::need_more;
    }
    std::size_t size = 0;
    std::size_t i = pos;
    int digits = 0;
    for (; i < eol; ++i) {
      char c = lower(data[i]);
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) break;
      if (++digits > 15) return bad(out, "chunk too large");
      size = size * 16 + static_cast<std::size_t>(d);
    }
    if (digits == 0 || (i < eol && data[i] != ';' && data[i] != ' ' && data[i] != '\t'))
      return bad(out, "bad chunk size");
    pos = eol + 2;
    if (size == 0) {
      // Trailers, then an empty line.
      for (;;) {
        auto end = data.find("\r\n", pos);
        if (end == std::string_view::npos) return frame_status::need_more;
        bool empty = end == pos;
        pos = end + 2;
        if (empty) break;
      }
      used = pos;
      return frame_status::complete;
    }
    if (data.size() - pos < size + 2) return frame_status::need_more;
    if (data.substr(pos + size, 2) != "\r\n") return bad(out, "chunk not followed by CRLF");
    scratch.append(data.substr(pos, size));
    pos += size + 2;
  }
}

}  // namespace

frame_status frame_response(std::string_view data, bool eof, response_frame& out,
                            std::string& scratch) {
  out = response_frame{};
  auto head_end = data.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (data.size() > max_response_header_bytes) return bad(out, "response headers too large");
    if (eof)
      return bad(out, data.empty() ? "connection closed before a response"
                                   : "connection closed inside the response headers");
    return frame_status::need_more;
  }
  std::string_view head = data.substr(0, head_end);
  auto eol = head.find("\r\n");
  std::string_view status_line = head.substr(0, eol);
  // "HTTP/1.x SSS reason"
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ')
    return bad(out, "bad status line");
  bool http11 = status_line[7] == '1';
  if (!http11 && status_line[7] != '0') return bad(out, "unsupported HTTP version");
  int status = 0;
  for (int k = 9; k < 12; ++k) {
    char c = status_line[static_cast<std::size_t>(k)];
    if (c < '0' || c > '9') return bad(out, "bad status code");
    status = status * 10 + (c - '0');
  }
  if (status_line.size() > 12 && status_line[12] != ' ') return bad(out, "bad status code");
  out.status = status;
  out.keep_alive = http11;

  bool chunked = false;
  bool have_length = false;
  std::size_t length = 0;
  std::string_view rest = eol == std::string_view::npos ? std::string_view{} : head.substr(eol + 2);
  while (!rest.empty()) {
    auto line_end = rest.find("\r\n");
    std::string_view line = rest.substr(0, line_end);
    rest = line_end == std::string_view::npos ? std::string_view{} : rest.substr(line_end + 2);
    auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) return bad(out, "bad header line");
    std::string_view name = line.substr(0, colon);
    std::string_view val = trim(line.substr(colon + 1));
    switch (lower(name[0])) {
      case 'c':
        if (iequals(name, "content-length")) {
          std::size_t n = 0;
          if (val.empty() || val.size() > 15) return bad(out, "bad Content-Length");
          for (char c : val) {
            if (c < '0' || c > '9') return bad(out, "bad Content-Length");
            n = n * 10 + static_cast<std::size_t>(c - '0');
          }
          if (have_length && n != length) return bad(out, "conflicting Content-Length");
          have_length = true;
          length = n;
        } else if (iequals(name, "connection")) {
          if (has_token(val, "close"))
            out.keep_alive = false;
          else if (has_token(val, "keep-alive"))
            out.keep_alive = true;
        } else if (iequals(name, "content-encoding")) {
          out.gzip = has_token(val, "gzip");
        }
        break;
      case 't':
        if (iequals(name, "transfer-encoding")) {
          if (!iequals(last_token(val), "chunked"))
            return bad(out, "unsupported Transfer-Encoding");
          chunked = true;
        }
        break;
      default:
        break;
    }
  }

  std::size_t body_at = head_end + 4;
  std::string_view after = data.substr(body_at);
  if ((status >= 100 && status < 200) || status == 204 || status == 304) {
    out.consumed = body_at;
    return frame_status::complete;
  }
  if (chunked) {
    std::size_t used = 0;
    auto st = dechunk(after, used, scratch, out);
    if (st == frame_status::need_more && eof)
      return bad(out, "connection closed inside a chunked body");
    if (st != frame_status::complete) return st;
    out.body = scratch;
    out.consumed = body_at + used;
    return st;
  }
  if (have_length) {
    if (after.size() < length) {
      if (eof) return bad(out, "connection closed inside the body");
      return frame_status::need_more;
    }
    out.body = after.substr(0, length);
    out.consumed = body_at + length;
    return frame_status::complete;
  }
  // No length: the body runs to the end of the connection.
  out.keep_alive = false;
  if (!eof) return frame_status::need_more;
  out.body = after;
  out.consumed = data.size();
  return frame_status::complete;
}

}  // namespace rapidrpc::cli
