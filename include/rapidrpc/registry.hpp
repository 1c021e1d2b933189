// The method registry: named methods with typed argument binding, help text
// and signatures, the built-in system.* methods, and the dispatch of one call
// to where its method runs (the event loop, the worker pool, or later).
//
// Threading: add() and the other mutators are for set-up, before the server
// starts; once it runs the registry is read-only and shared by every loop
// thread, but for its reloadable methods (add_reloadable()), which reload()
// replaces all at once from any thread. invoke() is called on a loop thread;
// its completion always runs on that loop thread (the executor passed in the
// context). A coroutine method (one returning boost::asio::awaitable<T>)
// runs on that loop thread too.
#pragma once

#include <rapidrpc/convert.hpp>
#include <rapidrpc/fault.hpp>
#include <rapidrpc/outcome.hpp>
#include <rapidrpc/value.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/system_error.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace rapidrpc {

/// Where a method runs.
enum class execution : std::uint8_t {
  inline_call,  ///< on the connection's loop thread; for cheap methods
  pool,         ///< on the worker pool; for CPU-heavy methods
  async,        ///< starts on the loop and replies later (a responder, a coroutine)
};

namespace detail {
struct pool_target;  // where a server runs pool methods (private)
class passage;       // a caller that passes XML-RPC documents on (private)
class caller_watch;  // tells a connection's coroutine calls that it closed (private)
}  // namespace detail

/// Who makes a call, as the server saw the connection it came on.
struct call_peer {
  boost::asio::ip::address address;
  std::uint16_t port = 0;
  /// The user name the request authenticated as (HTTP Basic), or empty.
  std::string_view user;
};

/// Decides whether a call may run; set with registry::set_authorizer().
/// Returns true to let it run, false to refuse it with
/// fault_code::not_authorized; it may also throw rapidrpc::fault to refuse
/// it with that fault. `peer` is null for calls that come from no
/// connection. Called on the loop thread, before the method is looked up,
/// for every call: each entry of a system.multicall too (after the
/// system.multicall call itself).
using authorizer = std::function<bool(std::string_view method, const call_peer* peer)>;

/// What a running call may know about itself.
struct call_context {
  /// The executor of the connection's loop thread: timers and outgoing I/O of
  /// async methods go here, and replies are delivered here.
  boost::asio::any_io_executor loop;
  /// Who makes the call, if it came from a connection; valid until the
  /// call completes.
  const call_peer* peer = nullptr;
  /// Where pool methods run, set by the server; null: posted to `loop`.
  const detail::pool_target* pool = nullptr;
  /// What tells coroutine calls that their caller has gone (its connection
  /// closed before the reply), set by the server; null: never told.
  detail::caller_watch* caller = nullptr;
  /// How long the call may run: set by registry::invoke() for an async
  /// method (its own timeout, else the registry's default); zero: no limit.
  /// A coroutine method past it is cancelled and the call fails with
  /// fault_code::timeout.
  std::chrono::milliseconds timeout{0};
};

/// The reply channel of an async method.
///
/// Copyable; every copy refers to the same call. The first reply() or fail()
/// wins, later ones are ignored. May be called from any thread; the reply is
/// delivered on the connection's loop thread. If the last copy is destroyed
/// without a reply, the call fails with fault_code::internal_error, so a call
/// is never left unanswered.
class responder {
 public:
  using completion = std::function<void(outcome)>;

  responder(boost::asio::any_io_executor loop, completion done);

  /// Completes the call with a result.
  void reply(value result) const;
  /// Completes the call with a fault.
  void fail(fault error) const;
  /// The connection's loop executor (for timers and I/O).
  const boost::asio::any_io_executor& loop() const noexcept;

 private:
  struct state;
  std::shared_ptr<state> state_;
};

/// A call of a method and what it answers, for its documentation
/// (rpc.discover's examples, which OpenRPC tooling calls to check a server).
struct method_example {
  std::string name;  ///< what it shows ("two and three")
  array params;      ///< positional
  value result;
};

