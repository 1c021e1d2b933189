// Conversions between C++ types and rapidrpc::value: what a typed method's
// parameters and result may be (registry::add), and a typed client call's
// arguments and result (client_base::call<R>). Nested freely:
//
//   std::int32_t, std::int64_t, bool, double, std::string   the scalar kinds
//   rapidrpc::date_time, bytes, array, structure, value      the value types
//   std::vector<T>, std::array<T, N>                         array
//   std::tuple<T...>, std::pair<A, B>                        array, each element its type
//   std::map / std::unordered_map<std::string, T>            struct
//   std::optional<T>                                         T, or nil (or absent)
//   std::chrono::system_clock::time_point                    dateTime.iso8601, UTC
//   std::vector<std::uint8_t>, std::vector<std::byte>        base64
//   a struct described with BOOST_DESCRIBE_STRUCT            struct, one member each
//   an enum described with BOOST_DESCRIBE_ENUM               string, the enumerator's name
//
// A value that does not convert throws rapidrpc::fault with
// fault_code::invalid_params, saying where and what: "parameter 2,
// element 3, member "x": expected int, got string". Another type can be
// made convertible by specializing rapidrpc::convert<T> as below.
#pragma once

#include <rapidrpc/fault.hpp>
#include <rapidrpc/value.hpp>

#include <boost/describe/enum.hpp>
#include <boost/describe/enum_to_string.hpp>
#include <boost/describe/enumerators.hpp>
#include <boost/describe/members.hpp>
#include <boost/describe/modifiers.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rapidrpc {

/// Where a conversion is within what it converts: a parameter or the
/// result, then elements and members down to the value at hand. A chain of
/// frames on the converting code's stack, each pointing to the one above;
/// its text is made only for a fault's message.
class value_path {
 public:
  /// The method's parameter `index` (from 0; named from 1 in messages).
  static value_path parameter(std::size_t index) noexcept {
    return {nullptr, step::parameter, index};
  }
  /// A call's result.
  static value_path result() noexcept { return {nullptr, step::result, 0}; }
  /// Element `index` of the array here.
  value_path element(std::size_t index) const noexcept { return {this, step::element, index}; }
  /// The member named `name` of the struct here (`name` outlives the path).
  value_path member(std::string_view name) const noexcept {
    value_path p{this, step::member, 0};
    p.name_ = name;
    return p;
  }

  /// "parameter 2, element 3, member "x"" (a member's name cut at 64 bytes).
  std::string to_string() const;

  /// Throws fault_code::invalid_params: "<path>: expected <expected>, got <kind of got>".
  [[noreturn]] void mismatch(std::string_view expected, const value& got) const;
  /// Throws fault_code::invalid_params: "<path>: <what>".
  [[noreturn]] void fail(std::string_view what) const;

 private:
  enum class step : std::uint8_t { parameter, result, element, member };
  value_path(const value_path* up, step s, std::size_t index) noexcept
      : up_(up), step_(s), index_(index) {}

  const value_path* up_;
  step step_;
  std::size_t index_;
  std::string_view name_;
};

/// How values of type T convert. Specialize it for a type of your own with
/// `static std::string_view name()` (its protocol type name, for
/// system.methodSignature: "int", "string", "array", "struct", ...),
/// optionally `static value schema()` (its JSON Schema, as JSON-RPC
/// carries it: for system.methodHelp, the API page and rpc.discover; from
/// name() if not given),
/// `static T from(const value&, const value_path&)` (throwing through the
/// path when the value does not fit) and `static value to(const T&)`;
/// optionally `static T from(value&&, const value_path&)`, which may move
/// out of the value.
template <class T, class Enable = void>
struct convert {
  static_assert(sizeof(T) == 0,
                "rapidrpc::convert<T>: this type is not a parameter or result type rapidrpc can "
                "convert (the type is named in the instantiation above). Supported: std::int32_t, "
                "std::int64_t, bool, double, std::string, rapidrpc::date_time, rapidrpc::bytes, "
                "rapidrpc::array, rapidrpc::structure, rapidrpc::value, std::vector<T>, "
                "std::array<T, N>, std::tuple, std::pair, std::map or std::unordered_map with "
                "std::string keys, std::optional<T>, std::chrono::system_clock::time_point, "
                "std::vector<std::uint8_t> and std::vector<std::byte> (base64), a struct described "
                "with BOOST_DESCRIBE_STRUCT, an enum described with BOOST_DESCRIBE_ENUM; or "
                "specialize rapidrpc::convert<T>");
};

