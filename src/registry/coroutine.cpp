// Coroutine methods (registry::add with a boost::asio::awaitable result):
// the call's coroutine runs on its loop, bound to a cancellation signal that
// its deadline and its caller's going emit.
#include <rapidrpc/registry.hpp>

#include "registry/caller_watch.hpp"
#include "registry/pool.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <memory>
#include <optional>

namespace rapidrpc::detail {

namespace {

// One coroutine call while it runs; its completion holds it.
struct coroutine_call {
  explicit coroutine_call(responder r) : reply(std::move(r)) {}
  responder reply;
  boost::asio::cancellation_signal cancel;
  std::optional<boost::asio::steady_timer> deadline;
};

}  // namespace

call_context coroutine_context(const call_context& ctx) {
  call_context own = ctx;
  own.caller = nullptr;
  return own;
}

void spawn_coroutine(const call_context& ctx, responder reply, boost::asio::awaitable<value> body) {
  auto call = std::make_shared<coroutine_call>(std::move(reply));
  if (ctx.timeout.count() > 0) {
    call->deadline.emplace(ctx.loop, ctx.timeout);
    call->deadline->async_wait([call](const boost::system::error_code& ec) {
      if (ec) return;
      call->reply.fail(call_timeout());
      call->cancel.emit(boost::asio::cancellation_type::terminal);
    });
  }
  if (ctx.caller != nullptr)
    ctx.caller->watch(std::shared_ptr<boost::asio::cancellation_signal>(call, &call->cancel));
  boost::asio::co_spawn(
      ctx.loop, std::move(body),
      boost::asio::bind_cancellation_slot(
          call->cancel.slot(), [call](const std::exception_ptr& thrown, value result) {
            if (call->deadline) call->deadline->cancel();
            if (!thrown) {
              call->reply.reply(std::move(result));
              return;
            }
            // After the deadline the caller has its answer (a later one is
            // ignored); after the caller went, no one reads one.
            try {
              std::rethrow_exception(thrown);
            } catch (const fault& f) {
              call->reply.fail(f);
            } catch (...) {
              // No internal detail on the wire, as for any method.
              call->reply.fail(fault(fault_code::internal_error, "internal error"));
            }
          }));
}

}  // namespace rapidrpc::detail
