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
// applied before it is acknowledged. TransactGetItems reads its items, then confirms each
// unchanged and unlocked (confirm_reads).
#include <cerrno>

#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

namespace {

const std::string kPending = "P", kCommitted = "C", kAborted = "A";

bool is_lock(const std::string& key) {
  return key.compare(0, kLockPrefix.size(), kLockPrefix) == 0;
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
      if (!is_lock(k)) locks.push_back({object, false, true, kLockPrefix + k, {}});
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
    check(catalog_io_.operate(record, &op), "cannot write a transaction record");
  }
  if (!locks.empty()) {
    fault_point("prepare");
    prepare(record, guards, locks);
    fault_point("prepared");
    // A front end paused past its lease may have had its record aborted by another: the
    // commit's guard on P then fails, and nothing of the batch is applied.
    check_lease();
    librados::ObjectWriteOperation op;
    librados::bufferlist pending, committed;
    pending.append(kPending);
    committed.append(kCommitted);
    int cmp = 0;
    op.omap_cmp({{kTxnStateKey, {pending, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
    op.omap_set({{kTxnStateKey, committed}});
    const int r = catalog_io_.operate(record, &op);
    if (r == -ECANCELED || r == -ENOENT) {
      fail("the transaction was aborted by another front end while this one was stopped");
    }
    check(r, "cannot commit a transaction record");
  }
  // Committed: from here on, a failure leaves the record, which a front end applies once
  // this one's lease lapses, or the next open does.
  *held_on = true;
  fault_point("transaction");
  {
    // No snapshot sees part of it.
    std::unique_lock lock(applying_);
    std::vector<const Resolved*> apply = all;
    for (const Resolved& l : locks) apply.push_back(&l);
    apply_all(apply);
  }
  remove_object({prefix_, record});
  end_record(sequence);
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
      if (!is_lock(k)) set[kLockPrefix + k].append(record);
    }
    p.op.omap_set(set);
    p.done = librados::Rados::aio_create_completion();
    p.result = io(object.ns).aio_operate(object.oid, p.done, &p.op);
    if (p.result < 0) {
      p.done->release();
      p.done = nullptr;
    }
  }
  // Every op has completed before any result is looked at.
  for (Pending& p : pending) {
    if (!p.done) continue;
    p.done->wait_for_complete();
    p.result = p.done->get_return_value();
    p.done->release();
    p.done = nullptr;
  }
  const bool prepared =
      std::all_of(pending.begin(), pending.end(), [](const Pending& p) { return p.result >= 0; });
  if (prepared) return;
  // Aborted: no front end may take the record for a pending one and commit it (only its
  // owner commits), and the locks taken go.
  {
    // (Guarded on P: a front end that found this one's lease lapsed may have aborted and
    // removed the record already.)
    librados::ObjectWriteOperation op;
    librados::bufferlist pending, aborted;
    pending.append(kPending);
    aborted.append(kAborted);
    int cmp = 0;
    op.omap_cmp({{kTxnStateKey, {pending, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
    op.omap_set({{kTxnStateKey, aborted}});
    const int r = catalog_io_.operate(record, &op);
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
    int cmp = 0;
  };
  std::vector<Pending> pending(locks.size());
  int failed = 0;
  for (std::size_t i = 0; i < locks.size(); ++i) {
    Pending& p = pending[i];
    librados::bufferlist mine;
    mine.append(record);
    p.op.omap_cmp({{locks[i].key, {mine, LIBRADOS_CMPXATTR_OP_EQ}}}, &p.cmp);
    p.op.omap_rm_keys({locks[i].key});
    p.done = librados::Rados::aio_create_completion();
    const int r = io(locks[i].object.ns).aio_operate(locks[i].object.oid, p.done, &p.op);
    if (r < 0) {
      p.done->release();
      p.done = nullptr;
      if (failed == 0) failed = r;
    }
  }
  for (Pending& p : pending) {
    if (!p.done) continue;
    p.done->wait_for_complete();
    const int r = p.done->get_return_value();
    p.done->release();
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
    const int r = catalog_io_.operate(record, &read, nullptr);
    if (r == -ENOENT) return;
    check(r, "cannot read transaction record " + record);
    std::vector<Resolved> locks;
    if (keys.count(kTxnLocksKey)) decode_ops(keys[kTxnLocksKey].to_str(), &locks);
    const std::string state = keys.count(kTxnStateKey) ? keys[kTxnStateKey].to_str() : kCommitted;
    if (state == kPending) {
      // Its owner is gone before its commit point: aborted, unless it commits first (the
      // owner's commit and this abort are both guarded on P).
      librados::ObjectWriteOperation op;
      librados::bufferlist pending, aborted;
      pending.append(kPending);
      aborted.append(kAborted);
      int cmp = 0;
      op.omap_cmp({{kTxnStateKey, {pending, LIBRADOS_CMPXATTR_OP_EQ}}}, &cmp);
      op.omap_set({{kTxnStateKey, aborted}});
      const int w = catalog_io_.operate(record, &op);
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
      if (decode_ops(data.to_str(), &ops)) {
        std::vector<const Resolved*> all = pointers(ops);
        for (const Resolved& l : locks) all.push_back(&l);
        apply_all(all);
      }
    }
    remove_object({prefix_, record});
    return;
  }
  fail("transaction record " + record + " keeps changing");
}

bool RadosStorage::confirm_reads(const std::vector<Read>& reads) {
  std::map<ObjectRef, std::vector<const Read*>> by_object;
  for (const Read& read : reads) by_object[locate(read.first).object].push_back(&read);
  std::vector<std::string> locked;
  bool same = true;
  for (const auto& [object, object_reads] : by_object) {
    std::set<std::string> wanted;
    for (const Read* read : object_reads) {
      wanted.insert(read->first);
      wanted.insert(kLockPrefix + read->first);
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
      if (found.count(kLockPrefix + read->first)) locked.push_back(read->first);
      auto it = found.find(read->first);
      const bool present = it != found.end();
      if (present != read->second.has_value() || (present && it->second != *read->second)) {
        same = false;
      }
    }
  }
  if (!locked.empty()) held(locked);
  return same;
}

}  // namespace kumo::storage::rados
