// A program written against the installed rapidrpc only: it starts a server
// on 127.0.0.1 (a free port) with a method of its own, calls it with the
// client over XML-RPC and JSON-RPC, checks the answers and exits 0 (1 if an
// answer is wrong, 2 if a call fails).
#include <rapidrpc/rapidrpc.hpp>

#include <cstdint>
#include <exception>
#include <iostream>
#include <string>

namespace {

bool expect(bool ok, const std::string& what) {
  if (!ok) std::cerr << "consumer: wrong answer: " << what << '\n';
  return ok;
}

}  // namespace

int main() {
  rapidrpc::server server({.listen = {.host = "127.0.0.1", .port = 0},
                           .serving = {.threads = 1},
                           .workers = {.count = 1}});
  server.add(
      "consumer.greet", [](std::string name) { return "hello, " + name; }, "Greets NAME.");
  server.add(
      "consumer.square", [](std::int64_t x) { return x * x; }, "Squares x.",
      rapidrpc::execution::pool);
  try {
    server.start();
    std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/RPC2";
    rapidrpc::client xml(url);
    rapidrpc::client json(url, {.protocol = rapidrpc::protocol::jsonrpc});
    bool ok = expect(xml.call<std::string>("consumer.greet", "xml") == "hello, xml",
                     "greet over XML-RPC");
    ok &= expect(json.call<std::string>("consumer.greet", "json") == "hello, json",
                 "greet over JSON-RPC");
    ok &= expect(xml.call<std::int64_t>("consumer.square", std::int64_t{3'000'000'000}) ==
                     9'000'000'000'000'000'000,
                 "square on the worker pool");
    try {
      xml.call("no.such.method");
      ok = expect(false, "a call of an unknown method succeeded");
    } catch (const rapidrpc::fault& f) {
      ok &= expect(f.code() == rapidrpc::fault_code::method_not_found,
                   "fault code " + std::to_string(f.code()));
    }
    server.stop();
    server.wait();
    if (!ok) return 1;
  } catch (const std::exception& e) {
    std::cerr << "consumer: " << e.what() << '\n';
    return 2;
  }
  std::cout << "consumer: the server answered\n";
  return 0;
}
