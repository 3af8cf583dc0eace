// The RADOS back end's transactions: a batch that spans partitions (TransactWriteItems,
// ExecuteTransaction), which no single RADOS op can apply, across front ends that share
// the pool.
//
// 1. The record `kumo.txn.<instance>.<sequence>` is written (exclusive create): the ops as
//    its data, its state P (pending) and the locks it will take.
// 2. Prepare: for each object holding items the batch expects, one op compares those
//    items with the values read (and their locks absent) and sets a lock on each, naming
//    the record. When one fails, the record goes to A (aborted), the locks taken are
//    released, and the caller learns why: another transaction holds an item
//    (TransactionConflict, which DynamoDB reports as such), an item changed (WriteConflict:
//    the engine reads again), or the partition moved (LayoutChanged).
// 3. Commit point: the record goes from P to C in one guarded op. A front end that finds
//    the record of a front end whose lease lapsed aborts it if pending (its guard on P
//    makes the owner's commit fail), and applies it if committed.
// 4. Apply: every op, and the locks' removal, object by object; then the record goes.
//
// A single-item write compares the item's lock absent, so it never overwrites an item a
// transaction holds: it gets TransactionConflict, as DynamoDB's writes do. Reads do not
// look at locks: a transaction changes nothing before its commit point, and its items are
// applied before it is acknowledged. TransactGetItems reads its items with their versions,
// then confirms each version unchanged and each item unlocked (confirm_reads).
#include <cerrno>
#include <chrono>
#include <list>
#include <thread>

#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

namespace {

const std::string kPending = "P", kCommitted = "C", kAborted = "A";

bool is_lock(const std::string& key) {
  return key.compare(0, kLockPrefix.size(), kLockPrefix) == 0;
}

// Whether a guard's key is one the transaction locks: not a lock itself, nor the
// partition's definition version (compared, never held).
bool locked_by_guard(const std::string& key) {
  return !is_lock(key) && key != kDefinitionKey;
}

// Sends `op` to its object without waiting for it; *done is null when it could not be sent
// (the result says why).
int send(librados::IoCtx&& io, const std::string& oid, librados::ObjectWriteOperation* op,
         librados::AioCompletion** done) {
  *done = librados::Rados::aio_create_completion();
  const int r = io.aio_operate(oid, *done, op);
  if (r < 0) {
    (*done)->release();
    *done = nullptr;
  }
  return r;
}

// Waits for an op that send() sent, and returns its result (`sent`, send()'s, when it was
// not sent).
int wait(librados::AioCompletion** done, int sent) {
  if (*done == nullptr) return sent;
  (*done)->wait_for_complete();
  const int r = (*done)->get_return_value();
  (*done)->release();
  *done = nullptr;
  return r;
}

std::vector<const Resolved*> pointers(const std::vector<Resolved>& ops) {
  std::vector<const Resolved*> out;
  out.reserve(ops.size());
  for (const Resolved& op : ops) out.push_back(&op);
  return out;
}

}  // namespace

void RadosStorage::write_transaction(const std::vector<Resolved>& ops,
                                     const std::map<ObjectRef, Guards>& guards,
                                     std::uint64_t sequence, bool* held_on) {
  const std::string record = kTxnPrefix + hex16(instance_) + "." + hex16(sequence);
  // One lock per expected item, in the object of its guard; released as its object's ops
  // are applied.
  std::vector<Resolved> locks;
  for (const auto& [object, keys] : guards) {
    for (const auto& [k, g] : keys) {
      if (locked_by_guard(k)) locks.push_back({object, false, true, kLockPrefix + k, {}});
    }
  }
  std::vector<const Resolved*> all = pointers(ops);
  {
    librados::ObjectWriteOperation op;
    librados::bufferlist data;
    data.append(encode_ops(all));
    op.create(true);
    op.write_full(data);
    std::map<std::string, librados::bufferlist> keys;
    // A batch that expects nothing takes no lock, and is committed from the start.
    keys[kTxnStateKey].append(locks.empty() ? kCommitted : kPending);
    keys[kTxnLocksKey].append(encode_ops(pointers(locks)));
    op.omap_set(keys);
    check(catalog_io().operate(record, &op), "cannot write a transaction record");
  }
  try {
    if (!locks.empty()) {
      fault_point("prepare");
      prepare(record, guards, locks);
      fault_point("prepared");
      // A front end paused past its lease may have had its record aborted by another:
      // the commit's guard on P then fails, and nothing of the batch is applied.
      check_lease();
      const int r = end_pending(record, kCommitted);
      if (r == -ECANCELED || r == -ENOENT) {
        fail("the transaction was aborted by another front end while this one was stopped");
      }
      check(r, "cannot commit a transaction record");
    }
  } catch (...) {
    // (Thrown by kumo's runtime: only `...` catches it here.) A failed prepare has ended
    // its record; anything else (the lease check, the commit op) may leave it pending,
    // with its locks: this front end ends it later.
    leave(record, std::nullopt);
    throw;
  }
  // Committed: from here on, a failure leaves the record, which this front end finishes
  // later (or another, once this one's lease lapses, or the next open).
  *held_on = true;
  fault_point("transaction");
  try {
    // No snapshot of this process sees part of it.
    std::unique_lock lock(applying_);
    apply_transaction(record, ops, locks, true);
  } catch (...) {
    leave(record, sequence);
    throw;
  }
  remove_object({prefix_, record});
  end_record(sequence);
}

