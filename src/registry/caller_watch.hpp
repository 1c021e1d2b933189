// Private: how a coroutine call hears that its caller has gone. A transport
// that can tell (the HTTP connection: its client closed before the reply)
// puts a caller_watch in the call_context of its calls; spawn_coroutine()
// registers each coroutine call there, and the watch cancels the ones still
// running when the caller goes. Used on the loop thread only.
#pragma once

#include <boost/asio/cancellation_signal.hpp>

#include <memory>
#include <vector>

namespace rapidrpc::detail {

class caller_watch {
 public:
  /// From now until the call ends (`call` expires), tells `call` (terminal
  /// cancellation) if the caller goes.
  virtual void watch(std::weak_ptr<boost::asio::cancellation_signal> call) = 0;

 protected:
  ~caller_watch() = default;
};

/// The calls a caller_watch tells: those still running when the caller goes.
class watched_calls {
 public:
  /// Adds a call; false if it is the first one since the last gone().
  bool add(std::weak_ptr<boost::asio::cancellation_signal> call) {
    std::erase_if(calls_, [](const auto& c) { return c.expired(); });
    calls_.push_back(std::move(call));
    return calls_.size() > 1;
  }
  /// Whether some call still runs.
  [[nodiscard]] bool any() const noexcept {
    for (const auto& c : calls_)
      if (!c.expired()) return true;
    return false;
  }
  /// The caller has gone: cancels every call still running.
  void gone() {
    auto calls = std::move(calls_);
    calls_.clear();
    for (const auto& c : calls)
      if (auto signal = c.lock()) signal->emit(boost::asio::cancellation_type::terminal);
  }

 private:
  std::vector<std::weak_ptr<boost::asio::cancellation_signal>> calls_;
};

}  // namespace rapidrpc::detail
