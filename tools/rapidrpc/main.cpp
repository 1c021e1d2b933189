// rapidrpc: the command-line XML-RPC client and load generator.
//
//   rapidrpc call URL METHOD [ARGS...]    one call, the result on stdout
//   rapidrpc bench URL METHOD [ARGS...]   load, checked answers, latency figures
//
// This file only turns the command line into options (commands.hpp); the
// work is in commands.cpp, loadgen.cpp and bench_report.cpp.
#include "arguments.hpp"
#include "commands.hpp"

#include <rapidrpc/zmq_client.hpp>

#include <CLI/CLI.hpp>

#include <cctype>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace rapidrpc::cli;

// "Name: value" -> {Name, value}; throws CLI::ValidationError.
std::pair<std::string, std::string> parse_header(const std::string& text) {
  auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0)
    throw CLI::ValidationError("--header", "expected 'Name: value', got '" + text + "'");
  std::string name = text.substr(0, colon);
  for (char c : name) {
    bool token = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!token) throw CLI::ValidationError("--header", "bad header name '" + name + "'");
  }
  std::string value = text.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
  if (value.find_first_of("\r\n") != std::string::npos)
    throw CLI::ValidationError("--header", "a header value cannot hold a line break");
  return {name, value};
}

rapidrpc::array parse_arguments(const std::vector<std::string>& args) {
  rapidrpc::array out;
  out.reserve(args.size());
  for (const auto& a : args) out.push_back(parse_argument(a));
  return out;
}

// CLI11 reads a "[a,b]" value of a list option as two values, but a JSON
// array argument must arrive whole. Such arguments get a mark before parsing
// (a control character no one types) that unmark() takes off again.
constexpr char array_mark = '\x1f';

std::vector<std::string> marked_arguments(int argc, char** argv) {
  std::vector<std::string> out(argv, argv + argc);
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i].size() >= 2 && out[i].front() == '[' && out[i].back() == ']')
      out[i].insert(0, 1, array_mark);
  return out;
}

void unmark(std::string& s) {
  if (!s.empty() && s.front() == array_mark) s.erase(0, 1);
}

void unmark(std::vector<std::string>& v) {
  for (auto& s : v) unmark(s);
}

const std::string url_help =
    "http[s]://[user:password@]host[:port][/path] (the path defaults to /RPC2), or a ZeroMQ "
    "endpoint "
    "tcp://host:port or ipc://path (JSON-RPC 2.0 over a DEALER socket)";

// A ZeroMQ URL takes none of the HTTP options; throws argument_error naming
// the first one given.
void check_zmq_options(const std::string& url, CLI::Option* protocol_opt,
                       rapidrpc::protocol protocol, std::initializer_list<CLI::Option*> http_only) {
  if (!rapidrpc::zmq_endpoint::is_zmq_url(url)) return;
  if (protocol_opt->count() > 0 && protocol != rapidrpc::protocol::jsonrpc)
    throw argument_error(
        "a tcp:// or ipc:// URL speaks JSON-RPC 2.0 only; -P xmlrpc needs an http[s]:// URL");
  for (auto* opt : http_only)
    if (opt->count() > 0)
      throw argument_error(opt->get_name() + " applies to http[s]:// URLs only, not to " + url);
}
constexpr const char* cacert_help =
    "https: verify the server with the CA certificates in this PEM file instead of the system's";
constexpr const char* insecure_help =
    "https: do not verify the server's certificate or name (INSECURE: anyone on the path can read "
    "and change the traffic; for tests only)";

