// The RADOS back end's counters, kept as deltas: a counter's value is the sum of its delta
// keys in every partition of its table (or in the catalog), each object's deltas folded
// into one base key now and then; and the records in flight (outbox entries, transaction
// records), whose deltas no fold may take, since a replay would set them again. Each front
// end folds its own deltas, and those of front ends gone and taken over.
#include "storage/counter.h"
#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

namespace {

// Delta keys written to one object between two folds of its counters.
constexpr int kFoldEvery = 256;

}  // namespace

std::int64_t RadosStorage::get_counter(std::string_view key) {
  const std::string prefix = counter_prefix(key);
  auto sum_of = [&](const std::vector<ObjectRef>& objects) {
    std::int64_t sum = 0;
    for (const ObjectRef& object : objects) {
      for (const auto& [k, v] : read_prefix(object, prefix)) {
        std::int64_t delta = 0;
        if (!decode_counter(v, &delta)) fail("counter value is not 8 bytes");
        sum += delta;
      }
    }
    return sum;
  };
  const Place place = locate(key);
  if (!place.counters) return sum_of({place.object});
  // A table's counter is the sum over every partition, those another front end made by a
  // split since this one's map was loaded included: the map summed over is checked against
  // the stored one afterwards, and the sum taken again over a newer one.
  const auto table = static_cast<std::uint32_t>(get_be(key, 4));
  for (int attempt = 0;; ++attempt) {
    const Starts map = partition_starts(table);
    const std::int64_t sum = sum_of(partitions(table, *map));
    if (map_current(table, map) || attempt >= 8) return sum;
  }
}

std::vector<ObjectRef> RadosStorage::counter_objects(std::string_view key) {
  const Place place = locate(key);
  if (!place.counters) return {place.object};
  return partitions(static_cast<std::uint32_t>(get_be(key, 4)));
}

std::uint64_t RadosStorage::begin_record() {
  std::unique_lock lock(records_mutex_);
  const std::uint64_t sequence = next_delta_.fetch_add(1, std::memory_order_relaxed);
  records_.insert(sequence);
  return sequence;
}

void RadosStorage::end_record(std::uint64_t sequence) {
  std::unique_lock lock(records_mutex_);
  records_.erase(sequence);
}

void RadosStorage::note_deltas(const ObjectRef& object, int deltas) {
  {
    std::unique_lock lock(mutex_);
    int& written = deltas_written_[object];
    written += deltas;
    if (written < kFoldEvery) return;
    written = 0;
  }
  fold(object);
}

void RadosStorage::fold(const ObjectRef& object) {
  std::uint64_t horizon = UINT64_MAX;
  {
    std::unique_lock lock(records_mutex_);
    if (!records_.empty()) horizon = *records_.begin();
  }
  // Another front end's records in flight are not known here: its deltas are left to it
  // while it is listed (alive, or gone and not yet taken over; a takeover replays its
  // records before it unlists it), and folded by anyone after.
  std::set<std::uint64_t> others;
  for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kFrontEndPrefix)) {
    if (k.size() == kFrontEndPrefix.size() + 8) others.insert(get_be(k.substr(2), 8));
  }
  const std::uint64_t self = instance_;
  others.erase(self);
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::map<std::string, std::pair<std::optional<std::string>, std::int64_t>> counters;
    std::set<std::string> folded;
    // The op holds only if every delta it folds is still there: a counter deleted meanwhile
    // (its deltas and base removed) must not come back as the base the fold sets.
    std::map<std::string, std::pair<librados::bufferlist, int>> guards;
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
        const std::uint64_t writer = get_be(id, 8);
        if (writer == self && get_be(id.substr(8), 8) >= horizon) continue;
        if (others.count(writer)) continue;
        folded.insert(k);
        guards[k].first.append(v);
        guards[k].second = LIBRADOS_CMPXATTR_OP_EQ;
        sum += value;
      }
    }
    if (folded.empty()) return;
    librados::ObjectWriteOperation op;
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

}  // namespace kumo::storage::rados
