// A complete small XML-RPC server: two methods, one of them CPU-heavy.
//
//   build/bin/example_server 8080
//   python3 -c "import xmlrpc.client as c;
//   print(c.ServerProxy('http://localhost:8080').sample.add(2, 3))"
#include <rapidrpc/server.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  rapidrpc::server server(
      {.listen = {.host = "localhost",
                  .port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 8080)}});
  server.add(
      "sample.add", [](std::int32_t a, std::int32_t b) { return a + b; }, "Adds two integers.");
  server.add(
      "count_primes",
      [](std::int32_t below) {  // CPU-heavy: runs on the worker pool, never on a loop
        std::int32_t count = 0;
        for (std::int32_t n = 2; n < below; ++n) {
          bool prime = true;
          for (std::int32_t d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
          count += prime;
        }
        return count;
      },
      "Counts the primes below n.", rapidrpc::execution::pool);
  server.run();  // serves until server.stop() is called from another thread
}