void RadosStorage::apply_transaction(const std::string& record, const std::vector<Resolved>& ops,
                                     const std::vector<Resolved>& locks, bool fresh) {
  if (locks.empty()) {
    // (A batch with stream records holds their items: numbered under its locks, below.)
    for (const Resolved& op : ops) {
      if (!op.del && unnumbered_record(op.key)) fail("stream records of no held item");
    }
    apply_all(pointers(ops));
    return;
  }
  // Each object holding locks gets its own ops and the locks' removal in one op guarded on
  // the locks still naming this record: applied once, whoever applies it (a record
  // replayed after its owner stopped midway skips the objects done). The maintenance ops
  // (GSI entries, stream records, TTL entries: in other objects) go first, all of them,
  // while every item is still locked, so that no newer write of an item can come between:
  // a lock gone means they were all applied.
  std::map<ObjectRef, std::vector<const Resolved*>> locked;
  std::vector<const Resolved*> maintenance, loose;
  std::vector<Resolved> records;  // the stream records, numbered below
  for (const Resolved& l : locks) locked[l.object];
  for (const Resolved& op : ops) {
    // (Told by its key: a record read back from the transaction record keeps no
    // maintenance mark.)
    if (!op.del && unnumbered_record(op.key)) {
      records.push_back(op);
    } else if (op.maintenance) {
      maintenance.push_back(&op);
    } else if (locked.count(op.object)) {
      locked[op.object].push_back(&op);
    } else {
      loose.push_back(&op);
    }
  }
  for (const Resolved& l : locks) locked[l.object].push_back(&l);
  std::set<ObjectRef> todo;
  for (const auto& [object, object_ops] : locked) {
    if (fresh || holds_lock(object, locks, record)) todo.insert(object);
  }
  if (todo.empty()) return;
  const bool whole = todo.size() == locked.size();
  // Each partition numbers its records once, while the transaction holds it (a replay
  // finds the numbers by their mark there); the mark goes with the partition's apply op.
  std::list<Resolved> marks;
  std::map<ObjectRef, std::vector<Resolved*>> by_partition;
  for (Resolved& r : records) by_partition[numbering_partition(r.object)].push_back(&r);
  for (auto& [partition, partition_records] : by_partition) {
    if (!todo.count(partition)) continue;  // applied, its records before it
    const Resolved* lock = nullptr;
    for (const Resolved& l : locks) {
      if (l.object == partition) lock = &l;
    }
    if (!lock) fail("a stream record outside the partitions its transaction holds");
    const std::optional<std::uint64_t> first =
        transaction_numbers(partition, record, lock->key, partition_records.size(), whole, !fresh);
    if (!first) continue;  // applied meanwhile by another front end
    for (std::size_t n = 0; n < partition_records.size(); ++n) {
      set_record_number(&partition_records[n]->key, *first + n);
    }
    marks.push_back({partition, false, true, stream_mark(*first), {}});
    locked[partition].push_back(&marks.back());
    marks.push_back({partition, false, true, kStreamNumberedPrefix + record, {}});
    locked[partition].push_back(&marks.back());
  }
  if (whole) {
    for (const Resolved& r : records) {
      if (!unnumbered_record(r.key)) maintenance.push_back(&r);
    }
    apply_all(maintenance);
    apply_all(loose);
  }
  librados::bufferlist mine;
  mine.append(record);
  for (int attempt = 0; !todo.empty(); ++attempt) {
    check_lease();
    if (attempt > 600) fail("a partition stays frozen by a split");
    struct Pending {
      ObjectRef object;
      librados::ObjectWriteOperation op;
      librados::AioCompletion* done = nullptr;
      int deltas = 0, sets = 0, cmp = 0, result = 0;
      std::string range;
    };
    const std::shared_ptr<Connection> on = connection();  // (held until the ops completed)
    std::vector<Pending> pending(todo.size());
    std::size_t i = 0;
    for (const ObjectRef& object : todo) {
      Pending& p = pending[i++];
      p.object = object;
      Guards guards;
      for (const Resolved* op : locked[object]) {
        if (op->key.compare(0, kLockPrefix.size(), kLockPrefix) == 0) {
          guards[op->key] = {mine, LIBRADOS_CMPXATTR_OP_EQ};
        }
      }
      p.range = expected_range(object);
      if (!p.range.empty()) {
        librados::bufferlist range;
        range.append(p.range);
        guards[kRangeKey] = {range, LIBRADOS_CMPXATTR_OP_EQ};
      }
      p.op.omap_cmp(guards, &p.cmp);
      add_ops(&p.op, locked[object], &p.deltas, &p.sets);
      p.result = send(io(on, object.ns), object.oid, &p.op, &p.done);
    }
    for (Pending& p : pending) p.result = wait(&p.done, p.result);
    int failed = 0;
    bool frozen = false;
    for (Pending& p : pending) {
      if (p.result >= 0) {
        if (p.deltas > 0) note_deltas(p.object, p.deltas);
        if (p.sets > 0) note_growth(p.object, p.sets);
        todo.erase(p.object);
      } else if (p.result == -ENOENT) {
        todo.erase(p.object);  // the table was dropped
      } else if (p.result == -ECANCELED) {
        if (!holds_lock(p.object, locks, record)) {
          todo.erase(p.object);  // applied already, by another front end
        } else {
          // Its range differs from the map's: frozen by a split, which finds the locks and
          // thaws it, or this front end's map is older than the partition (a replay, after
          // another front end split it before the transaction): written again then.
          frozen = true;
          try {
            check_range(p.object, p.range);
          } catch (const LayoutChanged& changed) {
            if (!changed.frozen) refresh_map(changed.table);
          }
        }
      } else if (failed == 0) {
        failed = p.result;
      }
    }
    check(failed, "cannot apply a transaction");
    if (frozen) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(attempt + 1, 50)));
  }
}

