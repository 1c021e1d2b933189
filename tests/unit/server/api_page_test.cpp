// The API page (src/server/api_page.hpp): every method with its signature
// and help, markup from the registry shown as text, the form only with
// JSON-RPC, a Content-Security-Policy that names the page's own script and
// style by hash, and the gzip copy.
#include "server/api_page.hpp"

#include "http/gzip.hpp"

#include <rapidrpc/literals.hpp>

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rapidrpc::detail {
namespace {

constexpr std::string_view script_help = "Greets.\n<script>alert(1)</script> & 'so' \"on\"";
constexpr std::string_view script_help_escaped =
    "Greets.\n&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;so&#39; &quot;on&quot;";
constexpr std::string_view markup_name = "x\"><img src=x onerror=alert(2)>";
constexpr std::string_view markup_name_escaped = "x&quot;&gt;&lt;img src=x onerror=alert(2)&gt;";

registry sample_registry() {
  registry reg;
  reg.add(
      "sample.add", [](std::int32_t a, std::int32_t b) { return a + b; }, "Adds a and b.");
  reg.set_param_names("sample.add", {"a", "b"});
  reg.add(
      "greet", [](const std::string& who) { return "hi " + who; }, std::string(script_help));
  reg.add_raw(std::string(markup_name), [](const array&) { return value(true); });
  return reg;
}

std::size_t count(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string_view::npos;
       at = haystack.find(needle, at + needle.size()))
    ++n;
  return n;
}

// The text of the one element `tag` in `html` ("<tag>" ... "</tag>").
std::string_view element_text(std::string_view html, std::string_view tag) {
  std::string open = "<" + std::string(tag) + ">";
  std::string close = "</" + std::string(tag) + ">";
  auto begin = html.find(open);
  auto end = html.find(close);
  if (begin == std::string_view::npos || end == std::string_view::npos) return {};
  begin += open.size();
  return html.substr(begin, end - begin);
}

std::string sha256_source(std::string_view text) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  std::string out = "'sha256-";
  append_base64(out, std::span<const std::uint8_t>(digest.data(), digest.size()));
  return out + "'";
}

TEST(ApiPage, ListsEveryMethodInListMethodsOrder) {
  registry reg = sample_registry();
  api_page page = make_api_page(reg, {});
  std::size_t last = 0;
  for (const auto& name : reg.names()) {
    std::string escaped;
    append_html_escaped(escaped, name);
    std::string item = "<code class=\"method-name\">" + escaped + "</code>";
    EXPECT_EQ(count(page.html, item), 1u) << name;
    auto at = page.html.find(item);
    EXPECT_GT(at, last) << name << " is out of order";
    last = at;
    // And once in the form's choice of method.
    EXPECT_EQ(count(page.html, "<option value=\"" + escaped + "\">" + escaped + "</option>"), 1u)
        << name;
  }
  EXPECT_EQ(count(page.html, "<li class=\"method\">"), reg.names().size());
  EXPECT_NE(page.html.find("<title>rapidrpc API</title>"), std::string::npos);
}

TEST(ApiPage, ShowsSignaturesWithParameterNamesAndHelp) {
  registry reg = sample_registry();
  std::string html = make_api_page(reg, {}).html;
  EXPECT_NE(html.find("<code class=\"signature\">(int a, int b) \u2192 int</code>"),
            std::string::npos);
  EXPECT_NE(html.find("<code class=\"signature\">(string) \u2192 string</code>"),
            std::string::npos);
  EXPECT_NE(html.find("<p class=\"help\">Adds a and b.</p>"), std::string::npos);
  EXPECT_NE(html.find("<p class=\"help\">Returns the names of every method this server "
                      "offers.</p>"),
            std::string::npos);
  // A raw method declares no signature and here has no help.
  EXPECT_NE(html.find("<span class=\"signature\">no declared signature</span>"), std::string::npos);
  EXPECT_NE(html.find("<p class=\"help none\">No help text.</p>"), std::string::npos);
}

TEST(ApiPage, MarkupInHelpShowsAsText) {
  std::string html = make_api_page(sample_registry(), {}).html;
  EXPECT_NE(html.find("<p class=\"help\">" + std::string(script_help_escaped) + "</p>"),
            std::string::npos);
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  // The page's own script is the only one.
  EXPECT_EQ(count(html, "<script"), 1u);
}

