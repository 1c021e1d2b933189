// Private: the exact short case of reading a decimal, shared by
// parse_double (literals.cpp) and the JSON-RPC reader, which gather the
// digits each in their own pass over text they have checked.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rapidrpc::detail {

/// Up to this many digits (and no exponent), a decimal is read exactly by
/// exact_short_decimal().
inline constexpr std::size_t max_short_decimal_digits = 15;

/// The double nearest to ±mantissa / 10^fraction_digits, for a mantissa of
/// at most max_short_decimal_digits digits (fraction_digits counted among
/// them). Both operands are then exact doubles, and IEEE division rounds
/// correctly: the quotient is the nearest double, as std::from_chars would
/// find it (in a tenth of its time).
inline double exact_short_decimal(std::uint64_t mantissa, std::size_t fraction_digits,
                                  bool negative) noexcept {
  static constexpr double powers[max_short_decimal_digits + 1] = {
      1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const double v = static_cast<double>(mantissa) / powers[fraction_digits];
  return negative ? -v : v;
}

}  // namespace rapidrpc::detail
