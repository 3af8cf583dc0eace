// Reading and writing the fields of the engine's own records (table definitions, stream
// descriptions), which are stored as items.
#pragma once

#include <string>
#include <string_view>

#include "model/attribute_value.h"

namespace kumo::engine {

inline AttributeValue str(std::string s) {
  return AttributeValue::string(std::move(s));
}

// The string field `name` of `record`; empty when absent or not a string.
inline std::string get_str(const Item& record, std::string_view name) {
  auto it = record.find(name);
  return it == record.end() || it->second.type() != AttrType::S ? std::string()
                                                                : it->second.as_string();
}

}  // namespace kumo::engine
