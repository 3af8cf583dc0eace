// The RADOS back end's scattered spaces: the TTL schedule, kept by the partitions, and the
// stream records, kept by the stream objects beside them. Both are ordered by something
// other than the token (expiry, sequence number), so a range of either lies in every
// object of its kind: read merged, erased from each; and a dropped table's stream objects
// and map stay until its last record is trimmed.
#include "storage/rados/rados_storage.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

namespace kumo::storage::rados {

std::vector<ObjectRef> RadosStorage::holders(const Place& place, std::string_view key) {
  if (!place.scattered || place.object.oid[0] != 's') return {place.object};
  // A stream record stays in the stream object it was written to: that of its item's
  // partition then, whose start is at most its token. Nearest first.
  std::vector<ObjectRef> out;
  const Starts starts = partition_starts(place.table);
  auto end = std::upper_bound(starts->begin(), starts->end(), key_token(key));
  for (auto it = end; it != starts->begin();) {
    --it;
    out.push_back({place.object.ns, "s" + hex16(*it)});
  }
  return out;
}

void RadosStorage::release_dropped(std::uint32_t table) {
  std::string dropped_key = kDroppedPrefix;
  put_u32(&dropped_key, table);
  std::string ignored;
  if (!read_key({prefix_, kCatalogObject}, dropped_key, &ignored)) return;
  const std::vector<ObjectRef> objects = scattered_objects(table, 's');
  for (const ObjectRef& object : objects) {
    bool more = false;
    const std::string from = space_prefix(table, kStreamSpace);
    if (!read_range(object, from, space_prefix(table, kTtlSpace), 1, &more, true).empty()) return;
  }
  for (const ObjectRef& object : objects) remove_object(object);
  std::string map_key = kMapPrefix;
  put_u32(&map_key, table);
  remove_keys({prefix_, kCatalogObject}, {map_key, dropped_key, definitions_key(table)});
  forget_partitions(table);
}

void RadosStorage::erase_stream_records(std::uint32_t table, std::uint64_t first_token,
                                        const std::string& lower, const std::string& upper) {
  // From the one stream object: the records of other partitions in the range may still be
  // within retention. (Not while a partition of the table is being split, as erase_range.)
  std::unique_lock<std::shared_mutex> layout(layout_);
  const ObjectRef object{table_namespace(table), "s" + hex16(first_token)};
  bool erased = false;
  for (bool more = true; more;) {
    more = false;
    std::set<std::string> keys;
    for (auto& [k, v] : read_range(object, lower, upper, kPageKeys, &more, true)) {
      keys.insert(std::move(k));
    }
    if (keys.empty()) break;
    remove_keys(object, keys);
    erased = true;
  }
  // A dropped table's last records trimmed: its stream objects and map go.
  if (erased) release_dropped(table);
}

std::vector<ObjectRef> RadosStorage::scattered_objects(std::uint32_t table, char kind) {
  if (kind == kTokensKind) return token_objects();
  std::vector<ObjectRef> objects = partitions(table);
  for (ObjectRef& object : objects) object.oid[0] = kind;
  return objects;
}

void RadosStorage::erase_scattered(std::uint32_t table, char kind, const std::string& from,
                                   const std::string& to) {
  for (const ObjectRef& object : scattered_objects(table, kind)) {
    for (bool more = true; more;) {
      more = false;
      std::set<std::string> keys;
      for (auto& [k, v] : read_range(object, from, to, kPageKeys, &more, true)) {
        keys.insert(std::move(k));
      }
      if (keys.empty()) break;
      remove_keys(object, keys);
    }
  }
}

std::vector<std::pair<std::string, std::string>> RadosStorage::read_scattered(
    std::uint32_t table, char kind, const std::string& from, const std::string& to, unsigned max,
    bool* more, bool keys_only, std::vector<ObjectRef>* objects) {
  // Each object's first `max` keys of the range, merged: complete up to the lowest last key
  // of an object that has more.
  const std::vector<ObjectRef> parts = scattered_objects(table, kind);
  // A schedule entry is kept by its item's partition. A split copies the entries of the
  // range it moves before it publishes the new map, and removes them from the parent
  // after: meanwhile both hold them, and only the partition the map gives the entry's
  // token to is read for it. (A stream record stays where it was written: not filtered.)
  // The partitions' first tokens, in order (each one's tokens end where the next begins).
  std::vector<std::uint64_t> firsts;
  if (kind == 'p') {
    for (const ObjectRef& part : parts)
      firsts.push_back(std::stoull(part.oid.substr(1), nullptr, 16));
  }
  auto kept_by = [&](std::size_t i, std::string_view key) {
    if (firsts.empty()) return true;
    const std::uint64_t token = key_token(key);
    return token >= firsts[i] && (i + 1 == firsts.size() || token < firsts[i + 1]);
  };
  std::vector<std::pair<std::pair<std::string, std::string>, std::size_t>> all;
  std::optional<std::string> bound;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    bool part_more = false;
    auto got = read_range(parts[i], from, to, max, &part_more, keys_only);
    if (part_more && !got.empty() && (!bound || got.back().first < *bound)) {
      bound = got.back().first;
    }
    for (auto& entry : got) {
      if (kept_by(i, entry.first)) all.emplace_back(std::move(entry), i);
    }
  }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a.first.first < b.first.first; });
  std::vector<std::pair<std::string, std::string>> out;
  objects->clear();
  for (auto& [entry, part] : all) {
    if (bound && entry.first > *bound) break;
    out.push_back(std::move(entry));
    objects->push_back(parts[part]);
  }
  *more = bound.has_value();
  return out;
}

}  // namespace kumo::storage::rados
