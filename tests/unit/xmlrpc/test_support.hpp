// Helpers shared by the codec tests: a readable rendering of parse outcomes
// (the format of the tests/data/xmlrpc/**/*.expected files) and ways of
// feeding one document in pieces.
#pragma once

#include <rapidrpc/xmlrpc.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rapidrpc::xmlrpc::test {

/// to_debug_string, except that base64 values show their bytes in hex:
/// bytes(68656c6c6f).
std::string describe(const value& v);

/// The outcome of parsing one document of `type` (`ok`: what feed()/finish()
/// returned), one line per fact:
///   call:     "method NAME\nparams [..]"
///   response: "result .." or "fault CODE \"message\""
///   failure:  "error CODE message"
std::string outcome(document_type type, parser& p, bool ok);

/// Feeds `doc` to a fresh parser cut at the given ascending byte offsets,
/// then finishes; returns outcome().
std::string parse_with_cuts(document_type type, std::string_view doc,
                            const std::vector<std::size_t>& cuts, const limits& lim = {});

/// The same, one byte per feed().
std::string parse_bytewise(document_type type, std::string_view doc, const limits& lim = {});

/// The same, the whole document in one feed().
std::string parse_whole(document_type type, std::string_view doc, const limits& lim = {});

/// The same, read by parse() (the direct scanner, then expat if it gives
/// up) rather than fed.
std::string parse_direct(document_type type, std::string_view doc, const limits& lim = {});

/// Parses `doc` whole, cut once at every offset, byte by byte, and with
/// parse(), and returns the whole-document outcome; records a test failure
/// for every way of reading that gives a different outcome.
std::string parse_every_way(document_type type, std::string_view doc, const limits& lim = {});

/// The contents of a file (binary), or a test failure.
std::string read_file(const std::string& path);

}  // namespace rapidrpc::xmlrpc::test
