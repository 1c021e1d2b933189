// Feeds each reader the inputs a JSON-RPC codec must reject (or must keep
// intact) and prints a Markdown table of what each did. Every cell runs in a
// child process, so a reader that overflows the stack shows as a crash
// instead of ending the report.
#include "readers.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace json_choice;

struct test_case {
  const char* name;
  std::string text;
};

std::string nest(std::size_t n) { return std::string(n, '[') + std::string(n, ']'); }

std::vector<test_case> cases() {
  using namespace std::string_literals;
  return {
      {"valid call (control)", R"({"method":"a","params":[1,-2147483649,2.5,"x",true,null]})"},
      {"invalid UTF-8: byte FF", "[\"a\xff\"]"},
      {"invalid UTF-8: overlong C0 AF", "[\"\xc0\xaf\"]"},
      {"invalid UTF-8: truncated E2 82", "[\"\xe2\x82\"]"},
      {"invalid UTF-8: encoded surrogate ED A0 80", "[\"\xed\xa0\x80\"]"},
      {"invalid UTF-8: above U+10FFFF F4 90 80 80", "[\"\xf4\x90\x80\x80\"]"},
      {"lone high surrogate \"\\ud800\"", R"(["\ud800"])"},
      {"lone low surrogate \"\\udc00\"", R"(["\udc00"])"},
      {"high surrogate + non-surrogate \"\\ud800\\u0041\"", R"(["\ud800\u0041"])"},
      {"valid pair \"\\ud83d\\ude00\" (control)", R"(["\ud83d\ude00"])"},
      {"lone low surrogate as a key {\"\\udc00\":1}", R"({"\udc00":1})"},
      {"duplicate key {\"a\":1,\"a\":2}", R"({"a":1,"a":2})"},
      {"duplicate key after unescaping {\"a\":1,\"\\u0061\":2}", R"({"a":1,"\u0061":2})"},
      {"depth 64 (allowed)", nest(64)},
      {"depth 65 (limit 64)", nest(65)},
      {"100,000 '[' (unclosed)", std::string(100000, '[')},
      {"100,000 '[' + 100,000 ']'", nest(100000)},
      {"NUL escape \"a\\u0000b\" (keep 3 bytes)", R"(["a\u0000b"])"},
      {"raw NUL byte inside a string", "[\"a\0b\"]"s},
      {"raw NUL byte after the value", "[1]\0[2]"s},
      {"trailing text \"[1] x\"", "[1] x"},
      {"two values \"[1][2]\"", "[1][2]"},
      {"trailing comma [1,]", "[1,]"},
      {"comment [1]//c", "[1]//c"},
      {"INT64_MAX 9223372036854775807", "[9223372036854775807]"},
      {"INT64_MIN -9223372036854775808", "[-9223372036854775808]"},
      {"2^63 9223372036854775808", "[9223372036854775808]"},
      {"-2^63-1 -9223372036854775809", "[-9223372036854775809]"},
      {"2^64 18446744073709551616", "[18446744073709551616]"},
      {"30 digits 123456789012345678901234567890", "[123456789012345678901234567890]"},
      {"1e400", "[1e400]"},
      {"-1e400", "[-1e400]"},
      {"1e-400 (underflow)", "[1e-400]"},
      {"leading zero 01", "[01]"},
      {"NaN", "[NaN]"},
      {"empty text", ""},
  };
}

struct candidate {
  const char* name;
  std::function<rapidrpc::value(const std::string&)> parse;
};

std::vector<candidate> candidates() {
  return {
      {"baseline (json.cpp)", [](const std::string& t) { return parse_baseline(t); }},
      {"simdjson On Demand",
       [](const std::string& t) {
         simdjson_reader r;
         return r.parse_copy(t);
       }},
      {"RapidJSON SAX",
       [](const std::string& t) {
         rapidjson_reader r;
         return r.parse(t);
       }},
      {"Boost.JSON basic_parser",
       [](const std::string& t) {
         boost_json_reader r;
         return r.parse(t);
       }},
      {"Boost.JSON, fed 1 byte at a time",
       [](const std::string& t) {
         boost_json_reader r;
         return r.parse_in_pieces(t, 1);
       }},
  };
}

std::string cell_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  if (out.size() > 80) out = out.substr(0, 77) + "...";
  return out;
}

// The outcome of one parse, run in a child with an 8 MiB stack (the default
// thread stack size) so that a stack overflow cannot go unnoticed.
std::string outcome(const candidate& c, const std::string& text) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    rlimit lim{8 << 20, 8 << 20};
    setrlimit(RLIMIT_STACK, &lim);
    std::string result;
    try {
      rapidrpc::value v = c.parse(text);
      result = "accepted: " + rapidrpc::to_debug_string(v);
      if (auto* a = v.get_if<rapidrpc::array>(); a && a->size() == 1) {
        if (auto* s = (*a)[0].get_if<std::string>())
          result += " (" + std::to_string(s->size()) + " bytes)";
      }
    } catch (const std::exception& e) {
      result = std::string("rejected: ") + e.what();
    }
    (void)!write(fds[1], result.data(), result.size());
    _exit(0);
  }
  close(fds[1]);
  std::string result;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    result.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "CRASHED (signal " + std::to_string(WTERMSIG(status)) + ")";
  return result;
}

}  // namespace

int main() {
  auto parsers = candidates();
  std::printf("| input |");
  for (auto& p : parsers) std::printf(" %s |", p.name);
  std::printf("\n|---|");
  for (std::size_t i = 0; i < parsers.size(); ++i) std::printf("---|");
  std::printf("\n");
  for (auto& tc : cases()) {
    std::printf("| %s |", cell_text(tc.name).c_str());
    for (auto& p : parsers) std::printf(" %s |", cell_text(outcome(p, tc.text)).c_str());
    std::printf("\n");
    std::fflush(stdout);
  }
}
