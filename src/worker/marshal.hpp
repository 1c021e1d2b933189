// Private: the compact form of the worker protocol (rapidrpc/worker.hpp),
// which rapidrpcd's Python workers speak: a call and its answer as Python's
// own `marshal` module writes and reads them, version 2, so that the worker
// reads a call and writes its result at C speed (marshal.loads() and
// marshal.dumps()) rather than through an XML-RPC codec in Python.
//
// A frame's first byte says its form:
//   'm'  a call, host to worker: marshal.dumps((name, params), 2), params a
//        tuple; arrays are lists, structs dicts, base64 bytes
//   'r'  a result, worker to host: marshal.dumps(result, 2)
//   'f'  a fault, worker to host: marshal.dumps((code, text), 2)
//   '<'  an XML-RPC document, as in the plain protocol (a call whose
//        parameters marshal cannot carry, a dateTime; a result it cannot,
//        a datetime or a Binary)
// A worker that reads the compact form says so in its first frame, which
// holds `hello` rather than nothing.
//
// Version 2 has no references between objects and one form of each type,
// so the host reads only these type codes: N T F i l g u s ( [ { 0. Any
// other is refused: a set, a complex number, an integer past 64 bits or a
// dict key that is not a string is a value XML-RPC has no type for.
#pragma once

#include <rapidrpc/outcome.hpp>
#include <rapidrpc/value.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

namespace rapidrpc::detail::marshal {

inline constexpr char call_tag = 'm';
inline constexpr char result_tag = 'r';
inline constexpr char fault_tag = 'f';
/// The first frame of a worker that reads and writes the compact form.
inline constexpr std::string_view hello = "marshal 2";

/// Appends a call frame's payload (call_tag first) for `name(params)`; false,
/// with `out` as it was, if a parameter has no marshal form (a dateTime).
bool append_call(std::string& out, std::string_view name, const array& params);

/// Appends `v` in marshal form; false, with `out` as it was, for a value
/// that has none (a dateTime anywhere in it).
bool append_value(std::string& out, const value& v);

/// Why an answer could not be read.
struct unreadable {
  /// The answer breaks the form (cut short, an unknown type code, bytes
  /// after the value, ...): the worker is at fault.
  bool malformed = true;
  std::string why;  ///< for the log: "a set", "bytes after the value", ...
};

/// Reads an answer frame whose first byte is result_tag or fault_tag: the
/// result or the fault it carries, or why it cannot. Nesting deeper than
/// `max_depth` arrays and structs is refused (not malformed: a result XML-RPC
/// could carry, but not this server).
std::variant<outcome, unreadable> read_answer(std::string_view frame, std::size_t max_depth);

}  // namespace rapidrpc::detail::marshal