const std::string forms_footer =
    std::string("\n") + argument_forms_help +
    "\n\nAn argument that starts with '-' and is not a number goes after '--'.";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rapidrpc: call an XML-RPC or JSON-RPC server, or load it and measure (see docs/cli.md)",
      "rapidrpc"};
  app.set_version_flag("--version", "rapidrpc " RAPIDRPC_VERSION);
  app.require_subcommand(1);
  const std::map<std::string, rapidrpc::protocol> protocols{
      {"xmlrpc", rapidrpc::protocol::xmlrpc}, {"jsonrpc", rapidrpc::protocol::jsonrpc}};
  // -P's names, case aside, turned into the enum's numbers, which CLI11
  // reads into it. (Its CheckedTransformer would print the enum's values,
  // one-byte integers, as raw bytes in --help and in its message.)
  const CLI::Validator protocol_names(
      [&protocols](std::string& name) -> std::string {
        std::string lower = name;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        auto found = protocols.find(lower);
        if (found == protocols.end()) return "'" + name + "' is not a protocol: xmlrpc or jsonrpc";
        name = std::to_string(static_cast<int>(found->second));
        return {};
      },
      "{xmlrpc,jsonrpc}");

  // ---- call ----
  call_options call;
  std::vector<std::string> call_args, call_headers;
  bool call_json = false, call_xml = false;
  auto* c =
      app.add_subcommand("call", "Call METHOD on the server at URL once and print the result");
  c->add_option("URL", call.url, url_help)->required();
  c->add_option("METHOD", call.method, "The method name, e.g. sample.add")->required();
  c->add_option("ARGS", call_args, "The parameters, one argument each (forms below)");
  auto* json_flag = c->add_flag("--json", call_json,
                                "Print the result as JSON (JSON-RPC's mapping, docs/jsonrpc.md)");
  c->add_flag("--raw,--xml", call_xml,
              "Print the response body as received (the methodResponse document, or the "
              "JSON-RPC response)")
      ->excludes(json_flag);
  auto* call_protocol =
      c->add_option("-P,--protocol", call.protocol,
                    "xmlrpc or jsonrpc (JSON-RPC 2.0); tcp:// and ipc:// speak jsonrpc")
          ->transform(protocol_names)
          ->default_str("xmlrpc");
  c->add_option("--timeout", call.timeout, "Seconds the whole call may take (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  auto* call_header = c->add_option("-H,--header", call_headers,
                                    "An extra request header 'Name: value' (repeatable)");
  c->add_flag("-v,--verbose", call.verbose,
              "Show the request and the response, headers included, on stderr");
  auto* call_ca = c->add_option("--cacert", call.ca_file, cacert_help);
  auto* call_insecure =
      c->add_flag("-k,--insecure", call.insecure, insecure_help)->excludes(call_ca);
  c->footer(
      "Exit status: 0 result, 1 fault (\"fault CODE: MESSAGE\" on stderr), 2 no answer "
      "(connection, timeout, HTTP error), 64 bad command line.\n" +
      forms_footer +
      "\n\nExamples:\n"
      "  rapidrpc call http://localhost:6677/RPC2 sample.add i/3 i/5\n"
      "  rapidrpc call http://localhost:6677/RPC2 echo '{\"a\":[1,2.5,\"x\",null]}' --json\n"
      "  rapidrpc call -v http://localhost:6677 system.listMethods\n"
      "  rapidrpc call -P jsonrpc http://localhost:6677/RPC2 sample.add 3 5\n"
      "  rapidrpc call --raw tcp://127.0.0.1:5555 sample.add 3 5");

  // ---- bench ----
  bench_options bench;
  bench_outputs outputs;
  std::vector<std::string> bench_args, bench_headers;
  std::string expect_json;
  auto* b = app.add_subcommand("bench",
                               "Load the server with calls of METHOD, check every answer, measure");
  b->add_option("URL", bench.url, url_help)->required();
  b->add_option("METHOD", bench.method, "The method to call")->required();
  b->add_option("ARGS", bench_args, "Its parameters, one argument each (forms below)");
  b->add_option("-c,--connections", bench.connections,
                "Connections open at once (tcp://, ipc://: DEALER sockets)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  b->add_option("--in-flight", bench.in_flight,
                "tcp://, ipc://: calls kept in flight on each socket (http[s]://: 1 only)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}));
  auto* n_opt = b->add_option("-n,--requests", bench.requests, "Make this many calls, then stop")
                    ->check(CLI::PositiveNumber);
  b->add_option("-d,--duration", bench.duration,
                "Run for this many seconds (when --requests is not given); calls still in flight "
                "then are abandoned and reported, not counted")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->excludes(n_opt);
  auto* keep_alive = b->add_flag(
      "--keep-alive,!--no-keep-alive", bench.keep_alive,
      "Reuse each connection for its next call (the default); --no-keep-alive opens a new "
      "connection per call, timed from connect to the last byte of the answer");
  b->add_option(
       "-r,--rate", bench.rate,
       "Open loop: start this many calls per second in all, on a fixed schedule, whether or not "
       "earlier ones were answered; latency runs from each call's scheduled start (0: closed loop, "
       "each connection calls again as soon as it is answered)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  b->add_option("-t,--threads", bench.threads,
                "Threads, each with its own event loop and a share of the connections")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  b->add_option("--timeout", bench.timeout,
                "Seconds one call may take before it counts as an error")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  b->add_option("--max-idle", bench.max_idle,
                "Seconds a keep-alive connection may have been idle and still carry the next call; "
                "one idle longer is opened anew first, as a server may be closing it (keep this "
                "below the server's keep-alive timeout; 0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  auto* bench_header = b->add_option("-H,--header", bench_headers,
                                     "An extra request header 'Name: value' (repeatable)");
  auto* bench_protocol =
      b->add_option("-P,--protocol", bench.protocol,
                    "xmlrpc or jsonrpc (JSON-RPC 2.0); tcp:// and ipc:// speak jsonrpc")
          ->transform(protocol_names)
          ->default_str("xmlrpc");
  auto* bench_ca = b->add_option("--cacert", bench.ca_file, cacert_help);
  auto* bench_insecure =
      b->add_flag("-k,--insecure", bench.insecure, insecure_help)->excludes(bench_ca);
  b->add_option(
      "--expect", expect_json,
      "The result every call must return, as JSON (default: the result of one warm-up call made "
      "before the run)");
  b->add_flag("--json", outputs.json, "Print the summary as one JSON object");
  b->add_flag("-q,--quiet", outputs.quiet,
              "No live line: on a terminal, one line on stderr, refreshed each second while the "
              "load runs (elapsed, calls, calls/s, errors, p99 so far) and erased before the "
              "summary; --quiet leaves out that line only");
  b->add_option("--report", outputs.report_path,
                "Also write a self-contained HTML report (settings, summary, charts) to this file");
  b->footer(
      "Every answer is checked: an HTTP error, a fault, or a result other than the expected one "
      "counts as an error.\nExit status: 0 all calls answered as expected, 1 some failed, 2 the "
      "run "
      "could not start, 64 bad command line.\n" +
      forms_footer +
      "\n\nExamples:\n"
      "  rapidrpc bench -c 64 -t 2 -d 10 http://localhost:6677/RPC2 sample.add i/3 i/5\n"
      "  rapidrpc bench --no-keep-alive -c 20 -n 1000 http://localhost:6677/RPC2 load i/150000\n"
      "  rapidrpc bench -r 5000 -c 64 -d 30 --report run.html http://localhost:6677/RPC2 echo "
      "s/hi\n"
      "  rapidrpc bench -c 1 --in-flight 64 -d 10 tcp://127.0.0.1:5555 sample.add 3 5");

  std::vector<std::string> args = marked_arguments(argc, argv);
  std::vector<const char*> arg_ptrs;
  arg_ptrs.reserve(args.size());
  for (const auto& a : args) arg_ptrs.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : exit_status::usage;
  }
  for (auto* s : {&call.url, &call.method, &bench.url, &bench.method, &expect_json,
                  &outputs.report_path, &call.ca_file, &bench.ca_file})
    unmark(*s);
  for (auto* v : {&call_args, &call_headers, &bench_args, &bench_headers}) unmark(*v);

  try {
    if (c->parsed()) {
      check_zmq_options(call.url, call_protocol, call.protocol,
                        {call_header, call_ca, call_insecure});
      if (rapidrpc::zmq_endpoint::is_zmq_url(call.url)) call.protocol = rapidrpc::protocol::jsonrpc;
      call.params = parse_arguments(call_args);
      for (const auto& h : call_headers) call.headers.push_back(parse_header(h));
      call.format = call_json  ? output_format::json
                    : call_xml ? output_format::raw
                               : output_format::readable;
      return run_call(call);
    }
    check_zmq_options(bench.url, bench_protocol, bench.protocol,
                      {bench_header, bench_ca, bench_insecure, keep_alive});
    if (rapidrpc::zmq_endpoint::is_zmq_url(bench.url))
      bench.protocol = rapidrpc::protocol::jsonrpc;
    else if (bench.in_flight > 1)
      throw argument_error("--in-flight " + std::to_string(bench.in_flight) +
                           ": an http[s]:// connection has one call in flight (no pipelining); "
                           "use more --connections, or a tcp:// or ipc:// URL");
    bench.params = parse_arguments(bench_args);
    for (const auto& h : bench_headers) bench.headers.push_back(parse_header(h));
    if (!expect_json.empty()) bench.expect = parse_json_argument("--expect", expect_json);
    return run_bench_command(bench, outputs);
  } catch (const argument_error& e) {
    std::cerr << "rapidrpc: " << e.what() << "\n";
    return exit_status::usage;
  } catch (const CLI::ValidationError& e) {
    std::cerr << "rapidrpc: " << e.what() << "\n";
    return exit_status::usage;
  }
}