bool RadosStorage::holds_lock(const ObjectRef& object, const std::vector<Resolved>& locks,
                              const std::string& record) {
  // All the record's locks in one object are set, and removed, by one op: one tells.
  for (const Resolved& l : locks) {
    if (!(l.object == object)) continue;
    std::string value;
    return read_key(object, l.key, &value) && value == record;
  }
  return false;
}

bool RadosStorage::break_orphaned_lock(const ObjectRef& object, const std::string& item) {
  const std::string key = kLockPrefix + item;
  std::string record;
  if (!read_key(object, key, &record)) return true;  // gone meanwhile
  // A record is created before its locks and removed after them: a lock whose record is
  // gone, or aborted, is left over.
  {
    std::map<std::string, librados::bufferlist> out;
    librados::ObjectReadOperation op;
    int rv = 0;
    op.omap_get_vals_by_keys({kTxnStateKey}, &out, &rv);
    const int r = catalog_io().operate(record, &op, nullptr);
    if (r != -ENOENT) {
      check(r, "read");
      auto it = out.find(kTxnStateKey);
      if (it == out.end() || it->second.to_str() != kAborted) return false;
    }
  }
  release_locks(record, {{object, false, true, key, {}}});
  return true;
}

void RadosStorage::leave(const std::string& record, std::optional<std::uint64_t> sequence) {
  std::unique_lock lock(leftovers_mutex_);
  leftovers_.emplace_back(record, sequence);
}

void RadosStorage::finish_leftovers() {
  std::vector<std::pair<std::string, std::optional<std::uint64_t>>> todo;
  {
    std::unique_lock lock(leftovers_mutex_);
    todo.swap(leftovers_);
  }
  for (std::size_t i = 0; i < todo.size(); ++i) {
    try {
      finish_transaction(todo[i].first);
      if (todo[i].second) end_record(*todo[i].second);
    } catch (...) {
      // (Thrown by kumo's runtime.) Tried again next time.
      std::unique_lock lock(leftovers_mutex_);
      leftovers_.insert(leftovers_.end(), todo.begin() + static_cast<std::ptrdiff_t>(i),
                        todo.end());
      throw;
    }
  }
}