/// The JSON Schema of a value of kind `k`, as JSON-RPC carries it (an int's
/// range; base64 and dateTime as {"$base64": ...} and {"$datetime": ...}).
value kind_schema(kind k);
/// The JSON Schema of a protocol type name ("int", "struct", "any", ...;
/// system.methodSignature's names): any value for a name it does not know.
value schema_of_type_name(std::string_view name);

namespace detail {

// T moved out of `v` when V is an rvalue, else copied.
template <class V, class T>
decltype(auto) pass_on(T& x) noexcept {
  if constexpr (std::is_lvalue_reference_v<V>)
    return static_cast<const T&>(x);
  else
    return std::move(x);
}

template <class T>
concept converts_from_rvalue = requires(value&& v, const value_path& at) {
  { convert<T>::from(std::move(v), at) } -> std::same_as<T>;
};

// A value taken from `v` (const value& or value&&) at `at`.
template <class T, class V>
T from_value_at(V&& v, const value_path& at) {
  if constexpr (!std::is_lvalue_reference_v<V> && converts_from_rvalue<T>)
    return convert<T>::from(std::forward<V>(v), at);
  else
    return convert<T>::from(static_cast<const value&>(v), at);
}

// T's JSON Schema: convert<T>::schema(), or its name's. Within itself (a
// tree's children), a type is any value: its schema is made once, however
// many members hold it.
template <class T>
value schema_of() {
  if constexpr (requires { convert<T>::schema(); }) {
    thread_local bool making = false;  // T's schema is being made on this thread
    if (making) return structure{};
    making = true;
    struct done {
      bool& flag;
      ~done() { flag = false; }
    } on_return{making};
    return convert<T>::schema();
  } else {
    return schema_of_type_name(convert<T>::name());
  }
}

// The value kinds themselves, taken only from their own kind.
template <class T, kind K>
struct exact_convert {
  static std::string_view name() { return kind_name(K); }
  static value schema() { return kind_schema(K); }
  static T from(const value& v, const value_path& at) {
    if (const T* p = v.get_if<T>()) return *p;
    at.mismatch(name(), v);
  }
  static T from(value&& v, const value_path& at) {
    if (T* p = v.get_if<T>()) return std::move(*p);
    at.mismatch(name(), v);
  }
  static value to(const T& x) { return value(x); }
  static value to(T&& x) { return value(std::move(x)); }
};

template <class T>
inline constexpr bool is_byte_v = std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::byte>;

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
inline constexpr bool is_described_struct_v =
    std::is_class_v<T>&& boost::describe::has_describe_members<T>::value;

template <class T>
using public_members = boost::describe::describe_members<T, boost::describe::mod_public |
                                                                boost::describe::mod_inherited>;

// The schema of an array of exactly these elements' schemas.
value tuple_schema(array elements);

// An array of exactly `n` elements at `at`, or a fault.
template <class V>
auto& array_of(V& v, std::size_t n, const value_path& at) {
  auto* a = v.template get_if<array>();
  if (a == nullptr) at.mismatch("array", v);
  if (a->size() != n)
    at.fail("expected an array of " + std::to_string(n) + " element" + (n == 1 ? "" : "s") +
            ", got " + std::to_string(a->size()));
  return *a;
}

}  // namespace detail

template <>
struct convert<std::int32_t> : detail::exact_convert<std::int32_t, kind::i4> {};
template <>
struct convert<bool> : detail::exact_convert<bool, kind::boolean> {};
template <>
struct convert<std::string> : detail::exact_convert<std::string, kind::string> {};
template <>
struct convert<date_time> : detail::exact_convert<date_time, kind::date_time> {};
template <>
struct convert<bytes> : detail::exact_convert<bytes, kind::binary> {};
template <>
struct convert<array> : detail::exact_convert<array, kind::array> {};
template <>
struct convert<structure> : detail::exact_convert<structure, kind::structure> {};

/// i8, or an int.
template <>
struct convert<std::int64_t> {
  static std::string_view name() { return kind_name(kind::i8); }
  static value schema() { return kind_schema(kind::i8); }
  static std::int64_t from(const value& v, const value_path& at) {
    if (const auto* p = v.get_if<std::int64_t>()) return *p;
    if (const auto* p = v.get_if<std::int32_t>()) return *p;
    at.mismatch(name(), v);
  }
  static value to(std::int64_t x) { return value(x); }
};

