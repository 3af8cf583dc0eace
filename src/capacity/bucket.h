// A token bucket in one atomic word: `tat`, the time at which the bucket would be full (the
// generic cell rate algorithm). With T nanoseconds per milli-unit (1e9 / (rate * 1000)) and
// tau = capacity / rate in nanoseconds, the level at `now` is (tau - max(0, tat - now)) / T.
// A request is admitted while the bucket holds at least its least charge; the exact units are
// debited after the request and may take the level below zero (a debt later requests wait
// for). A bucket with rate 0 is unlimited.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>

#include "capacity/meters.h"

namespace kumo::capacity {

class Bucket {
 public:
  // Units per second, the capacity in seconds of that rate, and the level to hold now
  // (nullopt: keep the current level, clamped to the new capacity). Called under the
  // owner's configure lock; requests racing it see either setting.
  void configure(double rate, double capacity_seconds, std::int64_t now,
                 std::optional<Milli> level = std::nullopt) {
    const double keep = level ? static_cast<double>(*level) : exact_level(now);
    const double t = rate > 0 ? 1e6 / rate : 0;
    const auto tau = static_cast<std::int64_t>(std::max(capacity_seconds, 0.0) * 1e9);
    t_.store(t, std::memory_order_relaxed);
    tau_.store(tau, std::memory_order_relaxed);
    const double capacity = t > 0 ? static_cast<double>(tau) / t : 0;
    const double kept = std::min(keep, capacity);
    tat_.store(now + tau - static_cast<std::int64_t>(std::llround(kept * t)),
               std::memory_order_relaxed);
  }

  double rate() const {
    const double t = t_.load(std::memory_order_relaxed);
    return t > 0 ? 1e6 / t : 0;
  }
  Milli capacity() const {
    const double t = t_.load(std::memory_order_relaxed);
    return t > 0 ? static_cast<Milli>(static_cast<double>(tau_.load(std::memory_order_relaxed)) / t)
                 : 0;
  }

  // Whether the bucket holds at least `min` at `now`.
  bool can_take(Milli min, std::int64_t now) const {
    const double t = t_.load(std::memory_order_relaxed);
    if (t <= 0) return true;
    const std::int64_t tat = tat_.load(std::memory_order_relaxed);
    return static_cast<double>(tat - now) <=
           static_cast<double>(tau_.load(std::memory_order_relaxed)) - static_cast<double>(min) * t;
  }

  // Debits `units` at `now`.
  void take(Milli units, std::int64_t now) {
    const double t = t_.load(std::memory_order_relaxed);
    if (t <= 0 || units == 0) return;
    const auto cost = static_cast<std::int64_t>(std::llround(static_cast<double>(units) * t));
    std::int64_t tat = tat_.load(std::memory_order_relaxed);
    while (!tat_.compare_exchange_weak(tat, std::max(tat, now) + cost, std::memory_order_relaxed)) {
    }
  }

  // The level at `now` in milli-units (negative while in debt).
  Milli level(std::int64_t now) const {
    const double t = t_.load(std::memory_order_relaxed);
    if (t <= 0) return 0;
    const std::int64_t behind =
        std::max<std::int64_t>(0, tat_.load(std::memory_order_relaxed) - now);
    return static_cast<Milli>(
        std::floor(static_cast<double>(tau_.load(std::memory_order_relaxed) - behind) / t + 1e-6));
  }

  // Sets the level at `now` (a report-mode simulation stops its level at zero).
  void set_level(Milli level, std::int64_t now) {
    const double t = t_.load(std::memory_order_relaxed);
    const std::int64_t tau = tau_.load(std::memory_order_relaxed);
    tat_.store(now + tau - static_cast<std::int64_t>(std::llround(static_cast<double>(level) * t)),
               std::memory_order_relaxed);
  }

 private:
  double exact_level(std::int64_t now) const {
    const double t = t_.load(std::memory_order_relaxed);
    if (t <= 0) return 0;
    const std::int64_t behind =
        std::max<std::int64_t>(0, tat_.load(std::memory_order_relaxed) - now);
    return static_cast<double>(tau_.load(std::memory_order_relaxed) - behind) / t;
  }

  std::atomic<std::int64_t> tat_{0};
  std::atomic<double> t_{0};          // ns per milli-unit; 0: unlimited
  std::atomic<std::int64_t> tau_{0};  // ns
};

}  // namespace kumo::capacity
