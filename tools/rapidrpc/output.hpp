// How the command line shows values: as JSON by the JSON-RPC codec's
// mapping (jsonrpc::write_value; docs/jsonrpc.md), compact or indented, and
// in the readable form of `rapidrpc call`. No I/O.
#pragma once

#include <rapidrpc/value.hpp>

#include <string>

namespace rapidrpc::cli {

/// `v` as compact JSON, e.g. {"a":[1,2.5,{"$base64":"SGk="}]}. Throws
/// std::invalid_argument for what JSON cannot carry (a string that is not
/// UTF-8, a non-finite double; the codecs never produce either).
std::string to_json(const value& v);

/// `v` as JSON with arrays and structs laid out one item per line, indented
/// by `indent` spaces a level, and ": " after member names; scalars as
/// to_json() writes them. Throws like to_json().
std::string to_indented_json(const value& v, int indent);

/// The readable form of a result: a string as its text, nil as "nil", a
/// date as YYYY-MM-DDTHH:MM:SS, bytes as "base64:" and their base64, other
/// scalars as JSON, arrays and structs as JSON indented by two spaces.
std::string readable(const value& v);

}  // namespace rapidrpc::cli