TEST(ApiPage, MarkupInANameShowsAsText) {
  std::string html = make_api_page(sample_registry(), {}).html;
  EXPECT_EQ(html.find(markup_name), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  // In the list, in the form's option (an attribute and its text) and in the
  // "Try it" button's data attribute.
  EXPECT_EQ(count(html, markup_name_escaped), 4u);
}

TEST(ApiPage, LoadsNothingFromElsewhere) {
  api_page page = make_api_page(sample_registry(), {});
  EXPECT_EQ(page.html.find("http:"), std::string::npos);
  EXPECT_EQ(page.html.find("https:"), std::string::npos);
  EXPECT_EQ(page.html.find(" src=\""), std::string::npos);  // (the escaped name has "src=x")
  EXPECT_NE(page.headers.find("Content-Security-Policy: default-src 'none'; "), std::string::npos);
  EXPECT_NE(page.headers.find("; connect-src 'self'"), std::string::npos);
  EXPECT_NE(page.headers.find("\r\nX-Content-Type-Options: nosniff\r\n"), std::string::npos);
  EXPECT_EQ(page.headers.substr(page.headers.size() - 2), "\r\n");
  EXPECT_EQ(page.headers.find("unsafe-inline"), std::string::npos);
}

// A hash that does not match the element's text would leave the page
// without its script or style, with nothing on the page to say why.
TEST(ApiPage, PolicyHashesAreThoseOfThePagesScriptAndStyle) {
  api_page page = make_api_page(sample_registry(), {});
  std::string_view script = element_text(page.html, "script");
  std::string_view style = element_text(page.html, "style");
  ASSERT_FALSE(script.empty());
  ASSERT_FALSE(style.empty());
  EXPECT_NE(page.headers.find("script-src " + sha256_source(script) + ";"), std::string::npos)
      << page.headers;
  EXPECT_NE(page.headers.find("style-src " + sha256_source(style) + ";"), std::string::npos)
      << page.headers;
}

TEST(ApiPage, WithoutJsonRpcListsMethodsButHasNoForm) {
  registry reg = sample_registry();
  api_page page = make_api_page(reg, {.server_name = "xml only", .jsonrpc = false});
  EXPECT_EQ(page.html.find("<form"), std::string::npos);
  EXPECT_EQ(page.html.find("<script"), std::string::npos);
  EXPECT_EQ(page.html.find("class=\"try\""), std::string::npos);
  EXPECT_NE(page.html.find("Calls from this page need JSON-RPC"), std::string::npos);
  EXPECT_EQ(count(page.html, "<li class=\"method\">"), reg.names().size());
  EXPECT_EQ(page.headers.find("script-src"), std::string::npos);
  EXPECT_EQ(page.headers.find("connect-src"), std::string::npos);
  EXPECT_NE(page.html.find("<title>xml only API</title>"), std::string::npos);
}

TEST(ApiPage, ServerNameIsEscaped) {
  std::string html = make_api_page(registry{}, {.server_name = "<b>srv</b>"}).html;
  EXPECT_NE(html.find("<title>&lt;b&gt;srv&lt;/b&gt; API</title>"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
}

TEST(ApiPage, GzipCopyPastTheThreshold) {
  registry reg = sample_registry();
  api_page page = make_api_page(reg, {.gzip_min_bytes = 1});
  ASSERT_FALSE(page.gzipped.empty());
  EXPECT_LT(page.gzipped.size(), page.html.size());
  std::string inflated;
  ASSERT_EQ(http::gunzip(page.gzipped, inflated, 1 << 20), http::inflate_result::ok);
  EXPECT_EQ(inflated, page.html);
  EXPECT_TRUE(make_api_page(reg, {.gzip_min_bytes = 0}).gzipped.empty());
  EXPECT_TRUE(make_api_page(reg, {.gzip_min_bytes = 1 << 20}).gzipped.empty());
}

TEST(HtmlEscape, EscapesTheFiveSpecialCharacters) {
  std::string out = "kept:";
  append_html_escaped(out, "a&b<c>d\"e'f\xc3\xa9");
  EXPECT_EQ(out, "kept:a&amp;b&lt;c&gt;d&quot;e&#39;f\xc3\xa9");
}

}  // namespace
}  // namespace rapidrpc::detail
