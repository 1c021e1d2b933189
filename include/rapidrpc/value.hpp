// The XML-RPC value model: one type that holds any value the protocol can carry.
//
// Threading: a value is a plain regular type (copyable, movable, comparable);
// distinct objects may be used from distinct threads, one object from one
// thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace rapidrpc {

/// The kinds of value XML-RPC (with the nil and i8 extensions) can carry.
enum class kind : std::uint8_t {
  nil,        ///< <nil/> (extension)
  i4,         ///< <int> / <i4>: 32-bit signed integer
  i8,         ///< <i8> (extension): 64-bit signed integer
  boolean,    ///< <boolean>: 0 or 1
  floating,   ///< <double>
  string,     ///< <string> or an untyped <value>
  date_time,  ///< <dateTime.iso8601>
  binary,     ///< <base64>
  array,      ///< <array>
  structure,  ///< <struct>
};

/// The protocol's name of a kind, as used in system.methodSignature
/// ("int", "i8", "boolean", "double", "string", "dateTime.iso8601", "base64",
/// "array", "struct", "nil").
std::string_view kind_name(kind k) noexcept;

/// The value of <nil/>.
struct nil_t {
  friend bool operator==(nil_t, nil_t) noexcept = default;
};
inline constexpr nil_t nil{};

/// A dateTime.iso8601 value. XML-RPC dates carry no time zone; the fields are
/// kept as sent. Encoded as "YYYYMMDDTHH:MM:SS".
struct date_time {
  std::int16_t year = 1970;   ///< 0..9999
  std::uint8_t month = 1;     ///< 1..12
  std::uint8_t day = 1;       ///< 1..31, valid for the month
  std::uint8_t hour = 0;      ///< 0..23
  std::uint8_t minute = 0;    ///< 0..59
  std::uint8_t second = 0;    ///< 0..60 (a leap second is allowed)

  friend bool operator==(const date_time&, const date_time&) noexcept = default;
};

/// A base64 value: raw bytes.
struct bytes {
  std::vector<std::uint8_t> data;

  bytes() = default;
  explicit bytes(std::vector<std::uint8_t> d) : data(std::move(d)) {}
  explicit bytes(std::string_view s) : data(s.begin(), s.end()) {}

  friend bool operator==(const bytes&, const bytes&) = default;
};

class value;

/// An XML-RPC array.
using array = std::vector<value>;

/// An XML-RPC struct: member names are unique; iteration is in name order.
using structure = std::map<std::string, value, std::less<>>;

/// Any XML-RPC value.
///
/// Construct from the matching C++ type: `value{std::int32_t{3}}`,
/// `value{"text"}`, `value{array{...}}`. A plain `int` becomes an i4,
/// `std::int64_t` an i8. Read with `is<T>()`, `as<T>()` (throws
/// `std::bad_variant_access` on a kind mismatch) or `get_if<T>()`.
class value {
 public:
  using storage = std::variant<nil_t, std::int32_t, std::int64_t, bool, double,
                               std::string, date_time, bytes, array, structure>;

  value() noexcept : v_(nil_t{}) {}
  value(nil_t) noexcept : v_(nil_t{}) {}
  value(std::int32_t i) noexcept : v_(i) {}
  value(std::int64_t i) noexcept : v_(i) {}
  value(bool b) noexcept : v_(b) {}
  value(double d) noexcept : v_(d) {}
  value(std::string s) noexcept : v_(std::move(s)) {}
  value(std::string_view s) : v_(std::string(s)) {}
  value(const char* s) : v_(std::string(s)) {}
  value(date_time t) noexcept : v_(t) {}
  value(bytes b) noexcept : v_(std::move(b)) {}
  value(array a) noexcept : v_(std::move(a)) {}
  value(structure s) noexcept : v_(std::move(s)) {}

  /// The kind this value holds.
  kind type() const noexcept { return static_cast<kind>(v_.index()); }

  template <class T>
  bool is() const noexcept {
    return std::holds_alternative<T>(v_);
  }
  template <class T>
  const T& as() const& {
    return std::get<T>(v_);
  }
  template <class T>
  T& as() & {
    return std::get<T>(v_);
  }
  template <class T>
  T&& as() && {
    return std::get<T>(std::move(v_));
  }
  template <class T>
  const T* get_if() const noexcept {
    return std::get_if<T>(&v_);
  }
  template <class T>
  T* get_if() noexcept {
    return std::get_if<T>(&v_);
  }

  /// The underlying variant, for std::visit.
  const storage& raw() const noexcept { return v_; }
  storage& raw() noexcept { return v_; }

  friend bool operator==(const value&, const value&) = default;

 private:
  storage v_;
};

static_assert(static_cast<std::size_t>(kind::structure) + 1 == std::variant_size_v<value::storage>,
              "kind enumerators must follow the order of value::storage");

/// A readable, single-line rendering of a value for logs and the command line
/// (not a wire format).
std::string to_debug_string(const value& v);

}  // namespace rapidrpc