/// A registered method, as the dispatcher sees it.
struct method {
  /// Runs the call for inline_call and pool methods; params already counted
  /// and type-checked when `signature` is set and `checked` is true. The
  /// parameters are the call's own, read by nothing after `run` returns:
  /// `run` may move them out (a typed method's arguments are moved, not
  /// copied). A callable taking `const array&` fits as well.
  std::function<value(array& params)> run;
  /// Starts the call for async methods. A fault thrown before `reply` is
  /// used fails the call with that fault.
  std::function<void(const array& params, responder reply, const call_context& ctx)> start;
  execution where = execution::inline_call;
  std::string help;
  /// Return type first, then parameter types, by protocol type name
  /// ("int", "string", ...; "any" for a parameter of any type). Empty when
  /// the method does not declare one (raw methods).
  std::vector<std::string> signature;
  /// The JSON Schemas of the parameters, in order, and of the result, as
  /// JSON-RPC carries them (a typed method's, from its C++ types), which
  /// system.methodHelp, the API page and rpc.discover show. Empty (and
  /// nil): derived from `signature`, where there is one.
  std::vector<value> param_schemas;
  value result_schema;
  /// How long a pool or coroutine call may run before it fails with
  /// fault_code::timeout; zero means the registry's default (see
  /// registry::set_default_timeout).
  std::chrono::milliseconds timeout{0};
  /// The parameters' names, in order, for protocols that pass parameters by
  /// name (JSON-RPC's params object). Empty: positional parameters only.
  std::vector<std::string> param_names;
  /// How many parameters a call may have, from `first` to `second`
  /// (any_count: no most), checked before the method runs anywhere: a call
  /// with another count fails with fault_code::invalid_params without
  /// reaching the pool or a worker process. Unset: not checked here (a
  /// typed method checks its own parameters as it runs).
  std::optional<std::pair<std::size_t, std::size_t>> param_count;
  static constexpr std::size_t any_count = static_cast<std::size_t>(-1);
  /// Calls and their results, as rpc.discover documents them.
  std::vector<method_example> examples;
};

/// Methods by name: what a reload replaces all at once (registry::reload()).
using method_table = std::map<std::string, method, std::less<>>;

/// A method found by registry::lookup(), and what keeps it valid: a
/// reloadable method stays as it was while this is held, whatever reload()
/// does meanwhile.
struct found_method {
  const method* m = nullptr;
  std::shared_ptr<const void> keep;

  explicit operator bool() const noexcept { return m != nullptr; }
  const method* operator->() const noexcept { return m; }
};

/// Runs an inline or pool method's `run` on the calling thread and returns
/// its result; a rapidrpc::fault becomes that fault, any other exception a
/// generic fault_code::internal_error. Never throws.
outcome call_method(const method& m, array& params) noexcept;

namespace detail {

/// A shared_ptr<const T> that one thread replaces while others read it:
/// get() copies it under a short lock (libstdc++ 12's atomic<shared_ptr>
/// load ends with a relaxed unlock, which does not order its read before a
/// later store). What a reader holds stays valid however often it is
/// replaced.
template <class T>
class shared_slot {
 public:
  std::shared_ptr<const T> get() const {
    std::lock_guard hold(lock_);
    return value_;
  }
  void set(std::shared_ptr<const T> v) {
    {
      std::lock_guard hold(lock_);
      value_.swap(v);
    }
    // The old one goes here, outside the lock, unless a reader holds it.
  }

