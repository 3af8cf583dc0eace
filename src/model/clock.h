// Wall-clock time as DynamoDB reports it: epoch seconds with millisecond precision.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kumo {

// The engine's clock: every time-based capacity rule (token buckets, per-second and
// per-minute windows, on-demand peaks, partition splits, Contributor Insights transitions),
// Time to Live, stream retention and shard iterators' lifetime, and the times tables and
// streams are created at, read it, so that tests can drive time instead of waiting for it.
class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds since the Unix epoch; never goes backwards.
  virtual std::int64_t now_ns() const = 0;
  double now() const { return static_cast<double>(now_ns()) / 1e9; }
  // Epoch seconds in whole milliseconds, as DynamoDB reports times (and Kumo stores them).
  double now_ms() const { return static_cast<double>(now_ns() / 1000000) / 1000.0; }
  virtual bool manual() const { return false; }
};

// Wall time made monotonic: a steady clock anchored to the system clock at construction,
// so that a step of the system clock (NTP) cannot refill or drain a bucket.
class SystemClock final : public Clock {
 public:
  SystemClock()
      : anchor_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count()),
        steady_start_(std::chrono::steady_clock::now()) {}
  std::int64_t now_ns() const override {
    return anchor_ns_ + std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now() - steady_start_)
                            .count();
  }

 private:
  std::int64_t anchor_ns_;
  std::chrono::steady_clock::time_point steady_start_;
};

// A clock that moves only when told to (kumo serve --clock manual, tests).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t start_ns) : now_(start_ns) {}
  std::int64_t now_ns() const override { return now_.load(std::memory_order_relaxed); }
  bool manual() const override { return true; }
  // Moves the clock forward by `ns` (negative values are ignored); returns the new time.
  std::int64_t advance(std::int64_t ns) {
    if (ns < 0) ns = 0;
    return now_.fetch_add(ns, std::memory_order_relaxed) + ns;
  }

 private:
  std::atomic<std::int64_t> now_;
};

inline double now_seconds() {
  using namespace std::chrono;
  return static_cast<double>(
             duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count()) /
         1000.0;
}

// Epoch seconds (as now_seconds gives them) in whole milliseconds, rounded to the nearest.
inline std::int64_t epoch_milliseconds(double seconds) {
  using namespace std::chrono;
  return round<milliseconds>(duration<double>(seconds)).count();
}

// Epoch seconds in whole seconds, rounded down.
inline std::int64_t epoch_whole_seconds(double seconds) {
  using namespace std::chrono;
  return floor<std::chrono::seconds>(duration<double>(seconds)).count();
}

}  // namespace kumo
