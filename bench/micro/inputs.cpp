#include "inputs.hpp"

#include <rapidrpc/jsonrpc.hpp>
#include <rapidrpc/xmlrpc.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace bench::micro {
namespace {

using namespace rapidrpc;

constexpr std::int32_t array_elements = 200'000;
constexpr std::size_t blob_bytes = 10'000'000;

// bench/protocols' thousand(), 200,000 long: i * 7919 (fits 32 bits up to
// here), (i + 0.25) / 8, "item-<i>" in turn.
array mixed_array() {
  array a;
  a.reserve(array_elements);
  for (std::int32_t i = 0; i < array_elements; ++i) {
    if (i % 3 == 0)
      a.emplace_back(i * 7919);
    else if (i % 3 == 1)
      a.emplace_back((i + 0.25) / 8);
    else
      a.emplace_back("item-" + std::to_string(i));
  }
  return a;
}

constexpr std::int32_t struct_count = 2'000;
constexpr std::int32_t struct_members = 8;

// Records as a service lists them: "field<k>" holding i * k for odd k,
// "value <i>" for even k.
array records() {
  array a;
  a.reserve(struct_count);
  for (std::int32_t i = 0; i < struct_count; ++i) {
    structure s;
    for (std::int32_t k = 0; k < struct_members; ++k) {
      const std::string name = "field" + std::to_string(k);
      if (k % 2 != 0)
        s.try_emplace(name, i * k);
      else
        s.try_emplace(name, "value " + std::to_string(i));
    }
    a.emplace_back(std::move(s));
  }
  return a;
}

// Every byte value, in an order that repeats only every 256 bytes.
bytes blob() {
  std::vector<std::uint8_t> data(blob_bytes);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 167 + 13);
  return bytes(std::move(data));
}

std::unique_ptr<call> make(input in) {
  auto c = std::make_unique<call>();
  switch (in) {
    case input::small:
      c->method = "sample.add";
      c->params = array{3, 5};
      c->result = 8;
      break;
    case input::array:
      c->method = "echo";
      c->params = array{mixed_array()};
      c->result = c->params.front();
      c->items = array_elements;
      break;
    case input::base64:
      c->method = "echo";
      c->params = array{blob()};
      c->result = c->params.front();
      break;
    case input::structs:
      c->method = "echo";
      c->params = array{records()};
      c->result = c->params.front();
      c->items = std::int64_t{struct_count} * struct_members;
      break;
  }
  xmlrpc::write_call(c->xml_call, c->method, c->params);
  xmlrpc::write_response(c->xml_response, c->result);
  jsonrpc::write_request(c->json_request, c->method, c->params, json_id);
  jsonrpc::write_result(c->json_response, json_id, c->result);
  return c;
}

}  // namespace

const call& call_of(input in) {
  static std::array<std::unique_ptr<call>, 4> made;
  auto& slot = made.at(static_cast<std::size_t>(in));
  if (!slot) slot = make(in);
  return *slot;
}

}  // namespace bench::micro
