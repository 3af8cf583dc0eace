// The checks every single-item write and read owes its table's key, shared by the item,
// batch and transaction operations.
#pragma once

#include <cstddef>

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

}  // namespace kumo::api
