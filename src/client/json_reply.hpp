// Private: how both clients read a JSON-RPC 2.0 response and decide which
// call it answers. One reader, one id rule, for HTTP and for ZeroMQ.
//
// The id rule. A client numbers its requests 1, 2, 3, ... and writes each
// id as a JSON integer. A response answers:
//   - the call whose id it carries, when its id is a non-negative JSON
//     integer (so "7" answers call 7; 7.0, 7e0, -7 and "7" do not);
//   - when its id is null (the server could not read the request's id: a
//     parse error, an invalid request), or the response itself cannot be
//     read: the one call in flight, if exactly one is, else no call. Such a
//     response carries an error; a null id with a result is not a valid
//     answer, and fails the call it reaches with reason::bad_response;
//   - with any other id (a string, a fraction, a negative number): no call.
// A response that answers no call in flight is, over HTTP (one call per
// exchange), a bad_response for that call; over ZeroMQ (many calls on one
// socket) a late or stray reply, dropped: its call, if any, times out.
#pragma once

#include <rapidrpc/client_base.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rapidrpc::client_detail {

/// The id a client gives a JSON-RPC request.
using request_id = std::uint64_t;

/// One JSON-RPC response as a client reads it.
struct json_reply {
  /// Whom the response names.
  enum class addressee : std::uint8_t {
    call,     ///< a call by id: `id`
    unknown,  ///< id null, or a response that could not be read
    other,    ///< an id no call of a rapidrpc client carries
  };
  addressee to = addressee::unknown;
  request_id id = 0;    ///< for addressee::call
  std::string id_text;  ///< the id as JSON text ("null" when unknown), for messages
  /// The result, the error object as a fault, or reason::bad_response for a
  /// response that is not a valid JSON-RPC 2.0 response (or a result with
  /// id null).
  call_result result;
};

/// Reads one response text (an HTTP body, a ZeroMQ frame).
json_reply read_json_reply(std::string_view text);

/// The call `r` answers under the id rule: its id for addressee::call (the
/// caller drops it if that call is no longer in flight); for
/// addressee::unknown, `sole`, the one call in flight (nullopt when none or
/// more than one is); for addressee::other, none.
std::optional<request_id> answered_call(const json_reply& r, std::optional<request_id> sole);

/// For an exchange that carries exactly one call, `id` (HTTP): the reply's
/// result if it answers that call, else a transport_error with
/// reason::bad_response naming the id it answers.
call_result result_for(json_reply&& r, request_id id);

}  // namespace rapidrpc::client_detail
