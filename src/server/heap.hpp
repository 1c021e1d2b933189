// Private: giving the heap's free memory back to the system after large
// requests (rapidrpcd keeps freed memory in the heap otherwise, so that
// back-to-back large requests reuse its pages: loop::large_buffer_freed).
#pragma once

#include <cstddef>

namespace rapidrpc::detail {

/// A buffer at least this large (a body, a reply: more than a connection
/// keeps between requests) is large: freeing one leads to trim_heap().
inline constexpr std::size_t large_buffer_bytes = std::size_t{64} << 10;

/// Gives the heap's free memory back to the system (glibc's malloc_trim;
/// nothing elsewhere).
void trim_heap() noexcept;

}  // namespace rapidrpc::detail