/// A double, or an int or i8.
template <>
struct convert<double> {
  static std::string_view name() { return kind_name(kind::floating); }
  static value schema() { return kind_schema(kind::floating); }
  static double from(const value& v, const value_path& at) {
    if (const auto* p = v.get_if<double>()) return *p;
    if (const auto* p = v.get_if<std::int32_t>()) return *p;
    if (const auto* p = v.get_if<std::int64_t>()) return static_cast<double>(*p);
    at.mismatch(name(), v);
  }
  static value to(double x) { return value(x); }
};

/// Any value, as it is ("any" in a signature).
template <>
struct convert<value> {
  static std::string_view name() { return "any"; }
  static value schema() { return structure{}; }
  static value from(const value& v, const value_path&) { return v; }
  static value from(value&& v, const value_path&) { return std::move(v); }
  static value to(const value& x) { return x; }
  static value to(value&& x) { return std::move(x); }
};

/// A value of T's kind, or nil (a missing trailing parameter, an absent
/// member): std::nullopt. An empty one is written as nil (in a struct: no
/// member).
template <class T>
struct convert<std::optional<T>> {
  static std::string_view name() { return convert<T>::name(); }
  static value schema() {
    return structure{{"oneOf", array{detail::schema_of<T>(), structure{{"type", "null"}}}}};
  }
  template <class V>
  requires std::same_as<std::remove_cvref_t<V>, value>
  static std::optional<T> from(V&& v, const value_path& at) {
    if (v.template is<nil_t>()) return std::nullopt;
    return detail::from_value_at<T>(std::forward<V>(v), at);
  }
  static value to(const std::optional<T>& x) { return x ? convert<T>::to(*x) : value(); }
  static value to(std::optional<T>&& x) { return x ? convert<T>::to(std::move(*x)) : value(); }
};

/// An array, each element a T; std::vector<std::uint8_t> and
/// std::vector<std::byte> are base64 instead.
template <class T>
requires(!detail::is_byte_v<T>) struct convert<std::vector<T>> {
  static std::string_view name() { return kind_name(kind::array); }
  static value schema() { return structure{{"type", "array"}, {"items", detail::schema_of<T>()}}; }
  template <class V>
  requires std::same_as<std::remove_cvref_t<V>, value>
  static std::vector<T> from(V&& v, const value_path& at) {
    auto* a = v.template get_if<array>();
    if (a == nullptr) at.mismatch(name(), v);
    std::vector<T> out;
    out.reserve(a->size());
    for (std::size_t i = 0; i < a->size(); ++i)
      out.push_back(detail::from_value_at<T>(detail::pass_on<V>((*a)[i]), at.element(i)));
    return out;
  }
  static value to(const std::vector<T>& x) {
    array out;
    out.reserve(x.size());
    for (const auto& e : x) out.push_back(convert<T>::to(e));
    return out;
  }
  static value to(std::vector<T>&& x) {
    array out;
    out.reserve(x.size());
    for (auto& e : x) out.push_back(convert<T>::to(std::move(e)));
    return out;
  }
};

/// base64: the bytes.
template <class B>
requires detail::is_byte_v<B>
struct convert<std::vector<B>> {
  static std::string_view name() { return kind_name(kind::binary); }
  static value schema() { return kind_schema(kind::binary); }
  static std::vector<B> from(const value& v, const value_path& at) {
    const auto* b = v.get_if<bytes>();
    if (b == nullptr) at.mismatch(name(), v);
    if constexpr (std::is_same_v<B, std::uint8_t>)
      return b->data;
    else
      return std::vector<B>(reinterpret_cast<const B*>(b->data.data()),
                            reinterpret_cast<const B*>(b->data.data() + b->data.size()));
  }
  static std::vector<B> from(value&& v, const value_path& at) {
    if constexpr (std::is_same_v<B, std::uint8_t>) {
      if (auto* b = v.get_if<bytes>()) return std::move(b->data);
    }
    return from(static_cast<const value&>(v), at);
  }
  static value to(const std::vector<B>& x) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(x.data());
    return bytes(std::vector<std::uint8_t>(p, p + x.size()));
  }
  static value to(std::vector<B>&& x) {
    if constexpr (std::is_same_v<B, std::uint8_t>)
      return bytes(std::move(x));
    else
      return to(static_cast<const std::vector<B>&>(x));
  }
};