 private:
  mutable std::mutex lock_;
  std::shared_ptr<const T> value_;
};

template <class T>
using param_t = std::remove_cvref_t<T>;

/// Parameter i of a call as a T, or fault{invalid_params}: a copy from const
/// parameters, moved out of the call's own. A missing one (past the end: a
/// trailing std::optional the call left out) is an empty optional.
template <class T, class Params>
param_t<T> take_param(Params& params, std::size_t i) {
  using P = param_t<T>;
  if constexpr (is_optional<P>::value) {
    if (i >= params.size()) return P{};
  }
  if constexpr (std::is_const_v<Params>)
    return from_value_at<P>(params[i], value_path::parameter(i));
  else
    return from_value_at<P>(std::move(params[i]), value_path::parameter(i));
}

/// How many of the parameters Args a call must give: all but the trailing
/// std::optional ones.
template <class... Args>
constexpr std::size_t required_params() {
  constexpr std::array<bool, sizeof...(Args)> optional{is_optional<param_t<Args>>::value...};
  std::size_t n = optional.size();
  while (n > 0 && optional[n - 1]) --n;
  return n;
}

template <class... Args>
std::vector<std::string> describe(std::string_view result_name) {
  std::vector<std::string> sig;
  sig.emplace_back(result_name);
  (sig.emplace_back(convert<param_t<Args>>::name()), ...);
  return sig;
}

/// "expected N parameters, got M" (or "N to M", "at least N").
std::string param_count_message(std::size_t least, std::size_t most, std::size_t got);
[[noreturn]] void throw_param_count(std::size_t expected, std::size_t got);
[[noreturn]] void throw_param_count(std::size_t least, std::size_t most, std::size_t got);

// Whether a call gave as many parameters as Args takes.
template <class... Args>
void check_param_count(std::size_t got) {
  constexpr std::size_t least = required_params<Args...>();
  if constexpr (least == sizeof...(Args)) {
    if (got != least) throw_param_count(least, got);
  } else {
    if (got < least || got > sizeof...(Args)) throw_param_count(least, sizeof...(Args), got);
  }
}

template <class R>
value result_schema() {
  using T = std::remove_cvref_t<R>;
  if constexpr (std::is_void_v<T>)
    return kind_schema(kind::nil);
  else
    return schema_of<T>();
}

template <class R>
std::string_view result_name() {
  using T = std::remove_cvref_t<R>;
  if constexpr (std::is_void_v<T>)
    return "nil";
  else
    return convert<T>::name();
}

template <class F, class R, class... Args>
std::function<value(array&)> bind_sync(F f) {
  return [f = std::move(f)](array& params) -> value {
    check_param_count<Args...>(params.size());
    return [&]<std::size_t... I>(std::index_sequence<I...>)->value {
      if constexpr (std::is_void_v<R>) {
        std::invoke(f, take_param<Args>(params, I)...);
        return value{};
      } else {
        return to_value(std::invoke(f, take_param<Args>(params, I)...));
      }
    }
    (std::index_sequence_for<Args...>{});
  };
}

template <class F, class... Args>
std::function<void(const array&, responder, const call_context&)> bind_async(F f) {
  return [f = std::move(f)](const array& params, responder reply, const call_context&) {
    check_param_count<Args...>(params.size());
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      std::invoke(f, std::move(reply), take_param<Args>(params, I)...);
    }
    (std::index_sequence_for<Args...>{});
  };
}

template <class T>
struct awaitable_result {
  static constexpr bool is_awaitable = false;
};
template <class T, class Executor>
struct awaitable_result<boost::asio::awaitable<T, Executor>> {
  static constexpr bool is_awaitable = true;
  static_assert(std::is_same_v<Executor, boost::asio::any_io_executor>,
                "a coroutine method returns boost::asio::awaitable<T> (on any_io_executor)");
  using type = T;
};

/// Runs a coroutine method's body on ctx.loop and completes `reply` with
/// what it returns or throws; cancels it (terminal) past ctx.timeout, when
/// the call fails with fault_code::timeout at once, and when ctx.caller
/// says the caller has gone.
void spawn_coroutine(const call_context& ctx, responder reply, boost::asio::awaitable<value> body);

template <class T>
boost::asio::awaitable<value> awaited_value(boost::asio::awaitable<T> body) {
  if constexpr (std::is_void_v<T>) {
    co_await std::move(body);
    co_return value{};
  } else {
    // Awaited on its own: GCC 12 mis-builds temporaries around a co_await
    // inside a call.
    T result = co_await std::move(body);
    co_return to_value(std::move(result));
  }
}

// A coroutine method's parameters: a leading call_context (by value) is the
// call's own, not one of the call's parameters.
template <class Args>
struct split_context {
  static constexpr bool with_context = false;
  using params = Args;
};
template <class... Rest>
struct split_context<std::tuple<call_context, Rest...>> {
  static constexpr bool with_context = true;
  using params = std::tuple<Rest...>;
};

/// The context a coroutine method is given: the call's, but for its
/// caller's watch, which a call made from the coroutine (it may outlive
/// the connection, once cancelled) does not take.
call_context coroutine_context(const call_context& ctx);

template <class F, class T, bool WithContext, class... Args>
std::function<void(const array&, responder, const call_context&)> bind_coroutine(F f) {
  return [f = std::move(f)](const array& params, responder reply, const call_context& ctx) {
    check_param_count<Args...>(params.size());
    // The coroutine's frame takes the converted arguments (by value): it
    // starts on the loop after this returns.
    auto body = [&]<std::size_t... I>(std::index_sequence<I...>) {
      if constexpr (WithContext)
        return std::invoke(f, coroutine_context(ctx), take_param<Args>(params, I)...);
      else
        return std::invoke(f, take_param<Args>(params, I)...);
    }
    (std::index_sequence_for<Args...>{});
    spawn_coroutine(ctx, std::move(reply), awaited_value<T>(std::move(body)));
  };
}

