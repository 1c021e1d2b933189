// A log-linear latency histogram (the HDR histogram's bucket layout): exact
// below 256 ns, then 128 buckets per power of two, so any recorded value is
// known to within 1/128 (0.8 %) of itself, from nanoseconds to hours, in a
// fixed 58 KiB. Recording is an index computation and an increment: no
// allocation, no branch on the data beyond a bit scan.
//
// Threading: one writer; merge() histograms from several threads after they
// stop.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rapidrpc::cli {

class histogram {
 public:
  static constexpr unsigned sub_bits = 7;                ///< 128 buckets per octave
  static constexpr unsigned sub_count = 1u << sub_bits;  ///< 128
  static constexpr unsigned max_shift = 64 - sub_bits - 1;
  static constexpr std::size_t bucket_count = (max_shift + 2) * sub_count;

  histogram() : counts_(bucket_count, 0) {}

  /// Records one value (nanoseconds).
  void record(std::uint64_t v) noexcept {
    ++counts_[index_of(v)];
    ++total_;
    sum_ += v;
    if (v > max_) max_ = v;
    if (v < min_) min_ = v;
  }

  /// Adds every value recorded by `other`.
  void merge(const histogram& other) {
    for (std::size_t i = 0; i < bucket_count; ++i) counts_[i] += other.counts_[i];
    total_ += other.total_;
    sum_ += other.sum_;
    max_ = std::max(max_, other.max_);
    min_ = std::min(min_, other.min_);
  }

  std::uint64_t count() const noexcept { return total_; }
  std::uint64_t max() const noexcept { return total_ ? max_ : 0; }
  std::uint64_t min() const noexcept { return total_ ? min_ : 0; }
  double mean() const noexcept {
    return total_ ? static_cast<double>(sum_) / static_cast<double>(total_) : 0;
  }

  /// The value at quantile q (0..1): the highest value of the bucket holding
  /// the q-th recorded value, never above max(). 0 if nothing was recorded.
  std::uint64_t quantile(double q) const noexcept {
    if (!total_) return 0;
    auto rank = static_cast<std::uint64_t>(q * static_cast<double>(total_) + 0.5);
    rank = std::clamp<std::uint64_t>(rank, 1, total_);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(highest_in(i), max_);
    }
    return max_;
  }

  /// The raw buckets, for charts: count and [lowest, highest] value of each.
  std::size_t buckets() const noexcept { return bucket_count; }
  std::uint64_t count_at(std::size_t i) const noexcept { return counts_[i]; }
  static std::uint64_t lowest_in(std::size_t i) noexcept {
    if (i < 2 * sub_count) return i;
    std::size_t shift = i / sub_count - 1;
    return static_cast<std::uint64_t>(i - shift * sub_count) << shift;
  }
  static std::uint64_t highest_in(std::size_t i) noexcept {
    if (i < 2 * sub_count) return i;
    std::size_t shift = i / sub_count - 1;
    return lowest_in(i) + ((std::uint64_t{1} << shift) - 1);
  }

  static std::size_t index_of(std::uint64_t v) noexcept {
    if (v < 2 * sub_count) return static_cast<std::size_t>(v);
    unsigned msb = 63u - static_cast<unsigned>(std::countl_zero(v));
    unsigned shift = msb - sub_bits;  // >= 1; v >> shift is in [128, 256)
    return static_cast<std::size_t>(shift) * sub_count + static_cast<std::size_t>(v >> shift);
  }

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t total_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = UINT64_MAX;
};

}  // namespace rapidrpc::cli
