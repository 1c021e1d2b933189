// Private: a synchronous call on a client's asynchronous engine. Both
// clients run their one engine on an io_context of their own for the
// calls of a client built without an executor.
#pragma once

#include <rapidrpc/client_front.hpp>

#include <boost/asio/io_context.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace rapidrpc::client_detail {

/// Starts one call with `start(completion)` and runs `io` on the calling
/// thread until that call completes; returns how it ended. Handlers the
/// call leaves behind (cancelled waits) stay queued and run, doing nothing,
/// at the start of the next call. `who` names the client in the
/// std::logic_error thrown if `io` runs out of work first (an engine bug).
template <class Start>
call_result run_until_complete(boost::asio::io_context& io, std::string_view who, Start&& start) {
  std::optional<call_result> out;
  std::forward<Start>(start)([&out](call_result r) { out.emplace(std::move(r)); });
  io.restart();
  while (!out) {
    if (io.run_one() == 0)
      throw std::logic_error(std::string(who) + ": the call ran out of work without completing");
  }
  return std::move(*out);
}

}  // namespace rapidrpc::client_detail