// A typed method's parameter count, for the checks made before it runs
// (method::param_count): set only where trailing std::optionals may be
// left out, which the JSON-RPC named form needs to know.
template <class... Args>
std::optional<std::pair<std::size_t, std::size_t>> optional_param_count() {
  constexpr std::size_t least = required_params<Args...>();
  if constexpr (least == sizeof...(Args))
    return std::nullopt;
  else
    return std::pair<std::size_t, std::size_t>{least, sizeof...(Args)};
}

template <class F>
struct callable_traits : callable_traits<decltype(&std::remove_cvref_t<F>::operator())> {};
template <class R, class... Args>
struct callable_traits<R (*)(Args...)> {
  using result = R;
  using args = std::tuple<Args...>;
};
template <class R, class... Args>
struct callable_traits<R (&)(Args...)> : callable_traits<R (*)(Args...)> {};
template <class R, class... Args>
struct callable_traits<R(Args...)> : callable_traits<R (*)(Args...)> {};
template <class C, class R, class... Args>
struct callable_traits<R (C::*)(Args...) const> : callable_traits<R (*)(Args...)> {};
template <class C, class R, class... Args>
struct callable_traits<R (C::*)(Args...)> : callable_traits<R (*)(Args...)> {};

}  // namespace detail

/// Named methods and their dispatch.
class registry {
 public:
  /// Registers the built-in system.* methods.
  registry();

  /// Registers a C++ callable with typed parameters, e.g.
  /// `add("sample.add", [](std::int32_t a, std::int32_t b) { return a + b; }, "Adds.")`.
  ///
  /// Parameters and the result may be of any type rapidrpc::convert knows
  /// (rapidrpc/convert.hpp): the value kinds (std::int64_t accepts int and
  /// i8, double int and i8 too; value is any type), containers, optionals,
  /// time points and described structs and enums, nested freely; the
  /// result may also be anything a value is built from, and void (nil).
  /// Trailing std::optional parameters may be left out by the caller. The
  /// count and types of the arguments are checked before `f` runs
  /// (fault_code::invalid_params, naming the parameter, element or member
  /// that does not fit); the signature is derived for
  /// system.methodSignature. Replaces a method of the same name.
  ///
  /// A coroutine, `f` returning boost::asio::awaitable<T>, is an async
  /// method that runs on the connection's loop thread (`where` must be
  /// inline_call) and may co_await timers, I/O and rapidrpc's clients
  /// there (`co_await boost::asio::this_coro::executor` is the loop). It
  /// takes its parameters by value (a reference would outlive the call's
  /// arguments). Its call is cancelled (terminal cancellation: the pending
  /// co_await throws boost::system::system_error, operation_aborted) when
  /// its caller goes (the connection closes before the reply) and past its
  /// timeout (set_timeout(), set_default_timeout()), when the caller gets
  /// fault_code::timeout at once. A rapidrpc::fault thrown is the call's
  /// fault; another exception is fault_code::internal_error. Its first
  /// parameter may be a rapidrpc::call_context (by value, not one of the
  /// call's parameters): the call's, for async_call() of other methods.
  template <class F>
  void add(std::string name, F f, std::string help = {}, execution where = execution::inline_call) {
    using traits = detail::callable_traits<F>;
    using result = std::remove_cvref_t<typename traits::result>;
    if constexpr (detail::awaitable_result<result>::is_awaitable) {
      if (where != execution::inline_call)
        throw std::invalid_argument("a coroutine method runs on the loop: " + name);
      using split = detail::split_context<typename traits::args>;
      add_coroutine_bound<F, typename detail::awaitable_result<result>::type, split::with_context>(
          std::move(name), std::move(f), std::move(help),
          static_cast<typename split::params*>(nullptr));
    } else {
      add_bound<F, typename traits::result>(std::move(name), std::move(f), std::move(help), where,
                                            static_cast<typename traits::args*>(nullptr));
    }
  }

  /// Registers an async method: `f(responder reply, Args...)` returns at once
  /// and completes the call later with reply.reply(v) or reply.fail(fault).
  /// `Result` is the declared result type, for the signature.
  template <class Result, class F>
  void add_async(std::string name, F f, std::string help = {}) {
    using traits = detail::callable_traits<F>;
    add_async_bound<Result, F>(std::move(name), std::move(f), std::move(help),
                               static_cast<typename traits::args*>(nullptr));
  }

