#include "api/item_checks.h"

#include <fmt/format.h>

#include <vector>

#include "model/api_error.h"

namespace kumo::api {
namespace {

// The key attributes of `item` (already checked present and typed) are within the limits.
void check_key_sizes(const TableDefinition& t, const Item& item) {
  check_key_size(KeyType::HASH, key_value_size(item.find(t.key.hash.name)->second));
  if (t.key.range) {
    check_key_size(KeyType::RANGE, key_value_size(item.find(t.key.range->name)->second));
  }
}

}  // namespace

void check_key_size(KeyType type, std::size_t bytes) {
  if (type == KeyType::HASH && bytes > kMaxPartitionKeyBytes) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "Size of hashkey has exceeded the maximum size limit of2048 bytes");
  }
  if (type == KeyType::RANGE && bytes > kMaxSortKeyBytes) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "Aggregated size of all range keys has exceeded the size limit "
                               "of 1024 bytes");
  }
}

void check_item_key(const TableDefinition& t, const Item& item) {
  std::vector<const AttributeDefinition*> keys{&t.key.hash};
  if (t.key.range) keys.push_back(&*t.key.range);
  for (const auto* k : keys) {
    if (!item.count(k->name)) {
      throw ApiError::validation(
          fmt::format("{}Missing the key {} in the item", kInvalidParameters, k->name));
    }
  }
  for (const auto* k : keys) {
    const AttributeValue& v = item.find(k->name)->second;
    if (v.type() != to_attr_type(k->type)) {
      throw ApiError::validation(fmt::format("{}Type mismatch for key {} expected: {} actual: {}",
                                             kInvalidParameters, k->name, scalar_type_name(k->type),
                                             type_name(v.type())));
    }
  }
  for (const auto* k : keys) {
    const AttributeValue& v = item.find(k->name)->second;
    if (v.type() != AttrType::N && v.as_string().empty()) {
      throw ApiError::validation(fmt::format(
          "One or more parameter values are not valid. The AttributeValue for a key attribute "
          "cannot contain an empty {} value. Key: {}",
          v.type() == AttrType::S ? "string" : "binary", k->name));
    }
  }
  check_key_sizes(t, item);
}

bool key_matches_schema(const TableDefinition& t, const Item& key) {
  const std::size_t expected = t.key.range ? 2 : 1;
  auto matches = [&](const AttributeDefinition& d) {
    auto it = key.find(d.name);
    return it != key.end() && it->second.type() == to_attr_type(d.type);
  };
  return key.size() == expected && matches(t.key.hash) && (!t.key.range || matches(*t.key.range));
}

void check_key_parameter(const TableDefinition& t, const Item& key) {
  if (!key_matches_schema(t, key)) throw ApiError::validation(kKeySchemaMismatch);
  for (const auto& [name, v] : key) {
    if (v.type() != AttrType::N && v.as_string().empty()) {
      throw ApiError::validation(fmt::format(
          "{}The AttributeValue for a key attribute cannot contain an empty {} value. Key: {}",
          kInvalidParameters, v.type() == AttrType::S ? "string" : "binary", name));
    }
  }
  check_key_sizes(t, key);
}

}  // namespace kumo::api
