// The method registry: named methods with typed argument binding, help text
// and signatures, the built-in system.* methods, and the dispatch of one call
// to where its method runs (the event loop, the worker pool, or later).
//
// Threading: add() and the other mutators are for set-up, before the server
// starts; once it runs the registry is read-only and shared by every loop
// thread, but for its reloadable methods (add_reloadable()), which reload()
// replaces all at once from any thread. invoke() is called on a loop thread;
// its completion always runs on that loop thread (the executor passed in the
// context).
#pragma once

#include <rapidrpc/convert.hpp>
#include <rapidrpc/fault.hpp>
#include <rapidrpc/outcome.hpp>
#include <rapidrpc/value.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/address.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
  async,        ///< starts on the loop and replies later through a responder
};

namespace detail {
struct pool_target;  // where a server runs pool methods (private)
class passage;       // a caller that passes XML-RPC documents on (private)
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
  /// How long a pool call may run before it fails with fault_code::timeout;
  /// zero means the registry's default (see registry::set_default_timeout).
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
  template <class F>
  void add(std::string name, F f, std::string help = {}, execution where = execution::inline_call) {
    using traits = detail::callable_traits<F>;
    add_bound<F, typename traits::result>(std::move(name), std::move(f), std::move(help), where,
                                          static_cast<typename traits::args*>(nullptr));
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

  /// How long a pool call may run when its method sets no timeout of its
  /// own; zero (the default) means no limit. Past it the caller gets
  /// fault_code::timeout. A method running on a worker thread cannot be
  /// stopped: its thread stays busy until it returns and the late result is
  /// dropped. In worker processes the runaway process is killed and replaced.
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
