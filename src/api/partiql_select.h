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

// A row of a SELECT made from `item`: the whole item for `*`, else the projected paths that
// exist, each under its name.
Item select_row(const partiql::Statement& statement, const Item& item);

}  // namespace kumo::api
