// The operations the service answers, one function each, grouped by family in their own
// files (tables.cpp, tags.cpp, items.cpp, ...), and the context each is called with. The
// dispatch table that maps a request's target to its function is in dispatch.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/attribute_json.h"
#include "api/json_reader.h"
#include "api/service.h"
#include "engine/engine.h"

namespace kumo::api {

struct Context {
  engine::Engine& engine;
  const ServiceOptions& options;
};

// Each takes the request object and returns the response body (compact JSON).
using Operation = std::string (*)(const Context&, const JsonObject&);

std::string create_table(const Context&, const JsonObject&);
std::string describe_table(const Context&, const JsonObject&);
std::string update_table(const Context&, const JsonObject&);
std::string delete_table(const Context&, const JsonObject&);
std::string list_tables(const Context&, const JsonObject&);
std::string describe_limits(const Context&, const JsonObject&);
std::string describe_endpoints(const Context&, const JsonObject&);
std::string tag_resource(const Context&, const JsonObject&);
std::string untag_resource(const Context&, const JsonObject&);
std::string list_tags_of_resource(const Context&, const JsonObject&);
std::string put_item(const Context&, const JsonObject&);
std::string get_item(const Context&, const JsonObject&);
std::string delete_item(const Context&, const JsonObject&);
std::string update_item(const Context&, const JsonObject&);
std::string query(const Context&, const JsonObject&);
std::string batch_get_item(const Context&, const JsonObject&);
std::string batch_write_item(const Context&, const JsonObject&);
std::string transact_get_items(const Context&, const JsonObject&);
std::string transact_write_items(const Context&, const JsonObject&);
std::string scan(const Context&, const JsonObject&);
std::string update_time_to_live(const Context&, const JsonObject&);
std::string describe_time_to_live(const Context&, const JsonObject&);
// Exports to S3 (exports.cpp) and imports from it (imports.cpp).
std::string export_table_to_point_in_time(const Context&, const JsonObject&);
std::string describe_export(const Context&, const JsonObject&);
std::string list_exports(const Context&, const JsonObject&);
std::string import_table(const Context&, const JsonObject&);
std::string describe_import(const Context&, const JsonObject&);
std::string list_imports(const Context&, const JsonObject&);

// On-demand backups (backups.cpp).
std::string describe_continuous_backups(const Context&, const JsonObject&);
std::string create_backup(const Context&, const JsonObject&);
std::string describe_backup(const Context&, const JsonObject&);
std::string list_backups(const Context&, const JsonObject&);
std::string delete_backup(const Context&, const JsonObject&);
std::string restore_table_from_backup(const Context&, const JsonObject&);
// Point-in-time recovery (backups.cpp).
std::string update_continuous_backups(const Context&, const JsonObject&);
std::string restore_table_to_point_in_time(const Context&, const JsonObject&);
// Contributor Insights (contributor_insights.cpp).
std::string update_contributor_insights(const Context&, const JsonObject&);
std::string describe_contributor_insights(const Context&, const JsonObject&);
std::string list_contributor_insights(const Context&, const JsonObject&);
// PartiQL (partiql.cpp).
std::string execute_statement(const Context&, const JsonObject&);
std::string batch_execute_statement(const Context&, const JsonObject&);
std::string execute_transaction(const Context&, const JsonObject&);
// DynamoDB Streams (DynamoDBStreams_20120810.*).
std::string list_streams(const Context&, const JsonObject&);
std::string describe_stream(const Context&, const JsonObject&);
std::string get_shard_iterator(const Context&, const JsonObject&);
std::string get_records(const Context&, const JsonObject&);

}  // namespace kumo::api
