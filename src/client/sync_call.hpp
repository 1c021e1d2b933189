// Private: a synchronous call on a client's asynchronous engine. Both
// clients run their one engine on an io_context of their own for the
// calls of a client built without an executor.
#pragma once

#include <rapidrpc/client_base.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>

#include <functional>
#include <memory>
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

/// An engine that runs every call asynchronously on one executor: the
/// caller's (then it makes asynchronous calls only), or that of an
/// io_context of its own, run on the calling thread for each synchronous
/// call (then it makes synchronous calls only). A client's engine derives
/// from it and supplies begin().
class executor_engine : public engine {
 public:
  call_result exchange(std::string_view method, const array& params, wire_trace* trace) final {
    if (!own_io_)
      throw std::logic_error(std::string(who_) +
                             ": synchronous calls need a client built without an executor");
    // The handlers a finished call leaves behind hold no buffers.
    return run_until_complete(*own_io_, who_, [&](std::function<void(call_result)> done) {
      begin(method, params, std::move(done), trace);
    });
  }

  void start(std::string_view method, const array& params,
             std::function<void(call_result)> done) final {
    if (own_io_)
      throw std::logic_error(std::string(who_) +
                             ": async_call needs a client built on an executor");
    begin(method, params, std::move(done), nullptr);
  }

  executor_engine(const executor_engine&) = delete;
  executor_engine& operator=(const executor_engine&) = delete;
  executor_engine(executor_engine&&) = delete;
  executor_engine& operator=(executor_engine&&) = delete;

 protected:
  /// On `executor`, or with none on an io_context of the engine's own.
  /// `who` (a literal) names the client in the std::logic_error messages.
  executor_engine(std::optional<boost::asio::any_io_executor> executor, std::string_view who)
      : own_io_(executor ? nullptr : std::make_unique<boost::asio::io_context>(1)),
        executor_(executor ? std::move(*executor)
                           : boost::asio::any_io_executor(own_io_->get_executor())),
        who_(who) {}
  // The derived engine's state goes first, the io_context last: its
  // destructor destroys the handlers still queued (and what they own).
  ~executor_engine() override = default;

  /// The executor every call runs on.
  const boost::asio::any_io_executor& executor() const noexcept { return executor_; }
  /// True if that is the executor of an io_context of the engine's own.
  bool own_loop() const noexcept { return own_io_ != nullptr; }

  /// Starts one call whose `done` runs exactly once on executor(), never
  /// inside begin(), recording its bytes into `trace` unless it is null.
  /// Throws, and never calls `done`, if the request cannot be written.
  virtual void begin(std::string_view method, const array& params,
                     std::function<void(call_result)> done, wire_trace* trace) = 0;

 private:
  std::unique_ptr<boost::asio::io_context> own_io_;  // null on a caller's executor
  boost::asio::any_io_executor executor_;
  std::string_view who_;
};

}  // namespace rapidrpc::client_detail
