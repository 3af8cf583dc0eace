// The RADOS back end: Kumo's ordered key space kept in the omaps of objects of one pool
// of a Ceph cluster. Built as the module kumo-rados.so, which open_rados loads on first
// use (rados_module.cpp). docs/scale-out.md describes the layout and protocols.
//
// Layout. The catalog object `kumo.catalog` (default namespace) holds every key outside
// the tables' spaces (`meta/...`: definitions, streams, sequence numbers) and each table's
// partition map. Table T's keys live in namespace "t<T>":
//   p<16 hex digits>  one partition: the items ([T][1][token]...) and index entries
//                     ([T][2][index][token]...) whose token lies in its range, the
//                     table's counters as delta keys, and its outbox;
//   stream            the stream records ([T][3]...);
//   ttl               the TTL schedule ([T][4]...);
//   misc              any other key of the table.
// An index entry is kept by the partition whose range holds the entry's own token, so an
// LSI entry (whose token is its item's) is always in its item's object.
//
// Writes. A batch whose partition ops (WriteBatch: everything but maintenance) touch one
// object is one compound operation on it, atomic and replicated before it returns. Its
// maintenance (GSI entries, TTL schedule, stream records), if any, is first recorded in
// that same operation as an outbox entry, then applied object by object, then the entry is
// removed; a process that stops in between leaves the entry, and the next open applies it
// again (in order, which makes it idempotent). A batch whose partition ops touch several
// objects (a transaction) is first written whole as a record object `kumo.txn.*`: once
// that write returns the batch is committed, and it is applied object by object, then the
// record is removed; the next open applies any record left.
//
// Counters are never read-modified-written: each add is a key of its own (a delta) in the
// object of the write's partition, and a counter's value is the sum of its deltas in all
// of the table's partitions. Deltas are folded into one base key per object now and then,
// but never one that a record still to be applied again (after a crash) would set again.
#include <rados/librados.hpp>

#include <signal.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "storage/counter.h"
#include "storage/rados/layout.h"
#include "storage/rados/module.h"
#include "storage/storage.h"

namespace kumo::storage {
namespace {

using namespace rados;

kumo_rados_fail_function fail_with = nullptr;
kumo_rados_log_function log_with = nullptr;

[[noreturn]] void fail(const std::string& message) {
  fail_with(message.c_str());
  std::abort();  // fail_with throws; never reached
}

void check(int r, const std::string& what) {
  if (r < 0) fail(what + ": " + std::strerror(-r));
}

// Partitions a table starts with; their objects spread over the pool's placement groups.
constexpr std::uint64_t kInitialPartitions = 4;
// Keys a range read asks for at once: a walk's first read asks for few (a Query with a
// small Limit, or one that stops at its first 1 MB of items of up to 400 KB, reads no more
// than it needs), and each next one for four times as many, up to kPageKeys.
constexpr unsigned kPageKeys = 512;
constexpr unsigned kFirstPageKeys = 8;
// Delta keys written to one object between two folds of its counters.
constexpr int kFoldEvery = 256;
// Keys one operation of a split copies or removes at most.
constexpr std::size_t kSplitChunkKeys = 1000;
constexpr std::size_t kSplitChunkBytes = 4 << 20;

class RadosSnapshot : public Snapshot {
 public:
  explicit RadosSnapshot(std::shared_mutex& applying) : lock_(applying) {}

 private:
  std::shared_lock<std::shared_mutex> lock_;
};

class RadosStorage;

// Walks [lower, upper) forward in pages. RADOS reads omaps forward only: for a backward
// walk it reads the keys of the range whole (keys only), then the values from the end back,
// a few first and four times as many each time (a descending Query with a small Limit
// reads few of the range's values).
class RadosIterator : public Iterator {
 public:
  RadosIterator(RadosStorage& storage, std::string lower, std::string upper)
      : storage_(storage), lower_(std::move(lower)), upper_(std::move(upper)) {}
  void seek(std::string_view target) override;
  void seek_for_prev(std::string_view target) override { load_backward(target); }
  void seek_to_first() override { seek(lower_); }
  void seek_to_last() override { load_backward(std::nullopt); }
  bool valid() const override { return at_ < entries_.size(); }
  void next() override;
  void prev() override;
  std::string_view key() const override { return entries_[at_].first; }
  std::string_view value() const override { return entries_[at_].second; }

 private:
  // Backward: reads the values of the entries below loaded_ that the walk stands on or
  // will step to next (entries deleted meanwhile are dropped, and the walk stands on the
  // one before).
  void load_values();
  // Reads the next page from `resume_` into entries_; false at the end.
  bool load_forward();
  // Reads every entry of the range up to `last` (inclusive; nullopt: the end) and stands
  // on the last one.
  void load_backward(std::optional<std::string_view> last);

  RadosStorage& storage_;
  std::string lower_, upper_;
  std::vector<std::pair<std::string, std::string>> entries_;
  std::size_t at_ = 0;
  std::string resume_;              // where the next forward page starts (inclusive)
  unsigned page_ = kFirstPageKeys;  // keys the next forward read asks for
  bool exhausted_ = true;
  bool whole_ = false;  // entries_ starts at lower_ (read by load_backward)
  // Backward: entries_ holds keys only, their values from loaded_ on; objects_ the object
  // each key was read from; values_ how many values the next read of them asks for.
  bool keys_only_ = false;
  std::vector<ObjectRef> objects_;
  std::size_t loaded_ = 0;
  unsigned values_ = kFirstPageKeys;
};

class RadosStorage : public Storage {
 public:
  // The start tokens of a table's partitions, shared with the readers of the map.
  using Starts = std::shared_ptr<const std::vector<std::uint64_t>>;

