// Writes an item as storage holds it (engine::StoredItem) into a response, without
// building it: what GetItem, Query and Scan answer when no projection looks into it.
#pragma once

#include "api/attribute_json.h"
#include "engine/engine.h"

namespace kumo::api {

// As write_item would write the built item.
inline void write_item(JsonWriter& w, const engine::StoredItem& item) {
  JsonValueWriter writer(w);
  w.StartObject();
  item.visit(writer);
  w.EndObject();
}

}  // namespace kumo::api
