// The RADOS back end's stream record numbers. A stream record is numbered by its item's
// partition, in the op that makes its change durable: the op compares the partition's last
// number (kStreamCounterKey) with the one the writer expected, sets it past its records, and
// sets a mark (kStreamMarkPrefix) on the first of them. The records themselves travel as
// maintenance to the stream object of the partition (s<start>), and the mark goes with
// their outbox entry (or, for a transaction, with its apply op of the partition). So a
// reader of the partition's records reads its last number and its lowest mark in one op,
// and every record below both is in the stream object.
#include <cerrno>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "storage/rados/rados_storage.h"

namespace kumo::storage::rados {

namespace {

std::string encode_number(std::uint64_t n) {
  std::string out;
  put_u64(&out, n);
  return out;
}

// Guard value of a last number: absent before the first.
librados::bufferlist number_guard(std::uint64_t last) {
  librados::bufferlist out;
  if (last > 0) out.append(encode_number(last));
  return out;
}

// Walks the records of [lower, upper) of one stream object forward, a page at a time.
class StreamObjectIterator : public Iterator {
 public:
  StreamObjectIterator(RadosStorage& storage, ObjectRef object, std::string lower,
                       std::string upper)
      : storage_(storage),
        object_(std::move(object)),
        lower_(std::move(lower)),
        upper_(std::move(upper)) {}
  void seek(std::string_view target) override {
    resume_ = std::max(std::string(target), lower_);
    more_ = true;
    page_ = kFirstPageKeys;
    load();
  }
  void seek_to_first() override { seek(lower_); }
  void seek_for_prev(std::string_view) override { backward(); }
  void seek_to_last() override { backward(); }
  void prev() override { backward(); }
  bool valid() const override { return at_ < entries_.size(); }
  void next() override {
    if (++at_ >= entries_.size() && more_) load();
  }
  std::string_view key() const override { return entries_[at_].first; }
  std::string_view value() const override { return entries_[at_].second; }

 private:
  [[noreturn]] static void backward() {
    throw std::logic_error("a partition's stream records are read forward only");
  }
  void load() {
    entries_.clear();
    at_ = 0;
    if (!more_) return;
    bool more = false;
    entries_ = storage_.read_range(object_, resume_, upper_, page_, &more);
    page_ = std::min(page_ * 4, kPageKeys);
    more_ = more && !entries_.empty();
    if (!entries_.empty()) resume_ = entries_.back().first + std::string(1, '\0');
  }

