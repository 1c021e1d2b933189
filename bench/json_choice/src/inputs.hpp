// The three request texts the benchmark times.
#pragma once

#include "json.hpp"

#include <string>

namespace json_choice {

// 1. The smallest useful call.
inline std::string small_request() {
  return R"({"jsonrpc":"2.0","method":"sample.add","params":[3,5],"id":1})";
}

// 2. echo of one 1,000-element array mixing i4, i8, doubles and short strings:
//    params is [[...1000 items...]].
inline std::string array_request() {
  std::string out = R"({"jsonrpc":"2.0","method":"echo","params":[[)";
  for (int i = 0; i < 1000; ++i) {
    if (i) out += ',';
    switch (i % 4) {
      case 0:
        out += std::to_string(i * 37 - 5000);
        break;  // i4
      case 1:
        out += std::to_string(5'000'000'000LL + i);
        break;  // i8
      case 2:
        baseline::append_number(out, i * 0.125 + 0.001);
        break;  // double
      case 3:
        out += "\"item-" + std::to_string(i) + '"';
        break;  // string (no escapes)
    }
  }
  out += R"(]],"id":2})";
  return out;
}

// 3. A batch of ten sample.add calls.
inline std::string batch_request() {
  std::string out = "[";
  for (int i = 1; i <= 10; ++i) {
    if (i > 1) out += ',';
    out += R"({"jsonrpc":"2.0","method":"sample.add","params":[)" + std::to_string(i) + "," +
           std::to_string(i * 2) + R"(],"id":)" + std::to_string(i) + "}";
  }
  out += "]";
  return out;
}

}  // namespace json_choice
