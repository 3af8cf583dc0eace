// Query and Scan pages over the item space (architecture.md "Storage layout": items are
// ordered by partition token, then partition key, then sort key).
#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/engine.h"

namespace kumo::engine {
namespace {

// DynamoDB stops a Query or Scan page once it has read 1 MB of items (§6.2).
constexpr std::size_t kPageBytes = 1 << 20;

// The smallest key greater than `key` and every key it prefixes is not needed here: item
// keys are self-delimiting, so no item key extends another, and `key + '\0'` is the
// smallest key after `key` alone.
std::string after(std::string key) {
  key.push_back('\0');
  return key;
}

// enc(value) without the terminator of S/B encodings: the common prefix of the encodings
// of every string (binary) that begins with `value`.
std::string begins_with_prefix(const AttributeValue& value) {
  std::string enc;
  codec::append_key_value(&enc, value);
  enc.resize(enc.size() - 2);
  return enc;
}

Item key_of_item(const TableDefinition& table, const Item& item) {
  Item key;
  key.emplace(table.key.hash.name, item.find(table.key.hash.name)->second);
  if (table.key.range) key.emplace(table.key.range->name, item.find(table.key.range->name)->second);
  return key;
}

}  // namespace

Page Engine::read_range(const TableDefinition& table, std::string lower, std::string upper,
                        const PageOptions& options) const {
  if (options.exclusive_start_key) {
    std::string start = key_of(table, *options.exclusive_start_key);
    if (options.forward) {
      std::string next = after(start);
      if (next > lower) lower = std::move(next);
    } else if (upper.empty() || start < upper) {
      upper = std::move(start);
    }
  }
  Page page;
  if (!upper.empty() && lower >= upper) return page;
  auto snapshot = storage_->snapshot();
  auto it = storage_->iterator(lower, upper, snapshot.get());
  if (options.forward) {
    it->seek_to_first();
  } else {
    it->seek_to_last();
  }
  for (; it->valid(); options.forward ? it->next() : it->prev()) {
    Item item;
    if (!codec::decode_item(it->value(), &item)) {
      throw storage::StorageError("corrupt item in table " + table.name);
    }
    page.bytes_read += item_size(item);
    page.items.push_back(std::move(item));
    if ((options.limit && page.items.size() >= options.limit) || page.bytes_read >= kPageBytes) {
      page.last_evaluated_key = key_of_item(table, page.items.back());
      break;
    }
  }
  return page;
}

Page Engine::query(const TableDefinition& table, const AttributeValue& partition,
                   const SortCondition& sort, const PageOptions& options) const {
  const std::string prefix = codec::item_key(table.id, partition, nullptr);
  std::string lower = prefix, upper = codec::prefix_end(prefix);
  auto bound = [&](const AttributeValue& v) {
    std::string key = prefix;
    codec::append_key_value(&key, v);
    return key;
  };
  using Op = SortCondition::Op;
  switch (sort.op) {
    case Op::kNone:
      break;
    case Op::kEq:
      lower = bound(sort.value);
      upper = after(lower);
      break;
    case Op::kLt:
      upper = bound(sort.value);
      break;
    case Op::kLe:
      upper = after(bound(sort.value));
      break;
    case Op::kGt:
      lower = after(bound(sort.value));
      break;
    case Op::kGe:
      lower = bound(sort.value);
      break;
    case Op::kBetween:
      lower = bound(sort.value);
      upper = after(bound(sort.value2));
      break;
    case Op::kBeginsWith:
      lower = prefix + begins_with_prefix(sort.value);
      upper = codec::prefix_end(lower);
      break;
  }
  return read_range(table, std::move(lower), std::move(upper), options);
}

Page Engine::scan(const TableDefinition& table, std::uint32_t segment, std::uint32_t total_segments,
                  const PageOptions& options) const {
  const std::string space = codec::space_prefix(table.id, codec::Space::kItems);
  // Segment i of N covers tokens t with i·2⁶⁴ <= t·N < (i+1)·2⁶⁴, the same rule segment_of
  // applies, so its first token is ceil(i·2⁶⁴/N).
  auto token_start = [&](std::uint32_t i) {
    return static_cast<std::uint64_t>(
        ((static_cast<unsigned __int128>(i) << 64) + total_segments - 1) / total_segments);
  };
  std::string lower = space, upper = codec::prefix_end(space);
  if (segment > 0) codec::append_u64(&lower, token_start(segment));
  if (segment + 1 < total_segments) {
    upper = space;
    codec::append_u64(&upper, token_start(segment + 1));
  }
  return read_range(table, std::move(lower), std::move(upper), options);
}

std::uint32_t Engine::segment_of(const TableDefinition& table, const Item& key,
                                 std::uint32_t total_segments) const {
  const std::string storage_key = key_of(table, key);
  const std::size_t token_at = codec::space_prefix(table.id, codec::Space::kItems).size();
  const std::uint64_t token = codec::read_u64(std::string_view(storage_key).substr(token_at));
  return static_cast<std::uint32_t>((static_cast<unsigned __int128>(token) * total_segments) >> 64);
}

}  // namespace kumo::engine
