// DescribeTable, DeleteTable, ListTables, DescribeLimits and DescribeEndpoints. CreateTable
// and UpdateTable have files of their own (create_table.cpp, update_table.cpp).
#include <fmt/format.h>

#include "api/operations.h"
#include "api/table_names.h"
#include "api/table_requests.h"
#include "model/api_error.h"

namespace kumo::api {

std::string describe_table(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  require_table_name(name);
  check_table_name_or_arn(coral, name, "tableName");
  coral.throw_if_any();
  engine::TablePtr table = described_table(ctx, *name);
  // A table being restored from a backup is CREATING until its items are all in it.
  return table_description_response(ctx, *table, "Table", table->restore ? "CREATING" : "ACTIVE");
}

std::string delete_table(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  require_table_name(name);
  check_table_name_or_arn(coral, name, "tableName");
  coral.throw_if_any();
  engine::TablePtr table = described_table(ctx, *name);
  if (table->restore) throw table_being_created_error(table->name);
  if (table->deletion_protection) {
    throw ApiError::validation(
        "Resource cannot be deleted as it is currently protected against deletion. Disable "
        "deletion protection first.");
  }
  // Describe before the data goes, as DynamoDB's DELETING description still counts it.
  std::string body = table_description_response(ctx, *table, "TableDescription", kDeleting);
  ctx.engine.delete_table(table->name);
  return body;
}

std::string list_tables(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto start = request.string("ExclusiveStartTableName");
  auto limit = request.integer("Limit");
  coral.check_table_name(start, "exclusiveStartTableName", false);
  if (limit && *limit < 1) {
    coral.add(std::to_string(*limit), "limit", "Member must have value greater than or equal to 1");
  }
  if (limit && *limit > 100) {
    coral.add(std::to_string(*limit), "limit", "Member must have value less than or equal to 100");
  }
  coral.throw_if_any();
  bool more = false;
  std::vector<std::string> names = ctx.engine.catalog().list(
      start.value_or(""), static_cast<std::size_t>(limit.value_or(100)), &more);
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  if (more && !names.empty()) {
    write_key(w, "LastEvaluatedTableName");
    write_string(w, names.back());
  }
  write_key(w, "TableNames");
  w.StartArray();
  for (const auto& n : names) write_string(w, n);
  w.EndArray();
  w.EndObject();
  return json_text(out);
}

// The quotas: provisioned throughput per account, and per table (and per GSI).
std::string describe_limits(const Context& ctx, const JsonObject&) {
  const capacity::CapacityOptions& c = ctx.options.capacity;
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  const std::pair<std::string_view, std::int64_t> limits[] = {
      {"AccountMaxReadCapacityUnits", c.account_quota_read},
      {"AccountMaxWriteCapacityUnits", c.account_quota_write},
      {"TableMaxReadCapacityUnits", c.table_quota_read},
      {"TableMaxWriteCapacityUnits", c.table_quota_write}};
  for (const auto& [name, value] : limits) {
    write_key(w, name);
    w.Int64(value);
  }
  w.EndObject();
  return json_text(out);
}

std::string describe_endpoints(const Context& ctx, const JsonObject&) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "Endpoints");
  w.StartArray();
  w.StartObject();
  write_key(w, "Address");
  write_string(w, ctx.options.endpoint_address);
  write_key(w, "CachePeriodInMinutes");
  w.Int(1440);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
