// Keys as DynamoDB JSON for the admin's views: encoded partition and sort keys decoded with
// the resource's key schema ({"status":{"S":"PENDING"}}).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "model/table.h"

namespace kumo::capacity {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Writes {"<name>":{"<type>":<value>},...} for the components of `hash` decoded from
// `partition_key` and of `range` from `sort_key` (skipped when `sort_key` is empty). Bytes
// that do not decode are written as {"encoded":"<hex>"}.
void write_key(JsonWriter& w, const std::vector<AttributeDefinition>& hash,
               const std::vector<AttributeDefinition>& range, std::string_view partition_key,
               std::string_view sort_key);

// 16 lower-case hex digits.
std::string token_hex(std::uint64_t token);

}  // namespace kumo::capacity
