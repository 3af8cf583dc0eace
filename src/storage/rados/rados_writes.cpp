// The RADOS back end's writes: a batch resolved to the objects that keep its keys, applied
// as one guarded op when it lies in one object, else its partition's op with an outbox
// entry and then its maintenance (or, across partitions, as a transaction:
// rados_transactions.cpp); expectations checked, and what failed them told apart.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <list>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/counter.h"
#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

void RadosStorage::write(const WriteBatch& batch) {
  if (!hold_file_.empty() && ::access(hold_file_.c_str(), F_OK) == 0 &&
      std::any_of(batch.definitions().begin(), batch.definitions().end(),
                  [](const std::optional<std::uint64_t>& v) { return v.has_value(); })) {
    log("a write is held before its partition op");
    while (::access(hold_file_.c_str(), F_OK) == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  await_client();
  for (int attempt = 0;; ++attempt) {
    check_lease();
    try {
      // A split waits for the writes in flight, and no write resolves to a partition
      // while it is being split.
      std::shared_lock<std::shared_mutex> layout(layout_);
      write_resolved(batch);
      break;
    } catch (const LayoutChanged& changed) {
      // Nothing was written: another front end split the partition or dropped the table.
      refresh_map(changed.table);
      if (changed.missing) {
        // The catalog this process holds is stale too (it missed the notify): the caller
        // reloads it and finds the table gone. (Not written again: with its map removed, a
        // write would make the dropped table's partitions again.)
        gone("table " + std::to_string(changed.table) + " was dropped");
      }
      // A split takes milliseconds (about a second for 100,000 keys); one whose front
      // end died is finished by the next one to open the pool.
      if (attempt >= 600)
        fail("a partition of table " + std::to_string(changed.table) + " stays frozen by a split");
      if (changed.frozen)
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(attempt + 1, 50)));
    }
  }
  if (split_due_.load(std::memory_order_relaxed)) split_due();
}

