#include "engine/pitr_log.h"

#include <algorithm>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "model/clock.h"

namespace kumo::engine {

PitrWindow pitr_window_at(const PitrSettings& pitr, std::int64_t now_ms, std::int64_t lag_ms) {
  PitrWindow w;
  w.enabled_since_ms = epoch_milliseconds(pitr.enabled_since);
  const std::int64_t period_ms = std::int64_t{pitr.period_days} * 86'400'000;
  w.latest_ms = std::max(w.enabled_since_ms, now_ms - lag_ms);
  w.earliest_ms =
      std::max({w.enabled_since_ms, epoch_milliseconds(pitr.floor), now_ms - period_ms});
  w.earliest_ms = std::min(w.earliest_ms, w.latest_ms);
  return w;
}

std::string pitr_log_prefix(std::uint32_t table_id) {
  std::string out = codec::space_prefix(table_id, codec::Space::kIndexes);
  codec::append_u32(&out, kPitrLogIndex);
  return out;
}

std::string pitr_log_key(std::string_view item_key, std::int64_t time_us) {
  // The item key is [u32 table][1][token][pk][sk].
  const std::uint32_t table =
      (static_cast<std::uint32_t>(static_cast<unsigned char>(item_key[0])) << 24) |
      (static_cast<std::uint32_t>(static_cast<unsigned char>(item_key[1])) << 16) |
      (static_cast<std::uint32_t>(static_cast<unsigned char>(item_key[2])) << 8) |
      static_cast<std::uint32_t>(static_cast<unsigned char>(item_key[3]));
  std::string out = pitr_log_prefix(table);
  out.append(item_key.substr(5));
  codec::append_u64(&out, static_cast<std::uint64_t>(std::max<std::int64_t>(0, time_us)));
  return out;
}

std::optional<PitrLogKey> parse_pitr_log_key(std::string_view prefix, std::string_view key) {
  if (key.size() < prefix.size() + 8 + 8 || key.substr(0, prefix.size()) != prefix) {
    return std::nullopt;
  }
  PitrLogKey out;
  out.item = key.substr(prefix.size(), key.size() - prefix.size() - 8);
  out.time_us = static_cast<std::int64_t>(codec::read_u64(key.substr(key.size() - 8)));
  return out;
}

std::string pitr_item_key(std::uint32_t table_id, std::string_view item) {
  std::string out = codec::space_prefix(table_id, codec::Space::kItems);
  out.append(item);
  return out;
}

std::string pitr_put_value(std::string_view stored_item) {
  std::string out = "P";
  out.append(stored_item);
  return out;
}

std::string pitr_delete_value(const Item& key) {
  std::string out = "D";
  codec::encode_item(key, &out);
  return out;
}

std::optional<PitrRecord> parse_pitr_value(std::string_view value) {
  if (value.empty()) return std::nullopt;
  PitrRecord out;
  if (value[0] == 'P') {
    out.stored = value.substr(1);
    return out;
  }
  if (value[0] != 'D') return std::nullopt;
  out.deleted = true;
  if (!codec::decode_item(value.substr(1), &out.key)) return std::nullopt;
  return out;
}

}  // namespace kumo::engine
