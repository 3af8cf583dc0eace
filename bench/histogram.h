// A log-linear latency histogram in the manner of HdrHistogram (which Debian does not
// package for C or C++): values below 128 are counted exactly, and every power of two
// above is split into 64 equal buckets, so a reported percentile is never more than
// 1/64 (1.6%) above the true value. Recording is a few instructions and never allocates.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace kumo::bench {

class LatencyHistogram {
 public:
  // Counts one value (nanoseconds).
  void record(std::uint64_t value) {
    ++counts_[index_of(value)];
    ++count_;
    sum_ += value;
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }

  // Adds every value counted by `other`.
  void merge(const LatencyHistogram& other) {
    for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    sum_ += other.sum_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }

  std::uint64_t count() const { return count_; }
  std::uint64_t max() const { return count_ == 0 ? 0 : max_; }
  std::uint64_t min() const { return count_ == 0 ? 0 : min_; }
  double mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / count_; }

  // The smallest bucket bound at or below which `percentile` percent of the values lie
  // (the bucket's highest value, capped at the exact maximum); 0 when empty.
  std::uint64_t percentile(double percentile) const {
    if (count_ == 0) return 0;
    const double wanted = std::ceil(percentile / 100.0 * static_cast<double>(count_));
    const std::uint64_t rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(wanted));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(highest_in(i), max_);
    }
    return max_;
  }

 private:
  static constexpr unsigned kSubBits = 6;  // 64 buckets per power of two
  static constexpr std::uint64_t kSub = std::uint64_t{1} << kSubBits;
  static constexpr std::size_t kBuckets = (64 - kSubBits + 1) * kSub;

  static std::size_t index_of(std::uint64_t value) {
    if (value < 2 * kSub) return static_cast<std::size_t>(value);
    const unsigned shift = static_cast<unsigned>(std::bit_width(value)) - 1 - kSubBits;
    return shift * kSub + static_cast<std::size_t>(value >> shift);
  }

  static std::uint64_t highest_in(std::size_t index) {
    if (index < 2 * kSub) return index;
    const unsigned shift = static_cast<unsigned>(index / kSub) - 1;
    const std::uint64_t mantissa = index - shift * kSub;
    return ((mantissa + 1) << shift) - 1;
  }

  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
};

}  // namespace kumo::bench
