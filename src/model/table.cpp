#include "model/table.h"

namespace kumo {

std::string_view scalar_type_name(ScalarType type) {
  switch (type) {
    case ScalarType::S:
      return "S";
    case ScalarType::N:
      return "N";
    case ScalarType::B:
      return "B";
  }
  return "";
}

AttrType to_attr_type(ScalarType type) {
  switch (type) {
    case ScalarType::S:
      return AttrType::S;
    case ScalarType::N:
      return AttrType::N;
    case ScalarType::B:
      return AttrType::B;
  }
  return AttrType::S;
}

std::size_t key_value_size(const AttributeValue& v) {
  return v.type() == AttrType::N ? v.as_number().size_bytes() : v.as_string().size();
}

std::string_view projection_type_name(ProjectionType type) {
  switch (type) {
    case ProjectionType::ALL:
      return "ALL";
    case ProjectionType::KEYS_ONLY:
      return "KEYS_ONLY";
    case ProjectionType::INCLUDE:
      return "INCLUDE";
  }
  return "";
}

std::vector<KeySchemaElement> KeySchema::elements() const {
  std::vector<KeySchemaElement> schema{{hash.name, KeyType::HASH}};
  if (range) schema.push_back({range->name, KeyType::RANGE});
  return schema;
}

const IndexDefinition* TableDefinition::find_index(std::string_view index_name) const {
  for (const auto* list : {&local_indexes, &global_indexes}) {
    for (const auto& index : *list) {
      if (index.name == index_name) return &index;
    }
  }
  return nullptr;
}

}  // namespace kumo
