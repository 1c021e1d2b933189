#include "commands.hpp"

#include "bench_report.hpp"
#include "live_line.hpp"
#include "output.hpp"
#include "zmq_loadgen.hpp"

#include <rapidrpc/client.hpp>
#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/xmlrpc.hpp>
#include <rapidrpc/zmq_client.hpp>

#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

namespace rapidrpc::cli {

namespace {

void show_trace(const wire_trace& t) {
  std::cerr << "--- request ---\n" << t.request;
  if (!t.request.empty() && t.request.back() != '\n') std::cerr << '\n';
  std::cerr << "--- response ---\n" << t.response_header;
  if (!t.response_header.empty() && t.response_header.find("\r\n\r\n") == std::string::npos)
    std::cerr << "\r\n";
  std::cerr << t.response_body;
  if (!t.response_body.empty() && t.response_body.back() != '\n') std::cerr << '\n';
  std::cerr << "--- end ---\n";
}

// Prints a call's result (raw output was printed already) or its fault;
// returns the exit status.
int print_outcome(const outcome& result, output_format format) {
  if (const auto* f = std::get_if<fault>(&result)) {
    if (format == output_format::json) {
      std::string out = "{\"faultCode\":" + std::to_string(f->code()) + ",\"faultString\":";
      jsonrpc::write_string(out, f->message(), jsonrpc::invalid_utf8::replace);
      std::cout << out << "}\n";
    }
    std::cerr << "fault " << f->code() << ": " << f->message() << "\n";
    return exit_status::fault;
  }
  const value& v = std::get<value>(result);
  if (format == output_format::json)
    std::cout << to_json(v) << "\n";
  else if (format == output_format::readable)
    std::cout << readable(v) << "\n";
  return exit_status::ok;
}

// A tcp:// or ipc:// URL: one JSON-RPC 2.0 frame each way over ZeroMQ.
int run_zmq_call(const call_options& o) {
  zmq_client_options copts;
  copts.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout * 1000));
  wire_trace trace;
  auto show = [&] {
    if (o.verbose)
      std::cerr << "--- request frame ---\n"
                << trace.request << "\n--- reply frame ---\n"
                << trace.response_body << "\n--- end ---\n";
    if (o.format == output_format::raw && !trace.response_body.empty()) {
      std::cout << trace.response_body;
      if (trace.response_body.back() != '\n') std::cout << '\n';
    }
  };
  outcome result;
  try {
    zmq_client c(o.url, copts);
    c.trace(&trace);
    try {
      result = c.call(o.method, o.params);
    } catch (const fault& f) {
      result = f;
    }
  } catch (const transport_error& e) {
    show();
    std::cerr << "rapidrpc: " << e.what() << "\n";
    return exit_status::transport;
  } catch (const std::invalid_argument& e) {
    std::cerr << "rapidrpc: " << e.what() << "\n";
    return exit_status::usage;
  } catch (const std::runtime_error& e) {  // ZeroMQ refused the socket or endpoint
    std::cerr << "rapidrpc: " << e.what() << "\n";
    return exit_status::transport;
  }
  show();
  return print_outcome(result, o.format);
}

}  // namespace

int run_call(const call_options& o) {
  if (zmq_endpoint::is_zmq_url(o.url)) return run_zmq_call(o);
  client_options copts;
  copts.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout * 1000));
  if (o.timeout > 0 && copts.timeout < copts.connect_timeout) copts.connect_timeout = copts.timeout;
  copts.headers = o.headers;
  copts.keep_alive = false;
  copts.protocol = o.protocol;
  copts.tls_ca_file = o.ca_file;
  copts.tls_verify = !o.insecure;
  wire_trace trace;
  try {
    client c(o.url, copts);
    bool want_trace = o.verbose || o.format == output_format::raw;
    if (want_trace) c.trace(&trace);
    outcome result;
    try {
      result = c.call(o.method, o.params);
    } catch (const fault& f) {
      result = f;
    }
    if (o.verbose) show_trace(trace);
    if (o.format == output_format::raw) {
      std::cout << trace.response_body;
      if (!trace.response_body.empty() && trace.response_body.back() != '\n') std::cout << '\n';
    }
    return print_outcome(result, o.format);
  } catch (const transport_error& e) {
    if (o.verbose) show_trace(trace);
    std::cerr << "rapidrpc: " << e.what() << "\n";
    return exit_status::transport;
  } catch (const std::invalid_argument& e) {
    std::cerr << "rapidrpc: " << e.what() << "\n";
    return exit_status::usage;
  }
}

int run_bench_command(const bench_options& options, const bench_outputs& outputs) {
  bench_result r;
  std::optional<live_line> live;
  if (live_line::wanted(outputs.json, outputs.quiet))
    live.emplace(options.duration, options.requests, STDERR_FILENO);
  live_line* shown = live ? &*live : nullptr;
  try {
    r = is_zmq_bench(options) ? run_zmq_bench(options, shown) : run_bench(options, shown);
  } catch (const bench_error& e) {
    std::cerr << "rapidrpc bench: " << e.what() << "\n";
    return exit_status::transport;
  }
  if (outputs.json)
    std::cout << summary_json(r);
  else
    std::cout << summary_text(r);
  std::cout.flush();
  if (!outputs.report_path.empty()) {
    std::ofstream f(outputs.report_path, std::ios::binary | std::ios::trunc);
    f << report_html(r);
    f.close();
    if (!f) {
      std::cerr << "rapidrpc bench: cannot write " << outputs.report_path << "\n";
      return exit_status::transport;
    }
    if (!outputs.json) std::cout << "  report      " << outputs.report_path << "\n";
  }
  return r.errors.total() || r.ok == 0 ? exit_status::fault : exit_status::ok;
}

}  // namespace rapidrpc::cli
