// The XML-RPC value model: one type that holds any value the protocol can carry.
//
// Threading: a value is a plain regular type (copyable, movable, comparable);
// distinct objects may be used from distinct threads, one object from one
// thread at a time.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
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
/// kept as sent. Encoded as "YYYYMMDDTHH:MM:SS", with ".ffffff" after the
/// seconds when `microsecond` is not 0 (the form xmlrpc-c writes).
struct date_time {
  std::int16_t year = 1970;       ///< 0..9999
  std::uint8_t month = 1;         ///< 1..12
  std::uint8_t day = 1;           ///< 1..31, valid for the month
  std::uint8_t hour = 0;          ///< 0..23
  std::uint8_t minute = 0;        ///< 0..59
  std::uint8_t second = 0;        ///< 0..60 (a leap second is allowed)
  std::uint32_t microsecond = 0;  ///< 0..999999

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

/// An XML-RPC struct (a JSON object): named members, each name at most once,
/// kept in the order they were inserted or received, so a struct read from
/// the wire is written back as it was sent (as Python's dict, Perl's, Ruby's
/// and PHP's hashes and JSON objects keep it).
///
/// The interface is the one of `std::map<std::string, value>` that code
/// uses: `find`, `at`, `operator[]`, `contains`, `count`, `insert`,
/// `emplace`, `try_emplace`, `insert_or_assign`, `erase`, `size`, `empty`,
/// and iteration over `std::pair<std::string, value>` (`.first` the name,
/// `.second` the value; `for (auto& [name, v] : s)`). Inserting a name that
/// is there already changes nothing and returns the member that is there
/// (as std::map does); `operator[]` and `insert_or_assign` replace its value
/// in place, keeping its position. `erase` keeps the order of the rest.
///
/// Lookup by name is a scan of the members while the struct is small and a
/// hash index (keyed with a per-process random key, so crafted names cannot
/// collide on purpose) once it is larger; inserting at the end and finding
/// a name both take constant time on average. Erasing is linear.
///
/// A member's name must not be changed through an iterator (erase the member
/// and insert it again instead): the index would not know.
///
/// Equality compares the structs as mappings: the same names with equal
/// values, in any order. To check the order too, compare the iteration
/// (`std::ranges::equal(a, b)`) or the written documents.
///
/// Iterators and references to members are invalidated by any insert or
/// erase (as with std::vector).
class structure {
 public:
  using key_type = std::string;
  using mapped_type = value;
  using value_type = std::pair<std::string, value>;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = value_type&;
  using const_reference = const value_type&;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;
  using reverse_iterator = std::vector<value_type>::reverse_iterator;
  using const_reverse_iterator = std::vector<value_type>::const_reverse_iterator;

  structure() noexcept = default;
  /// The members in the order given; a later repeat of a name is dropped.
  structure(std::initializer_list<value_type> members);
  template <std::input_iterator It, std::sentinel_for<It> End>
  structure(It first, End last) {
    insert(std::move(first), std::move(last));
  }

  iterator begin() noexcept;
  iterator end() noexcept;
  const_iterator begin() const noexcept;
  const_iterator end() const noexcept;
  const_iterator cbegin() const noexcept;
  const_iterator cend() const noexcept;
  reverse_iterator rbegin() noexcept;
  reverse_iterator rend() noexcept;
  const_reverse_iterator rbegin() const noexcept;
  const_reverse_iterator rend() const noexcept;

  bool empty() const noexcept;
  size_type size() const noexcept;
  size_type max_size() const noexcept;
  /// Makes room for `n` members (no reallocation until then).
  void reserve(size_type n);
  void clear() noexcept;

  /// The member named `name`, or end().
  iterator find(std::string_view name) noexcept;
  const_iterator find(std::string_view name) const noexcept;
  bool contains(std::string_view name) const noexcept;
  /// 1 if there is a member named `name`, else 0.
  size_type count(std::string_view name) const noexcept;
  /// The value of the member named `name`; throws std::out_of_range if none.
  value& at(std::string_view name);
  const value& at(std::string_view name) const;
  /// The value of the member named `name`, appended as nil if there was none.
  template <class Name>
  requires std::convertible_to<Name, std::string_view> value& operator[](Name&& name);

