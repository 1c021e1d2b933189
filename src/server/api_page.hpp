// Private: the API page, what a browser's GET on an RPC path gets (see
// server_options::http.api_page). A registry in, one HTML document and its
// response headers out; no I/O. Built once by server::start(), when the
// registry has become read-only, and served as it is for every such GET.
#pragma once

#include "text/text.hpp"  // append_html_escaped(), which the page escapes with

#include <rapidrpc/registry.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace rapidrpc::detail {

/// What the page says about the server it describes.
struct api_page_options {
  /// The page's title (the Server header's value).
  std::string_view server_name = "rapidrpc";
  /// The page's form calls methods with JSON-RPC 2.0; without JSON-RPC the
  /// page lists the methods and says that calls from it need JSON-RPC.
  bool jsonrpc = true;
  /// The gzip copy is made when the page is at least this large (0: none).
  std::size_t gzip_min_bytes = 1024;
};

/// The page, ready to serve.
struct api_page {
  /// The HTML document (UTF-8); empty when there is no page.
  std::string html;
  /// `html` gzip-compressed, or empty (too small, or compression off).
  std::string gzipped;
  /// Header lines for its responses, each ending in "\r\n": the
  /// Content-Security-Policy (nothing from another origin; the page's own
  /// script and style by their SHA-256 hashes; requests only to its own
  /// origin), X-Content-Type-Options: nosniff, Cache-Control and Vary.
  std::string headers;

  bool empty() const noexcept { return html.empty(); }
};

/// Renders the page for every method of `methods`, in names() order (the
/// order of system.listMethods): its name, its signature (result and
/// parameters, with their names when it has them) and its help. Every text
/// taken from the registry is HTML-escaped, so help or a name holding
/// markup shows as text. The form (a method, JSON parameters, Call) posts
/// to the page's own URL with fetch() and shows the result or the error
/// object; the page loads nothing else.
api_page make_api_page(const registry& methods, const api_page_options& options);

}  // namespace rapidrpc::detail
