// Capacity units exactly as DynamoDB counts them, from the item sizes read or written.
#pragma once

#include <cstddef>

namespace kumo {

// Read units for `bytes` read: 4 KB blocks rounded up, 1 per block strongly consistent,
// 0.5 eventually consistent; reading nothing still costs one block.
inline double read_capacity_units(std::size_t bytes, bool consistent) {
  std::size_t blocks = bytes == 0 ? 1 : (bytes + 4095) / 4096;
  return consistent ? static_cast<double>(blocks) : blocks * 0.5;
}

// Write units for an item of `bytes`: 1 KB blocks rounded up, at least one.
inline double write_capacity_units(std::size_t bytes) {
  std::size_t blocks = bytes == 0 ? 1 : (bytes + 1023) / 1024;
  return static_cast<double>(blocks);
}

}  // namespace kumo
