// Checks every single-item write and read owes the table, shared by the item, batch and
// transaction operations (dynamodb-contract.md §2.5, §6.1, §7.1, §7.3).
#pragma once

#include <optional>

#include "api/expressions.h"
#include "api/json_reader.h"
#include "model/table.h"

namespace kumo::api {

// Size DynamoDB counts for a key value: bytes for S and B, the number size for N.
std::size_t key_value_size(const AttributeValue& v);

// An item to be written must carry the table's key with the right types, non-empty and
// within the size limits.
void check_item_key(const TableDefinition& t, const Item& item);

// A Key parameter must be exactly the table's key attributes with their types, non-empty
// and within the size limits.
void check_key_parameter(const TableDefinition& t, const Item& key);

// The condition of a write, evaluated on the current item under its lock: throws
// ConditionalCheckFailedException (with the item when `request` asks for ALL_OLD through
// ReturnValuesOnConditionCheckFailure) when it does not hold.
void check_condition(const RequestExpressions& expressions, const JsonObject& request,
                     const std::optional<Item>& current);

}  // namespace kumo::api
