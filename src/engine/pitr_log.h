// Point-in-time recovery's change log and window, as the engine stores and computes them
// (docs/backups.md, "Point-in-time recovery"). Pure: no storage access here (pitr.cpp
// holds the log's writes, its trimming and the restores from it).
//
// A table with point-in-time recovery keeps, for every committed write of an item, a log
// record in its own key space, in the same write batch as the item:
//
//   [table id][2 (indexes)][u32 0xFFFFFFFF][token][enc(pk)][enc(sk)][u64 time µs]
//
// i.e. an entry of a reserved index id, carrying the item's token, so every back end keeps
// it where it keeps the item (on RADOS in the item's partition object, in the item's atomic
// operation, as an LSI entry). Records sort by item, then by commit time: the state of
// every item at a time T is its last record at or before T (none: absent). The value is
// 'P' + the item as stored, or 'D' + the item's key (a deletion).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/attribute_value.h"
#include "model/table.h"

namespace kumo::engine {

// The reserved index id under which a table's change log lies.
inline constexpr std::uint32_t kPitrLogIndex = 0xFFFFFFFF;

// The window of times a table with point-in-time recovery can be restored to, in epoch
// milliseconds: [earliest_ms, latest_ms]; enabled_since_ms is when recovery was enabled.
struct PitrWindow {
  std::int64_t earliest_ms = 0;
  std::int64_t latest_ms = 0;
  std::int64_t enabled_since_ms = 0;
};

// The window at `now_ms` with a lag of `lag_ms`: Earliest = max(enable time, floor, now −
// RecoveryPeriodInDays), Latest = max(enable time, now − lag), Earliest never past Latest.
PitrWindow pitr_window_at(const PitrSettings& pitr, std::int64_t now_ms, std::int64_t lag_ms);

// [table id][2][u32 kPitrLogIndex]: every record of the table's log starts with this.
std::string pitr_log_prefix(std::uint32_t table_id);
// The record key of a write of the item whose storage key is `item_key` at `time_us`.
std::string pitr_log_key(std::string_view item_key, std::int64_t time_us);
// The part of a record key that names its item (token, pk, sk), and its time; nullopt when
// `key` is not a record key of the table's log prefix `prefix`.
struct PitrLogKey {
  std::string_view item;  // [token][enc(pk)][enc(sk)]
  std::int64_t time_us = 0;
};
std::optional<PitrLogKey> parse_pitr_log_key(std::string_view prefix, std::string_view key);
// The item's storage key ([table id][1][token][pk][sk]) from a record's item part.
std::string pitr_item_key(std::uint32_t table_id, std::string_view item);

// A record's value: the new image as stored (codec::encode_stored_item), or a deletion
// with the item's key.
std::string pitr_put_value(std::string_view stored_item);
std::string pitr_delete_value(const Item& key);
// What a record holds: the new image as stored bytes, or (deleted) the key.
struct PitrRecord {
  bool deleted = false;
  std::string_view stored;  // 'P': the stored item
  Item key;                 // 'D': the item's key
};
std::optional<PitrRecord> parse_pitr_value(std::string_view value);

}  // namespace kumo::engine
