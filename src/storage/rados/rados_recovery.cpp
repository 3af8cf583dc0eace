// The RADOS back end's recovery at open: what a process that stopped mid-write left (its
// transaction records, the partitions' outbox entries and unfinished splits) is applied or
// finished.
#include "storage/rados/rados_storage.h"

#include <algorithm>
#include <cerrno>

namespace kumo::storage::rados {

void RadosStorage::recover(std::map<std::uint64_t, bool>* known) {
  std::unique_lock<std::mutex> one_at_a_time(recover_mutex_);
  // The client stays the same from each lease check to the ops sent after it (it changes
  // only under layout_ held exclusively): the ops of a front end blocklisted in between
  // are refused, not sent again on a new client.
  std::shared_lock<std::shared_mutex> layout(layout_);
  std::map<std::uint64_t, bool> found_now;
  const bool at_open = known == nullptr;
  if (at_open) known = &found_now;
  // What a front end left is finished once it is gone (its lease lapsed); what was left
  // before leases were kept, at open. At open this waits up to a lease's length for the
  // lease of a front end that left something: after kill -9 and a restart, the process
  // that stopped is gone only once its lease lapses, and its work is finished before this
  // one serves.
  auto finish = [&](std::optional<std::uint64_t> owner) {
    return owner ? owner_gone(*owner, known, at_open) : at_open;
  };
  std::vector<std::string> records;
  Io catalog = catalog_io();
  for (auto it = catalog.nobjects_begin(); it != catalog.nobjects_end(); ++it) {
    if (it->get_oid().compare(0, kTxnPrefix.size(), kTxnPrefix) == 0) {
      records.push_back(it->get_oid());
    }
  }
  std::sort(records.begin(), records.end());
  for (const std::string& record : records) {
    // kumo.txn.<16 hex digits of the instance>.<sequence>
    const std::string owner = record.substr(kTxnPrefix.size(), 16);
    if (owner.size() != 16 || owner.find_first_not_of("0123456789abcdef") != std::string::npos ||
        !finish(std::stoull(owner, nullptr, 16))) {
      continue;
    }
    finish_transaction(record);
  }
  // Outbox entries and split keys are kept by partitions, and every table with data has
  // a map. Every partition is asked at once whether it holds either.
  std::vector<ObjectRef> objects;
  for (std::uint32_t table : mapped_tables()) {
    // The stored map: other front ends may have split partitions this one never saw.
    forget_partitions(table);
    for (const ObjectRef& object : partitions(table)) objects.push_back(object);
  }
  struct Probe {
    librados::ObjectReadOperation op;
    librados::AioCompletion* done = nullptr;
    std::map<std::string, librados::bufferlist> split, outbox;
    bool more = false;
    int r1 = 0, r2 = 0;
  };
  const std::shared_ptr<Connection> on = connection();  // (held until the reads completed)
  std::vector<Probe> probes(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    Probe& p = probes[i];
    p.op.omap_get_vals_by_keys({kSplitKey}, &p.split, &p.r1);
    p.op.omap_get_vals2("", kOutboxPrefix, 1, &p.outbox, &p.more, &p.r2);
    p.done = librados::Rados::aio_create_completion();
    check(io(on, objects[i].ns).aio_operate(objects[i].oid, p.done, &p.op, nullptr), "read");
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
    if (!split[i]) continue;
    std::string value;
    if (!read_key(objects[i], kSplitKey, &value)) continue;
    // [u64 token][u64 instance], then once the split's token is chosen the partition's
    // last stream record number (before leases: the token alone)
    if (finish(value.size() >= 16 ? std::optional<std::uint64_t>(get_be(value.substr(8), 8))
                                  : std::nullopt)) {
      finish_split(objects[i]);
    }
  }
  // Every partition holds its range (those written before ranges were kept get theirs;
  // those never written are made), but a dropped table's, which are gone.
  std::set<std::uint32_t> dropped;
  for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kDroppedPrefix)) {
    if (k.size() == kDroppedPrefix.size() + 4) {
      dropped.insert(static_cast<std::uint32_t>(get_be(std::string_view(k).substr(2), 4)));
    }
  }
  for (std::uint32_t table : mapped_tables()) {
    if (at_open && !dropped.count(table)) ensure_ranges(table, *partition_starts(table));
  }
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (outbox[i]) recover_outbox(objects[i], finish);
  }
  if (at_open) {
    for (std::uint32_t table : mapped_tables()) {
      move_space(table, "stream", kStreamSpace);
      move_space(table, "ttl", kTtlSpace);
    }
  }
  // The front ends found gone have nothing left: their leases go.
  for (const auto& [owner, gone] : *known) {
    if (gone) forget_front_end(owner);
  }
}

void RadosStorage::move_space(std::uint32_t table, const std::string& oid, std::uint8_t space) {
  const ObjectRef old{table_namespace(table), oid};
  const std::string prefix = space_prefix(table, space);
  bool found = false;
  for (bool more = true; more;) {
    more = false;
    auto entries = read_range(old, prefix, space_prefix(table, space + 1), kPageKeys, &more);
    if (entries.empty()) break;
    found = true;
    std::map<ObjectRef, std::vector<Resolved>> moves;
    std::set<std::string> moved;
    for (auto& [k, v] : entries) {
      Resolved op{locate(k).object, false, false, k, std::move(v)};
      moved.insert(std::move(k));
      moves[op.object].push_back(std::move(op));
    }
    std::vector<const Resolved*> all;
    for (const auto& [object, ops] : moves) {
      for (const Resolved& op : ops) all.push_back(&op);
    }
    // (apply_all sends a key where the map puts it when a split moved it meanwhile.)
    apply_all(all);
    remove_keys(old, moved);
  }
  if (found) remove_object(old);
}

void RadosStorage::recover_outbox(const ObjectRef& object,
                                  const std::function<bool(std::optional<std::uint64_t>)>& finish) {
  {
    std::set<std::string> done;
    for (const auto& [k, v] : read_prefix(object, kOutboxPrefix)) {
      // [0xFF 'o'][u64 instance][u64 sequence] (before leases: the sequence alone)
      if (!finish(k.size() == kOutboxPrefix.size() + 16
                      ? std::optional<std::uint64_t>(get_be(std::string_view(k).substr(2), 8))
                      : std::nullopt)) {
        continue;
      }
      std::vector<Resolved> ops;
      if (decode_ops(v, &ops)) {
        std::vector<const Resolved*> all;
        for (const Resolved& op : ops) all.push_back(&op);
        apply_all(all);
      }
      done.insert(k);
    }
    // The marks of the stream record numbers the finished entries took go with them, and
    // so do the holds on their items (only now that their entries are in place).
    if (!done.empty()) {
      for (const std::string& prefix : {kStreamMarkPrefix, kHoldPrefix}) {
        for (const auto& [k, v] : read_prefix(object, prefix)) {
          if (done.count(v) && v.compare(0, kOutboxPrefix.size(), kOutboxPrefix) == 0) {
            done.insert(k);
          }
        }
      }
    }
    if (!done.empty()) remove_keys(object, done);
  }
}

std::vector<std::uint32_t> RadosStorage::mapped_tables() {
  std::vector<std::uint32_t> out;
  for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kMapPrefix)) {
    if (k.size() == kMapPrefix.size() + 4) {
      out.push_back(
          static_cast<std::uint32_t>(get_be(std::string_view(k).substr(kMapPrefix.size()), 4)));
    }
  }
  return out;
}

}  // namespace kumo::storage::rados