  /// Appends `m` unless its name is there; returns the member with that
  /// name and whether it was appended.
  std::pair<iterator, bool> insert(const value_type& m);
  std::pair<iterator, bool> insert(value_type&& m);
  template <std::input_iterator It, std::sentinel_for<It> End>
  void insert(It first, End last);
  void insert(std::initializer_list<value_type> members);
  /// insert(value_type(args...)).
  template <class... Args>
  std::pair<iterator, bool> emplace(Args&&... args);
  /// Appends a member named `name` with a value made of `args` unless the
  /// name is there (then nothing is constructed, and nothing moved from).
  template <class Name, class... Args>
  requires std::convertible_to<Name, std::string_view> std::pair<iterator, bool> try_emplace(
      Name&& name, Args&&... args);
  /// Appends the member, or replaces the value of the one with that name.
  template <class Name, class V>
  requires std::convertible_to<Name, std::string_view> std::pair<iterator, bool> insert_or_assign(
      Name&& name, V&& v);

  /// Removes a member; returns the iterator to the one after it.
  iterator erase(const_iterator pos);
  iterator erase(iterator pos);
  iterator erase(const_iterator first, const_iterator last);
  /// Removes the member named `name`; returns how many were removed (0 or 1).
  size_type erase(std::string_view name);

  void swap(structure& other) noexcept;
  friend void swap(structure& a, structure& b) noexcept { a.swap(b); }

  /// The same names with equal values, in any order.
  friend bool operator==(const structure& a, const structure& b);

 private:
  // Below this many members, lookup scans; from it on, the index is kept.
  static constexpr size_type index_from = 16;
  static constexpr size_type npos = size_type(-1);

  size_type position_of(std::string_view name) const noexcept;
  size_type scan(std::string_view name) const noexcept;
  size_type probe(std::string_view name) const noexcept;
  // After members_.push_back(): enters the last member into the index.
  void index_last();
  void rebuild_index();

  std::vector<value_type> members_;
  // Open addressing, linear probing, at most half full. Each slot holds
  // 32 bits of the name's hash and the member's position + 1 (0: empty).
  // Empty while the struct has fewer than index_from members.
  struct slot {
    std::uint32_t hash;
    std::uint32_t position;
  };
  std::vector<slot> index_;
};

/// Any XML-RPC value.
///
/// Construct from the matching C++ type: `value{std::int32_t{3}}`,
/// `value{"text"}`, `value{array{...}}`. A plain `int` becomes an i4,
/// `std::int64_t` an i8. Read with `is<T>()`, `as<T>()` (throws
/// `std::bad_variant_access` on a kind mismatch) or `get_if<T>()`.
class value {
 public:
  using storage = std::variant<nil_t, std::int32_t, std::int64_t, bool, double, std::string,
                               date_time, bytes, array, structure>;

