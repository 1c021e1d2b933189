// Private: text written through a pointer into a std::string's own storage,
// and the writers of scalars that lay out their text there.
#pragma once

#include <rapidrpc/literals.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rapidrpc::detail {

/// The room write_double() needs: more than the longest text it lays out
/// (26 characters), as it sets zeros and moves digits 16 at a time (the
/// furthest ends 34 characters in).
inline constexpr std::size_t max_double_chars = 48;
/// The longest text write_date_time() lays out.
inline constexpr std::size_t max_date_time_chars = 26;
/// The room write_integer() needs: a sign and 19 digits, and up to 7 bytes
/// past them, as it stores eight digits at a time.
inline constexpr std::size_t max_integer_chars = 28;

/// Lays out the decimal text of `i` (as std::to_chars would) at `at` (room
/// for max_integer_chars; the bytes past the text may be written too) and
/// returns its end.
char* write_integer(char* at, std::int64_t i) noexcept;
/// The same for an unsigned value (20 digits at most).
char* write_unsigned(char* at, std::uint64_t v) noexcept;

/// Lays out append_double()'s text at `at` (room for max_double_chars; the
/// bytes past the text may be written too) and returns its end; nullptr for
/// an infinity or a NaN (nothing written).
char* write_double(char* at, double d) noexcept;

/// Lays out append_date_time()'s text at `at` (room for
/// max_date_time_chars) and returns its end.
char* write_date_time(char* at, const date_time& t, date_format format) noexcept;

/// Appends to a string through a pointer. The string is lengthened ahead of
/// what is written (by at least `step` bytes at a time, so that the filling
/// of that room costs a bounded amount each time) and cut back to what was
/// written when the sink is closed or destroyed. A writer of many small
/// pieces then stores each without a capacity check and a memcpy call.
///
/// While a sink is open, the string holds the room past what was written:
/// use it only through the sink, or through with_string().
class sink {
 public:
  explicit sink(std::string& out) : out_(out) { open(0); }
  sink(const sink&) = delete;
  sink& operator=(const sink&) = delete;
  ~sink() { close(); }

  /// Room for `n` bytes at the returned pointer; advance(end) after
  /// writing them (or fewer).
  char* room(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) grow(n);
    return p_;
  }
  void advance(char* to) noexcept { p_ = to; }

  void put(char c) {
    room(1);
    *p_++ = c;
  }
  void put(std::string_view s) {
    if (s.empty()) return;  // its data() may be null, which memcpy must not get
    room(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  /// A literal: copied with its length known where it is written.
  template <std::size_t N>
  void put(const char (&literal)[N]) {
    room(N - 1);
    std::memcpy(p_, literal, N - 1);
    p_ += N - 1;
  }

  /// Calls f(string) with the string holding exactly what was written, for
  /// a writer that appends to a std::string. `adds`, when known, is how much
  /// f appends: the string is given room for that and for the sink's next
  /// writing beforehand, so that a large piece is not copied again when
  /// the sink opens past it.
  template <class F>
  void with_string(F&& f, std::size_t adds = 0) {
    close();
    p_ = end_ = nullptr;  // closed: if f throws, the string stays as f left it
    if (const std::size_t want = out_.size() + adds + step; adds != 0 && want > out_.capacity()) {
      out_.reserve(want);
    }
    f(out_);
    open(0);
  }

 private:
  static constexpr std::size_t step = 256;

  void close() noexcept {
    if (p_ != nullptr) out_.resize(static_cast<std::size_t>(p_ - out_.data()));
  }

  void open(std::size_t n) {
    const std::size_t used = out_.size();
    const std::size_t want = used + std::max(n, step);
    if (want > out_.capacity()) out_.reserve(std::max(want, 2 * out_.capacity()));
    out_.resize(want);
    p_ = out_.data() + used;
    end_ = out_.data() + out_.size();
  }

  void grow(std::size_t n) {
    close();
    open(n);
  }

  std::string& out_;
  char* p_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace rapidrpc::detail
