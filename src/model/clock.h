// Wall-clock time as DynamoDB reports it: epoch seconds with millisecond precision.
#pragma once

#include <chrono>

namespace kumo {

inline double now_seconds() {
  using namespace std::chrono;
  return static_cast<double>(
             duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count()) /
         1000.0;
}

}  // namespace kumo
