// A log-linear latency histogram (the HDR histogram's bucket layout): exact
// below 256 ns, then 128 buckets per power of two, so any recorded value is
// known to within 1/128 (0.8 %) of itself, from nanoseconds to hours, in a
// fixed 58 KiB. Recording is an index computation and an increment: no
// allocation, no branch on the data beyond a bit scan.
//
// Threading: one writer. While it records, one other thread may read what
// it has so far with add_live_to() (the live line of `rapidrpc bench`):
// record() writes every field with relaxed atomic loads and stores, plain
// moves on x86-64 and ARM64 (no lock prefix, no fence), so the reader sees
// each count whole, if a moment late, and recording costs what plain
// increments would (2 to 3 ns a value either way, measured). merge() and the
// other readers are for after the writer stops.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rapidrpc::cli {

// A count with one writer that another thread may read meanwhile: the
// writer adds with a relaxed load and store (no read-modify-write, since
// no one else writes), the reader loads relaxed.
static_assert(std::atomic_ref<std::uint64_t>::required_alignment <= alignof(std::uint64_t));

inline std::uint64_t relaxed_load(const std::uint64_t& word) noexcept {
  // A load writes nothing: the const_cast only fits atomic_ref, which C++20
  // has for non-const objects alone.
  return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(word))
      .load(std::memory_order_relaxed);
}

inline void relaxed_store(std::uint64_t& word, std::uint64_t v) noexcept {
  std::atomic_ref<std::uint64_t>(word).store(v, std::memory_order_relaxed);
}

inline void relaxed_add(std::uint64_t& word, std::uint64_t n) noexcept {
  relaxed_store(word, relaxed_load(word) + n);
}

class histogram {
 public:
  static constexpr unsigned sub_bits = 7;                ///< 128 buckets per octave
  static constexpr unsigned sub_count = 1u << sub_bits;  ///< 128
  static constexpr unsigned max_shift = 64 - sub_bits - 1;
  static constexpr std::size_t bucket_count = (max_shift + 2) * sub_count;

  histogram() : counts_(bucket_count, 0) {}

  /// Records one value (nanoseconds).
  void record(std::uint64_t v) noexcept {
    relaxed_add(counts_[index_of(v)], 1);
    relaxed_add(total_, 1);
    relaxed_add(sum_, v);
    if (v > relaxed_load(max_)) relaxed_store(max_, v);
    if (v < relaxed_load(min_)) relaxed_store(min_, v);
  }

  /// Adds what the writer has recorded so far to `out`; may run on another
  /// thread while the writer records. Its total is the sum of the buckets
  /// as read, so that its quantiles add up even when a record() was caught
  /// halfway.
  void add_live_to(histogram& out) const noexcept {
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
      const std::uint64_t n = relaxed_load(counts_[i]);
      out.counts_[i] += n;
      seen += n;
    }
    out.total_ += seen;
    out.sum_ += relaxed_load(sum_);
    out.max_ = std::max(out.max_, relaxed_load(max_));
    out.min_ = std::min(out.min_, relaxed_load(min_));
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
