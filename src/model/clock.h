// Wall-clock time as DynamoDB reports it: epoch seconds with millisecond precision.
#pragma once

#include <chrono>
#include <cstdint>

namespace kumo {

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
