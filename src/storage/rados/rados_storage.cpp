// The RADOS back end's reads: where each key lives (the partition maps), reads of keys and
// ranges, a range's erasure; the writes are in rados_writes.cpp, the counters in
// rados_counters.cpp. Also the module's entry point.
#include "storage/rados/rados_storage.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "storage/counter.h"

namespace kumo::storage::rados {

namespace {

kumo_rados_fail_function fail_with = nullptr;
kumo_rados_fail_function conflict_with = nullptr;
kumo_rados_fail_function gone_with = nullptr;
kumo_rados_fail_function held_with = nullptr;
kumo_rados_fail_function stale_with = nullptr;
kumo_rados_log_function log_with = nullptr;

// Partitions a table starts with; their objects spread over the pool's placement groups.
constexpr std::uint64_t kInitialPartitions = 4;

}  // namespace

[[noreturn]] void fail(const std::string& message) {
  fail_with(message.c_str());
  std::abort();  // fail_with throws; never reached
}

namespace {
std::atomic<std::uint64_t> blocklisted_seen{0};
}  // namespace

std::uint64_t blocklisted_answers() {
  return blocklisted_seen.load(std::memory_order_acquire);
}

void check(int r, const std::string& what) {
  // A blocklisted client's ops answer ESHUTDOWN: its front end goes on under a new client
  // once its lease renewal meets the same answer (renewed at once: blocklisted_answers).
  if (r == -ESHUTDOWN) {
    blocklisted_seen.fetch_add(1, std::memory_order_acq_rel);
    fail(what + ": this front end's client is blocklisted");
  }
  if (r < 0) fail(what + ": " + std::strerror(-r));
}

[[noreturn]] void conflict(const std::string& message) {
  conflict_with(message.c_str());
  std::abort();  // conflict_with throws; never reached
}

[[noreturn]] void held(const std::vector<std::string>& keys) {
  static const char* digits = "0123456789abcdef";
  std::string message;
  for (const std::string& key : keys) {
    if (!message.empty()) message.push_back(' ');
    for (const char c : key) {
      message.push_back(digits[static_cast<unsigned char>(c) >> 4]);
      message.push_back(digits[static_cast<unsigned char>(c) & 15]);
    }
  }
  held_with(message.c_str());
  std::abort();  // held_with throws; never reached
}

[[noreturn]] void gone(const std::string& message) {
  gone_with(message.c_str());
  std::abort();  // gone_with throws; never reached
}

[[noreturn]] void stale(const std::string& message) {
  stale_with(message.c_str());
  std::abort();  // stale_with throws; never reached
}

RadosStorage::RadosStorage(const std::string& pool, const std::string& conf,
                           const std::string& prefix, const KumoRadosSettings& settings)
    : prefix_(prefix),
      pool_(pool),
      conf_(conf),
      lease_seconds_(std::max(1u, settings.lease_seconds)),
      partition_keys_(settings.partition_keys) {
  // A test stops the process at one step of a split, as kill -9 would (see split()).
  std::string faults;
  if (const char* fault = std::getenv("KUMO_RADOS_SPLIT_FAULT")) faults = fault;
  if (const char* fault = std::getenv("KUMO_RADOS_FAULT")) faults = fault;
  for (std::size_t at = 0; !faults.empty() && at <= faults.size();) {
    const std::size_t end = std::min(faults.find(',', at), faults.size());
    faults_.push_back(faults.substr(at, end - at));
    at = end + 1;
  }
  if (const char* hold = std::getenv("KUMO_RADOS_HOLD_FILE")) hold_file_ = hold;
  if (const char* release = std::getenv("KUMO_RADOS_RELEASE_DIR")) release_dir_ = release;
  definition_guard_ =
      std::find(faults_.begin(), faults_.end(), "no-definition-guard") == faults_.end();
  replace_connection(connect());
  // The catalog object exists from the start: a guard (omap_cmp) on a key of an object
  // that does not exist fails with ENOENT, not with the comparison.
  check(catalog_io().create(kCatalogObject, false), "cannot create " + kCatalogObject);
  create_token_objects();
  std::random_device random;
  instance_ = (std::uint64_t{random()} << 32) ^ random();
  // Watching before this front end is listed: a catalog change announced once it is listed
  // finds it among the watchers (one that does not acknowledge is logged; the definition
  // versions in the partitions refuse its writes made with the old definition).
  start_watch();
  try {
    take_lease();
  } catch (...) {
    stop_watch();
    throw;
  }
  log("this front end is " + hex16(instance_) + ", client " + connection()->address);
  // (Renewed while recovery waits for the leases of the front ends that left work.)
  start_leases();
  try {
    recover();
  } catch (...) {
    stop_leases();
    stop_watch();
    throw;
  }
  opened_.store(true, std::memory_order_release);
}

std::shared_ptr<RadosStorage::Connection> RadosStorage::connect() {
  auto made = std::make_shared<Connection>();
  librados::Rados& cluster = made->cluster;
  check(cluster.init2("client.admin", "ceph", 0), "cannot set up the Ceph client");
  if (!conf_.empty()) {
    check(cluster.conf_read_file(conf_.c_str()), "cannot read " + conf_);
  } else {
    check(cluster.conf_read_file(nullptr), "cannot find ceph.conf");
  }
  cluster.conf_parse_env(nullptr);
  check(cluster.connect(), "cannot connect to the Ceph cluster");
  check(cluster.ioctx_create(pool_.c_str(), made->catalog), "cannot open pool " + pool_);
  made->catalog.set_namespace(prefix_);
  made->address = cluster.get_addrs();
  return made;
}

void RadosStorage::create_token_objects() {
  Io catalog = catalog_io();  // (held until the ops completed)
  std::vector<librados::AioCompletion*> done;
  for (const ObjectRef& object : token_objects()) {
    librados::ObjectWriteOperation op;
    op.create(false);
    done.push_back(librados::Rados::aio_create_completion());
    const int r = catalog.aio_operate(object.oid, done.back(), &op);
    if (r < 0) {
      done.back()->release();
      done.pop_back();
      for (librados::AioCompletion* c : done) c->wait_for_complete(), c->release();
      check(r, "cannot create " + object.oid);
    }
  }
  int failed = 0;
  for (librados::AioCompletion* c : done) {
    c->wait_for_complete();
    if (c->get_return_value() < 0 && failed == 0) failed = c->get_return_value();
    c->release();
  }
  check(failed, "cannot create the token objects");
}

std::vector<ObjectRef> RadosStorage::token_objects() const {
  std::vector<ObjectRef> out;
  for (unsigned n = 0; n < kTokenObjects; ++n) {
    out.push_back({prefix_, kTokensObjectPrefix + std::to_string(n)});
  }
  return out;
}

RadosStorage::~RadosStorage() {
  stop_leases();
  {
    std::unique_lock lock(announce_mutex_);
    reap_announcements(true);
  }
  stop_watch();
  reap_removals(true);
  // Nothing of this front end is left in flight: its lease goes, and nobody waits for it.
  try {
    forget_front_end(instance_);
  } catch (...) {
    // (The cluster is unreachable, or this client was blocklisted: the others find the
    // lease lapsed.)
  }
  // The client is shut down once the last op that holds it returned.
  replace_connection(nullptr);
}

RadosStorage::Connection::~Connection() {
  {
    std::unique_lock lock(io_mutex);
    io.clear();
  }
  catalog.close();
  // (Callbacks of a watch removed from it may still be queued.)
  cluster.watch_flush();
  cluster.shutdown();
}

std::optional<std::string> RadosStorage::get(std::string_view key, const Snapshot*) {
  return read_item(key, false);
}

std::optional<std::string> RadosStorage::read_for_write(std::string_view key) {
  return read_item(key, true);
}

std::optional<std::string> RadosStorage::get_versioned(std::string_view key, const Snapshot*,
                                                       std::string* version) {
  return read_item(key, false, version);
}

std::optional<std::string> RadosStorage::read_for_write_versioned(std::string_view key,
                                                                  std::string* version) {
  return read_item(key, true, version);
}

std::int64_t RadosStorage::now_ns() const {
  if (const Clock* clock = clock_.load(std::memory_order_acquire)) return clock->now_ns();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::size_t RadosStorage::reclaim_tombstones(std::uint32_t table) {
  const std::string prefix = space_prefix(table, kVersionsSpace);
  std::size_t removed = 0;
  for (const ObjectRef& object : partitions(table)) {
    const std::int64_t horizon = now_ns() - kTombstoneKeptNs;
    std::string after = prefix;
    bool more = true;
    while (more) {
      std::map<std::string, librados::bufferlist> page;
      librados::ObjectReadOperation read;
      int rv = 0;
      read.omap_get_vals2(after, prefix, 1000, &page, &more, &rv);
      const int r = io(object.ns).operate(object.oid, &read, nullptr);
      if (r == -ENOENT) break;  // split or dropped meanwhile: a later pass finds its heirs
      check(r, "read versions");
      if (page.empty()) break;
      after = page.rbegin()->first;
      std::vector<std::pair<std::string, std::string>> old;
      for (auto& [key, value] : page) {
        std::string was = value.to_str();
        if (was.size() != kTombstoneSize) continue;  // a live item's
        const auto at =
            static_cast<std::int64_t>(get_be(std::string_view(was).substr(kVersionSize), 8));
        if (at <= horizon) old.emplace_back(key, std::move(was));
      }
      // Each only if it is still this tombstone: a write of the item since the page was
      // read set another version, which stays. The page's at once; if one was written
      // meanwhile, one by one.
      auto remove = [&](std::size_t from, std::size_t to) {
        librados::ObjectWriteOperation op;
        std::map<std::string, std::pair<librados::bufferlist, int>> guards;
        std::set<std::string> keys;
        for (std::size_t i = from; i < to; ++i) {
          librados::bufferlist expected;
          expected.append(old[i].second);
          guards[old[i].first] = {expected, LIBRADOS_CMPXATTR_OP_EQ};
          keys.insert(old[i].first);
        }
        op.omap_cmp(guards, &rv);
        op.omap_rm_keys(keys);
        return io(object.ns).operate(object.oid, &op);
      };
      if (old.empty()) continue;
      int w = remove(0, old.size());
      if (w == 0) {
        removed += old.size();
      } else if (w == -ECANCELED) {
        for (std::size_t i = 0; i < old.size() && w != -ENOENT; ++i) {
          w = remove(i, i + 1);
          if (w == 0) ++removed;
        }
      }
      if (w == -ENOENT) break;
    }
  }
  return removed;
}

std::optional<std::string> RadosStorage::read_item(std::string_view key, bool settled,
                                                   std::string* version) {
  std::string ended;  // the record of a lock found ended once
  for (;;) {
    const Place place = locate(key);
    if (place.counters) return encode_counter(get_counter(key));
    // An item's lock comes with it: a transaction past its commit point decides the item.
    const bool item = key.size() > 4 && static_cast<std::uint8_t>(key[4]) == kItemsSpace &&
                      static_cast<unsigned char>(key[0]) == 0;
    const std::string lock = item ? kLockPrefix + std::string(key) : std::string();
    std::optional<std::string> found;
    // (Read with the item, in its op: the version of the value read.)
    const std::string versioned = item && version ? version_key(key) : std::string();
    if (version) version->clear();
    bool again = false;
    for (const ObjectRef& object : holders(place, key)) {
      std::map<std::string, librados::bufferlist> out;
      librados::ObjectReadOperation op;
      int rv = 0;
      // A partition's range comes with the key: read with a stale map, it is not the
      // map's (moved() then says so).
      const std::string range = expected_range(object);
      std::set<std::string> keys{std::string(key)};
      if (!range.empty()) keys.insert(kRangeKey);
      if (item) keys.insert(lock);
      if (!versioned.empty()) keys.insert(versioned);
      const std::string hold = item && settled ? kHoldPrefix + std::string(key) : std::string();
      if (!hold.empty()) keys.insert(hold);
      op.omap_get_vals_by_keys(keys, &out, &rv);
      const int r = io(object.ns).operate(object.oid, &op, nullptr);
      if (r != -ENOENT) check(r, "read");
      if (r != -ENOENT && !range.empty()) {
        auto at = out.find(kRangeKey);
        if (at != out.end() && !range_fits(at->second.to_str(), range)) {
          refresh_map(place.table);
          break;
        }
      }
      if (!hold.empty() && out.count(hold)) {
        conflict("the index entries of the item's last write are still being applied");
      }
      auto it = out.find(std::string(key));
      if (r != -ENOENT && it != out.end()) found = it->second.to_str();
      if (auto v = out.find(versioned); !versioned.empty() && r != -ENOENT && v != out.end()) {
        *version = v->second.to_str();
      }
      if (auto held = out.find(lock); item && held != out.end()) {
        // (kByRecord: `found` is now the transaction's.) Ended since the read: what it
        // left is read again, once. A lock whose record is still gone then was left
        // over (a prepare op that arrived after the abort): the item stands as stored.
        const std::string record = held->second.to_str();
        again = decided(record, key, &found) == Decided::kEnded && ended != record;
        if (again) ended = record;
      }
      if (found || again) break;
    }
    if (again || moved(place)) continue;
    if (item && !settled) fault_point("item-read");
    if (item && settled && version) fault_point("check-read");
    return found;
  }
}

std::unique_ptr<Snapshot> RadosStorage::snapshot() {
  return std::make_unique<RadosSnapshot>(applying_);
}

std::unique_ptr<Iterator> RadosStorage::iterator(std::string lower, std::string upper,
                                                 const Snapshot*) {
  return std::make_unique<RadosIterator>(*this, std::move(lower), std::move(upper));
}

void RadosStorage::erase_range(const std::string& lower, const std::string& upper) {
  // Whole objects go at once: a table's partitions when the range covers its counters,
  // items and indexes. What the range holds of its stream records and TTL schedule goes
  // from each object that keeps them, a page of keys at a time. (Not while a partition of
  // the table is being split.)
  std::unique_lock<std::shared_mutex> layout(layout_);
  std::vector<std::uint32_t> dropped;
  std::string at = lower;
  while (!at.empty() && static_cast<unsigned char>(at[0]) == 0 && (upper.empty() || at < upper)) {
    const std::uint32_t table = static_cast<std::uint32_t>(get_be(at, 4));
    // The stored map: other front ends may have split partitions this one never saw.
    forget_partitions(table);
    const std::string next_table =
        table == UINT32_MAX ? std::string("\x01", 1) : table_prefix(table + 1);
    auto covers = [&](std::uint8_t from, const std::string& to) {
      const std::string begin = from == 0 ? table_prefix(table) : space_prefix(table, from);
      return lower <= begin && (upper.empty() || to <= upper);
    };
    const std::string ns = table_namespace(table);
    if (covers(0, space_prefix(table, kStreamSpace))) {
      // The map stays while the table's stream has records (they are found through it),
      // marked as the map of a dropped table.
      std::string key = kDroppedPrefix;
      put_u32(&key, table);
      librados::ObjectWriteOperation op;
      op.omap_set({{key, librados::bufferlist()}});
      check(catalog_io().operate(kCatalogObject, &op),
            "cannot mark table " + std::to_string(table) + " dropped");
      for (const ObjectRef& object : partitions(table)) {
        remove_object(object);
        fault_point("drop");
      }
      dropped.push_back(table);
    }
    bool records_erased = false;
    for (const std::uint8_t space : {kStreamSpace, kTtlSpace}) {
      const std::string from = std::max(lower, space_prefix(table, space));
      std::string to = space_prefix(table, space + 1);
      if (!upper.empty() && upper < to) to = upper;
      if (!(from < to)) continue;
      erase_scattered(table, space == kStreamSpace ? 's' : 'p', from, to);
      records_erased = records_erased || space == kStreamSpace;
    }
    if (covers(kTtlSpace + 1, next_table)) remove_object({ns, "misc"});
    // A dropped table's last records trimmed: its stream objects and map go.
    if (records_erased && std::find(dropped.begin(), dropped.end(), table) == dropped.end()) {
      release_dropped(table);
    }
    at = next_table;
  }
  layout.unlock();
  // Whatever is left (part of an object's keys) goes key by key.
  Storage::erase_range(lower, upper);
  layout.lock();
  for (std::uint32_t table : dropped) release_dropped(table);
}

bool RadosStorage::moved(const Place& place) {
  return place.splits && splits_published_.load(std::memory_order_acquire) != *place.splits;
}

RadosStorage::Place RadosStorage::locate(std::string_view key) {
  if (!key.empty() && static_cast<unsigned char>(key[0]) != 0) {
    if (key.compare(0, kTokensSpace.size(), kTokensSpace) == 0) {
      // A token's own object; a walk of the space reads all of them, merged.
      return {{prefix_, token_object(key)}, kTokensEnd, false, 0, std::nullopt, true};
    }
    // The catalog's own keys: up to the tokens' space, then from its end up to where the
    // reserved ones begin.
    const std::string& end = key < kTokensSpace ? kTokensSpace : kReserved;
    return {{prefix_, kCatalogObject}, end, false, 0, std::nullopt};
  }
  const std::uint32_t table = static_cast<std::uint32_t>(get_be(key, 4));
  const std::string ns = table_namespace(table);
  const std::string next_table =
      table == UINT32_MAX ? std::string("\x01", 1) : table_prefix(table + 1);
  const std::uint8_t space = key.size() > 4 ? static_cast<std::uint8_t>(key[4]) : 0;
  if (space == 0)
    return {{ns, "misc"}, space_prefix(table, kItemsSpace), true, table, std::nullopt};
  if (space == kStreamSpace || space == kTtlSpace) {
    // A schedule entry is kept by its item's partition, a stream record by the stream
    // object `s<start>` of its item's partition when it was written. These spaces are
    // ordered by expiry and by sequence number, so their ranges lie in every object
    // (`scattered`).
    const std::uint64_t splits = splits_published_.load(std::memory_order_acquire);
    const Starts shared = partition_starts(table);
    const std::uint64_t start =
        *(std::upper_bound(shared->begin(), shared->end(), key_token(key)) - 1);
    const char kind = space == kStreamSpace ? 's' : 'p';
    return {{ns, kind + hex16(start)}, space_prefix(table, space + 1), false, table, splits, true};
  }
  if (space == kItemsSpace || space == kIndexesSpace || space == kVersionsSpace) {
    // Read before the map: a split published after it is seen by moved().
    const std::uint64_t splits = splits_published_.load(std::memory_order_acquire);
    std::string prefix = space_prefix(table, space);
    std::size_t token_at = 5;
    std::string space_end = space_prefix(table, space + 1);
    if (space == kIndexesSpace) {
      const std::uint32_t index = static_cast<std::uint32_t>(get_be(key.substr(5), 4));
      put_u32(&prefix, index);
      token_at = 9;
      if (index != UINT32_MAX) {
        space_end = space_prefix(table, space);
        put_u32(&space_end, index + 1);
      }
    }
    const std::uint64_t token = key.size() > token_at ? get_be(key.substr(token_at), 8) : 0;
    const Starts shared = partition_starts(table);
    const std::vector<std::uint64_t>& starts = *shared;
    auto it = std::upper_bound(starts.begin(), starts.end(), token);
    const std::uint64_t start = *(it - 1);
    std::string end = space_end;
    if (it != starts.end()) {
      end = prefix;
      put_u64(&end, *it);
    }
    return {{ns, "p" + hex16(start)}, end, false, table, splits};
  }
  return {{ns, "misc"}, next_table, false, table, std::nullopt};
}

std::vector<std::pair<std::string, std::string>> RadosStorage::read_range(const ObjectRef& object,
                                                                          const std::string& from,
                                                                          const std::string& to,
                                                                          unsigned max, bool* more,
                                                                          bool keys_only) {
  std::vector<std::pair<std::string, std::string>> out;
  std::map<std::string, librados::bufferlist> first, page;
  std::set<std::string> keys;
  int r1 = 0, r2 = 0;
  bool more_keys = false;
  librados::ObjectReadOperation op;
  // omap_get_vals2 starts after its key: the first key itself is read by name; with it,
  // a partition's range (a read with a stale map finds another: see moved()).
  const std::string range = expected_range(object);
  if (range.empty()) {
    op.omap_get_vals_by_keys({from}, &first, &r1);
  } else {
    op.omap_get_vals_by_keys({from, kRangeKey}, &first, &r1);
  }
  if (keys_only) {
    op.omap_get_keys2(from, max, &keys, &more_keys, &r2);
  } else {
    op.omap_get_vals2(from, "", max, &page, &more_keys, &r2);
  }
  const int r = io(object.ns).operate(object.oid, &op, nullptr);
  *more = false;
  if (r == -ENOENT) return out;
  check(r, "range read");
  if (!range.empty()) {
    auto at = first.find(kRangeKey);
    if (at != first.end() && !range_fits(at->second.to_str(), range)) {
      refresh_map(table_of(object));
      return out;
    }
  }
  auto keep = [&](const std::string& k, const librados::bufferlist& v) {
    if (!to.empty() && k >= to) return false;
    if (k.compare(0, kReserved.size(), kReserved) == 0) return false;
    out.emplace_back(k, v.to_str());
    return true;
  };
  for (const auto& [k, v] : first) {
    if (keep(k, keys_only ? librados::bufferlist() : v)) continue;
  }
  for (const auto& [k, v] : page) {
    if (!to.empty() && k >= to) return out;
    keep(k, v);
  }
  const librados::bufferlist none;
  for (const std::string& k : keys) {
    if (!to.empty() && k >= to) return out;
    keep(k, none);
  }
  *more = more_keys;
  return out;
}

std::map<std::string, std::string> RadosStorage::read_values(const ObjectRef& object,
                                                             const std::set<std::string>& keys) {
  std::map<std::string, librados::bufferlist> found;
  librados::ObjectReadOperation op;
  int rv = 0;
  op.omap_get_vals_by_keys(keys, &found, &rv);
  const int r = io(object.ns).operate(object.oid, &op, nullptr);
  std::map<std::string, std::string> out;
  if (r == -ENOENT) return out;
  check(r, "read");
  for (auto& [k, v] : found) out.emplace(k, v.to_str());
  return out;
}

std::string RadosStorage::skip_empty(const std::string& at, const std::string& lower,
                                     const std::string& upper) {
  const bool table_boundary = at.size() <= 4 && (at.empty() || at != lower) &&
                              (at.empty() || static_cast<unsigned char>(at[0]) == 0);
  const bool index_boundary =
      at.size() > 4 && at.size() <= 9 && static_cast<std::uint8_t>(at[4]) == kIndexesSpace;
  if (index_boundary) {
    // The first index entry at or after `at`, in any partition.
    const std::uint32_t table = static_cast<std::uint32_t>(get_be(at, 4));
    const std::string space = space_prefix(table, kIndexesSpace);
    std::optional<std::string> first;
    const Starts map = partition_starts(table);
    for (const ObjectRef& object : partitions(table, *map)) {
      std::map<std::string, librados::bufferlist> page;
      bool more = false;
      int rv = 0;
      librados::ObjectReadOperation op;
      op.omap_get_vals2(at, space, 1, &page, &more, &rv);
      const int r = io(object.ns).operate(object.oid, &op, nullptr);
      if (r == -ENOENT) continue;
      check(r, "read");
      if (!page.empty() && (!first || page.begin()->first < *first)) first = page.begin()->first;
    }
    // A split (of this front end or another) moved keys meanwhile: look again.
    if (!map_current(table, map)) return skip_empty(at, lower, upper);
    if (!first) return space_prefix(table, kStreamSpace);
    return first->substr(0, 9);
  }
  if (table_boundary) {
    // The first table at or after `at` that has data (and so a partition map).
    const std::uint32_t from = static_cast<std::uint32_t>(get_be(at, 4));
    std::optional<std::uint32_t> next;
    for (std::uint32_t id : mapped_tables()) {
      if (id >= from) {
        next = id;
        break;
      }
    }
    std::string target = next ? table_prefix(*next) : std::string("\x01", 1);
    if (!upper.empty() && upper < target) return upper;
    return std::max(target, at);
  }
  return at;
}

RadosStorage::Io RadosStorage::io(const std::shared_ptr<Connection>& on, const std::string& ns) {
  Connection& current = *on;
  if (ns == prefix_) return Io(on, current.catalog);
  {
    // Every request looks its context up: readers do not wait for each other.
    std::shared_lock lock(current.io_mutex);
    auto it = current.io.find(ns);
    if (it != current.io.end()) return Io(on, it->second);
  }
  std::unique_lock lock(current.io_mutex);
  auto it = current.io.find(ns);
  if (it == current.io.end()) {
    librados::IoCtx ctx;
    ctx.dup(current.catalog);
    ctx.set_namespace(ns);
    it = current.io.emplace(ns, std::move(ctx)).first;
  }
  return Io(on, it->second);
}

std::string RadosStorage::table_namespace(std::uint32_t table) const {
  return prefix_ + "t" + std::to_string(table);
}

RadosStorage::Starts RadosStorage::partition_starts(std::uint32_t table, bool create) {
  {
    std::shared_lock lock(maps_mutex_);
    auto it = maps_.find(table);
    if (it != maps_.end()) return it->second;
  }
  std::unique_lock lock(maps_mutex_);
  auto it = maps_.find(table);
  if (it != maps_.end()) return it->second;
  std::string key = kMapPrefix;
  put_u32(&key, table);
  std::vector<std::uint64_t> starts;
  std::string stored;
  if (read_key({prefix_, kCatalogObject}, key, &stored)) {
    for (std::size_t i = 0; i + 8 <= stored.size(); i += 8) {
      starts.push_back(get_be(std::string_view(stored).substr(i), 8));
    }
  }
  if (starts.empty()) {
    std::string value;
    for (std::uint64_t i = 0; i < kInitialPartitions; ++i) {
      starts.push_back(i * (UINT64_MAX / kInitialPartitions + 1));
      put_u64(&value, starts.back());
    }
    // A read of a table that has no map finds the initial partitions (empty: none of their
    // objects exists yet) and makes nothing, so that reading a dropped table's keys never
    // brings its map back.
    if (!create) return std::make_shared<const std::vector<std::uint64_t>>(std::move(starts));
    // The partitions exist, with their ranges, before the map that names them.
    ensure_ranges(table, starts);
    // Created once: a map already there (another process made it) wins.
    librados::ObjectWriteOperation op;
    librados::bufferlist empty, bl;
    int cmp = 0;
    op.omap_cmp({{key, {empty, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
    bl.append(value);
    op.omap_set({{key, bl}});
    const int r = catalog_io().operate(kCatalogObject, &op);
    if (r == -ECANCELED) {
      lock.unlock();
      forget_partitions(table);
      return partition_starts(table, create);
    }
    check(r, "cannot store the partition map of table " + std::to_string(table));
  }
  Starts shared = std::make_shared<const std::vector<std::uint64_t>>(std::move(starts));
  maps_[table] = shared;
  return shared;
}

bool RadosStorage::map_current(std::uint32_t table, const Starts& used) {
  std::string key = kMapPrefix;
  put_u32(&key, table);
  std::string stored;
  // A table without a stored map has the initial partitions, which the cache holds then.
  if (!read_key({prefix_, kCatalogObject}, key, &stored)) return true;
  if (stored == encode_map(*used)) return true;
  refresh_map(table);
  return false;
}

void RadosStorage::forget_partitions(std::uint32_t table) {
  std::unique_lock lock(maps_mutex_);
  maps_.erase(table);
}

std::vector<ObjectRef> RadosStorage::partitions(std::uint32_t table) {
  return partitions(table, *partition_starts(table));
}

std::vector<ObjectRef> RadosStorage::partitions(std::uint32_t table,
                                                const std::vector<std::uint64_t>& starts) {
  std::vector<ObjectRef> out;
  for (std::uint64_t start : starts) out.push_back({table_namespace(table), "p" + hex16(start)});
  return out;
}

bool RadosStorage::read_key(const ObjectRef& object, const std::string& key, std::string* value) {
  std::map<std::string, librados::bufferlist> out;
  librados::ObjectReadOperation op;
  int rv = 0;
  op.omap_get_vals_by_keys({key}, &out, &rv);
  const int r = io(object.ns).operate(object.oid, &op, nullptr);
  if (r == -ENOENT) return false;
  check(r, "read");
  auto it = out.find(key);
  if (it == out.end()) return false;
  *value = it->second.to_str();
  return true;
}

std::vector<std::pair<std::string, std::string>> RadosStorage::read_prefix(
    const ObjectRef& object, const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string after;
  for (bool more = true; more;) {
    std::map<std::string, librados::bufferlist> page;
    int rv = 0;
    librados::ObjectReadOperation op;
    op.omap_get_vals2(after, prefix, kPageKeys, &page, &more, &rv);
    const int r = io(object.ns).operate(object.oid, &op, nullptr);
    if (r == -ENOENT) return out;
    check(r, "read");
    for (const auto& [k, v] : page) out.emplace_back(k, v.to_str());
    if (page.empty()) break;
    after = page.rbegin()->first;
  }
  return out;
}

void RadosStorage::remove_keys(const ObjectRef& object, const std::set<std::string>& keys) {
  librados::ObjectWriteOperation op;
  op.omap_rm_keys(keys);
  const int r = io(object.ns).operate(object.oid, &op);
  if (r != -ENOENT) check(r, "write");  // no object: no keys to remove
}

void RadosStorage::remove_object(const ObjectRef& object) {
  const int r = io(object.ns).remove(object.oid);
  if (r != -ENOENT) check(r, "cannot remove " + object.oid);
}

void RadosStorage::log(const std::string& message) {
  if (log_with) log_with(message.c_str());
}

}  // namespace kumo::storage::rados

extern "C" kumo::storage::Storage* kumo_open_rados(
    const char* pool, const char* ceph_conf, const char* prefix, const KumoRadosSettings* settings,
    kumo_rados_fail_function fail, kumo_rados_fail_function conflict, kumo_rados_fail_function gone,
    kumo_rados_fail_function held, kumo_rados_fail_function stale, kumo_rados_log_function log) {
  kumo::storage::rados::fail_with = fail;
  kumo::storage::rados::stale_with = stale;
  kumo::storage::rados::conflict_with = conflict;
  kumo::storage::rados::gone_with = gone;
  kumo::storage::rados::held_with = held;
  kumo::storage::rados::log_with = log;
  return new kumo::storage::rados::RadosStorage(pool, ceph_conf, prefix, *settings);
}