  RadosStorage& storage_;
  ObjectRef object_;
  std::string lower_, upper_, resume_;
  std::vector<std::pair<std::string, std::string>> entries_;
  std::size_t at_ = 0;
  unsigned page_ = kFirstPageKeys;
  bool more_ = false;
};

}  // namespace

std::vector<Storage::StreamPartition> RadosStorage::stream_partitions(std::uint32_t table) {
  // The stored map: other front ends may have split partitions this one has not seen.
  refresh_map(table);
  const Starts starts = partition_starts(table);
  std::vector<StreamPartition> out;
  for (const ObjectRef& partition : partitions(table, *starts)) {
    const std::uint64_t last = read_last_number(partition);
    note_last_number(partition, last);
    out.push_back({std::stoull(partition.oid.substr(1), nullptr, 16), last});
  }
  return out;
}

namespace {

// The end of a partition's range value ([u64 start][1][u64 end], [u64 start][0][0...] for
// the last one; a frozen one's goes on with 'F' and the split's token): nullopt for 2^64.
std::optional<std::uint64_t> range_end(const std::string& range) {
  if (range.size() < 17 || range[8] == '\0') return std::nullopt;
  return get_be(std::string_view(range).substr(9), 8);
}

}  // namespace

std::uint64_t RadosStorage::stream_horizon(std::uint32_t table, std::uint64_t first_token,
                                           std::optional<std::uint64_t> end_token) {
  const ObjectRef partition{table_namespace(table), "p" + hex16(first_token)};
  std::map<std::string, librados::bufferlist> last, marks;
  int r1 = 0, r2 = 0;
  bool more = false;
  librados::ObjectReadOperation op;
  op.omap_get_vals_by_keys({kStreamCounterKey, kRangeKey}, &last, &r1);
  op.omap_get_vals2("", kStreamMarkPrefix, 1, &marks, &more, &r2);
  const int r = io(partition.ns).operate(partition.oid, &op, nullptr);
  if (r == -ENOENT) {
    // Never written; or the table was dropped, whose stream stays readable to its end
    // (its shards closed when it was dropped).
    std::string dropped_key = kDroppedPrefix, ignored;
    put_u32(&dropped_key, table);
    return read_key({prefix_, kCatalogObject}, dropped_key, &ignored) ? UINT64_MAX : 0;
  }
  check(r, "cannot read the stream numbers of " + partition.oid);
  std::uint64_t horizon = 0;
  if (!marks.empty()) {
    const std::string& mark = marks.begin()->first;
    horizon = get_be(std::string_view(mark).substr(kStreamMarkPrefix.size()), 8) - 1;
  } else if (auto it = last.find(kStreamCounterKey); it != last.end()) {
    horizon = get_be(it->second.to_str(), 8);
  }
  auto range = last.find(kRangeKey);
  if (range == last.end()) return horizon;
  std::optional<std::uint64_t> end = range_end(range->second.to_str());
  // The partitions made by splits of the range since the reader's shards were made: the
  // first of those splits (the lowest of their first numbers) ended the reader's shard.
  for (int hops = 0; end && (!end_token || *end < *end_token) && hops < 4096; ++hops) {
    const ObjectRef made{partition.ns, "p" + hex16(*end)};
    std::map<std::string, librados::bufferlist> keys;
    int rk = 0;
    librados::ObjectReadOperation read;
    read.omap_get_vals_by_keys({kBornKey, kRangeKey}, &keys, &rk);
    const int rr = io(made.ns).operate(made.oid, &read, nullptr);
    if (rr == -ENOENT) return 0;  // the table was dropped meanwhile
    check(rr, "cannot read the stream numbers of " + made.oid);
    if (auto born = keys.find(kBornKey); born != keys.end()) {
      horizon = std::min(horizon, get_be(born->second.to_str(), 8));
    }
    auto next = keys.find(kRangeKey);
    if (next == keys.end()) break;
    end = range_end(next->second.to_str());
  }
  return horizon;
}

std::vector<Storage::UnnotedSplit> RadosStorage::unnoted_splits() {
  std::vector<UnnotedSplit> out;
  for (const auto& [k, v] : read_prefix({prefix_, kCatalogObject}, kUnnotedPrefix)) {
    if (k.size() != kUnnotedPrefix.size() + 12 || v.size() != 8) continue;
    const std::string_view key = std::string_view(k).substr(kUnnotedPrefix.size());
    out.push_back(
        {static_cast<std::uint32_t>(get_be(key, 4)), get_be(key.substr(4), 8), get_be(v, 8)});
  }
  return out;
}

void RadosStorage::split_noted(std::uint32_t table, std::uint64_t token) {
  remove_keys({prefix_, kCatalogObject}, {unnoted_key(table, token)});
}

std::string RadosStorage::unnoted_key(std::uint32_t table, std::uint64_t token) {
  std::string key = kUnnotedPrefix;
  put_u32(&key, table);
  put_u64(&key, token);
  return key;
}

std::unique_ptr<Iterator> RadosStorage::stream_records(std::uint32_t table,
                                                       std::uint64_t first_token, std::string lower,
                                                       std::string upper) {
  return std::make_unique<StreamObjectIterator>(
      *this, ObjectRef{table_namespace(table), "s" + hex16(first_token)}, std::move(lower),
      std::move(upper));
}

std::uint64_t RadosStorage::read_last_number(const ObjectRef& partition) {
  std::string value;
  return read_key(partition, kStreamCounterKey, &value) ? get_be(value, 8) : 0;
}

std::uint64_t RadosStorage::last_number(const ObjectRef& partition) {
  {
    std::unique_lock lock(numbers_mutex_);
    auto it = last_numbers_.find(partition);
    if (it != last_numbers_.end()) return it->second;
  }
  const std::uint64_t last = read_last_number(partition);
  note_last_number(partition, last);
  return last;
}

void RadosStorage::note_last_number(const ObjectRef& partition, std::uint64_t last) {
  std::unique_lock lock(numbers_mutex_);
  std::uint64_t& known = last_numbers_[partition];
  known = std::max(known, last);
}

std::unique_lock<std::mutex> RadosStorage::numbering(const ObjectRef& partition) {
  std::mutex* mutex = nullptr;
  {
    std::unique_lock lock(numbers_mutex_);
    std::unique_ptr<std::mutex>& slot = numbering_[partition];
    if (!slot) slot = std::make_unique<std::mutex>();
    mutex = slot.get();
  }
  return std::unique_lock<std::mutex>(*mutex);
}

ObjectRef RadosStorage::numbering_partition(const ObjectRef& stream_object) {
  return {stream_object.ns, "p" + stream_object.oid.substr(1)};
}

std::vector<Resolved*> RadosStorage::unnumbered(std::vector<Resolved>& ops) {
  std::vector<Resolved*> out;
  for (Resolved& op : ops) {
    if (op.maintenance && !op.del && unnumbered_record(op.key)) out.push_back(&op);
  }
  return out;
}

std::string RadosStorage::number_records(const ObjectRef& home,
                                         const std::vector<Resolved*>& records,
                                         const std::string& entry,
                                         std::map<std::string, std::string>* extra,
                                         Guards* guards) {
  const std::uint64_t last = last_number(home);
  for (std::size_t i = 0; i < records.size(); ++i) {
    set_record_number(&records[i]->key, last + 1 + i);
  }
  (*extra)[kStreamCounterKey] = encode_number(last + records.size());
  const std::string mark = stream_mark(last + 1);
  (*extra)[mark] = entry;
  (*guards)[kStreamCounterKey] = {number_guard(last), LIBRADOS_CMPXATTR_OP_EQ};
  return mark;
}

void RadosStorage::check_numbers(const ObjectRef& object, const Guards& guards) {
  auto it = guards.find(kStreamCounterKey);
  if (it == guards.end()) return;
  const std::string expected = it->second.first.to_str();
  const std::uint64_t was = expected.empty() ? 0 : get_be(expected, 8);
  const std::uint64_t now = read_last_number(object);
  if (now == was) return;
  note_last_number(object, now);
  throw NumbersMoved{};
}

std::optional<std::uint64_t> RadosStorage::transaction_numbers(const ObjectRef& partition,
                                                               const std::string& record,
                                                               const std::string& lock,
                                                               std::size_t count, bool take,
                                                               bool look) {
  const std::string numbered = kStreamNumberedPrefix + record;
  auto numbered_before = [&]() -> std::optional<std::uint64_t> {
    std::string value;
    if (!read_key(partition, numbered, &value) || value.size() != 8) return std::nullopt;
    return get_be(value, 8);
  };
  if (look) {
    if (auto first = numbered_before()) return first;
  }
  if (!take) return std::nullopt;
  librados::bufferlist mine;
  mine.append(record);
  // A partition that holds a lock is never split (a split waits for its locks), so the op
  // needs no guard on its range: only on the lock, which the transaction's apply op of the
  // partition removes (with the mark), and on the transaction not numbered there yet.
  std::unique_lock<std::mutex> numbering_here = numbering(partition);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::uint64_t last = last_number(partition);
    librados::ObjectWriteOperation op;
    int cmp = 0;
    op.omap_cmp({{lock, {mine, LIBRADOS_CMPXATTR_OP_EQ}},
                 {kStreamCounterKey, {number_guard(last), LIBRADOS_CMPXATTR_OP_EQ}},
                 {numbered, {librados::bufferlist(), LIBRADOS_CMPXATTR_OP_EQ}}},
                &cmp);
    std::map<std::string, librados::bufferlist> set;
    set[kStreamCounterKey].append(encode_number(last + count));
    set[stream_mark(last + 1)].append(record);
    set[numbered].append(encode_number(last + 1));
    op.omap_set(set);
    const int r = io(partition.ns).operate(partition.oid, &op);
    if (r == -ECANCELED) {
      // Numbered meanwhile by another front end applying it too, or applied already.
      if (auto first = numbered_before()) return first;
      std::string held;
      if (!read_key(partition, lock, &held) || held != record) return std::nullopt;
      note_last_number(partition, read_last_number(partition));
      continue;
    }
    check(r, "cannot number the stream records of a transaction");
    note_last_number(partition, last + count);
    return last + 1;
  }
  fail("the stream numbers of " + partition.oid + " keep moving");
}

}  // namespace kumo::storage::rados