void RadosStorage::write_resolved(const WriteBatch& batch) {
  // The number of the record the write may need (an outbox entry or a transaction record)
  // is taken before its counter deltas get theirs: a fold leaves alone every delta numbered
  // at or above a record still in flight, whose replay after a crash would set it again.
  // A write that needs no record ends it when it returns; the others hand it on.
  struct Record {
    RadosStorage& storage;
    const std::uint64_t sequence;
    bool handed_on = false;
    ~Record() {
      if (!handed_on) storage.end_record(sequence);
    }
  } record{*this, begin_record()};
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
  std::map<ObjectRef, Guards> guards = expectations(batch);
  // Whether the batch expects keys of an object other than `object`.
  auto guarded_elsewhere = [&](const ObjectRef& object) {
    return std::any_of(guards.begin(), guards.end(),
                       [&](const auto& g) { return !(g.first == object); });
  };
  std::set<ObjectRef> primary;
  for (const Resolved& op : ops) {
    if (!op.maintenance) primary.insert(op.object);
  }
  // The partition's object keeps the outbox entry, even when only maintenance changes.
  const ObjectRef home = !primary.empty() ? *primary.begin()
                         : !homes.empty() ? homes.front()
                                          : ops.front().object;
  if (objects.size() == 1 && !guarded_elsewhere(*objects.begin())) {
    std::vector<const Resolved*> all;
    for (const Resolved& op : ops) all.push_back(&op);
    // A batch of several items (a transaction) in one object is one atomic op, but a
    // snapshot reads its items one by one: it must not read between them.
    std::unique_lock<std::shared_mutex> exclusive(applying_, std::defer_lock);
    if (homes.size() > 1) exclusive.lock();
    const ObjectRef& only = *objects.begin();
    apply(only, all, {}, guards[only]);
    return;
  }
  if (primary.size() > 1 || guarded_elsewhere(home)) {
    // Items of several partitions (a transaction): no one op holds them all.
    write_transaction(ops, guards, record.sequence, &record.handed_on);
    return;
  }
  std::vector<const Resolved*> own, maintenance;
  for (const Resolved& op : ops) {
    (op.maintenance || !(op.object == home) ? maintenance : own).push_back(&op);
  }
  // (With no maintenance, every op is in `home`: written above as one object's op.)
  std::unique_lock<std::shared_mutex> exclusive(applying_, std::defer_lock);
  if (homes.size() > 1) exclusive.lock();
  std::string entry = kOutboxPrefix;
  put_u64(&entry, instance_);
  put_u64(&entry, record.sequence);
  // The batch's stream records take their numbers from the partition, in its op.
  const std::vector<Resolved*> records = unnumbered(ops);
  for (const Resolved* r : records) {
    if (!(numbering_partition(r->object) == home)) {
      fail("a stream record outside its item's partition: " + r->object.oid);
    }
  }
  std::set<std::string> removed{entry};
  // The items whose GSI or TTL entries this write changes are held until they are applied
  // (kHoldPrefix). Stream records need no hold: each has a key of its own.
  std::vector<std::string> holds;
  const bool ordered = std::any_of(maintenance.begin(), maintenance.end(), [](const Resolved* r) {
    const std::uint8_t space =
        r->key.size() > 4 && r->key[0] == 0 ? static_cast<std::uint8_t>(r->key[4]) : 0;
    return space == kIndexesSpace || space == kTtlSpace;
  });
  if (ordered) {
    for (const std::string& item : batch.groups()) {
      holds.push_back(kHoldPrefix + item);
      removed.insert(holds.back());
    }
  }
  // Numbered one write at a time here: writes of this process would otherwise fail each
  // other's guards on the number (those of other processes still can).
  std::unique_lock<std::mutex> numbering_home;
  if (!records.empty()) numbering_home = numbering(home);
  for (int attempt = 0;; ++attempt) {
    std::map<std::string, std::string> extra;
    Guards home_guards = guards[home];
    std::string mark;
    if (!records.empty()) mark = number_records(home, records, entry, &extra, &home_guards);
    extra[entry] = encode_ops(maintenance);
    for (const std::string& hold : holds) extra[hold] = entry;
    check_lease();
    try {
      apply(home, own, extra, home_guards);
    } catch (const NumbersMoved&) {
      // Another write numbered records of the partition first: numbered again.
      if (attempt >= 1000) fail("the stream numbers of " + home.oid + " keep moving");
      continue;
    }
    if (!mark.empty()) removed.insert(mark);
    break;
  }
  if (!records.empty()) note_last_number(home, record_number(records.back()->key));
  if (numbering_home.owns_lock()) numbering_home.unlock();
  record.handed_on = true;  // the entry is written: it ends once it is removed
  fault_point("outbox");
  apply_all(maintenance);
  remove_entry_later(home, removed, record.sequence);
}

std::vector<Resolved> RadosStorage::resolve(const WriteBatch& batch,
                                            std::vector<ObjectRef>* group_objects) {
  std::vector<ObjectRef>& homes = *group_objects;
  // A table's map is made with its first write.
  std::optional<std::uint32_t> mapped;
  for (const WriteBatch::Op& op : batch.ops()) {
    if (op.key.size() < 4 || op.key[0] != 0) continue;
    const auto table = static_cast<std::uint32_t>(get_be(op.key, 4));
    if (mapped != table) partition_starts(table, true);
    mapped = table;
  }
  // A transaction's checked items lock their partitions: a table never written has its
  // partitions made first, as by a write.
  for (const WriteBatch::Expectation& e : batch.expectations()) {
    if (e.key.size() < 4 || e.key[0] != 0) continue;
    const auto table = static_cast<std::uint32_t>(get_be(e.key, 4));
    if (mapped != table) partition_starts(table, true);
    mapped = table;
  }
  for (const std::string& item : batch.groups()) homes.push_back(locate(item).object);
  std::vector<Resolved> out;
  out.reserve(batch.ops().size());
  for (const WriteBatch::Op& op : batch.ops()) {
    Place place = locate(op.key);
    if (op.type == WriteBatch::OpType::kDelete && place.scattered) {
      // (A record is written once: only a delete looks for it where it may be.)
      for (ObjectRef& object : holders(place, op.key)) {
        out.push_back({std::move(object), op.maintenance, true, op.key, {}});
      }
      continue;
    }
    if (!place.counters && op.type != WriteBatch::OpType::kAddCounter) {
      if (!op.maintenance && is_item_key(op.key)) {
        // A new version of the item, in the op that writes it (a deletion's stays, with
        // its time, until reclaim_tombstones finds it old enough).
        std::string version;
        put_u64(&version, instance_);
        put_u64(&version, next_version_.fetch_add(1, std::memory_order_relaxed));
        if (op.type == WriteBatch::OpType::kDelete) {
          put_u64(&version, static_cast<std::uint64_t>(now_ns()));
        }
        out.push_back({place.object, false, false, version_key(op.key), std::move(version)});
      }
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
        // The base too, read or not: a fold between this read and the removal sets it
        // from deltas read here, which the removal then finds gone.
        bool base = false;
        for (auto& [k, v] : read_prefix(object, prefix)) {
          base = base || (k.size() == prefix.size() + 1 && k.back() == '\0');
          out.push_back({object, op.maintenance, true, std::move(k), {}});
        }
        if (!base) out.push_back({object, op.maintenance, true, prefix + '\0', {}});
      }
    } else {
      fail("a counter is written only by add_counter");
    }
  }
  return out;
}

