// Private: how the XML-RPC and JSON-RPC readers grow the arrays they read.
#pragma once

#include <rapidrpc/value.hpp>

#include <algorithm>
#include <cstddef>

namespace rapidrpc::detail {

/// Makes room in `items` for one more. Past 4,096 items an array grows
/// eight-fold, not two-fold: each growth moves every item so far, and
/// doubling moved them 1.3 times each on average, 11% of a JSON-RPC echo of
/// a 200,000-value array (callgrind). It never takes room for more items
/// than the element limit leaves (`elements` of `max_elements` counted so
/// far; each item is at least one element). The room not yet used is
/// address space, not resident memory, as for a body
/// (http/request_parser.cpp).
[[gnu::noinline]] inline void grow_eight_fold(array& items, std::size_t elements,
                                              std::size_t max_elements) {
  items.reserve(std::min(items.size() * 8,
                         items.size() + 1 + max_elements - std::min(elements, max_elements)));
}

/// The check is inlined in the readers' loops, the growth is not.
[[gnu::always_inline]] inline array& room_for_one_more(array& items, std::size_t elements,
                                                       std::size_t max_elements) {
  if (items.size() == items.capacity() && items.size() >= 4096) [[unlikely]]
    grow_eight_fold(items, elements, max_elements);
  return items;
}

}  // namespace rapidrpc::detail