int RadosStorage::end_pending(const std::string& record, const std::string& state) {
  librados::ObjectWriteOperation op;
  librados::bufferlist pending, ended;
  pending.append(kPending);
  ended.append(state);
  int cmp = 0;
  op.omap_cmp({{kTxnStateKey, {pending, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
  op.omap_set({{kTxnStateKey, ended}});
  return catalog_io().operate(record, &op);
}

void RadosStorage::prepare(const std::string& record, const std::map<ObjectRef, Guards>& guards,
                           const std::vector<Resolved>& locks) {
  struct Pending {
    const ObjectRef* object = nullptr;
    const Guards* keys = nullptr;
    librados::ObjectWriteOperation op;
    librados::AioCompletion* done = nullptr;
    int cmp = 0;
    int result = 0;
    std::string range;  // a partition's, as the map gave it
  };
  const std::shared_ptr<Connection> on = connection();  // (held until the ops completed)
  std::vector<Pending> pending(guards.size());
  std::size_t i = 0;
  for (const auto& [object, keys] : guards) {
    Pending& p = pending[i++];
    p.object = &object;
    p.keys = &keys;
    Guards all = keys;
    // As every write to a partition: only where its range is the map's.
    p.range = expected_range(object);
    if (!p.range.empty()) {
      auto& guard = all[kRangeKey];
      guard.first.append(p.range);
      guard.second = LIBRADOS_CMPXATTR_OP_EQ;
    }
    p.op.omap_cmp(all, &p.cmp);
    std::map<std::string, librados::bufferlist> set;
    for (const auto& [k, g] : keys) {
      if (locked_by_guard(k)) set[kLockPrefix + k].append(record);
    }
    p.op.omap_set(set);
    p.result = send(io(on, object.ns), object.oid, &p.op, &p.done);
  }
  // Every op has completed before any result is looked at.
  for (Pending& p : pending) p.result = wait(&p.done, p.result);
  const bool prepared =
      std::all_of(pending.begin(), pending.end(), [](const Pending& p) { return p.result >= 0; });
  if (prepared) return;
  // Aborted: no front end may take the record for a pending one and commit it (only its
  // owner commits), and the locks taken go.
  {
    // (Guarded on P: a front end that found this one's lease lapsed may have aborted and
    // removed the record already.)
    const int r = end_pending(record, kAborted);
    if (r != -ECANCELED && r != -ENOENT) check(r, "cannot abort a transaction record");
  }
  release_locks(record, locks);
  remove_object({prefix_, record});
  // Why: the first failed object's reason.
  for (const Pending& p : pending) {
    if (p.result >= 0) continue;
    if (!p.range.empty() && (p.result == -ECANCELED || p.result == -ENOENT)) {
      check_range(*p.object, p.range);  // throws LayoutChanged when the partition moved
    }
    if (p.result == -ECANCELED) verify({{*p.object, *p.keys}});
    if (p.result != -ECANCELED) check(p.result, "cannot prepare a transaction");
  }
  // The guards hold again (the other transaction ended meanwhile): the caller retries.
  conflict("an item of the transaction changed since it was read");
}

void RadosStorage::release_locks(const std::string& record, const std::vector<Resolved>& locks) {
  // One op per lock, guarded on its value: a lock that is not there (never taken, or
  // released already) or that names another transaction stays as it is.
  struct Pending {
    librados::ObjectWriteOperation op;
    librados::AioCompletion* done = nullptr;
    int cmp = 0, result = 0;
  };
  const std::shared_ptr<Connection> on = connection();  // (held until the ops completed)
  std::vector<Pending> pending(locks.size());
  for (std::size_t i = 0; i < locks.size(); ++i) {
    Pending& p = pending[i];
    librados::bufferlist mine;
    mine.append(record);
    p.op.omap_cmp({{locks[i].key, {mine, LIBRADOS_CMPXATTR_OP_EQ}}}, &p.cmp);
    p.op.omap_rm_keys({locks[i].key});
    p.result = send(io(on, locks[i].object.ns), locks[i].object.oid, &p.op, &p.done);
  }
  int failed = 0;
  for (Pending& p : pending) {
    const int r = wait(&p.done, p.result);
    if (r < 0 && r != -ECANCELED && r != -ENOENT && failed == 0) failed = r;
  }
  check(failed, "cannot release the locks of a transaction");
}

void RadosStorage::finish_transaction(const std::string& record) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    librados::ObjectReadOperation read;
    librados::bufferlist data;
    std::map<std::string, librados::bufferlist> keys;
    int r1 = 0, r2 = 0;
    read.read(0, 0, &data, &r1);
    read.omap_get_vals_by_keys({kTxnStateKey, kTxnLocksKey}, &keys, &r2);
    const int r = catalog_io().operate(record, &read, nullptr);
    if (r == -ENOENT) return;
    check(r, "cannot read transaction record " + record);
    std::vector<Resolved> locks;
    if (keys.count(kTxnLocksKey)) decode_ops(keys[kTxnLocksKey].to_str(), &locks);
    const std::string state = keys.count(kTxnStateKey) ? keys[kTxnStateKey].to_str() : kCommitted;
    if (state == kPending) {
      // Its owner is gone before its commit point: aborted, unless it commits first (the
      // owner's commit and this abort are both guarded on P).
      const int w = end_pending(record, kAborted);
      if (w == -ECANCELED) continue;  // committed meanwhile: read again
      if (w == -ENOENT) return;
      check(w, "cannot abort transaction record " + record);
    }
    if (state == kPending || state == kAborted) {
      release_locks(record, locks);
    } else {
      std::vector<Resolved> ops;
      // A record that failed its write (a torn write is impossible: write_full is atomic)
      // would not decode; it was never acknowledged, so dropping it loses nothing.
      if (decode_ops(data.to_str(), &ops)) apply_transaction(record, ops, locks, false);
    }
    remove_object({prefix_, record});
    return;
  }
  fail("transaction record " + record + " keeps changing");
}

RadosStorage::Decided RadosStorage::decided(const std::string& record, std::string_view key,
                                            std::optional<std::string>* value) {
  librados::ObjectReadOperation read;
  librados::bufferlist data;
  std::map<std::string, librados::bufferlist> keys;
  int r1 = 0, r2 = 0;
  read.read(0, 0, &data, &r1);
  read.omap_get_vals_by_keys({kTxnStateKey}, &keys, &r2);
  const int r = catalog_io().operate(record, &read, nullptr);
  if (r == -ENOENT) return Decided::kEnded;
  check(r, "cannot read transaction record " + record);
  const std::string state = keys.count(kTxnStateKey) ? keys[kTxnStateKey].to_str() : kCommitted;
  // Before its commit point (or aborted) the transaction has changed nothing yet.
  if (state != kCommitted) return Decided::kStands;
  std::vector<Resolved> ops;
  if (!decode_ops(data.to_str(), &ops)) return Decided::kStands;
  for (const Resolved& op : ops) {
    if (op.maintenance || op.key != key) continue;
    *value = op.del ? std::nullopt : std::optional<std::string>(op.value);
    return Decided::kByRecord;
  }
  return Decided::kStands;  // only checked by it (a ConditionCheck)
}

bool RadosStorage::confirm_reads(const std::vector<Read>& reads) {
  // A read with a version is compared by it: every write of an item sets a version no
  // write set before, so an item found with the version it was read with was not written
  // in between, even if it was changed and changed back (which a comparison of values
  // would let pass as one moment that never was).
  auto compared = [](const Read& read) {
    return read.version && is_item_key(read.key) ? version_key(read.key) : read.key;
  };
  auto expected = [](const Read& read) {
    if (!read.version || !is_item_key(read.key)) return read.value;
    return read.version->empty() ? std::nullopt : std::optional<std::string>(*read.version);
  };
  std::map<ObjectRef, std::vector<const Read*>> by_object;
  for (const Read& read : reads) by_object[locate(read.key).object].push_back(&read);
  std::vector<std::string> locked;
  bool same = true;
  for (const auto& [object, object_reads] : by_object) {
    std::set<std::string> wanted;
    for (const Read* read : object_reads) {
      wanted.insert(compared(*read));
      wanted.insert(kLockPrefix + read->key);
    }
    const std::string range = expected_range(object);
    if (!range.empty()) wanted.insert(kRangeKey);
    const std::map<std::string, std::string> found = read_values(object, wanted);
    if (!range.empty()) {
      auto at = found.find(kRangeKey);
      if (at != found.end() && !range_fits(at->second, range)) {
        // Split meanwhile: read again with the new map.
        refresh_map(table_of(object));
        return false;
      }
    }
    for (const Read* read : object_reads) {
      if (found.count(kLockPrefix + read->key)) locked.push_back(read->key);
      auto it = found.find(compared(*read));
      const std::optional<std::string> was = expected(*read);
      const bool present = it != found.end();
      if (present != was.has_value() || (present && it->second != *was)) same = false;
    }
    fault_point("confirm");  // (between two objects' confirmations)
  }
  if (!locked.empty()) held(locked);
  return same;
}

}  // namespace kumo::storage::rados
