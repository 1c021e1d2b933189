// What every rapidrpc client shares: the typed call surface (call,
// call<R>, try_call, async_call), the wire trace, the error a call fails
// with below the protocol (transport_error), and the engine interface a
// transport implements. rapidrpc::client (HTTP) and rapidrpc::zmq_client
// (ZeroMQ) derive from client_base and hand it their engine, so a call
// reads and behaves the same whatever the transport.
//
// Threading: as the client that derives from it (a client is used from
// one thread at a time).
#pragma once

#include <rapidrpc/convert.hpp>
#include <rapidrpc/fault.hpp>
#include <rapidrpc/outcome.hpp>
#include <rapidrpc/value.hpp>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace rapidrpc {

/// A call that failed below the protocol: no connection, a timeout, an HTTP
/// error status, a response that is not XML-RPC or JSON-RPC. (A fault is not
/// one of these: the server answered, with a fault.)
class transport_error : public std::runtime_error {
 public:
  enum class reason : std::uint8_t {
    connect,      ///< could not resolve or connect
    timeout,      ///< the connect or total timeout passed
    io,           ///< the connection failed mid-call, or the client was closed
    http_status,  ///< the server answered with a non-200 status
    bad_response  ///< the response is not a valid reply, answers another call, or is too large
  };
  transport_error(reason r, const std::string& message, int http_status = 0)
      : std::runtime_error(message), reason_(r), http_status_(http_status) {}
  /// Why the call failed.
  reason why() const noexcept { return reason_; }
  /// The HTTP status for reason::http_status, else 0.
  int http_status() const noexcept { return http_status_; }

 private:
  reason reason_;
  int http_status_;
};

/// The bytes of one exchange, for tools that show the wire.
struct wire_trace {
  std::string request;          ///< request line, headers and body as sent (ZeroMQ: the frame)
  std::string response_header;  ///< status line and headers as received (ZeroMQ: empty)
  std::string response_body;    ///< the body, after decompression (ZeroMQ: the reply frame)
};

/// The pieces the clients' shared base is built from; not for direct use.
namespace client_detail {

/// How one call ended: the result, the server's fault, or no usable answer.
using call_result = std::variant<value, fault, transport_error>;

/// The outcome form of a result: a transport failure becomes
/// fault_code::transport_error with its message.
outcome to_outcome(call_result&& r);

/// The result, or throws the fault or the transport_error (the throwing
/// form of call()).
value result_or_throw(call_result&& r);

/// Throws transport_error (reason::bad_response) for a result that does not
/// convert to the type a typed call asked for (`why`: where, and what was
/// expected).
[[noreturn]] void throw_result_type(std::string_view why);

/// One transport's way of running calls; a client hands its engine to
/// client_base, which owns it. Used from the client's thread only.
class engine {
 public:
  virtual ~engine();

  /// One synchronous call on the calling thread, its bytes recorded into
  /// `trace` unless it is null. Throws std::invalid_argument (nothing sent)
  /// if the request cannot be written, std::logic_error on an engine that
  /// makes asynchronous calls only.
  virtual call_result exchange(std::string_view method, const array& params, wire_trace* trace) = 0;

  /// Starts one call whose `done` runs exactly once on the client's
  /// executor, never inside start(). Throws, and never calls `done`, if the
  /// request cannot be written (std::invalid_argument) or the engine makes
  /// synchronous calls only (std::logic_error).
  virtual void start(std::string_view method, const array& params,
                     std::function<void(call_result)> done) = 0;

 protected:
  engine() = default;
  engine(const engine&) = default;
  engine(engine&&) = default;
  engine& operator=(const engine&) = default;
  engine& operator=(engine&&) = default;
};

/// A typed async call's outcome: the result converted to R, or the fault
/// (a result that does not convert: fault_code::transport_error saying where).
template <class R>
std::variant<R, fault> typed_outcome(outcome&& o) {
  if (auto* f = std::get_if<fault>(&o)) return std::move(*f);
  try {
    return from_value<R>(std::get<value>(std::move(o)));
  } catch (const fault& f) {
    return fault(fault_code::transport_error, f.what());
  }
}

/// A completion token (boost::asio::use_awaitable, ...) rather than the
/// callback of the typed async_call().
template <class Token, class R>
concept completion_token =
    !std::is_convertible_v<Token, std::function<void(std::variant<R, fault>)>>;

}  // namespace client_detail

/// The typed call surface of a client, written once for every transport:
/// each call goes to the engine the client was built with. Movable, not
/// copyable; a moved-from client throws std::logic_error on every call.
class client_base {
 public:
  /// Calls `method` and returns its result. Throws rapidrpc::fault if the
  /// server answered with a fault, transport_error if no usable answer came
  /// (in time), std::invalid_argument (nothing sent) if the method name or a
  /// parameter cannot be written in the client's protocol, std::logic_error
  /// on a client built on an executor (those make asynchronous calls only).
  value call(std::string_view method, const array& params = {}) {
    return client_detail::result_or_throw(live().exchange(method, params, trace_));
  }

