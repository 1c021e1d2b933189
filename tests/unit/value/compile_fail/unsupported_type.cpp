// Must not compile: a typed method whose parameter is a type rapidrpc
// cannot convert (a std::string_view would dangle once the call's
// parameters are gone). The compiler's message names the type and lists
// what is supported (tests/unit/value/CMakeLists.txt checks it).
#include <rapidrpc/registry.hpp>

#include <string_view>

int main() {
  rapidrpc::registry methods;
  methods.add("length", [](std::string_view s) { return static_cast<std::int32_t>(s.size()); });
}
