// The JSON-RPC 2.0 codec: request and response texts to and from values,
// on the same value type and fault codes as XML-RPC. It does no I/O.
//
// Values (docs/jsonrpc.md has the whole mapping):
//   JSON integer -> int (i4) if it fits in 32 bits, else i8; beyond 64 bits
//     the params are invalid (-32602). Any other number -> double.
//   string -> string, true/false -> boolean, null -> nil, array -> array,
//   object -> struct (a repeated member name is an error).
//   {"$base64": "<canonical base64>"} <-> base64 bytes,
//   {"$datetime": "YYYY-MM-DDTHH:MM:SS"} <-> dateTime.iso8601;
//   an object of that shape whose text is not canonical stays a struct, so
//   every value that came in as JSON goes back out as the same JSON value.
//
// Strictness: RFC 8259 text in UTF-8, no lone surrogates in \u escapes, no
// repeated member names, nesting and size within `limits`.
//
// Threading: free functions, no shared state.
#pragma once

#include <rapidrpc/fault.hpp>
#include <rapidrpc/limits.hpp>
#include <rapidrpc/outcome.hpp>
#include <rapidrpc/value.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rapidrpc::jsonrpc {

// `limits` (rapidrpc/limits.hpp): a parse reads max_depth (nesting of
// arrays and objects), max_elements (JSON values in one text), max_batch
// (requests in one batch) and max_name_bytes (a method name); going past one
// gives a clear error object.

/// One request. `id` is the request's id as JSON text, so it is echoed
/// exactly: a number keeps its text ("1.5e3", a 30-digit integer), a string
/// is the same string ("\"abc\""), or "null"; empty for a notification,
/// which gets no response.
struct request {
  std::string method;
  array params;                    ///< positional parameters
  std::optional<structure> named;  ///< set instead when params was an object
  std::string id;

  bool is_notification() const noexcept { return id.empty(); }
};

/// An error to answer with: for a whole text that could not be read, or for
/// one batch entry that is not a valid request. `id` is JSON text ("null"
/// when the id could not be read); `detail` goes into the error's data.
struct error_reply {
  std::string id = "null";
  std::int32_t code = fault_code::invalid_request;
  std::string detail;
};

/// A request text: one request (`batch` false, one entry) or a batch.
struct message {
  bool batch = false;
  std::vector<std::variant<request, error_reply>> entries;
};

/// Parses a request text. An error_reply for the whole text: -32700 if it
/// is not JSON (or not UTF-8), -32600 for an empty batch, a batch past
/// limits.max_batch, nesting or values past the limits, or a text that is
/// neither an object nor an array. Entries that are not valid requests become error_replies.
std::variant<message, error_reply> parse_request(std::string_view text, const limits& lim = {});

/// A parsed response (the client side).
struct response {
  std::string id;             ///< JSON text
  rapidrpc::outcome outcome;  ///< the result, or the error object as a fault
};

/// Parses a response text; an error_reply (its detail says why) if it is not
/// a valid JSON-RPC 2.0 response object.
std::variant<response, error_reply> parse_response(std::string_view text, const limits& lim = {});

/// Parses one JSON value (not a request: any JSON text) with the mapping
/// above, e.g. a value typed on a command line. An error_reply (its id
/// "null") if it is not JSON or not UTF-8 (-32700, the detail says where),
/// nests or holds values past the limits (-32600), or repeats a member name
/// or holds a number no value can carry (-32602).
std::variant<value, error_reply> parse_value(std::string_view text, const limits& lim = {});

/// Appends a request object; `id` is JSON text, empty for a notification.
/// Throws std::invalid_argument, leaving `out` as it was, if a value cannot
/// be written (a string that is not UTF-8, a non-finite double).
void write_request(std::string& out, std::string_view method, const array& params,
                   std::string_view id);

/// Appends a response object carrying `result`. Throws like write_request.
void write_result(std::string& out, std::string_view id, const value& result);

/// Appends an error response object. For the standard codes (-32700,
/// -32600..-32603) the message is the specification's ("Parse error", ...)
/// and `detail`, if any, goes into "data"; for other codes `detail` is the
/// message. Never throws on bad text: invalid UTF-8 becomes U+FFFD.
void write_error(std::string& out, std::string_view id, std::int32_t code, std::string_view detail);

/// Appends one value as JSON (the mapping above). Throws like write_request.
void write_value(std::string& out, const value& v);

/// What write_string() does with bytes that are not UTF-8.
enum class invalid_utf8 : std::uint8_t {
  throw_error,  ///< throw std::invalid_argument, leaving the output as it was
  replace,      ///< write U+FFFD for each such byte (for messages and logs)
};

/// Appends `s` as a JSON string literal: `"` and `\` escaped, control
/// characters as \n, \t, ... or \u00XX, other UTF-8 as is.
void write_string(std::string& out, std::string_view s,
                  invalid_utf8 policy = invalid_utf8::throw_error);

/// The specification's message for a standard code, or empty.
std::string_view standard_message(std::int32_t code) noexcept;

}  // namespace rapidrpc::jsonrpc
