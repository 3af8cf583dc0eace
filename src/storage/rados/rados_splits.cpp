// The RADOS back end's partition splits (the protocol is described in rados_storage.h):
// which partitions are due to be counted, the split itself, and the end of a split that
// a stopped process left.
#include "storage/rados/rados_storage.h"

#include <signal.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

namespace kumo::storage::rados {

namespace {

// Keys one operation of a split copies or removes at most.
constexpr std::size_t kSplitChunkKeys = 1000;
constexpr std::size_t kSplitChunkBytes = 4 << 20;

}  // namespace

void RadosStorage::note_growth(const ObjectRef& object, int sets) {
  if (partition_keys_ == 0 || object.oid.empty() || object.oid[0] != 'p') return;
  const auto every = static_cast<std::int64_t>(std::max<std::uint64_t>(1, partition_keys_ / 4));
  std::unique_lock lock(mutex_);
  std::int64_t& grown = growth_[object];
  grown += sets;
  if (grown < every) return;
  grown = 0;
  due_.insert(object);
  split_due_.store(true, std::memory_order_relaxed);
}

void RadosStorage::split_due() {
  std::unique_lock<std::mutex> splitting(split_mutex_, std::try_to_lock);
  if (!splitting.owns_lock()) return;
  for (;;) {
    ObjectRef object;
    {
      std::unique_lock lock(mutex_);
      if (due_.empty()) {
        split_due_.store(false, std::memory_order_relaxed);
        return;
      }
      object = *due_.begin();
      due_.erase(due_.begin());
    }
    try {
      if (count_keys(object) > partition_keys_ && !split(object)) {
        // One token holds them all: counted again after as many keys more.
        std::unique_lock lock(mutex_);
        growth_[object] = -static_cast<std::int64_t>(partition_keys_);
      }
    } catch (...) {
      // (Failures are thrown by kumo's runtime, so only `...` catches them here.) Undone,
      // or finished when its map was published.
      log("the split of " + object.ns + "/" + object.oid + " failed; ending it");
      try {
        finish_split(object);
      } catch (...) {
        log("the split of " + object.ns + "/" + object.oid + " is left for the next start");
      }
    }
  }
}

std::uint64_t RadosStorage::count_keys(const ObjectRef& object) {
  std::uint64_t n = 0;
  std::string after;
  for (bool more = true; more;) {
    std::set<std::string> keys;
    int rv = 0;
    librados::ObjectReadOperation op;
    op.omap_get_keys2(after, kPageKeys, &keys, &more, &rv);
    const int r = io(object.ns).operate(object.oid, &op, nullptr);
    if (r == -ENOENT) return n;
    check(r, "read");
    for (const std::string& k : keys) {
      if (k.compare(0, kReserved.size(), kReserved) == 0) return n;
      if (!is_version_key(k)) ++n;  // (an item's version goes with its item)
    }
    if (keys.empty()) break;
    after = *keys.rbegin();
  }
  return n;
}

std::string RadosStorage::encode_map(const std::vector<std::uint64_t>& starts) {
  std::string out;
  for (std::uint64_t start : starts) put_u64(&out, start);
  return out;
}

void RadosStorage::fault_point(const char* step) {
  // "<step>-clock": once the step is passed (and paused, with "<step>-pause"), it goes on
  // only once the engine's clock moved from where it was when the step was reached, so a
  // test can hold it across an advance of a manual clock. (Called on every read and write:
  // nothing to do without faults.)
  if (faults_.empty()) return;
  const std::int64_t reached = now_ns();
  for (const std::string& fault : faults_) {
    if (fault != std::string(step) + "-clock") continue;
    {
      std::unique_lock lock(paused_mutex_);
      if (!paused_.insert(fault).second) break;
    }
    for (const std::string& pause : faults_) {
      if (pause != std::string(step) + "-pause") continue;
      bool first = false;
      {
        std::unique_lock lock(paused_mutex_);
        first = paused_.insert(pause).second;
      }
      if (first) ::raise(SIGSTOP);
    }
    while (now_ns() == reached) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return;
  }
  for (const std::string& fault : faults_) {
    if (fault == step) ::kill(::getpid(), SIGKILL);
    const bool pause = fault == std::string(step) + "-pause";
    const bool hold = fault == std::string(step) + "-hold";
    if (!pause && !hold) continue;
    {
      std::unique_lock lock(paused_mutex_);
      if (!paused_.insert(fault).second) return;
    }
    if (pause) {
      // Once per step; SIGCONT resumes it here. (Sent to this thread, which stops before it
      // goes on.)
      ::raise(SIGSTOP);
      continue;
    }
    // Once: this thread waits (what it left in the pool stays in flight) while the
    // process goes on and renews its lease, until it stops, the test releases it, or for
    // a minute.
    const std::string release = release_dir_.empty() ? "" : release_dir_ + "/" + step;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::unique_lock lock(lease_mutex_);
    while (!lease_stopping_ && std::chrono::steady_clock::now() < until &&
           (release.empty() || ::access(release.c_str(), F_OK) != 0)) {
      lease_wake_.wait_for(lock, std::chrono::milliseconds(10));
    }
  }
}

void RadosStorage::set_split_listener(SplitListener listener) {
  std::unique_lock<std::mutex> splitting(split_mutex_);
  split_listener_ = std::move(listener);
  // The splits that the open finished were never reported: the process that made them
  // stopped first.
  for (const FinishedSplit& f : finished_splits_) split_listener_(f.table, f.token, f.last);
  finished_splits_.clear();
}

void RadosStorage::split_partition(std::uint32_t table, std::uint64_t token) {
  std::unique_lock<std::mutex> splitting(split_mutex_);
  const Starts map = partition_starts(table, true);
  const std::uint64_t start = *(std::upper_bound(map->begin(), map->end(), token) - 1);
  if (start == token) return;
  const ObjectRef object{table_namespace(table), "p" + hex16(start)};
  try {
    split(object, token);
  } catch (...) {
    // Not left frozen (every front end's writes to it would wait): undone, or finished when
    // its map was published. (Thrown by kumo's runtime: only `...` catches it here.)
    try {
      finish_split(object);
    } catch (...) {
      log("the split of " + object.ns + "/" + object.oid + " is left for the next start");
    }
    throw;
  }
}

bool RadosStorage::split(const ObjectRef& object, std::optional<std::uint64_t> at) {
  const auto began = std::chrono::steady_clock::now();
  std::unique_lock<std::shared_mutex> layout(layout_);
  const auto table = static_cast<std::uint32_t>(std::stoul(object.ns.substr(prefix_.size() + 1)));
  const std::uint64_t start = std::stoull(object.oid.substr(1), nullptr, 16);
  // The stored map: a table dropped meanwhile has none, and is not split.
  std::string map_key = kMapPrefix;
  put_u32(&map_key, table);
  std::string stored;
  if (!read_key({prefix_, kCatalogObject}, map_key, &stored)) return true;
  Starts map = partition_starts(table);
  if (encode_map(*map) != stored) {
    // Another front end split a partition of the table.
    refresh_map(table);
    map = partition_starts(table);
    if (encode_map(*map) != stored) return true;
  }
  auto here = std::find(map->begin(), map->end(), start);
  if (here == map->end()) return true;
  const bool last = here + 1 == map->end();
  const std::uint64_t end = last ? 0 : *(here + 1);
  if (at && (*at <= start || (!last && *at >= end))) return true;
  // 1. No removal of an outbox entry in flight.
  reap_removals(true);
  // A split key left means a split under way in another front end (or left by one that
  // stopped, which the next open finishes): not split again meanwhile.
  std::string splitting;
  if (read_key(object, kSplitKey, &splitting)) return true;
  // 2. The partition is frozen before its keys are read: other front ends' writes to it
  // wait (their guard on its range fails), and one splitting it too finds it frozen and
  // stops. Its split key names no new partition yet (0: undone by the next open).
  const std::string range = range_value(*map, start);
  // (The split key's value: the new partition's start, this front end, and once known the
  // partition's last stream record number.)
  auto split_value = [&](std::uint64_t middle, std::uint64_t last) {
    std::string value;
    put_u64(&value, middle);
    put_u64(&value, instance_);
    if (middle != 0) put_u64(&value, last);
    return value;
  };
  const std::string intent = split_value(0, 0);
  // The first freeze is guarded on the range (nobody froze it meanwhile), the second on
  // this split's key (nobody ended the split meanwhile: this front end may have been
  // paused past its lease, and the split undone by another).
  auto freeze = [&](std::uint64_t middle, bool first, std::uint64_t last = 0) {
    const std::string value = split_value(middle, last);
    std::string frozen = range;
    frozen.push_back('F');
    put_u64(&frozen, middle);
    librados::ObjectWriteOperation op;
    librados::bufferlist expected;
    expected.append(first ? range : intent);
    int cmp = 0;
    op.omap_cmp({{first ? kRangeKey : kSplitKey, {expected, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
    std::map<std::string, librados::bufferlist> set;
    set[kSplitKey].append(value);
    set[kRangeKey].append(frozen);
    op.omap_set(set);
    return io(object.ns).operate(object.oid, &op);
  };
  if (const int r = freeze(0, true); r == -ECANCELED || r == -ENOENT) {
    // Split or dropped meanwhile by another front end.
    refresh_map(table);
    return true;
  } else {
    check(r, "split");
  }
  // A partition where a transaction holds items is not split: its locks, and the ops
  // that release them, belong to this object. A transaction holds them for milliseconds:
  // thawed, waited for, frozen again; one left by a stopped front end lasts until another
  // takes its work over, and the split is tried again after more writes. Items held while
  // their GSI or TTL entries are applied are waited for alike (their holds are removed from
  // this object, with their outbox entries).
  for (int wait = 0;
       !read_prefix(object, kLockPrefix).empty() || !read_prefix(object, kHoldPrefix).empty();
       ++wait) {
    if (!end_split(object, range, intent, true)) return true;
    if (wait >= 20) {
      std::unique_lock lock(mutex_);
      growth_[object] =
          static_cast<std::int64_t>(std::max<std::uint64_t>(1, partition_keys_ / 4)) - 64;
      return true;
    }
    // This process's writes go on while it waits (the partition is thawed); the removals
    // of the outbox entries they leave are waited for again before the freeze.
    layout.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    layout.lock();
    reap_removals(true);
    if (const int r = freeze(0, true); r == -ECANCELED || r == -ENOENT) {
      refresh_map(table);
      return true;
    } else {
      check(r, "split");
    }
  }
  // Frozen, and no transaction holds an item: the partition's last stream record number
  // stays as it is. Both halves number their records from after it.
  const std::uint64_t last_record = read_last_number(object);
  std::vector<std::pair<std::string, std::string>> keys;
  std::vector<std::uint64_t> tokens;
  for (auto& [k, v] : read_prefix(object, table_prefix(table))) {
    const std::uint64_t token = key_token(k);
    if (token < start || (!last && token >= end)) continue;
    tokens.push_back(token);
    keys.emplace_back(std::move(k), std::move(v));
  }
  std::sort(tokens.begin(), tokens.end());
  // The token boundary nearest to half of the keys.
  std::optional<std::uint64_t> middle;
  std::size_t best = 0;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    if (tokens[i] == tokens[i - 1]) continue;
    const std::size_t off = i > tokens.size() / 2 ? i - tokens.size() / 2 : tokens.size() / 2 - i;
    if (!middle || off < best) middle = tokens[i], best = off;
  }
  if (at) middle = at;
  if (!middle) {
    end_split(object, range, intent, true);
    return false;
  }
  const ObjectRef added{object.ns, "p" + hex16(*middle)};
  std::vector<std::uint64_t> starts = *map;
  starts.insert(std::upper_bound(starts.begin(), starts.end(), *middle), *middle);
  if (const int r = freeze(*middle, false, last_record); r == -ECANCELED) {
    log("the split of " + object.oid + " was ended by another front end");
    return true;
  } else {
    check(r, "split");
  }
  const std::string splitting_value = split_value(*middle, last_record);
  fault_point("intent");
  check_lease();
  // 3. The new object is made with its range.
  remove_object(added);
  std::set<std::string> moved_keys;
  std::map<std::string, librados::bufferlist> chunk;
  chunk[kRangeKey].append(range_value(starts, *middle));
  std::string last_value;
  put_u64(&last_value, last_record);
  if (last_record > 0) chunk[kStreamCounterKey].append(last_value);
  chunk[kBornKey].append(last_value);
  // The definition version goes with the keys: the parent's, or the catalog's if higher (a
  // change raising it has raised the catalog's record and not yet the parent). The map is
  // published only while the catalog's record is still `definitions` (kDefinitionsPrefix).
  std::string definitions;
  read_key({prefix_, kCatalogObject}, definitions_key(table), &definitions);
  if (std::string definition;
      read_key(object, kDefinitionKey, &definition) || !definitions.empty()) {
    chunk[kDefinitionKey].append(std::max(definition, definitions));
  }
  std::size_t chunk_bytes = 0;
  auto copy = [&] {
    if (chunk.empty()) return;
    librados::ObjectWriteOperation op;
    op.omap_set(chunk);
    check(io(added.ns).operate(added.oid, &op), "split copy");
    chunk.clear();
    chunk_bytes = 0;
  };
  for (const auto& [k, v] : keys) {
    if (key_token(k) < *middle) continue;
    moved_keys.insert(k);
    chunk[k].append(v);
    chunk_bytes += k.size() + v.size();
    if (chunk.size() >= kSplitChunkKeys || chunk_bytes >= kSplitChunkBytes) copy();
  }
  copy();
  fault_point("copy");
  check_lease();
  // 4. Guarded on the map read: other front ends split other partitions of the table
  // meanwhile, and the new start goes into the map as it is now (this partition's range is
  // its own: frozen, nobody else split it).
  for (int attempt = 0;; ++attempt) {
    if (attempt > 0) check_lease();  // (the lease again before each op sent)
    librados::ObjectWriteOperation op;
    librados::bufferlist old_value, new_value;
    old_value.append(stored);
    new_value.append(encode_map(starts));
    librados::bufferlist definitions_value;
    definitions_value.append(definitions);
    int cmp = 0;
    op.omap_cmp({{map_key, {old_value, LIBRADOS_CMPXATTR_OP_EQ}},
                 {definitions_key(table), {definitions_value, LIBRADOS_CMPXATTR_OP_EQ}}},
                &cmp);
    // With the split, what the stream shards still have to take in (split_noted).
    librados::bufferlist unnoted;
    unnoted.append(last_value);
    op.omap_set({{map_key, new_value}, {unnoted_key(table, *middle), unnoted}});
    const int r = catalog_io().operate(kCatalogObject, &op);
    if (r != -ECANCELED || attempt >= 100) {
      check(r, "cannot publish the partition map of table " + std::to_string(table));
      break;
    }
    if (!read_key({prefix_, kCatalogObject}, map_key, &stored)) {
      fail("the partition map of table " + std::to_string(table) + " is gone");
    }
    // A catalog change raised the table's definition version since it was read: the new
    // partition gets it before the map that names it is published.
    if (std::string now;
        read_key({prefix_, kCatalogObject}, definitions_key(table), &now) && now != definitions) {
      definitions = std::move(now);
      raise_definition(added, definitions);
    }
    starts.clear();
    for (std::size_t i = 0; i + 8 <= stored.size(); i += 8) {
      starts.push_back(get_be(std::string_view(stored).substr(i), 8));
    }
    starts.insert(std::upper_bound(starts.begin(), starts.end(), *middle), *middle);
  }
  {
    std::unique_lock lock(maps_mutex_);
    maps_[table] = std::make_shared<const std::vector<std::uint64_t>>(starts);
  }
  splits_published_.fetch_add(1, std::memory_order_release);
  fault_point("publish");
  // The lower half thaws with its new range: writes with the new map go on, and those
  // with the old one find another range and reload it. (Unless another front end finished
  // the split meanwhile, this one having paused past its lease: it may have split the
  // lower half again since, and this range would undo that.)
  if (!end_split(object, range_value(starts, start), splitting_value, false)) {
    log("the split of " + object.oid + " was finished by another front end");
    return true;
  }
  layout.unlock();
  if (split_listener_) split_listener_(table, *middle, last_record);
  const auto paused = std::chrono::steady_clock::now() - began;
  // 5.
  remove_moved(object, moved_keys, splitting_value);
  char pause[32];
  std::snprintf(pause, sizeof pause, "%.1f",
                std::chrono::duration<double, std::milli>(paused).count());
  log("partition " + object.oid + " of table " + std::to_string(table) + " split at token " +
      hex16(*middle) + ": " + std::to_string(moved_keys.size()) + " of " +
      std::to_string(keys.size()) + " keys moved to " + added.oid + "; writes paused " + pause +
      " ms");
  return true;
}

bool RadosStorage::end_split(const ObjectRef& object, const std::string& range,
                             const std::string& split, bool remove_key) {
  librados::ObjectWriteOperation op;
  librados::bufferlist expected, value;
  expected.append(split);
  value.append(range);
  int cmp = 0;
  op.omap_cmp({{kSplitKey, {expected, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
  op.omap_set({{kRangeKey, value}});
  if (remove_key) op.omap_rm_keys({kSplitKey});
  const int r = io(object.ns).operate(object.oid, &op);
  if (r == -ECANCELED) return false;
  check(r, "cannot set the range of " + object.oid);
  return true;
}

void RadosStorage::remove_moved(const ObjectRef& object, const std::set<std::string>& keys,
                                const std::string& split) {
  librados::bufferlist expected;
  expected.append(split);
  auto remove = [&](const std::set<std::string>& chunk) {
    librados::ObjectWriteOperation op;
    int cmp = 0;
    op.omap_cmp({{kSplitKey, {expected, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
    op.omap_rm_keys(chunk);
    const int r = io(object.ns).operate(object.oid, &op);
    if (r == -ECANCELED || r == -ENOENT) return false;  // ended by another front end
    check(r, "cannot remove the moved keys of " + object.oid);
    return true;
  };
  std::set<std::string> chunk;
  for (auto it = keys.begin(); it != keys.end();) {
    chunk.insert(*it);
    if (++it == keys.end() || chunk.size() >= kSplitChunkKeys) {
      if (!remove(chunk)) return;
      chunk.clear();
      fault_point("cleanup");
    }
  }
  remove({kSplitKey});
}

void RadosStorage::finish_split(const ObjectRef& object) {
  std::string value;
  if (!read_key(object, kSplitKey, &value) ||
      (value.size() != 8 && value.size() != 16 && value.size() != 24)) {
    return;
  }
  const std::uint64_t middle = get_be(value, 8);
  // The partition's last stream record number when it split (a split key written before
  // it was kept: the new partition's, which went on from it).
  const std::uint64_t last_record = value.size() == 24
                                        ? get_be(std::string_view(value).substr(16), 8)
                                        : read_last_number({object.ns, "p" + hex16(middle)});
  const auto table = static_cast<std::uint32_t>(std::stoul(object.ns.substr(prefix_.size() + 1)));
  refresh_map(table);
  const Starts map = partition_starts(table);
  const std::uint64_t start = std::stoull(object.oid.substr(1), nullptr, 16);
  if (middle <= start || !std::binary_search(map->begin(), map->end(), middle)) {
    if (middle > start) remove_object({object.ns, "p" + hex16(middle)});
    end_split(object, range_value(*map, start), value, true);
    return;
  }
  if (!end_split(object, range_value(*map, start), value, false)) return;
  std::set<std::string> moved_keys;
  for (const auto& [k, v] : read_prefix(object, table_prefix(table))) {
    if (key_token(k) >= middle) moved_keys.insert(k);
  }
  remove_moved(object, moved_keys, value);
  if (split_listener_) {
    split_listener_(table, middle, last_record);
  } else {
    finished_splits_.push_back({table, middle, last_record});
  }
}

}  // namespace kumo::storage::rados