void RadosStorage::apply(const ObjectRef& object, const std::vector<const Resolved*>& ops,
                         const std::map<std::string, std::string>& extra, const Guards& guards) {
  librados::ObjectWriteOperation op;
  int cmp = 0;
  // A partition's writes hold only if its range is the one of the map they were located
  // in. (A guard on an object that does not exist fails with ENOENT: a partition is
  // created with its range, and one that is gone is not made again.)
  const std::string range = expected_range(object);
  // Located with a map older than the one that gives the range: located again.
  for (const Resolved* r : ops) {
    if (!range.empty() && !in_range(range, r->key)) throw LayoutChanged{table_of(object)};
  }
  if (!guards.empty() || !range.empty()) {
    Guards all = guards;
    if (!range.empty()) {
      auto& guard = all[kRangeKey];
      guard.first.append(range);
      guard.second = LIBRADOS_CMPXATTR_OP_EQ;
    }
    op.omap_cmp(all, &cmp);
  }
  int deltas = 0, sets = 0;
  const bool removals_only = add_ops(&op, ops, &deltas, &sets, !extra.empty());
  if (!extra.empty()) {
    std::map<std::string, librados::bufferlist> set;
    for (const auto& [k, v] : extra) set[k].append(v);
    op.omap_set(set);
  }
  const int r = io(object.ns).operate(object.oid, &op);
  if (!range.empty() && (r == -ECANCELED || (r == -ENOENT && !removals_only))) {
    check_range(object, range);
    // The range is the map's again (a split ended meanwhile): whether the item changed
    // is read; if not, the write is tried again.
    if (r == -ECANCELED) {
      check_numbers(object, guards);
      verify({{object, guards}});
      throw LayoutChanged{table_of(object)};
    }
  }
  if (r == -ECANCELED && !guards.empty()) {
    // Another front end wrote an expected key, or a transaction of one holds it.
    verify({{object, guards}});
    conflict("the item changed since it was read");
  }
  // Keys removed from an object that does not exist are gone already.
  if (!(r == -ENOENT && removals_only)) check(r, "write");
  if (deltas > 0) note_deltas(object, deltas);
  if (sets > 0) note_growth(object, sets);
}

