// The character sets an XML-RPC document may be written in, by the name its
// XML declaration gives: UTF-8, UTF-16, and the single-byte character sets
// glibc's iconv knows (ISO-8859-*, windows-125*, KOI8-R, US-ASCII, ...), as
// Python's xmlrpc.server reads them. Private to the XML-RPC parser.
//
// Threading: find_charset may be called from any thread; the tables it
// returns are never freed or changed.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace rapidrpc::xmlrpc::detail {

/// A single-byte character set: the Unicode character of each byte, -1 for a
/// byte that stands for none (0x81 in windows-1252, 0x80 up in US-ASCII).
struct byte_table {
  std::array<std::int32_t, 256> chars{};
  bool complete = true;  // no byte is -1
};

enum class charset_kind : std::uint8_t {
  utf8,         // UTF-8 under any spelling (utf8, UTF_8)
  utf16,        // UTF-16, UTF-16LE, UTF-16BE under any spelling
  single_byte,  // `table` says what each byte is
  unsupported,  // `refusal` says why
};

/// What an encoding name stands for.
struct charset {
  charset_kind kind = charset_kind::unsupported;
  const byte_table* table = nullptr;  // single_byte
  std::string refusal;                // unsupported: the fault message
};

/// Looks `name` up, case aside and with `-`/`_` spelled either way; asks
/// glibc's iconv about names that are not UTF-8 or UTF-16 and keeps what it
/// learns (the tables of the character sets iconv opens, and its refusals
/// of those, not names it does not know). A multibyte character set other
/// than UTF-8 and UTF-16, or one whose ASCII bytes are not ASCII, is
/// unsupported.
charset find_charset(std::string_view name);

/// `name` (a document's encoding) for a fault message: itself in quotes
/// when it is at most 32 printable ASCII characters, else a description.
std::string quoted_encoding(std::string_view name);

}  // namespace rapidrpc::xmlrpc::detail
