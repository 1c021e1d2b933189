// A program written against the installed rapidrpc::demo only: the demo
// service's methods go into a registry of its own, and its Fibonacci
// numbers (on GMP) are right. Exits 0, or 1 if anything is not.
#include <rapidrpc/demo.hpp>

#include <algorithm>
#include <iostream>
#include <string>

int main() {
  rapidrpc::registry methods;
  rapidrpc::demo::add_methods(methods);
  auto names = methods.names();
  for (const char* name : {"load", "sample.add", "echo", "sleep"}) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      std::cerr << "demo_consumer: no method " << name << '\n';
      return 1;
    }
  }
  // fib(100) is past 64 bits: GMP computed it.
  if (rapidrpc::demo::fibonacci(100) != "354224848179261915075") {
    std::cerr << "demo_consumer: fibonacci(100) is " << rapidrpc::demo::fibonacci(100) << '\n';
    return 1;
  }
  std::cout << "demo_consumer: the demo service is there\n";
  return 0;
}