std::map<ObjectRef, Guards> RadosStorage::expectations(const WriteBatch& batch) {
  std::map<ObjectRef, Guards> out;
  // Each partition group made with a definition version applies only while its partition
  // holds no newer one: stored < version + 1 (absent reads as empty, lower than any).
  for (std::size_t g = 0; definition_guard_ && g < batch.groups().size(); ++g) {
    const std::optional<std::uint64_t> version = batch.definitions()[g];
    if (!version || *version == UINT64_MAX) continue;
    std::string bound;
    put_u64(&bound, *version + 1);
    auto& guard = out[locate(batch.groups()[g]).object][kDefinitionKey];
    // (Two groups of one table in one partition: the lower version bounds both.)
    if (guard.first.length() == 0 || bound < guard.first.to_str()) {
      guard.first.clear();
      guard.first.append(bound);
    }
    guard.second = LIBRADOS_CMPXATTR_OP_LT;
  }
  for (const WriteBatch::Expectation& e : batch.expectations()) {
    // (Located by its own key: an expectation need not be of its partition group's item.)
    const ObjectRef object = locate(e.key).object;
    auto& guard = out[object][e.key];
    guard.second = LIBRADOS_CMPXATTR_OP_EQ;
    if (e.value) guard.first.append(*e.value);
    // No transaction of another front end holds the key: its lock is absent.
    out[object][kLockPrefix + e.key].second = LIBRADOS_CMPXATTR_OP_EQ;
    // Nor are the GSI or TTL entries of an earlier write of the item still in flight.
    if (e.key.size() > 4 && e.key[0] == 0 && static_cast<std::uint8_t>(e.key[4]) == kItemsSpace) {
      out[object][kHoldPrefix + e.key].second = LIBRADOS_CMPXATTR_OP_EQ;
    }
  }
  return out;
}

void RadosStorage::verify(const std::map<ObjectRef, Guards>& guards) {
  std::vector<std::string> locked;
  bool changed = false;
  for (const auto& [object, keys] : guards) {
    std::set<std::string> wanted;
    for (const auto& [k, g] : keys) wanted.insert(k);
    const std::map<std::string, std::string> found = read_values(object, wanted);
    for (const auto& [k, g] : keys) {
      if (k == kStreamCounterKey) continue;  // (check_numbers)
      auto it = found.find(k);
      const std::string expected = g.first.to_str();
      if (k == kDefinitionKey) {
        // The table's definition changed since the write was made: it is made again with
        // the new one, whatever else failed.
        if (it != found.end() && !(it->second < expected)) {
          stale("table " + std::to_string(table_of(object)) + " has definition version " +
                std::to_string(get_be(it->second, 8)) + " since the write was made with " +
                std::to_string(get_be(expected, 8) - 1));
        }
        continue;
      }
      if (expected.empty() ? it == found.end() : it != found.end() && it->second == expected) {
        continue;
      }
      if (k.compare(0, kLockPrefix.size(), kLockPrefix) == 0) {
        locked.push_back(k.substr(kLockPrefix.size()));
      } else {
        changed = true;
      }
    }
  }
  // A lock whose transaction has ended without removing it (its record is gone or
  // aborted: a prepare op that reached its object after the abort, or a failure while
  // the locks were released) is removed here, and the write tried again.
  if (!locked.empty()) {
    std::vector<std::string> live;
    for (const std::string& key : locked) {
      if (!break_orphaned_lock(locate(key).object, key)) live.push_back(key);
    }
    // A transaction in progress is what the client is told of, as DynamoDB does.
    if (!live.empty()) held(live);
    conflict("a lock left by an ended transaction was removed");
  }
  if (changed) conflict("the item changed since it was read");
}

bool RadosStorage::add_ops(librados::ObjectWriteOperation* op,
                           const std::vector<const Resolved*>& ops, int* deltas, int* sets,
                           bool then_set) {
  // Removing keys from an object that does not exist fails the whole op: one that also
  // sets keys (which would create it) creates it first.
  const bool removes =
      std::any_of(ops.begin(), ops.end(), [](const Resolved* r) { return r->del; });
  const bool only_removes =
      !then_set && std::all_of(ops.begin(), ops.end(), [](const Resolved* r) { return r->del; });
  if (removes && !only_removes) op->create(false);
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
      if (r->key.compare(0, kReserved.size(), kReserved) != 0 && !is_version_key(r->key)) ++*sets;
    }
  }
  flush();
  return only_removes;
}

