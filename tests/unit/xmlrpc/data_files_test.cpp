// Wire-format cases kept as files: tests/data/xmlrpc/{call,response}/NAME.xml
// with the outcome the parser must report in NAME.expected. python-* files
// are exactly what Python 3.11's xmlrpc.client sends (make_python_cases.py).
#include "paths.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <ostream>

namespace rapidrpc::xmlrpc {
namespace {

namespace fs = std::filesystem;

struct data_case {
  std::string name;  // "call/python-int"
  document_type type;
};

// Shown by gtest (and, with CMake 3.25, in the ctest test names): keep it
// short and stable.
void PrintTo(const data_case& c, std::ostream* os) { *os << c.name; }

std::vector<data_case> data_cases() {
  std::vector<data_case> cases;
  for (const auto& [dir, type] :
       {std::pair{"call", document_type::call}, std::pair{"response", document_type::response}}) {
    for (const auto& entry :
         fs::directory_iterator(fs::path(rapidrpc::test::test_data_dir) / "xmlrpc" / dir)) {
      if (entry.path().extension() == ".xml") {
        cases.push_back({std::string(dir) + "/" + entry.path().stem().string(), type});
      }
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return cases;
}

class DataFile : public testing::TestWithParam<data_case> {};

TEST_P(DataFile, ParsesToTheExpectedOutcomeHoweverItIsSplit) {
  const std::string base =
      std::string(rapidrpc::test::test_data_dir) + "/xmlrpc/" + GetParam().name;
  const std::string doc = test::read_file(base + ".xml");
  std::string expected = test::read_file(base + ".expected");
  while (!expected.empty() && expected.back() == '\n') expected.pop_back();
  EXPECT_EQ(test::parse_every_way(GetParam().type, doc), expected);
}

TEST_P(DataFile, RoundTripsThroughTheWriters) {
  // What we parse, we write back so that it parses to the same thing.
  const std::string base =
      std::string(rapidrpc::test::test_data_dir) + "/xmlrpc/" + GetParam().name;
  const std::string doc = test::read_file(base + ".xml");
  std::string written;
  if (GetParam().type == document_type::call) {
    auto parsed = parse_call(doc);
    ASSERT_TRUE(std::holds_alternative<method_call>(parsed));
    const auto& call = std::get<method_call>(parsed);
    write_call(written, call.method, call.params);
    auto again = parse_call(written);
    ASSERT_TRUE(std::holds_alternative<method_call>(again)) << written;
    EXPECT_EQ(std::get<method_call>(again).method, call.method);
    EXPECT_EQ(std::get<method_call>(again).params, call.params);
    // Written again, the same bytes: struct members keep their order.
    std::string rewritten;
    write_call(rewritten, std::get<method_call>(again).method, std::get<method_call>(again).params);
    EXPECT_EQ(rewritten, written);
  } else {
    auto parsed = parse_response(doc);
    ASSERT_TRUE(std::holds_alternative<outcome>(parsed));
    const auto& response = std::get<outcome>(parsed);
    if (const auto* f = std::get_if<fault>(&response)) {
      write_fault(written, f->code(), f->message());
    } else {
      write_response(written, std::get<value>(response));
    }
    auto again = parse_response(written);
    ASSERT_TRUE(std::holds_alternative<outcome>(again)) << written;
    const auto& r = std::get<outcome>(again);
    ASSERT_EQ(r.index(), response.index());
    if (const auto* f = std::get_if<fault>(&r)) {
      EXPECT_EQ(f->code(), std::get<fault>(response).code());
      EXPECT_EQ(f->message(), std::get<fault>(response).message());
    } else {
      EXPECT_EQ(std::get<value>(r), std::get<value>(response));
      std::string rewritten;
      write_response(rewritten, std::get<value>(r));
      EXPECT_EQ(rewritten, written);  // struct members keep their order
    }
  }
}

TEST(XmlrpcDataFiles, AreFound) {
  // Guards against a wrong data path silently turning the cases below into none.
  EXPECT_GE(data_cases().size(), 30u);
}

INSTANTIATE_TEST_SUITE_P(Xmlrpc, DataFile, testing::ValuesIn(data_cases()),
                         [](const testing::TestParamInfo<data_case>& param_info) {
                           std::string n = param_info.param.name;
                           std::replace_if(
                               n.begin(), n.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return n;
                         });

}  // namespace
}  // namespace rapidrpc::xmlrpc