  value() noexcept : v_(nil_t{}) {}
  value(nil_t) noexcept : v_(nil_t{}) {}
  value(std::int32_t i) noexcept : v_(i) {}
  value(std::int64_t i) noexcept : v_(i) {}
  value(bool b) noexcept : v_(b) {}
  value(double d) noexcept : v_(d) {}
  value(std::string s) noexcept : v_(std::move(s)) {}
  value(std::string_view s) : v_(std::in_place_type<std::string>, s) {}
  value(const char* s) : v_(std::in_place_type<std::string>, s) {}
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

// ---- structure: the members that need a complete value ----------------------

inline structure::iterator structure::begin() noexcept { return members_.begin(); }
inline structure::iterator structure::end() noexcept { return members_.end(); }
inline structure::const_iterator structure::begin() const noexcept { return members_.begin(); }
inline structure::const_iterator structure::end() const noexcept { return members_.end(); }
inline structure::const_iterator structure::cbegin() const noexcept { return members_.cbegin(); }
inline structure::const_iterator structure::cend() const noexcept { return members_.cend(); }
inline structure::reverse_iterator structure::rbegin() noexcept { return members_.rbegin(); }
inline structure::reverse_iterator structure::rend() noexcept { return members_.rend(); }
inline structure::const_reverse_iterator structure::rbegin() const noexcept {
  return members_.rbegin();
}
inline structure::const_reverse_iterator structure::rend() const noexcept {
  return members_.rend();
}

inline bool structure::empty() const noexcept { return members_.empty(); }
inline structure::size_type structure::size() const noexcept { return members_.size(); }
inline structure::size_type structure::max_size() const noexcept {
  const size_type positions = UINT32_MAX - 1;  // the index holds 32-bit positions
  return members_.max_size() < positions ? members_.max_size() : positions;
}
inline void structure::clear() noexcept {
  members_.clear();
  index_.clear();
}

inline structure::size_type structure::scan(std::string_view name) const noexcept {
  for (size_type i = 0; i < members_.size(); ++i)
    if (members_[i].first == name) return i;
  return npos;
}

inline structure::size_type structure::position_of(std::string_view name) const noexcept {
  return index_.empty() ? scan(name) : probe(name);
}

inline structure::iterator structure::find(std::string_view name) noexcept {
  const size_type i = position_of(name);
  return i == npos ? members_.end() : members_.begin() + static_cast<difference_type>(i);
}
inline structure::const_iterator structure::find(std::string_view name) const noexcept {
  const size_type i = position_of(name);
  return i == npos ? members_.end() : members_.begin() + static_cast<difference_type>(i);
}
inline bool structure::contains(std::string_view name) const noexcept {
  return position_of(name) != npos;
}
inline structure::size_type structure::count(std::string_view name) const noexcept {
  return contains(name) ? 1 : 0;
}
inline value& structure::at(std::string_view name) {
  const size_type i = position_of(name);
  if (i == npos) throw std::out_of_range("rapidrpc::structure::at: no such member");
  return members_[i].second;
}
inline const value& structure::at(std::string_view name) const {
  const size_type i = position_of(name);
  if (i == npos) throw std::out_of_range("rapidrpc::structure::at: no such member");
  return members_[i].second;
}

template <class Name, class... Args>
requires std::convertible_to<Name, std::string_view> std::pair<structure::iterator, bool>
structure::try_emplace(Name&& name, Args&&... args) {
  if (const size_type i = position_of(std::string_view(name)); i != npos)
    return {members_.begin() + static_cast<difference_type>(i), false};
  members_.emplace_back(std::piecewise_construct,
                        std::forward_as_tuple(std::string(std::forward<Name>(name))),
                        std::forward_as_tuple(std::forward<Args>(args)...));
  if (members_.size() >= index_from) index_last();
  return {members_.end() - 1, true};
}

template <class Name>
requires std::convertible_to<Name, std::string_view> value& structure::operator[](Name&& name) {
  return try_emplace(std::forward<Name>(name)).first->second;
}

template <class Name, class V>
requires std::convertible_to<Name, std::string_view> std::pair<structure::iterator, bool>
structure::insert_or_assign(Name&& name, V&& v) {
  auto r = try_emplace(std::forward<Name>(name), std::forward<V>(v));
  if (!r.second) r.first->second = std::forward<V>(v);
  return r;
}

inline std::pair<structure::iterator, bool> structure::insert(const value_type& m) {
  return try_emplace(m.first, m.second);
}
inline std::pair<structure::iterator, bool> structure::insert(value_type&& m) {
  if (const size_type i = position_of(m.first); i != npos)
    return {members_.begin() + static_cast<difference_type>(i), false};
  members_.push_back(std::move(m));
  if (members_.size() >= index_from) index_last();
  return {members_.end() - 1, true};
}
template <std::input_iterator It, std::sentinel_for<It> End>
void structure::insert(It first, End last) {
  for (; first != last; ++first) insert(value_type(*first));
}
inline void structure::insert(std::initializer_list<value_type> members) {
  members_.reserve(members_.size() + members.size());
  for (const value_type& m : members) insert(m);
}
inline structure::structure(std::initializer_list<value_type> members) { insert(members); }

template <class... Args>
std::pair<structure::iterator, bool> structure::emplace(Args&&... args) {
  return insert(value_type(std::forward<Args>(args)...));
}

inline structure::iterator structure::erase(iterator pos) { return erase(const_iterator(pos)); }

inline void structure::swap(structure& other) noexcept {
  members_.swap(other.members_);
  index_.swap(other.index_);
}

/// A readable, single-line rendering of a value for logs and the command line
/// (not a wire format).
std::string to_debug_string(const value& v);

}  // namespace rapidrpc
