// A complete small XML-RPC client: calls the demo service of rapidrpcd.
//
//   build/bin/rapidrpcd --port 6677 &
//   build/bin/example_client                       # http://localhost:6677/RPC2
//   build/bin/example_client http://user:pw@host:8080/RPC2
#include <rapidrpc/client.hpp>

#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  std::string url = argc > 1 ? argv[1] : "http://localhost:6677/RPC2";
  try {
    rapidrpc::client client(url, {.timeout = std::chrono::seconds(30)});

    // Typed calls: the arguments become values, the result must be an int.
    auto sum = client.call<std::int32_t>("sample.add", 2, 3);
    std::cout << "sample.add(2, 3) = " << sum << '\n';

    // load(n) is CPU-heavy on the server and returns a decimal string.
    auto fib = client.call<std::string>("load", 100);
    std::cout << "load(100) = " << fib << '\n';

    // A fault is the server's answer, not a transport failure.
    try {
      client.call("sample.add", {std::numeric_limits<std::int32_t>::max(), 1});
    } catch (const rapidrpc::fault& f) {
      std::cout << "sample.add(INT32_MAX, 1) failed: fault " << f.code() << ": " << f.message()
                << '\n';
    }

    // Several calls in one request; each has its own outcome.
    auto results = client.multicall({{"sample.add", {40, 2}}, {"no.such.method", {}}});
    for (const auto& r : results) {
      if (const auto* v = std::get_if<rapidrpc::value>(&r))
        std::cout << "multicall: " << rapidrpc::to_debug_string(*v) << '\n';
      else
        std::cout << "multicall: fault " << std::get<rapidrpc::fault>(r).code() << '\n';
    }
  } catch (const rapidrpc::transport_error& e) {
    std::cerr << "example_client: " << url << ": " << e.what() << '\n';
    return 1;
  } catch (const std::invalid_argument& e) {
    std::cerr << "example_client: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
