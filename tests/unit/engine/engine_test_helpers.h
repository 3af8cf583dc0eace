// What the engine's unit tests share: an engine without background threads, a table keyed
// by one string attribute, and a count of the keys stored under a prefix.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "codec/key_codec.h"
#include "engine/engine.h"
#include "storage/storage.h"

namespace kumo::engine::test_helpers {

// Options for an engine whose maintenance passes the test runs itself.
inline EngineOptions options() {
  EngineOptions o;
  o.background_maintenance = false;
  return o;
}

// Table `t`, hash key `pk` (S), no range key.
inline TableDefinition table_def() {
  TableDefinition def;
  def.name = "t";
  def.attribute_definitions = {{"pk", ScalarType::S}};
  def.key = {{"pk", ScalarType::S}, std::nullopt};
  return def;
}

// The keys stored under `prefix`.
inline std::size_t keys_under(storage::Storage& storage, const std::string& prefix) {
  std::size_t n = 0;
  auto it = storage.iterator(prefix, codec::prefix_end(prefix));
  for (it->seek_to_first(); it->valid(); it->next()) ++n;
  return n;
}

}  // namespace kumo::engine::test_helpers