/// An array of exactly N elements, each a T.
template <class T, std::size_t N>
struct convert<std::array<T, N>> {
  static std::string_view name() { return kind_name(kind::array); }
  static value schema() {
    const auto n = static_cast<std::int64_t>(N);
    return structure{
        {"type", "array"}, {"items", detail::schema_of<T>()}, {"minItems", n}, {"maxItems", n}};
  }
  template <class V>
  requires std::same_as<std::remove_cvref_t<V>, value>
  static std::array<T, N> from(V&& v, const value_path& at) {
    auto& a = detail::array_of(v, N, at);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array<T, N>{detail::from_value_at<T>(detail::pass_on<V>(a[I]), at.element(I))...};
    }
    (std::make_index_sequence<N>{});
  }
  static value to(const std::array<T, N>& x) {
    array out;
    out.reserve(N);
    for (const auto& e : x) out.push_back(convert<T>::to(e));
    return out;
  }
};

/// An array of exactly as many elements, each of its own type.
template <class... T>
struct convert<std::tuple<T...>> {
  static std::string_view name() { return kind_name(kind::array); }
  static value schema() { return detail::tuple_schema({detail::schema_of<T>()...}); }
  template <class V>
  requires std::same_as<std::remove_cvref_t<V>, value>
  static std::tuple<T...> from(V&& v, const value_path& at) {
    auto& a = detail::array_of(v, sizeof...(T), at);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      // Braces: the elements are converted in order.
      return std::tuple<T...>{detail::from_value_at<T>(detail::pass_on<V>(a[I]), at.element(I))...};
    }
    (std::index_sequence_for<T...>{});
  }
  static value to(const std::tuple<T...>& x) {
    return std::apply([](const auto&... e) { return value(array{convert<T>::to(e)...}); }, x);
  }
};

/// An array of two elements.
template <class A, class B>
struct convert<std::pair<A, B>> {
  static std::string_view name() { return kind_name(kind::array); }
  static value schema() {
    return detail::tuple_schema({detail::schema_of<A>(), detail::schema_of<B>()});
  }
  template <class V>
  requires std::same_as<std::remove_cvref_t<V>, value>
  static std::pair<A, B> from(V&& v, const value_path& at) {
    auto& a = detail::array_of(v, 2, at);
    A first = detail::from_value_at<A>(detail::pass_on<V>(a[0]), at.element(0));
    return {std::move(first), detail::from_value_at<B>(detail::pass_on<V>(a[1]), at.element(1))};
  }
  static value to(const std::pair<A, B>& x) {
    return array{convert<A>::to(x.first), convert<B>::to(x.second)};
  }
};

namespace detail {

// std::map and std::unordered_map with string keys: a struct.
template <class Map>
struct map_convert {
  using mapped = typename Map::mapped_type;
  static std::string_view name() { return kind_name(kind::structure); }
  static value schema() {
    return structure{{"type", "object"}, {"additionalProperties", schema_of<mapped>()}};
  }
  template <class V>
  requires std::same_as<std::remove_cvref_t<V>, value>
  static Map from(V&& v, const value_path& at) {
    auto* s = v.template get_if<structure>();
    if (s == nullptr) at.mismatch(name(), v);
    Map out;
    for (auto& [key, member] : *s)
      out.emplace(key, from_value_at<mapped>(pass_on<V>(member), at.member(key)));
    return out;
  }
  static value to(const Map& x) {
    structure out;
    out.reserve(x.size());
    for (const auto& [key, member] : x) out.try_emplace(key, convert<mapped>::to(member));
    return out;
  }
};

}  // namespace detail

/// A struct, each member a T (in the map's order).
template <class T, class Compare, class Alloc>
struct convert<std::map<std::string, T, Compare, Alloc>>
    : detail::map_convert<std::map<std::string, T, Compare, Alloc>> {};
/// A struct, each member a T.
template <class T, class Hash, class Eq, class Alloc>
struct convert<std::unordered_map<std::string, T, Hash, Eq, Alloc>>
    : detail::map_convert<std::unordered_map<std::string, T, Hash, Eq, Alloc>> {};

/// dateTime.iso8601, read and written as UTC, to the microsecond (XML-RPC
/// dates carry no time zone); a date outside the clock's range is a fault.
template <>
struct convert<std::chrono::system_clock::time_point> {
  static std::string_view name() { return kind_name(kind::date_time); }
  static value schema() { return kind_schema(kind::date_time); }
  static std::chrono::system_clock::time_point from(const value& v, const value_path& at);
  static value to(std::chrono::system_clock::time_point x);
};

