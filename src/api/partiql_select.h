// A PartiQL SELECT: planned against the key of its table or index as one or more
// single-item reads, Queries of the partitions its WHERE names, or a Scan, then run page by
// page with NextToken, as DynamoDB runs it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/partiql_common.h"

namespace kumo::api {

struct SelectOptions {
  bool consistent = false;
  std::optional<std::int64_t> limit;
  std::optional<std::string_view> next_token;
  std::string_view capacity_mode = "NONE";
};

// Runs `s` (a SELECT that passed prepare_statement) on `table` and returns ExecuteStatement's
// response: Items, NextToken when the page stopped early, ConsumedCapacity.
std::string execute_select(const Context& ctx, const BoundStatement& s, engine::TablePtr table,
                           const SelectOptions& options);

// The rules on the key reads a WHERE decomposes into, against `table`'s key: more than 50
// reads (`Too many decomposed read operations for a given query.`), or two reads of one
// partition that may return a common item (`Overlapping conditions with range keys are not
// supported in where clause`), are refused with ValidationException; so is a key compared
// with a value of the wrong type, when `type_errors`.
void check_key_reads(const BoundStatement& s, const TableDefinition& table, bool type_errors);

// A row of a SELECT made from `item`: the whole item for `*`, else the projected paths that
// exist, each under its name.
Item select_row(const partiql::Statement& statement, const Item& item);

}  // namespace kumo::api