  RadosStorage(const std::string& pool, const std::string& conf, const std::string& prefix,
               const KumoRadosSettings& settings)
      : prefix_(prefix), partition_keys_(settings.partition_keys) {
    // A test stops the process at one step of a split, as kill -9 would (see split()).
    if (const char* fault = std::getenv("KUMO_RADOS_SPLIT_FAULT")) split_fault_ = fault;
    check(cluster_.init2("client.admin", "ceph", 0), "cannot set up the Ceph client");
    if (!conf.empty()) {
      check(cluster_.conf_read_file(conf.c_str()), "cannot read " + conf);
    } else {
      check(cluster_.conf_read_file(nullptr), "cannot find ceph.conf");
    }
    cluster_.conf_parse_env(nullptr);
    check(cluster_.connect(), "cannot connect to the Ceph cluster");
    connected_ = true;
    check(cluster_.ioctx_create(pool.c_str(), catalog_io_), "cannot open pool " + pool);
    catalog_io_.set_namespace(prefix_);
    std::random_device random;
    instance_ = (std::uint64_t{random()} << 32) ^ random();
    recover();
  }
  ~RadosStorage() override {
    reap_removals(true);
    {
      std::unique_lock lock(mutex_);
      io_.clear();
    }
    catalog_io_.close();
    if (connected_) cluster_.shutdown();
  }

  std::optional<std::string> get(std::string_view key, const Snapshot*) override {
    for (;;) {
      const Place place = locate(key);
      if (place.counters) return encode_counter(get_counter(key));
      std::map<std::string, librados::bufferlist> out;
      librados::ObjectReadOperation op;
      int rv = 0;
      op.omap_get_vals_by_keys({std::string(key)}, &out, &rv);
      const int r = io(place.object.ns).operate(place.object.oid, &op, nullptr);
      if (r != -ENOENT) check(r, "read");
      if (moved(place)) continue;
      if (r == -ENOENT) return std::nullopt;
      auto it = out.find(std::string(key));
      if (it == out.end()) return std::nullopt;
      return it->second.to_str();
    }
  }

  std::int64_t get_counter(std::string_view key) override {
    const std::string prefix = counter_prefix(key);
    std::int64_t sum = 0;
    for (const ObjectRef& object : counter_objects(key)) {
      for (const auto& [k, v] : read_prefix(object, prefix)) {
        std::int64_t delta = 0;
        if (!decode_counter(v, &delta)) fail("counter value is not 8 bytes");
        sum += delta;
      }
    }
    return sum;
  }

  void write(const WriteBatch& batch) override {
    {
      // A split waits for the writes in flight, and no write resolves to a partition
      // while it is being split.
      std::shared_lock<std::shared_mutex> layout(layout_);
      write_resolved(batch);
    }
    if (split_due_.load(std::memory_order_relaxed)) split_due();
  }

  void write_resolved(const WriteBatch& batch) {
    std::vector<ObjectRef> homes;
    std::vector<Resolved> ops = resolve(batch, &homes);
    if (ops.empty()) return;
    // A table's counter deltas count wherever they lie in its partitions: when everything
    // else goes to one partition (a backfilled index entry, say), so do they, and the
    // whole batch is one atomic op.
    std::set<ObjectRef> placed;
    for (const Resolved& op : ops) {
      if (!op.table_counter) placed.insert(op.object);
    }
    if (placed.size() == 1 && placed.begin()->oid[0] == 'p') {
      const ObjectRef& only = *placed.begin();
      for (Resolved& op : ops) {
        if (op.table_counter && op.object.ns == only.ns) op.object = only;
      }
    }
    std::set<ObjectRef> objects;
    for (const Resolved& op : ops) objects.insert(op.object);
    if (objects.size() == 1) {
      std::vector<const Resolved*> all;
      for (const Resolved& op : ops) all.push_back(&op);
      // A batch of several items (a transaction) in one object is one atomic op, but a
      // snapshot reads its items one by one: it must not read between them.
      std::unique_lock<std::shared_mutex> exclusive(applying_, std::defer_lock);
      if (homes.size() > 1) exclusive.lock();
      apply(*objects.begin(), all, {});
      return;
    }
    std::set<ObjectRef> primary;
    for (const Resolved& op : ops) {
      if (!op.maintenance) primary.insert(op.object);
    }
    if (primary.size() > 1) {
      write_transaction(ops);
      return;
    }
    // The partition's object keeps the outbox entry, even when only maintenance changes.
    const ObjectRef home = !primary.empty() ? *primary.begin()
                           : !homes.empty() ? homes.front()
                                            : ops.front().object;
    std::vector<const Resolved*> own, maintenance;
    for (const Resolved& op : ops) {
      (op.maintenance || !(op.object == home) ? maintenance : own).push_back(&op);
    }
    // (With no maintenance, every op is in `home`: written above as one object's op.)
    std::unique_lock<std::shared_mutex> exclusive(applying_, std::defer_lock);
    if (homes.size() > 1) exclusive.lock();
    const std::uint64_t sequence = begin_record();
    std::string entry = kOutboxPrefix;
    put_u64(&entry, sequence);
    apply(home, own, {{entry, encode_ops(maintenance)}});
    apply_all(maintenance);
    remove_entry_later(home, entry, sequence);
  }

  std::unique_ptr<Snapshot> snapshot() override {
    return std::make_unique<RadosSnapshot>(applying_);
  }

  std::unique_ptr<Iterator> iterator(std::string lower, std::string upper,
                                     const Snapshot*) override {
    return std::make_unique<RadosIterator>(*this, std::move(lower), std::move(upper));
  }