void RadosStorage::apply_all(const std::vector<const Resolved*>& ops) {
  std::vector<const Resolved*> todo = ops;
  std::list<Resolved> relocated;  // ops sent again to where their keys live now
  for (int attempt = 0; !todo.empty(); ++attempt) {
    // A front end paused past its lease has its work finished by another: applied late,
    // an op could undo a newer write's. (One paused right after this check is blocklisted
    // by the front end that takes its work over: its ops are refused then.)
    check_lease();
    fault_point("maintenance");
    if (attempt > 600) fail("a partition stays frozen by a split");
    std::map<ObjectRef, std::vector<const Resolved*>> by_object;
    for (const Resolved* op : todo) {
      // A key located with an older map (an outbox entry, or a split since) goes where the
      // map now puts it, which is where a range guard is compared.
      const std::string range = expected_range(op->object);
      if (!range.empty() && !in_range(range, op->key)) {
        Resolved& copy = relocated.emplace_back(*op);
        copy.object = locate(copy.key).object;
        by_object[copy.object].push_back(&copy);
      } else {
        by_object[op->object].push_back(op);
      }
    }
    todo.clear();
    struct Pending {
      const ObjectRef* object = nullptr;
      const std::vector<const Resolved*>* ops = nullptr;
      librados::ObjectWriteOperation op;
      librados::AioCompletion* done = nullptr;
      int deltas = 0, sets = 0, cmp = 0;
      std::string range;  // a partition's, as the map gave it
      bool removals_only = false;
    };
    // (The client is held until every op sent on it completed.)
    const std::shared_ptr<Connection> on = connection();
    std::vector<Pending> pending(by_object.size());
    std::size_t i = 0;
    for (const auto& [object, object_ops] : by_object) {
      Pending& p = pending[i++];
      p.object = &object;
      p.ops = &object_ops;
      // As in apply(): a partition's keys are written only where its range is the map's.
      p.range = expected_range(object);
      if (!p.range.empty()) {
        librados::bufferlist range;
        range.append(p.range);
        p.op.omap_cmp({{kRangeKey, {range, LIBRADOS_CMPXATTR_OP_EQ}}}, &p.cmp);
      }
      p.removals_only = add_ops(&p.op, object_ops, &p.deltas, &p.sets);
      p.done = librados::Rados::aio_create_completion();
      const int r = io(on, object.ns).aio_operate(object.oid, p.done, &p.op);
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
    bool frozen = false;
    // Every op has completed before any result is looked at (which may throw): none may
    // write into `pending` after it is gone.
    std::vector<int> results;
    for (Pending& p : pending) {
      p.done->wait_for_complete();
      results.push_back(p.done->get_return_value());
      p.done->release();
    }
    for (std::size_t j = 0; j < pending.size(); ++j) {
      Pending& p = pending[j];
      int r = results[j];
      if (r == -ENOENT && p.removals_only) r = 0;  // the keys are gone already
      if (!p.range.empty() && (r == -ECANCELED || r == -ENOENT)) {
        try {
          check_range(*p.object, p.range);
          todo.insert(todo.end(), p.ops->begin(), p.ops->end());  // the range is back
        } catch (const LayoutChanged& changed) {
          // A dropped table's maintenance goes with it. A split partition's keys go where
          // the new map puts them (a counter's delta may stay in any partition).
          if (!changed.missing) {
            refresh_map(changed.table);
            frozen = frozen || changed.frozen;
            for (const Resolved* op : *p.ops) {
              Resolved& copy = relocated.emplace_back(*op);
              // (A reserved key, such as a transaction's lock, belongs to its object.)
              if (!copy.table_counter && copy.key.compare(0, kReserved.size(), kReserved) != 0) {
                copy.object = locate(copy.key).object;
              }
              todo.push_back(&copy);
            }
          }
        }
        continue;
      }
      if (r < 0 && failed == 0) failed = r;
      if (r >= 0 && p.deltas > 0) note_deltas(*p.object, p.deltas);
      if (r >= 0 && p.sets > 0) note_growth(*p.object, p.sets);
    }
    check(failed, "write");
    if (frozen) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(attempt + 1, 50)));
  }
}

