#include "http/response.hpp"

#include <charconv>
#include <ctime>

namespace rapidrpc::http {

std::string_view http_date() {
  thread_local std::time_t cached_at = 0;
  thread_local char buf[40];
  thread_local std::size_t len = 0;
  std::time_t now = std::time(nullptr);
  if (now != cached_at) {
    std::tm tm{};
    gmtime_r(&now, &tm);
    len = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    cached_at = now;
  }
  return {buf, len};
}

std::string_view reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

namespace {

void append_number(std::string& out, std::size_t n) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

}  // namespace

void write_head(std::string& out, std::string_view server, const response_head& head) {
  out += "HTTP/1.1 ";
  append_number(out, static_cast<std::size_t>(head.status));
  out += ' ';
  out += reason(head.status);
  out += "\r\nServer: ";
  out += server;
  out += "\r\nDate: ";
  out += http_date();
  if (head.status != 204) {  // 204 has no body, and says nothing of one
    out += "\r\nContent-Type: ";
    out += head.content_type;
    out += "\r\nContent-Length: ";
    append_number(out, head.content_length);
  }
  if (head.gzip) out += "\r\nContent-Encoding: gzip";
  if (!head.keep_alive)
    out += "\r\nConnection: close";
  else if (head.http10)
    out += "\r\nConnection: keep-alive";
  out += "\r\n";
  out += head.extra;
  out += "\r\n";
}

void write_error(std::string& out, std::string_view server, int status, bool keep_alive,
                 bool http10, std::string_view extra, bool head_only) {
  std::string_view text = reason(status);
  response_head head;
  head.status = status;
  head.content_type = "text/plain; charset=utf-8";
  head.content_length = text.size() + 1;
  head.keep_alive = keep_alive;
  head.http10 = http10;
  head.extra = extra;
  write_head(out, server, head);
  if (head_only) return;
  out += text;
  out += '\n';
}

}  // namespace rapidrpc::http
