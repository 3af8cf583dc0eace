#include "engine/change_stream.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>
#include <tuple>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/catalog.h"
#include "engine/record_fields.h"
#include "model/clock.h"

namespace kumo::engine {
namespace {

constexpr std::string_view kStreamPrefix = "meta/stream/";
constexpr std::string_view kSequenceKey = "meta/stream_sequence";
// Times a change of a stream is tried against other front ends' changes of it.
constexpr int kStreamChangeAttempts = 16;
// Sequence numbers reserved at once.
constexpr std::uint64_t kSequenceBlock = 1000;
// Sequence numbers are written as "1" followed by 20 digits: 21 digits, the shortest
// length DynamoDB's model allows, and ordered as numbers and as strings alike.
constexpr std::size_t kSequenceDigits = 20;

// [table id][kStream][u64 sequence]: where a table's records from `sequence` on start.
std::string record_key(std::uint32_t table_id, std::uint64_t sequence) {
  std::string key = codec::space_prefix(table_id, codec::Space::kStream);
  codec::append_u64(&key, sequence);
  return key;
}

// A record's key: [table id][kStream][u64 sequence][u64 token of its item]. The token
// places the record with its item on a back end that divides a table by token (RADOS).
// Records written before their keys carried it have keys of the sequence alone.
std::string record_key(std::uint32_t table_id, std::uint64_t sequence, std::uint64_t token) {
  std::string key = record_key(table_id, sequence);
  codec::append_u64(&key, token);
  return key;
}

// The sequence number of a record's key, with or without its token.
std::uint64_t key_sequence(std::string_view key) {
  return codec::read_u64(key.substr(codec::space_prefix(0, codec::Space::kStream).size()));
}

// Record value: [event][flags][u64 created ms][u64 token, when flagged][u32 size + item]*
// for the keys, then the new image and the old image when the flags say they are there.
enum Flags : std::uint8_t { kByService = 1, kHasNew = 2, kHasOld = 4, kHasToken = 8 };

// Records of other shards a read passes at most (per record it may return) before it
// answers with what it has: a shard's reader then goes on from there.
constexpr std::size_t kPassedPerRecord = 16;

void append_item(std::string* out, const Item& item) {
  std::string encoded = codec::encode_item(item);
  codec::append_u32(out, static_cast<std::uint32_t>(encoded.size()));
  out->append(encoded);
}

bool read_item(std::string_view* in, Item* out) {
  if (in->size() < 4) return false;
  std::uint32_t size = 0;
  for (int i = 0; i < 4; ++i) size = (size << 8) | static_cast<unsigned char>((*in)[i]);
  in->remove_prefix(4);
  if (in->size() < size || !codec::decode_item(in->substr(0, size), out)) return false;
  in->remove_prefix(size);
  return true;
}

std::string encode_record(const StreamRecord& r) {
  std::string out;
  out.push_back(static_cast<char>(r.event));
  out.push_back(static_cast<char>((r.by_service ? kByService : 0) | (r.new_image ? kHasNew : 0) |
                                  (r.old_image ? kHasOld : 0) | (r.token ? kHasToken : 0)));
  codec::append_u64(&out, static_cast<std::uint64_t>(r.created_ms));
  if (r.token) codec::append_u64(&out, *r.token);
  append_item(&out, r.keys);
  if (r.new_image) append_item(&out, *r.new_image);
  if (r.old_image) append_item(&out, *r.old_image);
  return out;
}

bool decode_record(std::string_view in, StreamRecord* r) {
  if (in.size() < 10) return false;
  r->event = static_cast<StreamEvent>(in[0]);
  const auto flags = static_cast<std::uint8_t>(in[1]);
  r->by_service = flags & kByService;
  r->created_ms = static_cast<std::int64_t>(codec::read_u64(in.substr(2)));
  in.remove_prefix(10);
  if (flags & kHasToken) {
    if (in.size() < 8) return false;
    r->token = codec::read_u64(in);
    in.remove_prefix(8);
  }
  if (!read_item(&in, &r->keys)) return false;
  r->size_bytes = item_size(r->keys);
  if (flags & kHasNew) {
    if (!read_item(&in, &r->new_image.emplace())) return false;
    r->size_bytes += item_size(*r->new_image);
  }
  if (flags & kHasOld) {
    if (!read_item(&in, &r->old_image.emplace())) return false;
    r->size_bytes += item_size(*r->old_image);
  }
  return true;
}

AttributeValue unum(std::uint64_t v) {
  return AttributeValue::number(Decimal::from_int(static_cast<long long>(v)));
}
std::uint64_t get_u64(const Item& m, std::string_view name) {
  auto it = m.find(name);
  if (it == m.end() || it->second.type() != AttrType::N) return 0;
  return std::stoull(it->second.as_number().to_string());
}

AttributeValue shard_token_value(std::uint64_t token) {
  std::string bytes;
  codec::append_u64(&bytes, token);
  return AttributeValue::binary(std::move(bytes));
}
std::uint64_t get_shard_token(const Item& m, std::string_view name) {
  auto it = m.find(name);
  if (it == m.end() || it->second.type() != AttrType::B || it->second.as_string().size() != 8) {
    return 0;
  }
  return codec::read_u64(it->second.as_string());
}

AttributeValue shards_value(const std::vector<StreamShard>& shards) {
  AttributeList list;
  for (const StreamShard& shard : shards) {
    Item m;
    m["index"] = unum(shard.index);
    if (shard.parent) m["parent"] = unum(*shard.parent);
    m["first_token"] = shard_token_value(shard.first_token);
    if (shard.end_token) m["end_token"] = shard_token_value(*shard.end_token);
    m["start"] = unum(shard.start);
    if (shard.end) m["end"] = unum(*shard.end);
    m["created_ms"] = unum(static_cast<std::uint64_t>(epoch_milliseconds(shard.created)));
    if (shard.trimmed_before != 0) m["trimmed_before"] = unum(shard.trimmed_before);
    list.push_back(AttributeValue::map(std::move(m)));
  }
  return AttributeValue::list(std::move(list));
}

std::vector<StreamShard> shards_from(const AttributeValue& value) {
  std::vector<StreamShard> out;
  if (value.type() != AttrType::L) return out;
  for (const AttributeValue& v : value.as_list()) {
    if (v.type() != AttrType::M) continue;
    const Item& m = v.as_map();
    StreamShard shard;
    shard.index = static_cast<std::uint32_t>(get_u64(m, "index"));
    if (m.count("parent")) shard.parent = static_cast<std::uint32_t>(get_u64(m, "parent"));
    shard.first_token = get_shard_token(m, "first_token");
    if (m.count("end_token")) shard.end_token = get_shard_token(m, "end_token");
    shard.start = get_u64(m, "start");
    if (m.count("end")) shard.end = get_u64(m, "end");
    shard.created = static_cast<double>(get_u64(m, "created_ms")) / 1000;
    shard.trimmed_before = get_u64(m, "trimmed_before");
    out.push_back(shard);
  }
  return out;
}

Item stream_record(const StreamInfo& s) {
  Item r;
  r["table_name"] = str(s.table_name);
  r["table_id"] = unum(s.table_id);
  r["label"] = str(s.label);
  r["view_type"] = str(s.view_type);
  r["key_schema"] = key_schema_value(s.key_schema);
  r["created_ms"] = unum(static_cast<std::uint64_t>(epoch_milliseconds(s.created)));
  r["start"] = unum(s.start);
  if (s.end) {
    r["end"] = unum(*s.end);
    r["closed_ms"] = unum(static_cast<std::uint64_t>(epoch_milliseconds(s.closed_at)));
  }
  r["trimmed_before"] = unum(s.trimmed_before);
  r["shards"] = shards_value(s.shards);
  if (s.numbered_by_storage) r["numbering"] = str("partition");
  return r;
}

StreamInfo stream_of_record(const Item& r) {
  StreamInfo s;
  s.table_name = get_str(r, "table_name");
  s.table_id = static_cast<std::uint32_t>(get_u64(r, "table_id"));
  s.label = get_str(r, "label");
  s.view_type = get_str(r, "view_type");
  s.key_schema = key_schema_from(r);
  s.created = static_cast<double>(get_u64(r, "created_ms")) / 1000;
  s.start = get_u64(r, "start");
  if (r.count("end")) {
    s.end = get_u64(r, "end");
    s.closed_at = static_cast<double>(get_u64(r, "closed_ms")) / 1000;
  }
  s.trimmed_before = get_u64(r, "trimmed_before");
  if (auto it = r.find("shards"); it != r.end()) s.shards = shards_from(it->second);
  s.numbered_by_storage = get_str(r, "numbering") == "partition";
  if (s.shards.empty()) {
    // Stored before streams had shards: one shard, the stream's whole range.
    StreamShard shard;
    shard.start = s.start;
    shard.end = s.end;
    shard.created = s.created;
    s.shards.push_back(shard);
  }
  return s;
}

Item keys_of(const KeySchema& key, const Item& item) {
  Item keys;
  keys.emplace(key.hash.name, item.at(key.hash.name));
  if (key.range) keys.emplace(key.range->name, item.at(key.range->name));
  return keys;
}

// The sequence number of the last of the first 1,000 records from `it`'s start that were
// made before `cutoff_ms` (none when the first is not): a trim erases up to it, then goes on
// from there.
std::optional<std::uint64_t> last_expired(storage::Iterator& it, std::int64_t cutoff_ms) {
  std::optional<std::uint64_t> last;
  std::size_t count = 0;
  for (it.seek_to_first(); it.valid() && count < 1000; it.next(), ++count) {
    StreamRecord r;
    if (decode_record(it.value(), &r) && r.created_ms >= cutoff_ms) break;
    last = key_sequence(it.key());
  }
  return last;
}

}  // namespace

std::string StreamInfo::shard_id(const StreamShard& shard) const {
  std::string identity = table_name + "/" + label;
  if (shard.index != 0) identity += "/" + std::to_string(shard.index);
  const auto suffix = static_cast<std::uint32_t>(XXH3_64bits(identity.data(), identity.size()));
  return fmt::format("shardId-{:020}-{:08x}", epoch_milliseconds(shard.created), suffix);
}

const StreamShard* StreamInfo::find_shard(std::string_view id) const {
  for (const StreamShard& shard : shards) {
    if (shard_id(shard) == id) return &shard;
  }
  return nullptr;
}

std::string stream_label(double epoch_seconds) {
  const std::int64_t ms = epoch_milliseconds(epoch_seconds);
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
}

std::string format_sequence(std::uint64_t sequence) {
  return fmt::format("1{:0{}}", sequence, kSequenceDigits);
}

std::optional<std::uint64_t> parse_sequence(std::string_view text) {
  if (text.size() != kSequenceDigits + 1 || text[0] != '1') return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

ChangeStreams::ChangeStreams(storage::Storage& storage, const Clock& clock, double retention)
    : storage_(storage), clock_(clock), retention_(retention) {
  reserved_ = static_cast<std::uint64_t>(storage_.get_counter(kSequenceKey));
  next_sequence_ = reserved_ + 1;
  MutexLock lock(mutex_);
  load();
}

void ChangeStreams::load() {
  streams_.clear();
  open_.clear();
  stored_.clear();
  std::string lower(kStreamPrefix);
  auto it = storage_.iterator(lower, codec::prefix_end(lower));
  for (it->seek_to_first(); it->valid(); it->next()) {
    Item record;
    if (!codec::decode_item(it->value(), &record)) {
      throw storage::StorageError("corrupt stream record: " + std::string(it->key()));
    }
    StreamInfo stream = stream_of_record(record);
    const std::string key = meta_key(stream);
    if (stream.open()) open_[stream.table_id] = key;
    stored_[key] = std::string(it->value());
    streams_.emplace(key, std::move(stream));
  }
}

void ChangeStreams::reload() {
  MutexLock lock(mutex_);
  load();
}

std::string ChangeStreams::meta_key(const StreamInfo& stream) {
  return std::string(kStreamPrefix) + stream.table_name + "/" + stream.label;
}

void ChangeStreams::store(const StreamInfo& stream, storage::WriteBatch* batch) const {
  const std::string key = meta_key(stream);
  auto it = stored_.find(key);
  batch->expect(key, it == stored_.end() ? std::nullopt : std::optional<std::string>(it->second));
  batch->put(key, codec::encode_item(stream_record(stream)));
}

bool ChangeStreams::change(std::string key, const std::function<bool(StreamInfo&)>& change_stream) {
  for (int attempt = 0;; ++attempt) {
    auto it = streams_.find(key);
    if (it == streams_.end()) return false;
    StreamInfo stream = it->second;
    if (!change_stream(stream)) return false;
    storage::WriteBatch batch;
    store(stream, &batch);
    try {
      storage_.write(batch);
    } catch (const storage::WriteConflict&) {
      // Another front end changed the stream (split a shard of it, closed or trimmed it)
      // since it was loaded here: loaded again, and changed again.
      if (attempt + 1 >= kStreamChangeAttempts) throw;
      load();
      continue;
    }
    stored_[key] = batch.ops().back().value;
    if (stream.open()) {
      open_[stream.table_id] = key;
    } else if (auto o = open_.find(stream.table_id); o != open_.end() && o->second == key) {
      open_.erase(o);
    }
    it->second = std::move(stream);
    return true;
  }
}

void ChangeStreams::held(const Guard& guard) const {
  if (&guard.streams_ != this) throw std::logic_error("a guard of other change streams");
}

bool ChangeStreams::empty(const Guard& guard) const {
  held(guard);
  return streams_.empty();
}

const StreamInfo* ChangeStreams::active(const Guard& guard, std::uint32_t table_id) const {
  held(guard);
  auto it = open_.find(table_id);
  return it == open_.end() ? nullptr : &streams_.at(it->second);
}

std::string ChangeStreams::free_label(const Guard& guard, std::string_view table_name,
                                      std::string label) const {
  held(guard);
  auto taken = [&](const std::string& l) KUMO_REQUIRES(mutex_) {
    return streams_.count(std::string(kStreamPrefix) + std::string(table_name) + "/" + l) > 0;
  };
  while (taken(label)) {
    std::tm tm{};
    int ms = 0;
    if (std::sscanf(label.c_str(), "%d-%d-%dT%d:%d:%d.%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
      break;  // not a label this code wrote
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    label = stream_label(static_cast<double>(timegm(&tm)) + (ms + 1) / 1000.0);
  }
  return label;
}

void ChangeStreams::open(const Guard& guard, const TableDefinition& table, double now) {
  held(guard);
  close(guard, table.id, now);
  StreamInfo stream;
  stream.table_name = table.name;
  stream.table_id = table.id;
  stream.label = table.latest_stream_label;
  stream.view_type = table.stream->view_type;
  stream.key_schema = table.key.elements();
  stream.created = now;
  if (storage_.shared()) {
    // One shard per partition, each starting after its partition's last number.
    stream.numbered_by_storage = true;
    const std::vector<storage::Storage::StreamPartition> parts =
        storage_.stream_partitions(table.id);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      StreamShard shard;
      shard.index = static_cast<std::uint32_t>(i);
      shard.first_token = parts[i].first_token;
      if (i + 1 < parts.size()) shard.end_token = parts[i + 1].first_token;
      shard.start = parts[i].last + 1;
      shard.created = now;
      stream.shards.push_back(shard);
    }
    stream.start = stream.shards.front().start;
    for (const StreamShard& shard : stream.shards)
      stream.start = std::min(stream.start, shard.start);
  } else {
    stream.start = next_sequence_;
    StreamShard shard;
    shard.start = stream.start;
    shard.created = now;
    stream.shards.push_back(shard);
  }
  stream.trimmed_before = stream.start;
  const std::string key = meta_key(stream);
  // A new stream: stored where none is (expected absent).
  streams_[key] = std::move(stream);
  try {
    change(key, [](StreamInfo&) { return true; });
  } catch (...) {
    streams_.erase(key);
    throw;
  }
}

void ChangeStreams::close(const Guard& guard, std::uint32_t table_id, double now) {
  held(guard);
  auto it = open_.find(table_id);
  if (it == open_.end()) return;
  // On shared storage each open shard ends at its partition's last number: a record another
  // process numbers after that, not yet knowing of the close, is past the stream's end.
  // The unnoted splits are read before the partitions and again after them, until no split
  // was published in between: the partition of such a split is among those read, with its
  // records numbered since, but its shard would not be split, and they would be no shard's.
  // (A split published after the second read is after the close's reads, and its
  // partitions' numbers are past the ends.)
  std::vector<storage::Storage::UnnotedSplit> unnoted;
  std::map<std::uint64_t, std::uint64_t> last_numbers;  // first token → last number
  if (storage_.shared()) {
    auto table_splits = [&] {
      std::vector<storage::Storage::UnnotedSplit> out;
      for (const auto& split : storage_.unnoted_splits()) {
        if (split.table == table_id) out.push_back(split);
      }
      std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return std::tie(a.last, a.token) < std::tie(b.last, b.token);
      });
      return out;
    };
    unnoted = table_splits();
    for (int attempt = 0;; ++attempt) {
      last_numbers.clear();
      for (const auto& part : storage_.stream_partitions(table_id)) {
        last_numbers[part.first_token] = part.last;
      }
      std::vector<storage::Storage::UnnotedSplit> after = table_splits();
      // A split noted meanwhile is gone from the list; its shards are split in the stored
      // stream, which change() loads when this copy is stale.
      const bool published = std::any_of(after.begin(), after.end(), [&](const auto& split) {
        return std::none_of(unnoted.begin(), unnoted.end(), [&](const auto& known) {
          return known.token == split.token && known.last == split.last;
        });
      });
      if (!published) break;
      if (attempt + 1 >= kStreamChangeAttempts) {
        throw storage::StorageError("the table's partitions keep splitting during the close");
      }
      // Kept with those noted meanwhile (split_shard() passes over a shard split already).
      for (const auto& split : after) {
        if (std::none_of(unnoted.begin(), unnoted.end(), [&](const auto& known) {
              return known.token == split.token && known.last == split.last;
            })) {
          unnoted.push_back(split);
        }
      }
      std::sort(unnoted.begin(), unnoted.end(), [](const auto& a, const auto& b) {
        return std::tie(a.last, a.token) < std::tie(b.last, b.token);
      });
    }
  }
  change(it->second, [&](StreamInfo& stream) KUMO_REQUIRES(mutex_) {
    if (!stream.open()) return false;
    if (stream.numbered_by_storage) {
      // The splits whose shards are not split yet are first: a shard ends at the number of
      // the partition that starts where it does, and reads that partition's records only.
      for (const auto& split : unnoted) split_shard(stream, split.token, now, split.last);
      std::uint64_t end = stream.start;
      for (StreamShard& shard : stream.shards) {
        if (!shard.open()) continue;
        auto last = last_numbers.find(shard.first_token);
        shard.end =
            last == last_numbers.end() ? shard.start - 1 : std::max(last->second, shard.start - 1);
        end = std::max(end, *shard.end);
      }
      stream.end = end;
      stream.closed_at = now;
      return true;
    }
    // Every record of the stream is committed: records are written under the mutex. A
    // stream that got none still ends at its start, and that number is used up, so that
    // a later stream of the table never overlaps it.
    if (next_sequence_ == stream.start) take_sequence();
    stream.end = next_sequence_ - 1;
    stream.closed_at = now;
    for (StreamShard& shard : stream.shards) {
      if (shard.open()) shard.end = stream.end;
    }
    return true;
  });
}

bool ChangeStreams::split(const Guard& guard, std::uint32_t table_id, std::uint64_t token,
                          double now, std::optional<std::uint64_t> last) {
  held(guard);
  auto it = open_.find(table_id);
  if (it == open_.end()) return false;
  return change(it->second, [&](StreamInfo& stream) KUMO_REQUIRES(mutex_) {
    return split_shard(stream, token, now, last);
  });
}

bool ChangeStreams::split_shard(StreamInfo& stream, std::uint64_t token, double now,
                                std::optional<std::uint64_t> last) {
  auto parent = std::find_if(stream.shards.begin(), stream.shards.end(),
                             [&](const StreamShard& s) { return s.open() && s.holds(token); });
  if (parent == stream.shards.end() || parent->first_token == token) return false;
  if (stream.numbered_by_storage) {
    // The partition's last number when it split; both halves number from after it. (A
    // split that the storage made before the stream opened ends an empty shard.) Only
    // the storage's split, which gives that number, splits such a shard.
    if (!last) return false;
    parent->end = std::max(*last, parent->start - 1);
  } else {
    // As when a stream closes: a shard that got no record still ends at its start,
    // which is used up.
    if (next_sequence_ == parent->start) take_sequence();
    parent->end = next_sequence_ - 1;
  }
  StreamShard low, high;
  low.index = static_cast<std::uint32_t>(stream.shards.size());
  high.index = low.index + 1;
  low.parent = high.parent = parent->index;
  low.first_token = parent->first_token;
  low.end_token = high.first_token = token;
  high.end_token = parent->end_token;
  low.start = high.start = *parent->end + 1;
  low.created = high.created = now;
  stream.shards.push_back(low);
  stream.shards.push_back(high);
  return true;
}

void ChangeStreams::add_record(const Guard& guard, const StreamInfo& stream, const KeySchema& key,
                               const std::optional<Item>& old_item,
                               const std::optional<Item>& new_item, bool by_service,
                               storage::WriteBatch* batch, std::vector<std::uint64_t>* written) {
  held(guard);
  if (!old_item && !new_item) return;
  if (old_item && new_item && *old_item == *new_item) return;  // nothing changed
  StreamRecord r;
  r.event = !old_item   ? StreamEvent::kInsert
            : !new_item ? StreamEvent::kRemove
                        : StreamEvent::kModify;
  r.by_service = by_service;
  r.created_ms = clock_.now_ns() / 1000000;
  r.keys = keys_of(key, new_item ? *new_item : *old_item);
  std::string partition;
  codec::append_key_value(&partition, r.keys.at(key.hash.name));
  r.token = codec::token(partition);
  const std::string& view = stream.view_type;
  if (new_item && (view == "NEW_IMAGE" || view == "NEW_AND_OLD_IMAGES")) r.new_image = *new_item;
  if (old_item && (view == "OLD_IMAGE" || view == "NEW_AND_OLD_IMAGES")) r.old_image = *old_item;
  if (stream.numbered_by_storage) {
    // Numbered by the storage as it writes the batch (0: the number it fills in).
    batch->maintain_put(record_key(stream.table_id, 0, *r.token), encode_record(r));
    return;
  }
  const std::uint64_t sequence = take_sequence();
  writing_.insert(sequence);
  written->push_back(sequence);
  batch->maintain_put(record_key(stream.table_id, sequence, *r.token), encode_record(r));
}

std::vector<StreamInfo> ChangeStreams::list(std::optional<std::string_view> table_name) const {
  MutexLock lock(mutex_);
  std::vector<StreamInfo> out;
  for (const auto& [key, stream] : streams_) {
    if ((!table_name || stream.table_name == *table_name) && !expired(stream)) {
      out.push_back(stream);
    }
  }
  // By table name, then label ("a-b" sorts after "a" although their keys sort the other way).
  std::sort(out.begin(), out.end(), [](const StreamInfo& a, const StreamInfo& b) {
    return std::tie(a.table_name, a.label) < std::tie(b.table_name, b.label);
  });
  return out;
}

std::optional<StreamInfo> ChangeStreams::find(std::string_view table_name, std::string_view label) {
  const std::string key =
      std::string(kStreamPrefix) + std::string(table_name) + "/" + std::string(label);
  // (Read before the lock, which this process's writes take.)
  const std::optional<std::string> stored =
      storage_.shared() ? storage_.get(key) : std::optional<std::string>();
  MutexLock lock(mutex_);
  if (storage_.shared()) {
    auto known = stored_.find(key);
    if (stored != (known == stored_.end() ? std::nullopt : std::optional(known->second))) load();
  }
  auto it = streams_.find(key);
  if (it == streams_.end() || expired(it->second)) return std::nullopt;
  return it->second;
}

bool ChangeStreams::expired(const StreamInfo& stream) const {
  return !stream.open() && stream.closed_at < clock_.now() - retention_;
}

std::uint64_t ChangeStreams::next_sequence() const {
  MutexLock lock(mutex_);
  return next_sequence_;
}

std::uint64_t ChangeStreams::take_sequence() {
  if (next_sequence_ > reserved_) {
    storage::WriteBatch batch;
    batch.add_counter(std::string(kSequenceKey),
                      static_cast<std::int64_t>(next_sequence_ - 1 + kSequenceBlock - reserved_));
    storage_.write(batch);
    reserved_ = next_sequence_ - 1 + kSequenceBlock;
  }
  return next_sequence_++;
}

void ChangeStreams::done(const std::vector<std::uint64_t>& written) {
  if (written.empty()) return;
  MutexLock lock(mutex_);
  for (std::uint64_t sequence : written) {
    auto it = writing_.find(sequence);
    if (it != writing_.end()) writing_.erase(it);
  }
}

std::uint64_t ChangeStreams::horizon_locked() const {
  return writing_.empty() ? next_sequence_ - 1 : *writing_.begin() - 1;
}

std::uint64_t ChangeStreams::horizon() const {
  MutexLock lock(mutex_);
  return horizon_locked();
}

std::uint64_t ChangeStreams::horizon(const StreamInfo& stream, const StreamShard& shard) const {
  if (!stream.numbered_by_storage) return horizon();
  return storage_.stream_horizon(stream.table_id, shard.first_token, shard.end_token);
}

StreamPage ChangeStreams::read(const StreamInfo& stream, const StreamShard& shard,
                               std::uint64_t from, std::size_t limit, std::size_t max_bytes) const {
  StreamPage page;
  from = std::max(from, shard.start);
  page.next = from;
  // Nothing past the horizon: a record below it may still be being written.
  const std::uint64_t end = shard.end ? *shard.end : UINT64_MAX - 1;
  const std::uint64_t last = std::min(end, horizon(stream, shard));
  if (from > last) return page;
  // A shard numbered by the storage reads only its partition's records.
  auto it = stream.numbered_by_storage
                ? storage_.stream_records(stream.table_id, shard.first_token,
                                          record_key(stream.table_id, from),
                                          record_key(stream.table_id, last + 1))
                : storage_.iterator(record_key(stream.table_id, from),
                                    record_key(stream.table_id, last + 1));
  std::size_t bytes = 0, passed = 0;
  const std::size_t max_passed = std::max<std::size_t>(limit, 64) * kPassedPerRecord;
  for (it->seek_to_first(); it->valid() && page.records.size() < limit; it->next()) {
    StreamRecord r;
    if (!decode_record(it->value(), &r)) {
      throw storage::StorageError("corrupt stream record of table " + stream.table_name);
    }
    const std::uint64_t sequence = key_sequence(it->key());
    // A record without a token was written when every stream had one shard.
    if (r.token ? !shard.holds(*r.token) : shard.index != 0) {
      page.next = sequence + 1;
      if (++passed == max_passed) return page;
      continue;
    }
    // A page holds at least one record, and never passes max_bytes with a second one.
    if (!page.records.empty() && bytes + r.size_bytes > max_bytes) return page;
    r.sequence = sequence;
    r.view_type = stream.view_type;
    bytes += r.size_bytes;
    page.next = r.sequence + 1;
    page.records.push_back(std::move(r));
  }
  // Every record of a closed shard is read: the reader is past its end (the last numbers
  // of the range may belong to other tables).
  if (!it->valid() && shard.end && last == *shard.end) page.next = *shard.end + 1;
  return page;
}

std::map<std::uint32_t, std::uint64_t> ChangeStreams::trim_in_order(
    const std::set<std::uint32_t>& tables, std::int64_t cutoff_ms) {
  std::map<std::uint32_t, std::uint64_t> trimmed_through;  // table id → last sequence deleted
  // Every record of a table below the trim horizon of its oldest stream is deleted: a pass
  // starts there, so it never steps over the deletions of the passes before it.
  std::map<std::uint32_t, std::uint64_t> first_kept;  // table id → lowest trimmed_before
  for (const auto& [key, stream] : streams_) {
    if (!tables.count(stream.table_id)) continue;
    auto [it, inserted] = first_kept.emplace(stream.table_id, stream.trimmed_before);
    if (!inserted) it->second = std::min(it->second, stream.trimmed_before);
  }
  // The records to trim are a run of sequence numbers from the start of the table's record
  // space: erased as ranges of up to 1,000 records.
  for (const auto& [table_id, from] : first_kept) {
    const std::string upper =
        codec::prefix_end(codec::space_prefix(table_id, codec::Space::kStream));
    std::string lower = record_key(table_id, from);
    for (;;) {
      const std::optional<std::uint64_t> last =
          last_expired(*storage_.iterator(lower, upper), cutoff_ms);
      if (!last) break;
      const std::string end = record_key(table_id, *last + 1);
      storage_.erase_range(lower, end);
      trimmed_through[table_id] = *last;
      lower = end;
    }
  }
  return trimmed_through;
}

std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> ChangeStreams::trim_by_partition(
    const std::set<std::uint32_t>& tables, std::int64_t cutoff_ms) {
  // A partition's records are numbered in the order they were made; another partition's
  // numbers say nothing of their age. Each stream object (named by the first token of the
  // partition that wrote it, as are the shards that read it) is trimmed from the lowest
  // horizon of those shards, so a pass never steps over the deletions of the passes before.
  using Object = std::pair<std::uint32_t, std::uint64_t>;  // table id, first token
  std::map<Object, std::uint64_t> first_kept;
  for (const auto& [key, stream] : streams_) {
    if (!tables.count(stream.table_id) || !stream.numbered_by_storage) continue;
    for (const StreamShard& shard : stream.shards) {
      const std::uint64_t horizon = stream.trim_horizon(shard);
      auto [it, inserted] = first_kept.emplace(Object{stream.table_id, shard.first_token}, horizon);
      if (!inserted) it->second = std::min(it->second, horizon);
    }
  }
  std::map<Object, std::uint64_t> trimmed_through;
  for (const auto& [object, from] : first_kept) {
    const std::uint32_t table_id = object.first;
    const std::uint64_t first_token = object.second;
    const std::string upper =
        codec::prefix_end(codec::space_prefix(table_id, codec::Space::kStream));
    std::string lower = record_key(table_id, from);
    for (;;) {
      const std::optional<std::uint64_t> last =
          last_expired(*storage_.stream_records(table_id, first_token, lower, upper), cutoff_ms);
      if (!last) break;
      const std::string end = record_key(table_id, *last + 1);
      storage_.erase_stream_records(table_id, first_token, lower, end);
      trimmed_through[object] = *last;
      lower = end;
    }
  }
  return trimmed_through;
}

void ChangeStreams::trim(double now, double retention) {
  const auto cutoff_ms = static_cast<std::int64_t>((now - retention) * 1000);
  MutexLock lock(mutex_);
  // A table with a stream numbered by partition is trimmed by partition (its streams from
  // before, numbered by a front end, then keep their horizon); the others in number order.
  std::set<std::uint32_t> by_partition, in_order;
  for (const auto& [key, stream] : streams_) {
    (storage_.shared() && stream.numbered_by_storage ? by_partition : in_order)
        .insert(stream.table_id);
  }
  for (std::uint32_t table_id : by_partition) in_order.erase(table_id);
  const std::map<std::uint32_t, std::uint64_t> trimmed_through = trim_in_order(in_order, cutoff_ms);
  const std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> partition_through =
      trim_by_partition(by_partition, cutoff_ms);
  std::vector<std::string> expired;
  for (const auto& [key, stream] : streams_) {
    if (!stream.open() && stream.closed_at < now - retention) expired.push_back(key);
  }
  for (const std::string& key : expired) {
    storage::WriteBatch batch;
    if (auto it = stored_.find(key); it != stored_.end()) batch.expect(key, it->second);
    batch.del(key);
    try {
      storage_.write(batch);
    } catch (const storage::WriteConflict&) {
      // Changed or forgotten by another front end meanwhile: the next pass looks again.
      load();
      continue;
    }
    streams_.erase(key);
    stored_.erase(key);
  }
  std::vector<std::string> keys;
  for (const auto& [key, stream] : streams_) keys.push_back(key);
  for (const std::string& key : keys) {
    change(key, [&](StreamInfo& stream) {
      if (by_partition.count(stream.table_id)) {
        if (!stream.numbered_by_storage) return false;
        // Each shard up to what was deleted of its partition's records, or past its end.
        bool changed = false;
        for (StreamShard& shard : stream.shards) {
          auto through = partition_through.find({stream.table_id, shard.first_token});
          if (through == partition_through.end()) continue;
          std::uint64_t horizon = through->second + 1;
          if (shard.end) horizon = std::min(horizon, *shard.end + 1);
          if (horizon <= stream.trim_horizon(shard)) continue;
          shard.trimmed_before = horizon;
          changed = true;
        }
        return changed;
      }
      auto through = trimmed_through.find(stream.table_id);
      if (through == trimmed_through.end() || through->second < stream.trimmed_before) {
        return false;
      }
      std::uint64_t horizon = through->second + 1;
      if (stream.end) horizon = std::min(horizon, *stream.end + 1);
      if (horizon <= stream.trimmed_before) return false;
      stream.trimmed_before = horizon;
      return true;
    });
  }
}

}  // namespace kumo::engine
