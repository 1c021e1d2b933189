#include "client/json_reply.hpp"

#include <rapidrpc/jsonrpc.hpp>

#include <charconv>
#include <utility>
#include <variant>

namespace rapidrpc::client_detail {

namespace {

using why = transport_error::reason;

// A client's id: a JSON integer with no sign, fraction or exponent that fits
// in 64 bits. (JSON forbids leading zeros, so each id has one spelling.)
std::optional<request_id> parse_request_id(std::string_view text) {
  request_id id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return id;
}

}  // namespace

json_reply read_json_reply(std::string_view text) {
  json_reply out;
  auto parsed = jsonrpc::parse_response(text);
  if (auto* bad = std::get_if<jsonrpc::error_reply>(&parsed)) {
    out.id_text = "null";
    out.result = transport_error(why::bad_response,
                                 "the response is not a JSON-RPC 2.0 response: " + bad->detail);
    return out;
  }
  auto& r = std::get<jsonrpc::response>(parsed);
  out.id_text = std::move(r.id);
  if (out.id_text == "null") {
    out.to = json_reply::addressee::unknown;
  } else if (auto id = parse_request_id(out.id_text)) {
    out.to = json_reply::addressee::call;
    out.id = *id;
  } else {
    out.to = json_reply::addressee::other;
  }
  if (auto* f = std::get_if<fault>(&r.outcome)) {
    out.result = std::move(*f);
  } else if (out.to == json_reply::addressee::unknown) {
    out.result = transport_error(why::bad_response, "the response carries a result with id null");
  } else {
    out.result = std::get<value>(std::move(r.outcome));
  }
  return out;
}

std::optional<request_id> answered_call(const json_reply& r, std::optional<request_id> sole) {
  switch (r.to) {
    case json_reply::addressee::call:
      return r.id;
    case json_reply::addressee::unknown:
      return sole;
    case json_reply::addressee::other:
      break;
  }
  return std::nullopt;
}

call_result result_for(json_reply&& r, request_id id) {
  if (answered_call(r, id) == id) return std::move(r.result);
  return transport_error(why::bad_response, "the response answers another request (id " +
                                                r.id_text.substr(0, 40) + ")");
}

}  // namespace rapidrpc::client_detail
