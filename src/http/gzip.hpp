// gzip bodies, both ways, on zlib. No I/O.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rapidrpc::http {

enum class inflate_result { ok, too_large, corrupt };

/// Decompresses a gzip stream (one or more members) into `out`, stopping with
/// too_large as soon as the output would pass `limit` bytes. A "gzip bomb"
/// never costs more memory than the size its trailer claims, capped at
/// `limit` (a bomb that claims more costs none); an honest body is inflated
/// into one allocation of its size. Unless the result is ok, `out` is left
/// empty: a partial inflation is never handed on.
inflate_result gunzip(std::string_view in, std::string& out, std::size_t limit);

/// Compresses `in` as one gzip member appended to `out` (fast level: the
/// server compresses on its loop thread).
void gzip(std::string_view in, std::string& out);

}  // namespace rapidrpc::http
