// The checks every single-item write and read owes its table's key, shared by the item,
// batch and transaction operations.
#pragma once

#include <cstddef>

#include "model/table.h"

namespace kumo::api {

inline constexpr const char* kKeySchemaMismatch =
    "The provided key element does not match the schema";

// A partition key value (or one HASH component of an index key) over 2,048 bytes, or a sort
// key value (all RANGE components of an index key together) over 1,024 bytes, is refused
// with a ValidationException naming the limit.
void check_key_size(KeyType type, std::size_t bytes);

// An item to be written must carry the table's key with the right types, non-empty and
// within the size limits.
void check_item_key(const TableDefinition& t, const Item& item);

// Whether a Key parameter is exactly the table's key attributes with their types.
bool key_matches_schema(const TableDefinition& t, const Item& key);

// A Key parameter must be exactly the table's key attributes with their types, non-empty
// and within the size limits.
void check_key_parameter(const TableDefinition& t, const Item& key);

}  // namespace kumo::api