  /// Registers a method that takes the raw parameter list and checks it
  /// itself.
  void add_raw(std::string name, std::function<value(const array& params)> f, std::string help = {},
               execution where = execution::inline_call);

  /// Adds or replaces a method as given.
  void add_method(std::string name, method m);

  /// Removes a method; false if it was not there.
  bool remove(std::string_view name);

  /// Adds methods that reload() may replace while the server runs (worker
  /// methods: rapidrpc::add_worker_methods()). Set-up, like add(); a name
  /// here hides one added otherwise. Once there are reloadable methods,
  /// every lookup takes a short lock (to hold their table); a registry
  /// without them looks methods up with none.
  void add_reloadable(method_table methods);

  /// Replaces every reloadable method by `methods` at once (names may come
  /// and go), from any thread, while the server runs: a call looked up from
  /// now on sees the new table; one looked up before goes on with the
  /// method it found. Throws std::logic_error if nothing was added with
  /// add_reloadable() (the registry would have to take a lock for every
  /// call's lookup).
  void reload(method_table methods);

  /// The method of that name, or nullptr. A reloadable method's pointer is
  /// valid until the next reload(): while the server runs, use lookup().
  const method* find(std::string_view name) const;

  /// The method of that name (none: a null `m`), kept valid while held.
  found_method lookup(std::string_view name) const;

  /// All method names, in order.
  std::vector<std::string> names() const;

  /// The most entries system.multicall accepts in one call.
  void set_multicall_limit(std::size_t entries) noexcept { multicall_limit_ = entries; }
  std::size_t multicall_limit() const noexcept { return multicall_limit_; }

  /// How long a pool or coroutine call may run when its method sets no
  /// timeout of its own; zero (the default) means no limit. Past it the
  /// caller gets fault_code::timeout. A method running on a worker thread
  /// cannot be stopped: its thread stays busy until it returns and the late
  /// result is dropped. In worker processes the runaway process is killed
  /// and replaced; a coroutine is cancelled.
  void set_default_timeout(std::chrono::milliseconds t) noexcept { default_timeout_ = t; }
  std::chrono::milliseconds default_timeout() const noexcept { return default_timeout_; }

  /// Sets the hook that every call passes before its method is looked up
  /// (see rapidrpc::authorizer); an empty function (the default) lets every
  /// call through at no cost.
  void set_authorizer(authorizer hook) { authorizer_ = std::move(hook); }

  /// Sets one method's timeout; false if there is no such method.
  bool set_timeout(std::string_view name, std::chrono::milliseconds t);

  /// Names one method's parameters, in order, so that it can be called with
  /// named parameters (a JSON-RPC params object), e.g.
  /// `set_param_names("sample.add", {"a", "b"})`. False if there is no such
  /// method. Throws std::invalid_argument if a name repeats or is empty.
  bool set_param_names(std::string_view name, std::vector<std::string> names);

  /// Adds an example call of a method, which rpc.discover's document shows
  /// (OpenRPC tooling calls it and expects `result`), e.g.
  /// `add_example("sample.add", "two and three", {2, 3}, 5)`. False if
  /// there is no such method.
  bool add_example(std::string_view name, std::string example, array params, value result);

  /// Runs the method `name` from a coroutine method (its call_context
  /// parameter is `ctx`), wherever that method runs (a pool method on the
  /// server's pool, or in a worker process), with `args` converted as a
  /// client's are, e.g. `value v = co_await server.methods().async_call(ctx,
  /// "load", boost::asio::use_awaitable, 10)`.
  /// Completes, on ctx.loop, with void(std::exception_ptr, value): the
  /// call's fault (fault_code::timeout past the method's timeout among
  /// them) as a rapidrpc::fault. If the operation is cancelled (the
  /// coroutine's call is), it completes at once with
  /// boost::asio::error::operation_aborted; the call goes on where it runs
  /// and its result is dropped.
  template <class Token, class... Args>
  auto async_call(const call_context& ctx, std::string_view name, Token&& token,
                  Args&&... args) const {
    return boost::asio::async_initiate<Token, void(std::exception_ptr, value)>(
        [this](auto handler, call_context c, std::string target, array target_params) {
          using handler_type = decltype(handler);
          // The first of the result and a cancellation completes the
          // handler, posted (never within invoke() or a cancellation).
          struct pending {
            std::optional<handler_type> handler;
            boost::asio::cancellation_slot slot;
            boost::asio::any_io_executor loop;
            // `cancelled`: from within the slot's handler, which stays.
            void complete(std::exception_ptr e, value v, bool cancelled = false) {
              if (!handler) return;
              if (!cancelled && slot.is_connected()) slot.clear();
              boost::asio::post(loop, [h = std::move(*handler), e, v = std::move(v)]() mutable {
                std::move(h)(e, std::move(v));
              });
              handler.reset();
            }
          };
          auto p = std::make_shared<pending>();
          p->handler.emplace(std::move(handler));
          p->loop = c.loop;
          p->slot = boost::asio::get_associated_cancellation_slot(*p->handler);
          if (p->slot.is_connected())
            p->slot.assign([p](boost::asio::cancellation_type) {
              p->complete(std::make_exception_ptr(
                              boost::system::system_error(boost::asio::error::operation_aborted)),
                          value{}, true);
            });
          invoke(c, target, std::move(target_params), [p](outcome o) {
            if (auto* f = std::get_if<fault>(&o))
              p->complete(std::make_exception_ptr(std::move(*f)), value{});
            else
              p->complete(nullptr, std::get<value>(std::move(o)));
          });
        },
        token, ctx, std::string(name), array{to_value(std::forward<Args>(args))...});
  }

