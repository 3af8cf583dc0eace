// The RADOS back end's recovery at open: what a process that stopped mid-write left (its
// transaction records, the partitions' outbox entries and unfinished splits) is applied or
// finished.
#include "storage/rados/rados_storage.h"

#include <algorithm>
#include <cerrno>

namespace kumo::storage::rados {

void RadosStorage::recover() {
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
  // Every partition holds its range (those written before ranges were kept get theirs;
  // those never written are made), but a dropped table's, which are gone.
  std::set<std::uint32_t> dropped;
  for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kDroppedPrefix)) {
    if (k.size() == kDroppedPrefix.size() + 4) {
      dropped.insert(static_cast<std::uint32_t>(get_be(std::string_view(k).substr(2), 4)));
    }
  }
  for (std::uint32_t table : mapped_tables()) {
    if (!dropped.count(table)) ensure_ranges(table, *partition_starts(table));
  }
  for (std::size_t i = 0; i < objects.size(); ++i) {
    if (outbox[i]) recover_outbox(objects[i]);
  }
  for (std::uint32_t table : mapped_tables()) {
    move_space(table, "stream", kStreamSpace);
    move_space(table, "ttl", kTtlSpace);
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
    for (const auto& [object, ops] : moves) {
      std::vector<const Resolved*> all;
      for (const Resolved& op : ops) all.push_back(&op);
      apply(object, all, {});
    }
    remove_keys(old, moved);
  }
  if (found) remove_object(old);
}

void RadosStorage::recover_outbox(const ObjectRef& object) {
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
