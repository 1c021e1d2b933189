#include "http/response.hpp"

#include "value/sink.hpp"

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
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

void write_head(std::string& out, std::string_view server, const response_head& head) {
  // Through a sink: the literal pieces go in with their lengths known.
  rapidrpc::detail::sink to(out);
  const auto number = [&to](std::size_t n) {
    to.advance(rapidrpc::detail::write_unsigned(to.room(rapidrpc::detail::max_integer_chars), n));
  };
  to.put("HTTP/1.1 ");
  number(static_cast<std::size_t>(head.status));
  to.put(' ');
  to.put(reason(head.status));
  to.put("\r\nServer: ");
  to.put(server);
  to.put("\r\nDate: ");
  to.put(http_date());
  if (head.status != 204) {  // 204 has no body, and says nothing of one
    to.put("\r\nContent-Type: ");
    to.put(head.content_type);
    to.put("\r\nContent-Length: ");
    number(head.content_length);
  }
  if (head.gzip) to.put("\r\nContent-Encoding: gzip");
  if (!head.keep_alive)
    to.put("\r\nConnection: close");
  else if (head.http10)
    to.put("\r\nConnection: keep-alive");
  to.put("\r\n");
  to.put(head.extra);
  to.put("\r\n");
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