  /// Runs one call: asks the authorizer (with `ctx.peer`), looks the method
  /// up, checks it, runs it where it is registered to run, and calls `done`
  /// exactly once on `ctx.loop` (inline methods may complete before invoke()
  /// returns). Pool methods run where `ctx.pool` says (on `ctx.loop`
  /// without one). Never throws; every failure becomes a fault in `done`.
  void invoke(const call_context& ctx, std::string_view name, array params,
              std::function<void(outcome)> done) const;
  /// The same, for the server's transports: a pool call's runner may take
  /// the request as the document it came in and answer with the document a
  /// worker wrote, through `through` (may be null).
  void invoke(const call_context& ctx, std::string_view name, array params,
              std::function<void(outcome)> done, detail::passage* through) const;

 private:
  template <class F, class R, class... Args>
  void add_bound(std::string name, F f, std::string help, execution where, std::tuple<Args...>*) {
    method m;
    m.run = detail::bind_sync<F, R, detail::param_t<Args>...>(std::move(f));
    m.where = where;
    m.help = std::move(help);
    m.signature = detail::describe<Args...>(detail::result_name<R>());
    m.param_schemas = {detail::schema_of<detail::param_t<Args>>()...};
    m.result_schema = detail::result_schema<R>();
    m.param_count = detail::optional_param_count<Args...>();
    add_method(std::move(name), std::move(m));
  }

  template <class Result, class F, class Responder, class... Args>
  void add_async_bound(std::string name, F f, std::string help, std::tuple<Responder, Args...>*) {
    static_assert(std::is_same_v<std::remove_cvref_t<Responder>, responder>,
                  "an async method's first parameter is the responder");
    method m;
    m.start = detail::bind_async<F, detail::param_t<Args>...>(std::move(f));
    m.where = execution::async;
    m.help = std::move(help);
    m.signature = detail::describe<Args...>(detail::result_name<Result>());
    m.param_schemas = {detail::schema_of<detail::param_t<Args>>()...};
    m.result_schema = detail::result_schema<Result>();
    m.param_count = detail::optional_param_count<Args...>();
    add_method(std::move(name), std::move(m));
  }

  template <class F, class T, bool WithContext, class... Args>
  void add_coroutine_bound(std::string name, F f, std::string help, std::tuple<Args...>*) {
    static_assert((!std::is_reference_v<Args> && ...),
                  "a coroutine method takes its parameters by value: a reference would outlive "
                  "the call's arguments");
    method m;
    m.start = detail::bind_coroutine<F, T, WithContext, Args...>(std::move(f));
    m.where = execution::async;
    m.help = std::move(help);
    m.signature = detail::describe<Args...>(detail::result_name<T>());
    m.param_schemas = {detail::schema_of<detail::param_t<Args>>()...};
    m.result_schema = detail::result_schema<T>();
    m.param_count = detail::optional_param_count<Args...>();
    add_method(std::move(name), std::move(m));
  }

  void add_system_methods();

  method_table methods_;
  // The reloadable methods (add_reloadable()), if any: set before the
  // server runs, replaced by reload().
  std::unique_ptr<detail::shared_slot<method_table>> reloadable_;
  std::size_t multicall_limit_ = 1000;
  std::chrono::milliseconds default_timeout_{0};
  authorizer authorizer_;
};

}  // namespace rapidrpc
