// Must not compile: a coroutine method taking a parameter by reference (its
// frame would keep a reference to an argument gone once the call started).
// tests/unit/value/CMakeLists.txt reads the compiler's message.
#include <rapidrpc/registry.hpp>

#include <string>

int main() {
  rapidrpc::registry methods;
  methods.add("length", [](const std::string& s) -> boost::asio::awaitable<std::int32_t> {
    co_return static_cast<std::int32_t>(s.size());
  });
}