  void erase_range(const std::string& lower, const std::string& upper) override {
    // Whole objects go at once: a table's partitions when the range covers its counters,
    // items and indexes, its TTL schedule or stream when it covers those. (Not while a
    // partition of the table is being split.)
    std::unique_lock<std::shared_mutex> layout(layout_);
    std::vector<std::uint32_t> dropped;
    std::string at = lower;
    while (!at.empty() && static_cast<unsigned char>(at[0]) == 0 && (upper.empty() || at < upper)) {
      const std::uint32_t table = static_cast<std::uint32_t>(get_be(at, 4));
      const std::string next_table =
          table == UINT32_MAX ? std::string("\x01", 1) : table_prefix(table + 1);
      auto covers = [&](std::uint8_t from, const std::string& to) {
        const std::string begin = from == 0 ? table_prefix(table) : space_prefix(table, from);
        return lower <= begin && (upper.empty() || to <= upper);
      };
      const std::string ns = table_namespace(table);
      if (covers(0, space_prefix(table, kStreamSpace))) {
        for (const ObjectRef& object : partitions(table)) remove_object(object);
        dropped.push_back(table);
      }
      if (covers(kStreamSpace, space_prefix(table, kTtlSpace))) remove_object({ns, "stream"});
      if (covers(kTtlSpace, space_prefix(table, kTtlSpace + 1))) remove_object({ns, "ttl"});
      if (covers(kTtlSpace + 1, next_table)) remove_object({ns, "misc"});
      at = next_table;
    }
    layout.unlock();
    // Whatever is left (part of an object's keys) goes key by key.
    Storage::erase_range(lower, upper);
    layout.lock();
    for (std::uint32_t table : dropped) {
      std::string key = kMapPrefix;
      put_u32(&key, table);
      remove_keys({prefix_, kCatalogObject}, {key});
      forget_partitions(table);
    }
  }

