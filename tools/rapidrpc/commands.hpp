// The subcommands of `rapidrpc`. main.cpp parses the command line into these
// option structs and calls one; each returns the process exit status.
#pragma once

#include "loadgen.hpp"

#include <rapidrpc/value.hpp>

#include <string>
#include <utility>
#include <vector>

namespace rapidrpc::cli {

/// Exit statuses.
namespace exit_status {
inline constexpr int ok = 0;
inline constexpr int fault = 1;  ///< call: the server answered with a fault; bench: a call failed
inline constexpr int transport = 2;  ///< call: no answer; bench: the run could not start
inline constexpr int usage = 64;     ///< bad command line (BSD's EX_USAGE)
}  // namespace exit_status

/// How `call` prints its result: readable, as JSON, or the response body as
/// it came (XML or JSON).
enum class output_format : unsigned char { readable, json, raw };

struct call_options {
  std::string url;
  std::string method;
  array params;
  output_format format = output_format::readable;
  double timeout = 60;  ///< seconds; 0: no limit
  std::vector<std::pair<std::string, std::string>> headers;
  bool verbose = false;  ///< show the request and response on stderr
  rapidrpc::protocol protocol = protocol::xmlrpc;
  std::string ca_file;    ///< https: CA certificates to verify with (empty: the system's)
  bool insecure = false;  ///< https: accept any certificate (no verification)
};

/// `rapidrpc call`: one call, the result on stdout.
int run_call(const call_options& options);

struct bench_outputs {
  bool json = false;        ///< the summary as JSON on stdout
  bool quiet = false;       ///< no live line while the load runs
  std::string report_path;  ///< write an HTML report here (empty: none)
};

/// `rapidrpc bench`: the load, with the live line on a terminal
/// (live_line.hpp), then the summary (and report).
int run_bench_command(const bench_options& options, const bench_outputs& outputs);

}  // namespace rapidrpc::cli
