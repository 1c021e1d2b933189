// The XML-RPC codec: methodCall and methodResponse documents to and from
// values. It does no I/O: bytes in, values out; values in, bytes out.
//
// Parsing is strict (see docs/limits.md and docs/design.md): well-formed
// XML in UTF-8, UTF-16 or a single-byte character set (ISO-8859-1,
// windows-1252, ...; values come out as UTF-8, and the writers write UTF-8),
// no DOCTYPE, `<int>`/`<i4>`/`<i8>` in range with an optional sign and no
// spaces, `<boolean>` 0 or 1, finite `<double>`, canonical base64, dates as
// YYYYMMDDTHH:MM:SS (or YYYYMMDDTHHMMSS, YYYY-MM-DDTHH:MM:SS). The nil and
// i8 extensions are accepted with or without the Apache `ex:` prefix.
//
// Threading: a parser object is used by one thread at a time; the free
// functions are safe to call from any thread.
#pragma once

#include <rapidrpc/fault.hpp>
#include <rapidrpc/limits.hpp>
#include <rapidrpc/outcome.hpp>
#include <rapidrpc/value.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace rapidrpc::xmlrpc {

// `limits` (rapidrpc/limits.hpp): a parse reads max_depth (nesting of
// <array>/<struct> values), max_elements (XML elements in one document) and
// max_name_bytes (the method name); going past one fails the parse with a
// clear error.

/// A parsed methodCall.
struct method_call {
  std::string method;
  array params;
};

/// Why a document could not be parsed: the fault to answer with. `message`
/// is safe to send to the client (it never echoes large input or internals).
struct parse_error {
  std::int32_t code = fault_code::parse_error;
  std::string message;
};

/// What a document is expected to be.
enum class document_type : std::uint8_t { call, response };

/// An incremental, reusable parser for one kind of document.
///
/// Feed the document in chunks of any size (split anywhere) and call
/// finish() after the last chunk, or hand it over whole to parse(). reset()
/// prepares it for the next document and keeps the buffers and the
/// underlying expat parser (cheaper than a new one per document).
class parser {
 public:
  explicit parser(document_type type, limits lim = {});
  ~parser();
  parser(parser&&) noexcept;
  parser& operator=(parser&&) noexcept;
  parser(const parser&) = delete;
  parser& operator=(const parser&) = delete;

  /// Consumes the next chunk. Returns false once the document is known to be
  /// bad; error() then says why and further input is ignored.
  bool feed(std::string_view chunk);

  /// Ends the document. Returns false if it is bad or incomplete.
  bool finish();

  /// Reads a whole document: the same as feed(document) then finish(),
  /// faster when the parser is fresh or reset (a document in one piece is
  /// read directly, and by expat only if it is unusual or bad).
  bool parse(std::string_view document);

  /// Whether the last parse() read its document directly, without expat
  /// (for tests and benchmarks: the verdict is the same either way).
  [[nodiscard]] bool read_directly() const noexcept;

  /// After a successful finish() on a call document: the call. Throws
  /// std::logic_error otherwise.
  method_call& call();
  /// After a successful finish() on a response document: the result, or the
  /// fault the server sent. Throws std::logic_error otherwise.
  outcome& response();

  /// After feed() or finish() returned false: why.
  const parse_error& error() const;

  /// Prepares for a new document of the same type.
  void reset();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// Parses a whole methodCall document.
std::variant<method_call, parse_error> parse_call(std::string_view document,
                                                  const limits& lim = {});

/// Parses a whole methodResponse document: the result, or the fault the
/// server sent.
std::variant<outcome, parse_error> parse_response(std::string_view document,
                                                  const limits& lim = {});

/// Appends a methodCall document to `out`. Throws std::invalid_argument,
/// leaving `out` as it was, if the method name or a parameter cannot be
/// written (see write_value).
void write_call(std::string& out, std::string_view method, const array& params);

/// Appends a methodResponse document carrying `result` to `out`. Throws
/// std::invalid_argument, leaving `out` as it was, if `result` cannot be
/// written (see write_value).
void write_response(std::string& out, const value& result);

/// Appends a fault methodResponse document to `out`. Never rejects the
/// message: bytes XML 1.0 cannot carry are written as U+FFFD.
void write_fault(std::string& out, std::int32_t code, std::string_view message);

/// Appends one <value>...</value> element to `out` (used by the writers
/// above; exposed for tests and custom envelopes).
///
/// Throws std::invalid_argument, leaving `out` as it was, for what XML-RPC
/// cannot carry: a string or member name that is not valid UTF-8 or holds a
/// character XML 1.0 forbids (a control other than tab, LF, CR; U+FFFE,
/// U+FFFF), a non-finite double, or a date_time field out of range. CR is
/// written as &#13; so that it survives XML's line-end normalization.
void write_value(std::string& out, const value& v);

}  // namespace rapidrpc::xmlrpc