  // The object and range of the segment of the key space that `key` lies in: the keys of
  // [key, end) that exist are all in `object` (`counters`: the table's counter space, kept
  // as deltas, which range reads skip).
  struct Place {
    ObjectRef object;
    std::string end;  // empty: no end
    bool counters = false;
    std::uint32_t table = 0;
    // For items and index entries: how many splits had been published when the place was
    // found in the map.
    std::optional<std::uint64_t> splits;
  };
  // Whether a split changed the map since `place` was found: what was read from the
  // partition may then be incomplete (the moved keys are removed from it after the new
  // map is published), so the read is done again.
  bool moved(const Place& place) {
    return place.splits && splits_published_.load(std::memory_order_acquire) != *place.splits;
  }
  Place locate(std::string_view key) {
    if (!key.empty() && static_cast<unsigned char>(key[0]) != 0) {
      // The catalog's own keys end where the reserved ones begin.
      return {{prefix_, kCatalogObject}, kReserved, false, 0, std::nullopt};
    }
    const std::uint32_t table = static_cast<std::uint32_t>(get_be(key, 4));
    const std::string ns = table_namespace(table);
    const std::string next_table =
        table == UINT32_MAX ? std::string("\x01", 1) : table_prefix(table + 1);
    const std::uint8_t space = key.size() > 4 ? static_cast<std::uint8_t>(key[4]) : 0;
    if (space == 0)
      return {{ns, "misc"}, space_prefix(table, kItemsSpace), true, table, std::nullopt};
    if (space == kItemsSpace || space == kIndexesSpace) {
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
    if (space == kStreamSpace)
      return {{ns, "stream"}, space_prefix(table, kTtlSpace), false, table, std::nullopt};
    if (space == kTtlSpace)
      return {{ns, "ttl"}, space_prefix(table, kTtlSpace + 1), false, table, std::nullopt};
    return {{ns, "misc"}, next_table, false, table, std::nullopt};
  }

  // Up to `max` entries of `object` in [from, to) (to empty: no end), in order; `more` says
  // whether entries remain past the last one returned.
  // With `keys_only`, the values are left empty (and not read).
  std::vector<std::pair<std::string, std::string>> read_range(const ObjectRef& object,
                                                              const std::string& from,
                                                              const std::string& to, unsigned max,
                                                              bool* more, bool keys_only = false) {
    std::vector<std::pair<std::string, std::string>> out;
    std::map<std::string, librados::bufferlist> first, page;
    std::set<std::string> keys;
    int r1 = 0, r2 = 0;
    bool more_keys = false;
    librados::ObjectReadOperation op;
    // omap_get_vals2 starts after its key: the first key itself is read by name.
    op.omap_get_vals_by_keys({from}, &first, &r1);
    if (keys_only) {
      op.omap_get_keys2(from, max, &keys, &more_keys, &r2);
    } else {
      op.omap_get_vals2(from, "", max, &page, &more_keys, &r2);
    }
    const int r = io(object.ns).operate(object.oid, &op, nullptr);
    *more = false;
    if (r == -ENOENT) return out;
    check(r, "range read");
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

  // The values of `keys` in `object` (those that exist).
  std::map<std::string, std::string> read_values(const ObjectRef& object,
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

  // Where a forward walk that reached `at` goes on. A walk steps through the key space
  // segment by segment; where a segment boundary opens a stretch of spaces that may all
  // be empty (the next index of a table, the next table), it jumps to the first one that
  // holds something, or to `upper`.
  // (A walk that starts at a table's own prefix stays in that table: no jump.)
  std::string skip_empty(const std::string& at, const std::string& lower,
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
      // A split moved keys meanwhile: look again.
      if (partition_starts(table) != map) return skip_empty(at, lower, upper);
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

 private:
  librados::IoCtx& io(const std::string& ns) {
    if (ns == prefix_) return catalog_io_;
    {
      // Every request looks its context up: readers do not wait for each other.
      std::shared_lock lock(io_mutex_);
      auto it = io_.find(ns);
      if (it != io_.end()) return it->second;
    }
    std::unique_lock lock(io_mutex_);
    auto it = io_.find(ns);
    if (it == io_.end()) {
      librados::IoCtx ctx;
      ctx.dup(catalog_io_);
      ctx.set_namespace(ns);
      it = io_.emplace(ns, std::move(ctx)).first;
    }
    return it->second;
  }

  std::string table_namespace(std::uint32_t table) const {
    return prefix_ + "t" + std::to_string(table);
  }

  // The start tokens of the table's partitions, in order (the first is 0); created with
  // the table's first use.
  Starts partition_starts(std::uint32_t table) {
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
      // Created once: a map already there (another process made it) wins.
      librados::ObjectWriteOperation op;
      librados::bufferlist empty, bl;
      int cmp = 0;
      op.omap_cmp({{key, {empty, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
      bl.append(value);
      op.omap_set({{key, bl}});
      const int r = catalog_io_.operate(kCatalogObject, &op);
      if (r == -ECANCELED) {
        lock.unlock();
        forget_partitions(table);
        return partition_starts(table);
      }
      check(r, "cannot store the partition map of table " + std::to_string(table));
    }
    Starts shared = std::make_shared<const std::vector<std::uint64_t>>(std::move(starts));
    maps_[table] = shared;
    return shared;
  }

  void forget_partitions(std::uint32_t table) {
    std::unique_lock lock(maps_mutex_);
    maps_.erase(table);
  }

  std::vector<ObjectRef> partitions(std::uint32_t table) {
    return partitions(table, *partition_starts(table));
  }
  std::vector<ObjectRef> partitions(std::uint32_t table, const std::vector<std::uint64_t>& starts) {
    std::vector<ObjectRef> out;
    for (std::uint64_t start : starts) out.push_back({table_namespace(table), "p" + hex16(start)});
    return out;
  }

  // Where a counter's deltas may lie: every partition of its table, or the catalog.
  std::vector<ObjectRef> counter_objects(std::string_view key) {
    const Place place = locate(key);
    if (!place.counters) return {place.object};
    return partitions(static_cast<std::uint32_t>(get_be(key, 4)));
  }

  bool read_key(const ObjectRef& object, const std::string& key, std::string* value) {
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

  // Every entry of `object` whose key starts with `prefix`, reserved ones included.
  std::vector<std::pair<std::string, std::string>> read_prefix(const ObjectRef& object,
                                                               const std::string& prefix) {
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

  // The batch's ops, each resolved to a key of an object. A counter add becomes a delta
  // key in its partition's object (or the catalog); a deleted counter, the removal of its
  // keys everywhere.
  std::vector<Resolved> resolve(const WriteBatch& batch, std::vector<ObjectRef>* group_objects) {
    std::vector<ObjectRef>& homes = *group_objects;
    for (const std::string& item : batch.groups()) homes.push_back(locate(item).object);
    std::vector<Resolved> out;
    out.reserve(batch.ops().size());
    for (const WriteBatch::Op& op : batch.ops()) {
      Place place = locate(op.key);
      if (!place.counters && op.type != WriteBatch::OpType::kAddCounter) {
        out.push_back({std::move(place.object), op.maintenance,
                       op.type == WriteBatch::OpType::kDelete, op.key, op.value});
        continue;
      }
      if (op.type == WriteBatch::OpType::kAddCounter) {
        ObjectRef object = place.object;
        if (place.counters) {
          object = op.group != WriteBatch::kNoGroup
                       ? homes[op.group]
                       : partitions(static_cast<std::uint32_t>(get_be(op.key, 4))).front();
        }
        std::string key = counter_prefix(op.key);
        key.push_back('\x01');
        put_u64(&key, instance_);
        put_u64(&key, next_delta_.fetch_add(1, std::memory_order_relaxed));
        out.push_back({std::move(object), op.maintenance, false, std::move(key),
                       encode_counter(op.delta), place.counters});
      } else if (op.type == WriteBatch::OpType::kDelete) {
        const std::string prefix = counter_prefix(op.key);
        for (const ObjectRef& object : counter_objects(op.key)) {
          for (auto& [k, v] : read_prefix(object, prefix)) {
            out.push_back({object, op.maintenance, true, std::move(k), {}});
          }
        }
      } else {
        fail("a counter is written only by add_counter");
      }
    }
    return out;
  }

  // One compound operation on `object`: its ops in order, then `extra` keys set.
  void apply(const ObjectRef& object, const std::vector<const Resolved*>& ops,
             const std::map<std::string, std::string>& extra) {
    librados::ObjectWriteOperation op;
    int deltas = 0, sets = 0;
    add_ops(&op, ops, &deltas, &sets);
    if (!extra.empty()) {
      std::map<std::string, librados::bufferlist> set;
      for (const auto& [k, v] : extra) set[k].append(v);
      op.omap_set(set);
    }
    check(io(object.ns).operate(object.oid, &op), "write");
    if (deltas > 0) note_deltas(object, deltas);
    if (sets > 0) note_growth(object, sets);
  }

  // Adds the ops to `op`: runs of sets and of removals, in order.
  // `sets`: how many keys of Kumo's space (not reserved ones) it sets.
  static void add_ops(librados::ObjectWriteOperation* op, const std::vector<const Resolved*>& ops,
                      int* deltas, int* sets) {
    std::map<std::string, librados::bufferlist> set;
    std::set<std::string> removed;
    auto flush = [&] {
      if (!set.empty()) op->omap_set(set);
      if (!removed.empty()) op->omap_rm_keys(removed);
      set.clear();
      removed.clear();
    };
    for (const Resolved* r : ops) {
      if (r->del) {
        if (!set.empty()) flush();
        removed.insert(r->key);
      } else {
        if (!removed.empty()) flush();
        set[r->key].clear();
        set[r->key].append(r->value);
        if (r->key.compare(0, kCounterPrefix.size(), kCounterPrefix) == 0) ++*deltas;
        if (r->key.compare(0, kReserved.size(), kReserved) != 0) ++*sets;
      }
    }
    flush();
  }

  // Applies ops to their objects: one compound op per object, all at once.
  void apply_all(const std::vector<const Resolved*>& ops) {
    std::map<ObjectRef, std::vector<const Resolved*>> by_object;
    for (const Resolved* op : ops) by_object[op->object].push_back(op);
    struct Pending {
      const ObjectRef* object;
      librados::ObjectWriteOperation op;
      librados::AioCompletion* done;
      int deltas = 0, sets = 0;
    };
    std::vector<Pending> pending(by_object.size());
    std::size_t i = 0;
    for (const auto& [object, object_ops] : by_object) {
      Pending& p = pending[i++];
      p.object = &object;
      add_ops(&p.op, object_ops, &p.deltas, &p.sets);
      p.done = librados::Rados::aio_create_completion();
      const int r = io(object.ns).aio_operate(object.oid, p.done, &p.op);
      if (r < 0) {
        p.done->release();
        p.done = nullptr;
        for (Pending& q : pending) {
          if (q.done) q.done->wait_for_complete(), q.done->release(), q.done = nullptr;
        }
        check(r, "write");
      }
    }
    int failed = 0;
    for (Pending& p : pending) {
      p.done->wait_for_complete();
      const int r = p.done->get_return_value();
      p.done->release();
      if (r < 0 && failed == 0) failed = r;
      if (r >= 0 && p.deltas > 0) note_deltas(*p.object, p.deltas);
      if (r >= 0 && p.sets > 0) note_growth(*p.object, p.sets);
    }
    check(failed, "write");
  }

  // Removes a done outbox entry without waiting for it: the write has been acknowledged
  // already, and an entry left by a crash is only applied once more. Its record counts as
  // in flight until the removal is durable.
  void remove_entry_later(const ObjectRef& home, const std::string& entry, std::uint64_t sequence) {
    reap_removals(false);
    std::unique_lock lock(removals_mutex_);
    Removal& removal = removals_.emplace_back();
    removal.sequence = sequence;
    removal.op.omap_rm_keys({entry});
    removal.done = librados::Rados::aio_create_completion();
    const int r = io(home.ns).aio_operate(home.oid, removal.done, &removal.op);
    if (r < 0) {
      // Not sent: the entry stays, and the next open applies it again.
      removal.done->release();
      removals_.pop_back();
      lock.unlock();
      end_record(sequence);
    }
  }

  // Forgets the removals that have completed (with `wait`, waits for all first).
  void reap_removals(bool wait) {
    std::vector<std::uint64_t> ended;
    {
      std::unique_lock lock(removals_mutex_);
      for (auto it = removals_.begin(); it != removals_.end();) {
        if (wait) it->done->wait_for_complete();
        if (!it->done->is_complete()) {
          ++it;
          continue;
        }
        it->done->release();
        ended.push_back(it->sequence);
        it = removals_.erase(it);
      }
    }
    for (std::uint64_t sequence : ended) end_record(sequence);
  }

  void remove_keys(const ObjectRef& object, const std::set<std::string>& keys) {
    librados::ObjectWriteOperation op;
    op.omap_rm_keys(keys);
    check(io(object.ns).operate(object.oid, &op), "write");
  }

  void remove_object(const ObjectRef& object) {
    const int r = io(object.ns).remove(object.oid);
    if (r != -ENOENT) check(r, "cannot remove " + object.oid);
  }

  // A batch across partitions: the record first (the commit point), then its ops.
  void write_transaction(const std::vector<Resolved>& ops) {
    std::vector<const Resolved*> all;
    for (const Resolved& op : ops) all.push_back(&op);
    const std::uint64_t sequence = begin_record();
    const std::string record = kTxnPrefix + hex16(instance_) + "." + hex16(sequence);
    {
      librados::ObjectWriteOperation op;
      librados::bufferlist bl;
      bl.append(encode_ops(all));
      op.create(true);
      op.write_full(bl);
      check(catalog_io_.operate(record, &op), "cannot write a transaction record");
    }
    {
      // No snapshot sees part of it.
      std::unique_lock lock(applying_);
      apply_all(all);
    }
    remove_object({prefix_, record});
    end_record(sequence);
  }

  // Records (outbox entries, transaction records) in flight: their delta keys may be set
  // again by a replay, so no fold may take them.
  std::uint64_t begin_record() {
    std::unique_lock lock(records_mutex_);
    const std::uint64_t sequence = next_delta_.fetch_add(1, std::memory_order_relaxed);
    records_.insert(sequence);
    return sequence;
  }
  void end_record(std::uint64_t sequence) {
    std::unique_lock lock(records_mutex_);
    records_.erase(sequence);
  }

  // Counts the delta keys written to an object; every kFoldEvery, folds its counters.
  void note_deltas(const ObjectRef& object, int deltas) {
    {
      std::unique_lock lock(mutex_);
      int& written = deltas_written_[object];
      written += deltas;
      if (written < kFoldEvery) return;
      written = 0;
    }
    fold(object);
  }

  // Sums each counter's deltas in `object` into its base key. Skips the deltas that a
  // record in flight (or any later one) set: a replay would set them again.
  void fold(const ObjectRef& object) {
    std::uint64_t horizon = UINT64_MAX;
    {
      std::unique_lock lock(records_mutex_);
      if (!records_.empty()) horizon = *records_.begin();
    }
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::map<std::string, std::pair<std::optional<std::string>, std::int64_t>> counters;
      std::set<std::string> folded;
      for (const auto& [k, v] : read_prefix(object, kCounterPrefix)) {
        // [0xFF 'c'][u16 n][n bytes of counter key][0 | 1 id]
        const std::size_t head = 4 + get_be(std::string_view(k).substr(2), 2);
        if (k.size() <= head) continue;
        const std::string counter = k.substr(0, head);
        std::int64_t value = 0;
        if (!decode_counter(v, &value)) continue;
        auto& [base, sum] = counters[counter];
        if (k[head] == '\0') {
          base = v;
          sum += value;
        } else {
          const std::string_view id = std::string_view(k).substr(head + 1);
          if (id.size() != 16) continue;
          if (get_be(id, 8) == instance_ && get_be(id.substr(8), 8) >= horizon) continue;
          folded.insert(k);
          sum += value;
        }
      }
      if (folded.empty()) return;
      librados::ObjectWriteOperation op;
      std::map<std::string, std::pair<librados::bufferlist, int>> guards;
      std::map<std::string, librados::bufferlist> set;
      for (const auto& [counter, state] : counters) {
        const std::string base_key = counter + '\0';
        guards[base_key] = {librados::bufferlist(), LIBRADOS_CMPXATTR_OP_EQ};
        if (state.first) guards[base_key].first.append(*state.first);
        set[base_key].append(encode_counter(state.second));
      }
      int cmp = 0;
      op.omap_cmp(guards, &cmp);
      op.omap_set(set);
      op.omap_rm_keys(folded);
      const int r = io(object.ns).operate(object.oid, &op);
      if (r != -ECANCELED) {
        check(r, "fold");
        return;
      }
    }
  }

  // Splits. A partition whose object holds more than partition_keys_ keys (items and
  // index entries) splits in two at the token that leaves about half of them on each side,
  // never inside one token (so never inside an item collection). The lower half keeps the
  // object (and every counter delta); the upper half moves to a new object named by its
  // first token:
  //   1. writes pause (layout_) and the partition's outbox is applied;
  //   2. the split key (the new partition's first token) is set in the partition;
  //   3. the keys from that token on are copied to the new object;
  //   4. the new map is published in the catalog: from here on the new object holds them;
  //   5. writes resume; the moved keys, then the split key, are removed from the old one.
  // A process that stops before step 4 leaves the split key, and the next open removes the
  // new object; one that stops after it, and the next open removes the moved keys
  // (finish_split). Readers never wait: a read that found its partition in the map before
  // step 4 and read it after, when keys may be gone, reads again (moved()).

  // Counts the keys set in a partition's object; once a quarter of partition_keys_ has
  // been set since its keys were last counted, it is due to be counted again.
  void note_growth(const ObjectRef& object, int sets) {
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

  // Counts the keys of the objects due and splits those that hold too many, one thread at
  // a time. Runs after a write has been applied: a split that fails is logged, never
  // reported to the write (the next open undoes or finishes it).
  void split_due() {
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
        log("the split of " + object.ns + "/" + object.oid +
            " failed; the next start finishes or undoes it");
      }
    }
  }

  // The keys of `object` below the reserved ones.
  std::uint64_t count_keys(const ObjectRef& object) {
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
        ++n;
      }
      if (keys.empty()) break;
      after = *keys.rbegin();
    }
    return n;
  }

  static std::string encode_map(const std::vector<std::uint64_t>& starts) {
    std::string out;
    for (std::uint64_t start : starts) put_u64(&out, start);
    return out;
  }

  // Stops the process as kill -9 would when KUMO_RADOS_SPLIT_FAULT names this step of a
  // split ("intent", "copy", "publish", "cleanup"), for the fault tests.
  void fault_point(const char* step) {
    if (split_fault_ == step) ::kill(::getpid(), SIGKILL);
  }

  void log(const std::string& message) {
    if (log_with) log_with(message.c_str());
  }

  void set_split_listener(SplitListener listener) override {
    std::unique_lock<std::mutex> splitting(split_mutex_);
    split_listener_ = std::move(listener);
    // The splits that the open finished were never reported: the process that made them
    // stopped first.
    for (const auto& [table, token] : finished_splits_) split_listener_(table, token);
    finished_splits_.clear();
  }

  void split_partition(std::uint32_t table, std::uint64_t token) override {
    std::unique_lock<std::mutex> splitting(split_mutex_);
    const Starts map = partition_starts(table);
    const std::uint64_t start = *(std::upper_bound(map->begin(), map->end(), token) - 1);
    if (start != token) split({table_namespace(table), "p" + hex16(start)}, token);
  }

  // Splits partition `object` at `at`, or (nullopt) where about half of its keys lie on
  // each side; false when those all have one token. Runs under split_mutex_.
  bool split(const ObjectRef& object, std::optional<std::uint64_t> at = std::nullopt) {
    const auto began = std::chrono::steady_clock::now();
    std::unique_lock<std::shared_mutex> layout(layout_);
    const auto table = static_cast<std::uint32_t>(std::stoul(object.ns.substr(prefix_.size() + 1)));
    const std::uint64_t start = std::stoull(object.oid.substr(1), nullptr, 16);
    // The stored map: a table dropped meanwhile has none, and is not split.
    std::string map_key = kMapPrefix;
    put_u32(&map_key, table);
    std::string stored;
    if (!read_key({prefix_, kCatalogObject}, map_key, &stored)) return true;
    const Starts map = partition_starts(table);
    if (encode_map(*map) != stored)
      fail("the partition map of table " + std::to_string(table) + " changed under this process");
    auto here = std::find(map->begin(), map->end(), start);
    if (here == map->end()) return true;
    const bool last = here + 1 == map->end();
    const std::uint64_t end = last ? 0 : *(here + 1);
    if (at && (*at <= start || (!last && *at >= end))) return true;
    // 1. Nothing in flight: no removal of an outbox entry, no entry left to apply.
    reap_removals(true);
    finish_split(object);
    recover_outbox(object);
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
    if (!middle) return false;
    const ObjectRef added{object.ns, "p" + hex16(*middle)};
    // 2.
    {
      std::string value;
      put_u64(&value, *middle);
      librados::ObjectWriteOperation op;
      std::map<std::string, librados::bufferlist> set;
      set[kSplitKey].append(value);
      op.omap_set(set);
      check(io(object.ns).operate(object.oid, &op), "split");
    }
    fault_point("intent");
    // 3.
    remove_object(added);
    std::set<std::string> moved_keys;
    std::map<std::string, librados::bufferlist> chunk;
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
    // 4.
    std::vector<std::uint64_t> starts = *map;
    starts.insert(std::upper_bound(starts.begin(), starts.end(), *middle), *middle);
    {
      librados::ObjectWriteOperation op;
      librados::bufferlist old_value, new_value;
      old_value.append(stored);
      new_value.append(encode_map(starts));
      int cmp = 0;
      op.omap_cmp({{map_key, {old_value, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
      op.omap_set({{map_key, new_value}});
      check(catalog_io_.operate(kCatalogObject, &op),
            "cannot publish the partition map of table " + std::to_string(table));
    }
    {
      std::unique_lock lock(maps_mutex_);
      maps_[table] = std::make_shared<const std::vector<std::uint64_t>>(starts);
    }
    splits_published_.fetch_add(1, std::memory_order_release);
    fault_point("publish");
    layout.unlock();
    if (split_listener_) split_listener_(table, *middle);
    const auto paused = std::chrono::steady_clock::now() - began;
    // 5.
    remove_moved(object, moved_keys);
    char pause[32];
    std::snprintf(pause, sizeof pause, "%.1f",
                  std::chrono::duration<double, std::milli>(paused).count());
    log("partition " + object.oid + " of table " + std::to_string(table) + " split at token " +
        hex16(*middle) + ": " + std::to_string(moved_keys.size()) + " of " +
        std::to_string(keys.size()) + " keys moved to " + added.oid + "; writes paused " + pause +
        " ms");
    return true;
  }

  // Removes moved keys from a split partition, a chunk at a time, then its split key.
  void remove_moved(const ObjectRef& object, const std::set<std::string>& keys) {
    std::set<std::string> chunk;
    for (auto it = keys.begin(); it != keys.end();) {
      chunk.insert(*it);
      if (++it == keys.end() || chunk.size() >= kSplitChunkKeys) {
        remove_keys(object, chunk);
        chunk.clear();
        fault_point("cleanup");
      }
    }
    remove_keys(object, {kSplitKey});
  }

  // Ends a split that a stopped process left in `object`: undone when its map was not
  // published (the new object removed), finished when it was (the moved keys removed).
  void finish_split(const ObjectRef& object) {
    std::string value;
    if (!read_key(object, kSplitKey, &value) || value.size() != 8) return;
    const std::uint64_t middle = get_be(value, 8);
    const auto table = static_cast<std::uint32_t>(std::stoul(object.ns.substr(prefix_.size() + 1)));
    const Starts map = partition_starts(table);
    if (!std::binary_search(map->begin(), map->end(), middle)) {
      remove_object({object.ns, "p" + hex16(middle)});
      remove_keys(object, {kSplitKey});
      return;
    }
    std::set<std::string> moved_keys;
    for (const auto& [k, v] : read_prefix(object, table_prefix(table))) {
      if (key_token(k) >= middle) moved_keys.insert(k);
    }
    remove_moved(object, moved_keys);
    if (split_listener_) {
      split_listener_(table, middle);
    } else {
      finished_splits_.emplace_back(table, middle);
    }
  }

  // Finishes what a process that stopped mid-write left: transaction records, then each
  // partition's outbox.
  void recover() {
    std::vector<std::string> records;
    for (auto it = catalog_io_.nobjects_begin(); it != catalog_io_.nobjects_end(); ++it) {
      if (it->get_oid().compare(0, kTxnPrefix.size(), kTxnPrefix) == 0) {
        records.push_back(it->get_oid());
      }
    }
    std::sort(records.begin(), records.end());
    for (const std::string& record : records) {
      librados::bufferlist bl;
      const int r = catalog_io_.read(record, bl, 0, 0);
      if (r == -ENOENT) continue;
      check(r, "cannot read transaction record " + record);
      std::vector<Resolved> ops;
      // A record that failed its write (a torn write is impossible: write_full is atomic)
      // would not decode; it was never acknowledged, so dropping it loses nothing.
      if (decode_ops(bl.to_str(), &ops)) {
        std::vector<const Resolved*> all;
        for (const Resolved& op : ops) all.push_back(&op);
        apply_all(all);
      }
      remove_object({prefix_, record});
    }
    // Outbox entries and split keys are kept by partitions, and every table with data has
    // a map. Every partition is asked at once whether it holds either.
    std::vector<ObjectRef> objects;
    for (std::uint32_t table : mapped_tables()) {
      for (const ObjectRef& object : partitions(table)) objects.push_back(object);
    }
    struct Probe {
      librados::ObjectReadOperation op;
      librados::AioCompletion* done = nullptr;
      std::map<std::string, librados::bufferlist> split, outbox;
      bool more = false;
      int r1 = 0, r2 = 0;
    };
    std::vector<Probe> probes(objects.size());
    for (std::size_t i = 0; i < objects.size(); ++i) {
      Probe& p = probes[i];
      p.op.omap_get_vals_by_keys({kSplitKey}, &p.split, &p.r1);
      p.op.omap_get_vals2("", kOutboxPrefix, 1, &p.outbox, &p.more, &p.r2);
      p.done = librados::Rados::aio_create_completion();
      check(io(objects[i].ns).aio_operate(objects[i].oid, p.done, &p.op, nullptr), "read");
    }
    std::vector<bool> split(objects.size()), outbox(objects.size());
    int failed = 0;
    for (std::size_t i = 0; i < objects.size(); ++i) {
      probes[i].done->wait_for_complete();
      const int r = probes[i].done->get_return_value();
      probes[i].done->release();
      if (r < 0 && r != -ENOENT && failed == 0) failed = r;
      split[i] = r >= 0 && !probes[i].split.empty();
      outbox[i] = r >= 0 && !probes[i].outbox.empty();
    }
    check(failed, "read");
    for (std::size_t i = 0; i < objects.size(); ++i) {
      if (split[i]) finish_split(objects[i]);
    }
    for (std::size_t i = 0; i < objects.size(); ++i) {
      if (outbox[i]) recover_outbox(objects[i]);
    }
  }

  void recover_outbox(const ObjectRef& object) {
    {
      std::set<std::string> done;
      for (const auto& [k, v] : read_prefix(object, kOutboxPrefix)) {
        std::vector<Resolved> ops;
        if (decode_ops(v, &ops)) {
          std::vector<const Resolved*> all;
          for (const Resolved& op : ops) all.push_back(&op);
          apply_all(all);
        }
        done.insert(k);
      }
      if (!done.empty()) remove_keys(object, done);
    }
  }

  // The tables that have a partition map, in order of id: every table that holds data.
  std::vector<std::uint32_t> mapped_tables() {
    std::vector<std::uint32_t> out;
    for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kMapPrefix)) {
      if (k.size() == kMapPrefix.size() + 4) {
        out.push_back(
            static_cast<std::uint32_t>(get_be(std::string_view(k).substr(kMapPrefix.size()), 4)));
      }
    }
    return out;
  }

  const std::string prefix_;  // namespace of the catalog, and start of every table's
  librados::Rados cluster_;
  bool connected_ = false;
  librados::IoCtx catalog_io_;
  std::uint64_t instance_ = 0;
  std::atomic<std::uint64_t> next_delta_{1};
  std::mutex mutex_;  // deltas_written_
  std::shared_mutex io_mutex_;
  std::unordered_map<std::string, librados::IoCtx> io_;
  std::map<ObjectRef, int> deltas_written_;
  std::shared_mutex maps_mutex_;
  std::unordered_map<std::uint32_t, Starts> maps_;
  std::mutex records_mutex_;
  std::set<std::uint64_t> records_;
  struct Removal {
    std::uint64_t sequence = 0;
    librados::ObjectWriteOperation op;
    librados::AioCompletion* done = nullptr;
  };
  std::mutex removals_mutex_;
  std::list<Removal> removals_;
  // Held exclusively while a transaction's ops are applied, shared by each snapshot.
  std::shared_mutex applying_;
  // Shared by each write, held exclusively by a split.
  std::shared_mutex layout_;
  const std::uint64_t partition_keys_;  // 0: no splits
  std::string split_fault_;
  std::map<ObjectRef, std::int64_t> growth_;  // keys set since last counted (mutex_)
  std::set<ObjectRef> due_;                   // to be counted (mutex_)
  std::atomic<bool> split_due_{false};
  std::atomic<std::uint64_t> splits_published_{0};
  std::mutex split_mutex_;  // one split at a time
  SplitListener split_listener_;
  // Splits finished at open, reported to the listener once it is set.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> finished_splits_;
};

bool RadosIterator::load_forward() {
  entries_.clear();
  at_ = 0;
  whole_ = false;
  while (!exhausted_) {
    resume_ = storage_.skip_empty(resume_, lower_, upper_);
    if (!upper_.empty() && !(resume_ < upper_)) break;
    const RadosStorage::Place place = storage_.locate(resume_);
    std::string to = place.end;
    if (!upper_.empty() && (to.empty() || upper_ < to)) to = upper_;
    bool more = false;
    if (!place.counters) {
      entries_ = storage_.read_range(place.object, resume_, to, page_, &more, keys_only_);
      page_ = std::min(page_ * 4, kPageKeys);
      if (keys_only_) objects_.assign(entries_.size(), place.object);
    }
    if (storage_.moved(place)) {
      entries_.clear();  // read again in the new map
      continue;
    }
    if (more && !entries_.empty()) {
      resume_ = entries_.back().first + '\0';
    } else if (to.empty() || to == upper_ || to == kReserved) {
      exhausted_ = true;
    } else {
      resume_ = to;
    }
    if (!entries_.empty()) return true;
  }
  exhausted_ = true;
  return false;
}

void RadosIterator::seek(std::string_view target) {
  resume_ = std::max(std::string(target), lower_);
  exhausted_ = false;
  page_ = kFirstPageKeys;
  load_forward();
}

void RadosIterator::next() {
  if (++at_ < entries_.size()) return;
  if (whole_) return;  // the backward read had everything
  load_forward();
}

void RadosIterator::load_backward(std::optional<std::string_view> last) {
  std::vector<std::pair<std::string, std::string>> all;
  std::vector<ObjectRef> objects;
  resume_ = lower_;
  exhausted_ = false;
  page_ = kPageKeys;  // it reads every key of the range
  keys_only_ = true;
  while (load_forward()) {
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (last && entries_[i].first > *last) {
        exhausted_ = true;
        break;
      }
      all.push_back(std::move(entries_[i]));
      objects.push_back(std::move(objects_[i]));
    }
  }
  keys_only_ = false;
  entries_ = std::move(all);
  objects_ = std::move(objects);
  whole_ = true;
  loaded_ = entries_.size();
  values_ = kFirstPageKeys;
  at_ = entries_.empty() ? 0 : entries_.size() - 1;
  load_values();
}

void RadosIterator::load_values() {
  while (at_ < entries_.size() && at_ < loaded_) {
    const std::size_t from = at_ + 1 >= values_ ? at_ + 1 - values_ : 0;
    values_ = std::min(values_ * 4, kPageKeys);
    std::map<ObjectRef, std::set<std::string>> wanted;
    for (std::size_t i = from; i < loaded_; ++i) wanted[objects_[i]].insert(entries_[i].first);
    std::map<ObjectRef, std::map<std::string, std::string>> found;
    for (const auto& [object, keys] : wanted) found[object] = storage_.read_values(object, keys);
    // Keep the entries whose value was found (a key missing from its object was deleted,
    // or moved by a split: read it where it is now).
    std::size_t kept = from;
    std::optional<std::size_t> stand;  // where the walk stands now
    for (std::size_t i = from; i < loaded_; ++i) {
      auto& values = found[objects_[i]];
      auto it = values.find(entries_[i].first);
      std::optional<std::string> value;
      if (it != values.end()) {
        value = std::move(it->second);
      } else {
        value = storage_.get(entries_[i].first, nullptr);
      }
      if (value) {
        entries_[kept].first = std::move(entries_[i].first);
        entries_[kept].second = std::move(*value);
        objects_[kept] = objects_[i];
        if (i <= at_) stand = kept;
        ++kept;
      }
    }
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(kept),
                   entries_.begin() + static_cast<std::ptrdiff_t>(loaded_));
    objects_.erase(objects_.begin() + static_cast<std::ptrdiff_t>(kept),
                   objects_.begin() + static_cast<std::ptrdiff_t>(loaded_));
    loaded_ = from;
    if (stand) {
      at_ = *stand;
      return;
    }
    // Every entry up to where the walk stood was gone: it stands before them.
    if (from == 0) {
      at_ = entries_.size();
      return;
    }
    at_ = from - 1;
  }
}

void RadosIterator::prev() {
  if (!whole_) {
    // Came forward: read the range up to here, then step back.
    const std::string here = entries_[at_].first;
    load_backward(here);
  }
  if (at_ == 0) {
    at_ = entries_.size();  // before the first: invalid
    return;
  }
  --at_;
  load_values();
}

}  // namespace
}  // namespace kumo::storage

extern "C" kumo::storage::Storage* kumo_open_rados(const char* pool, const char* ceph_conf,
                                                   const char* prefix,
                                                   const KumoRadosSettings* settings,
                                                   kumo_rados_fail_function fail,
                                                   kumo_rados_log_function log) {
  kumo::storage::fail_with = fail;
  kumo::storage::log_with = log;
  return new kumo::storage::RadosStorage(pool, ceph_conf, prefix, *settings);
}
