#include "server/api_page.hpp"

#include "http/gzip.hpp"
#include "registry/method_docs.hpp"

#include <rapidrpc/literals.hpp>

#include <openssl/sha.h>

#include <array>
#include <cstdint>
#include <span>

namespace rapidrpc::detail {

namespace {

// The page's own style and script. The Content-Security-Policy names them
// by their hashes, so nothing else on the page could run or style it, even
// markup that escaped escaping.
constexpr std::string_view style = R"css(
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --panel: #f6f8fa; --accent: #0969da; --ok: #1a7f37; --bad: #cf222e; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --panel: #151b23;
    --accent: #4493f8; --ok: #3fb950; --bad: #f85149; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "Liberation Sans",
  sans-serif; color: var(--fg); background: Canvas; }
header, main { max-width: 960px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; border-bottom: 1px solid var(--line); }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 12px; }
header p { margin: 0 0 16px; color: var(--muted); }
code, pre, textarea, select { font: 13px/1.45 ui-monospace, "Liberation Mono", monospace; }
form { display: grid; grid-template-columns: 9em 1fr; gap: 10px 12px; align-items: start;
  padding: 16px; border: 1px solid var(--line); border-radius: 8px; background: var(--panel); }
label { padding-top: 4px; font-weight: 600; }
select, textarea { width: 100%; padding: 5px 8px; color: inherit; background: Canvas;
  border: 1px solid var(--line); border-radius: 6px; }
textarea { resize: vertical; min-height: 4.5em; }
button { grid-column: 2; justify-self: start; padding: 6px 18px; font: inherit;
  font-weight: 600; color: #fff; background: var(--accent); border: 0; border-radius: 6px;
  cursor: pointer; }
.outcome { margin: 12px 0 0; }
#status { margin: 0 0 4px; font-weight: 600; color: var(--muted); }
#status.ok { color: var(--ok); }
#status.error { color: var(--bad); }
#result { margin: 0; padding: 12px; min-height: 3em; white-space: pre-wrap;
  overflow-wrap: anywhere; border: 1px solid var(--line); border-radius: 6px; }
#result.error { border-color: var(--bad); }
.note { padding: 12px 16px; border: 1px solid var(--line); border-left: 4px solid var(--accent);
  border-radius: 6px; background: var(--panel); }
.methods { list-style: none; margin: 0 0 40px; padding: 0; }
.method { padding: 12px 0; border-top: 1px solid var(--line); }
.method-head { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.method-name { font-size: 15px; font-weight: 700; overflow-wrap: anywhere; }
.signature { color: var(--muted); overflow-wrap: anywhere; }
.try { margin-left: auto; padding: 0; font-size: 13px; font-weight: 600; color: var(--accent);
  background: none; border: 0; cursor: pointer; }
.help { margin: 4px 0 0; white-space: pre-line; overflow-wrap: anywhere; }
.help.none { color: var(--muted); font-style: italic; }
)css";

constexpr std::string_view script = R"js(
"use strict";
(() => {
  const form = document.getElementById("call-form");
  const status = document.getElementById("status");
  const result = document.getElementById("result");
  let nextId = 1;
  const show = (kind, head, text) => {
    status.className = kind;
    status.textContent = head;
    result.className = kind;
    result.textContent = text;
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const method = form.elements.method.value;
    const text = form.elements.params.value.trim();
    const request = { jsonrpc: "2.0", method, id: nextId++ };
    if (text !== "") {
      let params;
      try {
        params = JSON.parse(text);
      } catch (e) {
        show("error", "Parameters", "The parameters are not JSON: " + e.message);
        return;
      }
      if (typeof params !== "object" || params === null) {
        show("error", "Parameters", "The parameters are a JSON array, or an object for named ones.");
        return;
      }
      request.params = params;
    }
    show("pending", "Calling " + method + " \u2026", "");
    try {
      const response = await fetch(location.pathname, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Accept": "application/json" },
        body: JSON.stringify(request),
        credentials: "same-origin",
        cache: "no-store",
      });
      if (!response.ok) {
        show("error", "HTTP " + response.status, (await response.text()).trim());
        return;
      }
      const reply = await response.json();
      if (reply.error !== undefined)
        show("error", "Error " + reply.error.code, JSON.stringify(reply.error, null, 2));
      else
        show("ok", "Result", JSON.stringify(reply.result, null, 2));
    } catch (e) {
      show("error", "Failed", "The call failed: " + e.message);
    }
  });
  for (const button of document.querySelectorAll("button.try")) {
    button.addEventListener("click", () => {
      form.elements.method.value = button.dataset.method;
      form.scrollIntoView({ behavior: "smooth" });
      form.elements.params.focus();
    });
  }
})();
)js";

// 'sha256-<base64>' of a style or script element's text, for the CSP.
std::string csp_hash(std::string_view text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  std::string out = "'sha256-";
  append_base64(out, std::span<const std::uint8_t>(digest.data(), digest.size()));
  out += '\'';
  return out;
}