  /// Typed form: `c.call<std::string>("load", 150000)`,
  /// `c.call<std::vector<point>>("route", from, to)`. Arguments are
  /// converted to values, and the result to R, as rapidrpc::convert does
  /// (rapidrpc/convert.hpp: containers, optionals, time points, described
  /// structs and enums); a result that does not convert throws
  /// transport_error with reason::bad_response, saying where it does not
  /// fit. Otherwise as call().
  template <class R, class... Args>
  R call(std::string_view method, Args&&... args) {
    value v = call(method, array{to_value(std::forward<Args>(args))...});
    if constexpr (std::is_same_v<R, value>) {
      return v;
    } else {
      try {
        return from_value<R>(std::move(v));
      } catch (const fault& f) {
        client_detail::throw_result_type(f.what());
      }
    }
  }

  /// Like call(), with the fault or the transport failure as a value: a
  /// transport failure becomes fault_code::transport_error with its message.
  /// Still throws std::invalid_argument and std::logic_error as call() does.
  outcome try_call(std::string_view method, const array& params = {}) {
    return client_detail::to_outcome(live().exchange(method, params, trace_));
  }

  /// Starts a call on a client built on an executor; `done` runs exactly
  /// once on that executor, never inside async_call(), with the result, the
  /// fault, or fault_code::transport_error (a timeout among them). Throws,
  /// and never calls `done`, if the request cannot be written
  /// (std::invalid_argument) or the client has no executor of the caller's
  /// (std::logic_error). Destroying the client completes the calls still in
  /// flight with "the client was closed".
  void async_call(std::string_view method, const array& params, std::function<void(outcome)> done) {
    live().start(method, params, [done = std::move(done)](client_detail::call_result r) {
      done(client_detail::to_outcome(std::move(r)));
    });
  }

  /// Typed form of async_call(): `c.async_call<std::vector<point>>("route",
  /// done, from, to)`. The arguments are converted as call<R> converts
  /// them, and `done` gets the result converted to R, or the fault: the
  /// server's, fault_code::transport_error for a transport failure, and
  /// fault_code::transport_error saying where for a result that does not
  /// convert. Otherwise as async_call().
  template <class R, class... Args>
  void async_call(std::string_view method, std::function<void(std::variant<R, fault>)> done,
                  Args&&... args) {
    async_call(method, array{to_value(std::forward<Args>(args))...},
               [done = std::move(done)](outcome o) {
                 done(client_detail::typed_outcome<R>(std::move(o)));
               });
  }

  /// Typed async_call() with an Asio completion token, for coroutines:
  /// `auto r = co_await c.async_call<std::int32_t>("sample.add",
  /// boost::asio::use_awaitable, 2, 3)` (on the client's executor, say a
  /// coroutine method's loop) gives the result converted to R, or throws
  /// the fault as async_call() would pass it. The completion signature is
  /// void(std::exception_ptr, R) (R default-constructible); the handler is
  /// posted to its associated executor (it may destroy the client).
  /// Otherwise as async_call().
  template <class R, client_detail::completion_token<R> Token, class... Args>
  auto async_call(std::string_view method, Token&& token, Args&&... args) {
    return boost::asio::async_initiate<Token, void(std::exception_ptr, R)>(
        [this](auto handler, const std::string& name, const array& params) {
          // A std::function is copied: the (move-only) handler is shared.
          auto shared = std::make_shared<decltype(handler)>(std::move(handler));
          async_call(name, params, [shared](outcome o) {
            auto typed = client_detail::typed_outcome<R>(std::move(o));
            // Posted, never run here: the handler (a coroutine resumed) may
            // destroy the client, whose completion this still is.
            auto ex = boost::asio::get_associated_executor(*shared);
            boost::asio::post(ex, [shared, typed = std::move(typed)]() mutable {
              auto h = std::move(*shared);
              if (auto* f = std::get_if<fault>(&typed))
                std::move(h)(std::make_exception_ptr(std::move(*f)), R{});
              else
                std::move(h)(nullptr, std::get<R>(std::move(typed)));
            });
          });
        },
        // Copied: a deferred token starts the call after this returns.
        token, std::string(method), array{to_value(std::forward<Args>(args))...});
  }

  /// Records each synchronous call's bytes into `trace`, every call
  /// overwriting the one before (wire_trace says what each transport fills
  /// in); null: stop. Asynchronous calls are not recorded.
  void trace(wire_trace* trace) noexcept { trace_ = trace; }

 protected:
  explicit client_base(std::unique_ptr<client_detail::engine> engine) noexcept
      : engine_(std::move(engine)) {}
  ~client_base() = default;
  client_base(client_base&&) noexcept = default;
  client_base& operator=(client_base&&) noexcept = default;

  /// The engine the client was built with; null once moved from.
  client_detail::engine* engine() const noexcept { return engine_.get(); }

 private:
  client_detail::engine& live() const {
    if (!engine_) throw std::logic_error("rapidrpc: use of a moved-from client");
    return *engine_;
  }

  std::unique_ptr<client_detail::engine> engine_;
  wire_trace* trace_ = nullptr;
};

}  // namespace rapidrpc
