// Builds a rapidrpc::value from SAX events (shared by the RapidJSON and
// Boost.JSON readers so that they differ only in the library).
#pragma once

#include "readers.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <system_error>
#include <utility>
#include <vector>

namespace json_choice {

class sax_builder {
 public:
  void reset() {
    stack_.clear();
    root_ = rapidrpc::value{};
    error_ = nullptr;
  }

  bool begin_array() { return open(false); }
  bool begin_object() { return open(true); }

  bool end_array() {
    rapidrpc::array items = std::move(stack_.back().items);
    stack_.pop_back();
    return add(rapidrpc::value(std::move(items)));
  }

  bool end_object() {
    rapidrpc::structure members = std::move(stack_.back().members);
    stack_.pop_back();
    return add(rapidrpc::value(std::move(members)));
  }

  void key(std::string_view k) { stack_.back().key.assign(k.data(), k.size()); }

  bool add(rapidrpc::value v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return true;
    }
    frame& f = stack_.back();
    if (!f.is_object) {
      f.items.push_back(std::move(v));
      return true;
    }
    // The struct insert is needed anyway; its result is the duplicate check.
    if (!f.members.emplace(std::move(f.key), std::move(v)).second)
      return fail("repeated member name");
    return true;
  }

  bool add_int64(std::int64_t i) {
    if (i >= std::numeric_limits<std::int32_t>::min() &&
        i <= std::numeric_limits<std::int32_t>::max())
      return add(rapidrpc::value(static_cast<std::int32_t>(i)));
    return add(rapidrpc::value(i));
  }

  bool add_uint64(std::uint64_t u) {
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return fail("integer out of the 64-bit range");
    return add_int64(static_cast<std::int64_t>(u));
  }

  bool add_double(double d) {
    if (!std::isfinite(d)) return fail("number out of the double range");
    return add(rapidrpc::value(d));
  }

  // A number given as its JSON text (already checked against the grammar).
  bool add_number_text(std::string_view s) {
    const char* first = s.data();
    const char* last = s.data() + s.size();
    if (s.find_first_of(".eE") == std::string_view::npos) {
      std::int64_t i = 0;
      auto [p, ec] = std::from_chars(first, last, i);
      if (ec != std::errc() || p != last) return fail("integer out of the 64-bit range");
      return add_int64(i);
    }
    double d = 0;
    auto [p, ec] = std::from_chars(first, last, d);
    if (ec != std::errc() || p != last) return fail("number out of the double range");
    return add_double(d);
  }

  bool fail(const char* why) {
    error_ = why;
    return false;
  }

  const char* error() const noexcept { return error_; }
  bool done() const noexcept { return stack_.empty(); }
  rapidrpc::value take() { return std::move(root_); }

 private:
  struct frame {
    bool is_object = false;
    rapidrpc::array items;
    rapidrpc::structure members;
    std::string key;
  };

  bool open(bool is_object) {
    if (stack_.size() >= max_depth) return fail("nested too deeply");
    stack_.emplace_back().is_object = is_object;
    return true;
  }

  std::vector<frame> stack_;
  rapidrpc::value root_;
  const char* error_ = nullptr;
};

}  // namespace json_choice