// "(int a, int b) → int" from a signature (result first) and, when there
// are as many, the parameters' names.
void append_signature(std::string& out, const method& m) {
  out += '(';
  for (std::size_t i = 1; i < m.signature.size(); ++i) {
    if (i > 1) out += ", ";
    append_html_escaped(out, m.signature[i]);
    if (m.param_names.size() + 1 == m.signature.size()) {
      out += ' ';
      append_html_escaped(out, m.param_names[i - 1]);
    }
  }
  out += ") \u2192 ";
  append_html_escaped(out, m.signature[0]);
}

void append_method(std::string& out, const std::string& name, const method* m, bool callable) {
  out += "<li class=\"method\"><div class=\"method-head\"><code class=\"method-name\">";
  append_html_escaped(out, name);
  out += "</code>";
  if (m != nullptr && !m->signature.empty()) {
    out += "<code class=\"signature\">";
    append_signature(out, *m);
    out += "</code>";
  } else {
    out += "<span class=\"signature\">no declared signature</span>";
  }
  if (callable) {
    out += "<button type=\"button\" class=\"try\" data-method=\"";
    append_html_escaped(out, name);
    out += "\">Try it</button>";
  }
  out += "</div>";
  const std::string help = m != nullptr ? help_with_types(*m) : std::string();
  if (!help.empty()) {
    out += "<p class=\"help\">";
    append_html_escaped(out, help);
    out += "</p>";
  } else {
    out += "<p class=\"help none\">No help text.</p>";
  }
  out += "</li>\n";
}

void append_form(std::string& out, const std::vector<std::string>& names) {
  out +=
      "<h2>Call a method</h2>\n"
      "<form id=\"call-form\" autocomplete=\"off\">\n"
      "<label for=\"method\">Method</label><select id=\"method\" name=\"method\">";
  for (const auto& name : names) {
    out += "<option value=\"";
    append_html_escaped(out, name);
    out += "\">";
    append_html_escaped(out, name);
    out += "</option>";
  }
  out +=
      "</select>\n"
      "<label for=\"params\">Parameters</label><textarea id=\"params\" name=\"params\" rows=\"3\" "
      "spellcheck=\"false\" placeholder=\"[3, 5]   (a JSON array, or an object of named "
      "parameters)\"></textarea>\n"
      "<button type=\"submit\" id=\"call\">Call</button>\n"
      "</form>\n"
      "<div class=\"outcome\" aria-live=\"polite\"><p id=\"status\"></p>"
      "<pre id=\"result\"></pre></div>\n";
}

}  // namespace

api_page make_api_page(const registry& methods, const api_page_options& options) {
  const std::vector<std::string> names = methods.names();
  api_page page;
  std::string& out = page.html;
  out.reserve(16 * 1024);
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<link rel=\"icon\" href=\"data:,\">\n<title>";
  append_html_escaped(out, options.server_name);
  out += " API</title>\n<style>";
  out += style;
  out += "</style>\n</head>\n<body>\n<header><h1>";
  append_html_escaped(out, options.server_name);
  out += "</h1><p>";
  out += std::to_string(names.size());
  out += names.size() == 1 ? " method" : " methods";
  out += options.jsonrpc ? ", served on this URL over XML-RPC and JSON-RPC 2.0 (POST)."
                         : ", served on this URL over XML-RPC (POST).";
  if (options.jsonrpc && methods.lookup("rpc.discover"))
    out += " Their OpenRPC document is the result of <code>rpc.discover</code> (below).";
  out += "</p></header>\n<main>\n";
  if (options.jsonrpc) {
    append_form(out, names);
  } else {
    out +=
        "<h2>Call a method</h2>\n<p class=\"note\" id=\"no-form\">Calls from this page need "
        "JSON-RPC, which this server does not serve: call the methods with an XML-RPC "
        "client.</p>\n";
  }
  out += "<h2>Methods</h2>\n<ul class=\"methods\" id=\"methods\">\n";
  for (const auto& name : names)
    if (const found_method m = methods.lookup(name)) append_method(out, name, m.m, options.jsonrpc);
  out += "</ul>\n</main>\n";
  if (options.jsonrpc) {
    out += "<script>";
    out += script;
    out += "</script>\n";
  }
  out += "</body>\n</html>\n";

  page.headers = "Content-Security-Policy: default-src 'none'; style-src ";
  page.headers += csp_hash(style);
  if (options.jsonrpc) {
    page.headers += "; script-src ";
    page.headers += csp_hash(script);
    page.headers += "; connect-src 'self'";
  }
  page.headers +=
      "; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n"
      "X-Content-Type-Options: nosniff\r\n"
      "Cache-Control: no-cache\r\n"
      "Vary: Accept, Accept-Encoding\r\n";
  if (options.gzip_min_bytes != 0 && out.size() >= options.gzip_min_bytes)
    http::gzip(out, page.gzipped);
  return page;
}

}  // namespace rapidrpc::detail
