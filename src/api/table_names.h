// How requests and responses name a table: its name or ARN, the table a name designates
// for data-plane and control-plane operations, stream ARNs, and its key schema.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/attribute_json.h"
#include "api/json_reader.h"
#include "api/operations.h"
#include "engine/engine.h"
#include "model/api_error.h"

namespace kumo::api {

// "arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>".
std::string stream_arn(const Context& ctx, std::string_view table_name, std::string_view label);

// "arn:aws:dynamodb:<region>:<account>:table/<name>".
std::string table_arn(const Context& ctx, std::string_view table_name);

// The table name a TableName member designates: the name itself, or the name inside a
// table ARN. Throws ValidationException for a malformed ARN.
std::string table_name_of(std::string_view name_or_arn);

// Checks a TableName member that may be a name or an ARN (coral rules at `path`).
void check_table_name_or_arn(CoralErrors& coral, std::optional<std::string_view> value,
                             std::string_view path);

// The TableName member of GetItem, PutItem, UpdateItem, DeleteItem, Query and Scan: a name
// or an ARN of at least one character; a non-empty name follows the table-name rules.
void check_item_table_name(CoralErrors& coral, std::optional<std::string_view> value,
                           std::string_view path);

// CreateTable, DescribeTable, DeleteTable, UpdateTable and DescribeTimeToLive word a
// missing TableName on their own, before any model constraint: throws ValidationException.
void require_table_name(std::optional<std::string_view> name);

// The table for a data-plane operation; ResourceNotFoundException "Requested resource not
// found" when absent.
engine::TablePtr data_table(const Context& ctx, std::string_view name_or_arn);

// The table for a control-plane operation; ResourceNotFoundException "Requested resource
// not found: Table: <name> not found" when absent or still being restored from a backup.
engine::TablePtr control_table(const Context& ctx, std::string_view name_or_arn);

// The same, for DescribeTable and DeleteTable, which also find a table being restored.
engine::TablePtr described_table(const Context& ctx, std::string_view name_or_arn);

// The table UpdateTable or UpdateTimeToLive changes: as control_table, except that a table
// ImportTable is still creating is visible to them, CREATING, and refused with
// table_being_created_error.
engine::TablePtr changed_table(const Context& ctx, std::string_view name_or_arn);

// ResourceInUseException "Attempt to change a resource which is still in use: Table is
// being created: <name>": DynamoDB's answer to a change of a table still CREATING.
ApiError table_being_created_error(std::string_view name);

// ResourceNotFoundException "Requested resource not found: Table: <name> not found".
ApiError table_not_found_error(std::string_view name);

// Writes a KeySchema list: [{"AttributeName", "KeyType"}, ...] in schema order.
void write_key_schema(JsonWriter& w, const std::vector<KeySchemaElement>& schema);

// Writes a ProvisionedThroughput object as DescribeTable reports it for a table or an
// index: the dates of the last increase and decrease once there was one, the decreases
// today, and the two capacities.
void write_provisioned_throughput(JsonWriter& w, const ProvisionedThroughput& throughput);

}  // namespace kumo::api