/// A struct described with BOOST_DESCRIBE_STRUCT (its public members, and
/// those of described bases): a struct with a member of each name, in
/// declaration order. Reading one, a member that is missing is a fault
/// unless it is a std::optional (left empty); members it does not describe
/// are ignored. An empty std::optional is written as no member.
template <class T>
requires detail::is_described_struct_v<T>
struct convert<T> {
  static std::string_view name() { return kind_name(kind::structure); }
  static value schema() {
    structure properties;
    array required;
    boost::mp11::mp_for_each<detail::public_members<T>>([&](auto d) {
      using M = std::remove_cvref_t<decltype(std::declval<T&>().*d.pointer)>;
      properties.try_emplace(d.name, detail::schema_of<M>());
      if constexpr (!detail::is_optional<M>::value) required.emplace_back(d.name);
    });
    return structure{{"type", "object"},
                     {"properties", std::move(properties)},
                     {"required", std::move(required)}};
  }
  template <class V>
  requires std::same_as<std::remove_cvref_t<V>, value>
  static T from(V&& v, const value_path& at) {
    auto* s = v.template get_if<structure>();
    if (s == nullptr) at.mismatch(name(), v);
    T out{};
    boost::mp11::mp_for_each<detail::public_members<T>>([&](auto d) {
      using M = std::remove_cvref_t<decltype(out.*d.pointer)>;
      auto it = s->find(d.name);
      if (it == s->end()) {
        if constexpr (!detail::is_optional<M>::value)
          at.fail(std::string("member \"") + d.name + "\" is missing");
        return;
      }
      out.*d.pointer = detail::from_value_at<M>(detail::pass_on<V>(it->second), at.member(d.name));
    });
    return out;
  }
  static value to(const T& x) {
    structure out;
    out.reserve(boost::mp11::mp_size<detail::public_members<T>>::value);
    boost::mp11::mp_for_each<detail::public_members<T>>([&](auto d) {
      using M = std::remove_cvref_t<decltype(x.*d.pointer)>;
      if constexpr (detail::is_optional<M>::value) {
        if (!(x.*d.pointer)) return;
      }
      out.try_emplace(d.name, convert<M>::to(x.*d.pointer));
    });
    return out;
  }
};

/// An enum described with BOOST_DESCRIBE_ENUM: the enumerator's name, as a
/// string; a name it does not have is a fault (naming those it has), and
/// writing a value that is no enumerator throws std::invalid_argument.
template <class E>
requires std::is_enum_v<E> &&
    boost::describe::has_describe_enumerators<E>::value struct convert<E> {
  static std::string_view name() { return kind_name(kind::string); }
  static value schema() {
    array names;
    boost::mp11::mp_for_each<boost::describe::describe_enumerators<E>>(
        [&](auto d) { names.emplace_back(d.name); });
    return structure{{"type", "string"}, {"enum", std::move(names)}};
  }
  static E from(const value& v, const value_path& at) {
    const auto* s = v.get_if<std::string>();
    if (s == nullptr) at.mismatch(name(), v);
    E e{};
    bool found = false;
    boost::mp11::mp_for_each<boost::describe::describe_enumerators<E>>([&](auto d) {
      if (!found && *s == d.name) {
        e = d.value;
        found = true;
      }
    });
    if (!found) {
      std::string names;
      boost::mp11::mp_for_each<boost::describe::describe_enumerators<E>>([&](auto d) {
        names += names.empty() ? "" : ", ";
        names += d.name;
      });
      // The string is echoed only where it might have been a name.
      const bool echo = s->size() <= 64 && std::all_of(s->begin(), s->end(), [](char c) {
                          return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
                        });
      at.fail("expected one of " + names + "; got " + (echo ? "\"" + *s + "\"" : "another string"));
    }
    return e;
  }
  static value to(E e) {
    const char* n = boost::describe::enum_to_string(e, nullptr);
    if (n == nullptr) throw std::invalid_argument("rapidrpc: an enum value that has no name");
    return std::string(n);
  }
};

/// Whether values of T convert (a specialization of convert<T> exists).
template <class T>
concept convertible = requires(const value& v, const value_path& at) {
  { convert<T>::from(v, at) } -> std::same_as<T>;
};

/// `x` as a value: built directly when a value can be (an int, a string,
/// const char*, ...), else through convert<T>.
template <class T>
value to_value(T&& x) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, value>)
    return std::forward<T>(x);
  else if constexpr (std::is_constructible_v<value, T&&> &&
                     !boost::describe::has_describe_enumerators<U>::value)
    return value(std::forward<T>(x));
  else
    return convert<U>::to(std::forward<T>(x));
}

/// `v` as a T, or fault_code::invalid_params saying where it does not fit
/// (`at`: the result, unless told).
template <class T, class V>
requires std::same_as<std::remove_cvref_t<V>, value> T
from_value(V&& v, const value_path& at = value_path::result()) {
  return detail::from_value_at<T>(std::forward<V>(v), at);
}

}  // namespace rapidrpc
