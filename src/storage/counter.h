// The value format of the counters WriteBatch::add_counter maintains, shared by the back
// ends: 8-byte little-endian two's-complement int64.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kumo::storage {

inline std::string encode_counter(std::int64_t v) {
  std::string out(8, '\0');
  auto u = static_cast<std::uint64_t>(v);
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>(u >> (8 * i));
  return out;
}

// False when `bytes` is not a counter value.
inline bool decode_counter(std::string_view bytes, std::int64_t* out) {
  if (bytes.size() != 8) return false;
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    u |= std::uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  }
  *out = static_cast<std::int64_t>(u);
  return true;
}

}  // namespace kumo::storage
