// DescribeContinuousBackups. Kumo keeps no backups and no point-in-time recovery log, so a
// table's continuous backups and its point-in-time recovery are both DISABLED.
#include "api/operations.h"
#include "api/table_names.h"
#include "model/api_error.h"

namespace kumo::api {

std::string describe_continuous_backups(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  check_table_name_or_arn(coral, name, "tableName");
  coral.throw_if_any();
  // The backup operations report a missing table as TableNotFoundException, not
  // ResourceNotFoundException.
  const std::string table_name = table_name_of(*name);
  if (!ctx.engine.catalog().find(table_name)) throw ApiError::table_not_found(table_name);
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "ContinuousBackupsDescription");
  w.StartObject();
  write_key(w, "ContinuousBackupsStatus");
  write_string(w, "DISABLED");
  write_key(w, "PointInTimeRecoveryDescription");
  w.StartObject();
  write_key(w, "PointInTimeRecoveryStatus");
  write_string(w, "DISABLED");
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
