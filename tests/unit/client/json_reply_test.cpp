// The JSON-RPC response reader both clients use, and its one id rule
// (src/client/json_reply.hpp): which call a response answers.
#include "client/json_reply.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace rapidrpc::client_detail {
namespace {

using addressee = json_reply::addressee;
using why = transport_error::reason;

std::string result_text(std::string_view id, std::string_view result = "42") {
  return std::string(R"({"jsonrpc":"2.0","result":)") + std::string(result) + R"(,"id":)" +
         std::string(id) + "}";
}

std::string error_text(std::string_view id, int code = -32700) {
  return R"({"jsonrpc":"2.0","error":{"code":)" + std::to_string(code) +
         R"(,"message":"Parse error"},"id":)" + std::string(id) + "}";
}

const transport_error* failure(const json_reply& r) {
  return std::get_if<transport_error>(&r.result);
}

TEST(JsonReply, AnIntegerIdNamesThatCall) {
  json_reply r = read_json_reply(result_text("7"));
  EXPECT_EQ(r.to, addressee::call);
  EXPECT_EQ(r.id, 7U);
  ASSERT_TRUE(std::holds_alternative<value>(r.result));
  EXPECT_EQ(std::get<value>(r.result), value(42));
  EXPECT_EQ(answered_call(r, std::nullopt), std::optional<request_id>(7));
  EXPECT_EQ(answered_call(r, 3), std::optional<request_id>(7));
}

TEST(JsonReply, TheLargestIdStillNamesACall) {
  json_reply r = read_json_reply(result_text("18446744073709551615"));
  EXPECT_EQ(r.to, addressee::call);
  EXPECT_EQ(r.id, UINT64_MAX);
}

TEST(JsonReply, IdsNoClientSendsNameNoCall) {
  for (std::string_view id : {R"("7")", "7.0", "7e0", "-7", "18446744073709551616", "\"\""}) {
    json_reply r = read_json_reply(result_text(id));
    EXPECT_EQ(r.to, addressee::other) << id;
    EXPECT_EQ(r.id_text, id);
    EXPECT_EQ(answered_call(r, 7), std::nullopt) << id;
  }
}

TEST(JsonReply, AnErrorWithIdNullAnswersTheOneCallInFlight) {
  json_reply r = read_json_reply(error_text("null"));
  EXPECT_EQ(r.to, addressee::unknown);
  ASSERT_TRUE(std::holds_alternative<fault>(r.result));
  EXPECT_EQ(std::get<fault>(r.result).code(), fault_code::parse_error);
  EXPECT_EQ(answered_call(r, 5), std::optional<request_id>(5));
  EXPECT_EQ(answered_call(r, std::nullopt), std::nullopt);  // none or several in flight
}

TEST(JsonReply, AResultWithIdNullIsABadResponse) {
  json_reply r = read_json_reply(result_text("null"));
  EXPECT_EQ(r.to, addressee::unknown);
  ASSERT_NE(failure(r), nullptr);
  EXPECT_EQ(failure(r)->why(), why::bad_response);
  EXPECT_EQ(answered_call(r, 5), std::optional<request_id>(5));
}

TEST(JsonReply, TextThatIsNoResponseIsABadResponseForTheOneCallInFlight) {
  for (std::string_view text :
       {"", "{", "[]", R"({"jsonrpc":"2.0","id":1})", R"({"jsonrpc":"1.0","result":1,"id":1})",
        R"({"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":1})",
        R"({"jsonrpc":"2.0","method":"m","id":1})"}) {
    json_reply r = read_json_reply(text);
    EXPECT_EQ(r.to, addressee::unknown) << text;
    ASSERT_NE(failure(r), nullptr) << text;
    EXPECT_EQ(failure(r)->why(), why::bad_response) << text;
    EXPECT_EQ(answered_call(r, 1), std::optional<request_id>(1)) << text;
    EXPECT_EQ(answered_call(r, std::nullopt), std::nullopt) << text;
  }
}

TEST(JsonReply, AnErrorObjectIsAFaultWithItsCodeAndMessage) {
  json_reply r = read_json_reply(
      R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"nope"},"id":3})");
  EXPECT_EQ(r.to, addressee::call);
  EXPECT_EQ(r.id, 3U);
  ASSERT_TRUE(std::holds_alternative<fault>(r.result));
  EXPECT_EQ(std::get<fault>(r.result).code(), fault_code::method_not_found);
  EXPECT_EQ(std::get<fault>(r.result).message(), "Method not found: nope");
}

// ---- one call per exchange (HTTP) -------------------------------------------------------

TEST(JsonReplyFor, TheSameIdGivesTheResult) {
  call_result r = result_for(read_json_reply(result_text("9", R"("hi")")), 9);
  ASSERT_TRUE(std::holds_alternative<value>(r));
  EXPECT_EQ(std::get<value>(r), value("hi"));
}

TEST(JsonReplyFor, AnotherIdIsABadResponseNamingIt) {
  for (std::string_view id : {"8", R"("9")", "9.5"}) {
    call_result r = result_for(read_json_reply(result_text(id)), 9);
    ASSERT_TRUE(std::holds_alternative<transport_error>(r)) << id;
    const auto& e = std::get<transport_error>(r);
    EXPECT_EQ(e.why(), why::bad_response);
    EXPECT_NE(std::string(e.what()).find(std::string(id)), std::string::npos) << e.what();
  }
}

TEST(JsonReplyFor, AnErrorWithIdNullIsThatCallsFault) {
  call_result r = result_for(read_json_reply(error_text("null", -32600)), 9);
  ASSERT_TRUE(std::holds_alternative<fault>(r));
  EXPECT_EQ(std::get<fault>(r).code(), fault_code::invalid_request);
}

TEST(JsonReplyFor, AResultWithIdNullIsABadResponse) {
  call_result r = result_for(read_json_reply(result_text("null")), 9);
  ASSERT_TRUE(std::holds_alternative<transport_error>(r));
  EXPECT_EQ(std::get<transport_error>(r).why(), why::bad_response);
}

}  // namespace
}  // namespace rapidrpc::client_detail