void RadosStorage::set_definition(std::uint32_t table, std::uint64_t version, bool dropped) {
  std::string value;
  put_u64(&value, version);
  librados::bufferlist bl, bound;
  bl.append(value);
  // Raised only: a later change's version, set first, stays.
  bound.append(value);
  {
    // The catalog's record first: a split that has not published its map yet then fails
    // to publish it and raises its new partition; one published before is in the map read
    // below.
    librados::ObjectWriteOperation op;
    int cmp = 0;
    op.omap_cmp({{definitions_key(table), {bound, LIBRADOS_CMPXATTR_OP_LT}}}, &cmp);
    op.omap_set({{definitions_key(table), bl}});
    const int r = catalog_io().operate(kCatalogObject, &op);
    if (r != -ECANCELED)
      check(r, "cannot set the definition version of table " + std::to_string(table));
  }
  std::set<std::uint64_t> done;
  for (int round = 0;; ++round) {
    // The stored map: partitions another front end split off are set too. A table that has
    // no partitions yet gets them now (with the version), as its first write would: a write
    // made with the old definition must not make them without it. A dropped table's are not
    // made again.
    refresh_map(table);
    const Starts starts = partition_starts(table, !dropped);
    struct Pending {
      librados::ObjectWriteOperation op;
      librados::AioCompletion* done = nullptr;
      int cmp = 0;
    };
    std::vector<std::uint64_t> todo;
    for (std::uint64_t start : *starts) {
      if (!done.count(start)) todo.push_back(start);
    }
    // A partition added to the map after this read holds the version already: its split
    // published the map only while the catalog's record (raised above) was the version it
    // gave the partition.
    if (todo.empty() || round > 100) break;
    const std::shared_ptr<Connection> on = connection();  // (held until the ops completed)
    std::vector<Pending> pending(todo.size());
    for (std::size_t i = 0; i < todo.size(); ++i) {
      Pending& p = pending[i];
      p.op.omap_cmp({{kDefinitionKey, {bound, LIBRADOS_CMPXATTR_OP_LT}}}, &p.cmp);
      p.op.omap_set({{kDefinitionKey, bl}});
      p.done = librados::Rados::aio_create_completion();
      const ObjectRef object{table_namespace(table), "p" + hex16(todo[i])};
      const int r = io(on, object.ns).aio_operate(object.oid, p.done, &p.op);
      if (r < 0) {
        p.done->release();
        p.done = nullptr;
      }
    }
    int failed = 0;
    for (Pending& p : pending) {
      if (!p.done) continue;
      p.done->wait_for_complete();
      const int r = p.done->get_return_value();
      p.done->release();
      // ECANCELED: a version as new is there; ENOENT: the partition is gone (dropped, or
      // never made for a dropped table).
      if (r < 0 && r != -ECANCELED && r != -ENOENT && failed == 0) failed = r;
    }
    check(failed, "cannot set the definition version of table " + std::to_string(table));
    done.insert(todo.begin(), todo.end());
  }
}

void RadosStorage::raise_definition(const ObjectRef& to, const std::string& value) {
  librados::ObjectWriteOperation op;
  librados::bufferlist bl;
  bl.append(value);
  int cmp = 0;
  op.omap_cmp({{kDefinitionKey, {bl, LIBRADOS_CMPXATTR_OP_LT}}}, &cmp);
  op.omap_set({{kDefinitionKey, bl}});
  const int r = io(to.ns).operate(to.oid, &op);
  if (r != -ECANCELED && r != -ENOENT) check(r, "cannot copy the definition version");
}

void RadosStorage::remove_entry_later(const ObjectRef& home, const std::set<std::string>& keys,
                                      std::uint64_t sequence) {
  reap_removals(false);
  std::unique_lock lock(removals_mutex_);
  Removal& removal = removals_.emplace_back();
  removal.sequence = sequence;
  removal.op.omap_rm_keys(keys);
  removal.done = librados::Rados::aio_create_completion();
  removal.connection = connection();
  const int r = io(removal.connection, home.ns).aio_operate(home.oid, removal.done, &removal.op);
  if (r < 0) {
    // Not sent: the entry stays, and the next open applies it again.
    removal.done->release();
    removals_.pop_back();
    lock.unlock();
    end_record(sequence);
  }
}

void RadosStorage::reap_removals(bool wait) {
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

}  // namespace kumo::storage::rados
