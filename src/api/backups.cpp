// On-demand backups: CreateBackup, DescribeBackup, ListBackups, DeleteBackup and
// RestoreTableFromBackup; and point-in-time recovery: DescribeContinuousBackups,
// UpdateContinuousBackups and RestoreTableToPointInTime. The engine keeps the backups
// (engine/backups.cpp) and each recovering table's change log (engine/pitr.cpp,
// docs/backups.md); this file reads the requests, checks them in DynamoDB's order and
// writes the answers.
#include <fmt/format.h>

#include <ctime>
#include <vector>

#include "api/backup_arns.h"
#include "api/indexes.h"
#include "api/operations.h"
#include "api/restore_overrides.h"
#include "api/table_names.h"
#include "api/table_requests.h"
#include "api/throughput_settings.h"
#include "model/api_error.h"

namespace kumo::api {
namespace {

using engine::Backup;
using engine::BackupType;

// Backup ARNs are 37 to 1,024 characters.
void check_backup_arn(CoralErrors& coral, std::optional<std::string_view> arn,
                      std::string_view path, bool required) {
  if (!arn) {
    if (required) coral.require(false, path);
    return;
  }
  coral.check_length(*arn, path, 37, 1024);
}

std::string arn_of(const Context& ctx, const Backup& backup) {
  return make_backup_arn(ctx.options.region, ctx.options.account_id, backup.source.name, backup.id);
}

// The backup a BackupArn names, or null: the id must be a backup's, of the table the ARN
// names.
std::optional<Backup> find_named_backup(const Context& ctx, const BackupArn& arn) {
  std::optional<Backup> backup = ctx.engine.find_backup(arn.id);
  if (!backup || backup->source.name != arn.table) return std::nullopt;
  return backup;
}

void write_projection(JsonWriter& w, const Projection& projection) {
  write_key(w, "Projection");
  w.StartObject();
  write_key(w, "ProjectionType");
  write_string(w, projection_type_name(projection.type));
  if (projection.type == ProjectionType::INCLUDE) {
    write_key(w, "NonKeyAttributes");
    w.StartArray();
    for (const auto& a : projection.non_key_attributes) write_string(w, a);
    w.EndArray();
  }
  w.EndObject();
}

// {"ReadCapacityUnits", "WriteCapacityUnits"} as a backup records them (0 on demand).
void write_recorded_throughput(JsonWriter& w, BillingMode mode,
                               const ProvisionedThroughput& throughput) {
  const bool provisioned = mode == BillingMode::PROVISIONED;
  write_key(w, "ProvisionedThroughput");
  w.StartObject();
  write_key(w, "ReadCapacityUnits");
  w.Int64(provisioned ? throughput.read_capacity_units : 0);
  write_key(w, "WriteCapacityUnits");
  w.Int64(provisioned ? throughput.write_capacity_units : 0);
  w.EndObject();
}

void write_backup_details(JsonWriter& w, const Backup& backup, std::string_view arn,
                          std::string_view status) {
  write_key(w, "BackupArn");
  write_string(w, arn);
  write_key(w, "BackupName");
  write_string(w, backup.name);
  write_key(w, "BackupSizeBytes");
  w.Int64(backup.size_bytes);
  write_key(w, "BackupStatus");
  write_string(w, status);
  write_key(w, "BackupType");
  write_string(w, engine::backup_type_name(backup.type));
  write_key(w, "BackupCreationDateTime");
  w.Double(backup.created);
  if (backup.expires) {
    write_key(w, "BackupExpiryDateTime");
    w.Double(*backup.expires);
  }
}

// {"BackupDescription": {BackupDetails, SourceTableDetails, SourceTableFeatureDetails}}.
std::string description_response(const Context& ctx, const Backup& backup, std::string_view arn,
                                 std::string_view status) {
  const TableDefinition& t = backup.source;
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "BackupDescription");
  w.StartObject();
  write_key(w, "BackupDetails");
  w.StartObject();
  write_backup_details(w, backup, arn, status);
  w.EndObject();

  write_key(w, "SourceTableDetails");
  w.StartObject();
  write_key(w, "TableName");
  write_string(w, t.name);
  write_key(w, "TableId");
  write_string(w, t.table_id);
  write_key(w, "TableArn");
  write_string(w, table_arn(ctx, t.name));
  write_key(w, "TableSizeBytes");
  w.Int64(backup.size_bytes);
  write_key(w, "KeySchema");
  write_key_schema(w, t.key.elements());
  write_key(w, "TableCreationDateTime");
  w.Double(t.creation_date_time);
  write_recorded_throughput(w, t.billing_mode, t.throughput);
  write_on_demand(w, t.capacity);
  write_key(w, "ItemCount");
  w.Int64(backup.item_count);
  write_key(w, "BillingMode");
  write_string(w, billing_mode_name(t.billing_mode));
  w.EndObject();

  // Each member only when the table had the feature; a SYSTEM backup reports none.
  write_key(w, "SourceTableFeatureDetails");
  w.StartObject();
  const bool features = backup.type != BackupType::kSystem;
  // An index's name, key schema and projection; a GSI's throughput too.
  auto write_indexes = [&](std::string_view member, const std::vector<IndexDefinition>& indexes,
                           bool global) {
    if (indexes.empty()) return;
    write_key(w, member);
    w.StartArray();
    for (const IndexDefinition& index : indexes) {
      w.StartObject();
      write_key(w, "IndexName");
      write_string(w, index.name);
      write_key(w, "KeySchema");
      write_key_schema(w, index.key_schema);
      write_projection(w, index.projection);
      if (global) {
        write_recorded_throughput(w, t.billing_mode, index.throughput);
        write_on_demand(w, index.capacity);
      }
      w.EndObject();
    }
    w.EndArray();
  };
  if (features) {
    write_indexes("LocalSecondaryIndexes", t.local_indexes, false);
    write_indexes("GlobalSecondaryIndexes", t.global_indexes, true);
    write_stream_enabled(w, "StreamDescription", t);
  }
  if (features && t.ttl_enabled) {
    write_key(w, "TimeToLiveDescription");
    w.StartObject();
    write_key(w, "TimeToLiveStatus");
    write_string(w, "ENABLED");
    write_key(w, "AttributeName");
    write_string(w, t.ttl_attribute);
    w.EndObject();
  }
  if (features) write_sse_description(w, ctx, t);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return json_text(out);
}

// A time as the message refusing to delete a SYSTEM backup words its expiry.
std::string expiry_text(double seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S UTC %Y", &tm);
  return buf;
}

// A BackupArn member: model constraints, then the ARN's form.
BackupArn read_backup_arn(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto arn = request.string("BackupArn");
  check_backup_arn(coral, arn, "backupArn", true);
  coral.throw_if_any();
  return parse_backup_arn(*arn, ctx.options.account_id, ctx.options.region);
}

// The override members RestoreTableFromBackup and RestoreTableToPointInTime share, as read.
struct OverrideMembers {
  std::optional<std::string_view> billing;
  std::optional<JsonArray> gsis, lsis;
  std::optional<JsonObject> throughput, sse;
  std::optional<UnitsRequest> on_demand;
  std::optional<bool> sse_enabled;
};

OverrideMembers read_override_members(const JsonObject& request) {
  OverrideMembers m;
  m.billing = request.string("BillingModeOverride");
  m.gsis = request.array("GlobalSecondaryIndexOverride");
  m.lsis = request.array("LocalSecondaryIndexOverride");
  m.throughput = request.object("ProvisionedThroughputOverride");
  if (auto units = request.object("OnDemandThroughputOverride")) {
    m.on_demand = UnitsRequest{units->integer("MaxReadRequestUnits", "Long"),
                               units->integer("MaxWriteRequestUnits", "Long")};
  }
  m.sse = request.object("SSESpecificationOverride");
  if (m.sse) {
    m.sse_enabled = m.sse->boolean("Enabled");
    m.sse->string("SSEType");
    m.sse->string("KMSMasterKeyId");
  }
  request.array("VectorIndexOverride");
  return m;
}

// Checks the overrides' members after the caller's own (every constraint broken is
// reported together), then makes the overrides.
RestoreOverrides check_overrides(const OverrideMembers& m, CoralErrors& coral) {
  coral.check_enum(m.billing, "billingModeOverride", {"PROVISIONED", "PAY_PER_REQUEST"});
  RestoreOverrides overrides;
  if (m.throughput) {
    ThroughputRequest t{m.throughput->integer("ReadCapacityUnits", "Long"),
                        m.throughput->integer("WriteCapacityUnits", "Long")};
    for (const auto& [value, path] :
         {std::pair{t.read, "provisionedThroughputOverride.readCapacityUnits"},
          std::pair{t.write, "provisionedThroughputOverride.writeCapacityUnits"}}) {
      coral.require(value.has_value(), path);
      if (value && *value < 1) {
        coral.add(std::to_string(*value), path,
                  "Member must have value greater than or equal to 1");
      }
    }
    overrides.throughput = t;
  }
  if (m.gsis) overrides.global = read_indexes(*m.gsis, "globalSecondaryIndexOverride", true, coral);
  if (m.lsis) overrides.local = read_indexes(*m.lsis, "localSecondaryIndexOverride", false, coral);
  coral.throw_if_any();
  // A restored index starts with the warm throughput of a new index: DynamoDB fails a
  // restore whose GlobalSecondaryIndexOverride sets WarmThroughput with a validation error.
  if (overrides.global) {
    for (const IndexRequest& index : *overrides.global) {
      if (index.warm) {
        throw ApiError::validation(
            fmt::format("{}WarmThroughput cannot be specified in GlobalSecondaryIndexOverride "
                        "for index: {}",
                        kInvalidParameters, index.name.value_or("")));
      }
    }
  }
  if (m.billing) {
    overrides.billing_mode =
        *m.billing == "PROVISIONED" ? BillingMode::PROVISIONED : BillingMode::PAY_PER_REQUEST;
  }
  overrides.on_demand = m.on_demand;
  if (m.sse) overrides.sse_enabled = m.sse_enabled.value_or(false);
  return overrides;
}

}  // namespace

std::string create_backup(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  auto backup_name = request.string("BackupName");
  check_table_name_or_arn(coral, name, "tableName");
  coral.check_table_name(backup_name, "backupName");
  coral.throw_if_any();
  // A missing table, or one still being created, is TableNotFoundException.
  const std::string table_name = table_name_of(*name);
  engine::TablePtr table = ctx.engine.catalog().find(table_name);
  // A table that ImportTable is still creating is there, but its backups are not yet.
  if (table && table->restore && table->restore->imports()) {
    throw ApiError::continuous_backups_unavailable(table_name);
  }
  if (!table || table->restore) throw ApiError::table_not_found(table_name);
  const Backup backup = ctx.engine.create_backup(*table, std::string(*backup_name));
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "BackupDetails");
  w.StartObject();
  // DynamoDB answers CREATING, however far the copy got: the backup is AVAILABLE by the
  // first DescribeBackup for a small table.
  write_backup_details(w, backup, arn_of(ctx, backup), "CREATING");
  w.EndObject();
  w.EndObject();
  return json_text(out);
}

std::string describe_backup(const Context& ctx, const JsonObject& request) {
  const BackupArn arn = read_backup_arn(ctx, request);
  const std::string sent(*request.string("BackupArn"));
  std::optional<Backup> backup = find_named_backup(ctx, arn);
  if (!backup) throw ApiError::backup_not_found(sent);
  // The ARN is answered as sent (its region need not be the endpoint's).
  return description_response(ctx, *backup, sent, engine::backup_status_name(backup->status));
}

std::string delete_backup(const Context& ctx, const JsonObject& request) {
  const BackupArn arn = read_backup_arn(ctx, request);
  const std::string sent(*request.string("BackupArn"));
  const Backup deleted = ctx.engine.delete_backup(
      arn.id, [&](const Backup* backup, const engine::TablePtr& restoring) {
        if (!backup || backup->source.name != arn.table) throw ApiError::backup_not_found(sent);
        if (backup->type == BackupType::kSystem) {
          throw ApiError::validation(fmt::format(
              "Invalid Request: User is not allowed to delete the system backup with arn {}. It "
              "will automatically expire on {}",
              sent, expiry_text(backup->expires.value_or(backup->created))));
        }
        if (restoring) {
          throw ApiError::backup_in_use("Backup is being used to restore table: " + sent);
        }
      });
  return description_response(ctx, deleted, sent, "DELETED");
}

std::string list_backups(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  auto limit = request.integer("Limit");
  auto lower = request.timestamp("TimeRangeLowerBound");
  auto upper = request.timestamp("TimeRangeUpperBound");
  auto start = request.string("ExclusiveStartBackupArn");
  auto type = request.string("BackupType");
  if (name) check_table_name_or_arn(coral, name, "tableName");
  if (limit && *limit < 1) {
    coral.add(std::to_string(*limit), "limit", "Member must have value greater than or equal to 1");
  }
  if (limit && *limit > 100) {
    coral.add(std::to_string(*limit), "limit", "Member must have value less than or equal to 100");
  }
  check_backup_arn(coral, start, "exclusiveStartBackupArn", false);
  coral.check_enum(type, "backupType", {"USER", "SYSTEM", "AWS_BACKUP", "ALL"});
  coral.throw_if_any();
  if (lower && upper && *lower > *upper) {
    throw ApiError::validation("Time range lower bound must be less than or equal to upper bound");
  }
  engine::BackupQuery query;
  if (name) query.table = table_name_of(*name);
  query.lower = lower;
  query.upper = upper;
  if (type == "SYSTEM") {
    query.types = {BackupType::kSystem};
  } else if (type == "AWS_BACKUP") {
    query.types = {BackupType::kAwsBackup};
  } else if (type == "ALL") {
    query.types = {BackupType::kUser, BackupType::kSystem};
  }
  if (start) {
    // A pure position: the backup need not exist, but its ARN must be of this region.
    const BackupArn position = parse_backup_arn(*start, ctx.options.account_id, ctx.options.region);
    if (position.region != ctx.options.region) {
      throw ApiError::validation(
          fmt::format("ExclusiveStartBackupArn {} does not match the region of the request: {}",
                      *start, ctx.options.region));
    }
    query.exclusive_start = position.id;
  }
  query.limit = limit ? static_cast<std::size_t>(*limit) : 0;
  const std::vector<Backup> all = ctx.engine.list_backups();
  bool more = false;
  const std::vector<const Backup*> page = engine::select_backups(all, query, &more);
  // At most 1 MB of results per page.
  constexpr std::size_t kPageBytes = 1 << 20;
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "BackupSummaries");
  w.StartArray();
  const Backup* last = nullptr;
  for (const Backup* backup : page) {
    if (out.GetSize() >= kPageBytes) {
      more = true;
      break;
    }
    const TableDefinition& t = backup->source;
    w.StartObject();
    write_key(w, "TableName");
    write_string(w, t.name);
    write_key(w, "TableId");
    write_string(w, t.table_id);
    write_key(w, "TableArn");
    write_string(w, table_arn(ctx, t.name));
    write_backup_details(w, *backup, arn_of(ctx, *backup),
                         engine::backup_status_name(backup->status));
    w.EndObject();
    last = backup;
  }
  w.EndArray();
  if (more && last) {
    write_key(w, "LastEvaluatedBackupArn");
    write_string(w, arn_of(ctx, *last));
  }
  w.EndObject();
  return json_text(out);
}

std::string restore_table_from_backup(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto target = request.string("TargetTableName");
  auto sent = request.string("BackupArn");
  const OverrideMembers members = read_override_members(request);
  coral.check_table_name(target, "targetTableName");
  check_backup_arn(coral, sent, "backupArn", true);
  const RestoreOverrides overrides = check_overrides(members, coral);

  const BackupArn arn = parse_backup_arn(*sent, ctx.options.account_id, ctx.options.region);
  if (arn.region != ctx.options.region && !members.sse) {
    throw ApiError::validation(
        "Invalid Request: sseSpecificationOverride must be provided for cross-region restores");
  }
  const std::string name(*target);
  const std::string backup_arn(*sent);
  engine::TablePtr table =
      ctx.engine.restore_table(arn.id, name, [&](const engine::RestoreCheck& check) {
        if (!check.backup || check.backup->source.name != arn.table) {
          throw ApiError::backup_not_found(backup_arn);
        }
        TableDefinition def = restored_table(check.backup->source, name, overrides, ctx.options);
        if (check.target && check.target->restore) {
          const RestoreSource& r = *check.target->restore;
          throw ApiError::table_in_use(
              fmt::format("Table: {} is already being restored from backup: {}", name,
                          r.backup_arn.empty() ? r.source_table_arn : r.backup_arn));
        }
        if (check.target) throw ApiError::table_already_exists(name);
        if (check.using_backup) {
          throw ApiError::backup_in_use("Backup is being used to restore another table: " +
                                        backup_arn);
        }
        if (check.running >= ctx.engine.options().restore_limit) {
          throw ApiError::limit_exceeded(fmt::format(
              "Subscriber limit exceeded: Only {} restore operations can be done simultaneously",
              ctx.engine.options().restore_limit));
        }
        def.creation_date_time = ctx.engine.clock().now_ms();
        def.restore =
            RestoreSource{check.backup->id, backup_arn, table_arn(ctx, check.backup->source.name),
                          check.backup->created};
        return def;
      });
  return table_description_response(ctx, *table, "TableDescription", "CREATING");
}

namespace {

// An ISO 8601 time in whole seconds, as InvalidRestoreTimeException words the times.
std::string iso_seconds(double seconds) {
  const std::time_t t = static_cast<std::time_t>(epoch_whole_seconds(seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// {"ContinuousBackupsDescription": ...}: ContinuousBackupsStatus is ENABLED on every
// settled table; the point-in-time recovery members are there only while it is enabled.
std::string continuous_backups_response(const Context& ctx, const TableDefinition& table) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "ContinuousBackupsDescription");
  w.StartObject();
  write_key(w, "ContinuousBackupsStatus");
  write_string(w, "ENABLED");
  write_key(w, "PointInTimeRecoveryDescription");
  w.StartObject();
  write_key(w, "PointInTimeRecoveryStatus");
  const std::optional<engine::PitrWindow> window = ctx.engine.pitr_window(table);
  write_string(w, window ? "ENABLED" : "DISABLED");
  if (window) {
    write_key(w, "RecoveryPeriodInDays");
    w.Int(table.pitr->period_days);
    write_key(w, "EarliestRestorableDateTime");
    w.Double(static_cast<double>(window->earliest_ms) / 1000.0);
    write_key(w, "LatestRestorableDateTime");
    w.Double(static_cast<double>(window->latest_ms) / 1000.0);
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return json_text(out);
}

// The table a SourceTableArn names: "arn:aws:dynamodb:<region>:<account>:table/<name>".
struct TableArn {
  std::string region;
  std::string name;
};
TableArn parse_source_table_arn(const Context& ctx, std::string_view arn) {
  auto invalid = [] { return ApiError::validation("sourceTableArn is not a valid ARN"); };
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (int i = 0; i < 5; ++i) {
    const std::size_t colon = arn.find(':', start);
    if (colon == std::string_view::npos) throw invalid();
    parts.push_back(arn.substr(start, colon - start));
    start = colon + 1;
  }
  const std::string_view resource = arn.substr(start);
  constexpr std::string_view kTable = "table/";
  if (parts[0] != "arn" || parts[1] != "aws" || parts[2] != "dynamodb" ||
      !is_region_name(parts[3]) || resource.substr(0, kTable.size()) != kTable) {
    throw invalid();
  }
  const std::string_view name = resource.substr(kTable.size());
  if (name.empty() || name.find('/') != std::string_view::npos) throw invalid();
  if (parts[4] != ctx.options.account_id) {
    throw ApiError::validation(
        "This action is only supported by accounts that match the resource owner's account");
  }
  return {std::string(parts[3]), std::string(name)};
}

}  // namespace

std::string describe_continuous_backups(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  check_table_name_or_arn(coral, name, "tableName");
  coral.throw_if_any();
  // The backup operations report a missing table (or one still being created) as
  // TableNotFoundException, not ResourceNotFoundException.
  const std::string table_name = table_name_of(*name);
  engine::TablePtr table = ctx.engine.catalog().find(table_name);
  if (!table || table->restore) throw ApiError::table_not_found(table_name);
  return continuous_backups_response(ctx, *table);
}

std::string update_continuous_backups(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  auto spec = request.object("PointInTimeRecoverySpecification");
  std::optional<bool> enabled;
  std::optional<std::int64_t> period;
  if (spec) {
    enabled = spec->boolean("PointInTimeRecoveryEnabled");
    period = spec->integer("RecoveryPeriodInDays");
  }
  check_table_name_or_arn(coral, name, "tableName");
  coral.require(spec.has_value(), "pointInTimeRecoverySpecification");
  if (spec) {
    coral.require(enabled.has_value(),
                  "pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled");
    constexpr std::string_view kPeriod = "pointInTimeRecoverySpecification.recoveryPeriodInDays";
    if (period && *period < 1) {
      coral.add(std::to_string(*period), kPeriod,
                "Member must have value greater than or equal to 1");
    }
    if (period && *period > 35) {
      coral.add(std::to_string(*period), kPeriod,
                "Member must have value less than or equal to 35");
    }
  }
  coral.throw_if_any();
  if (!*enabled && period) {
    throw ApiError::validation(
        "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time "
        "recovery.");
  }
  const std::string table_name = table_name_of(*name);
  std::optional<int> days;
  if (period) days = static_cast<int>(*period);
  engine::TablePtr table = ctx.engine.update_pitr(table_name, *enabled, days);
  return continuous_backups_response(ctx, *table);
}

std::string restore_table_to_point_in_time(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto source_arn = request.string("SourceTableArn");
  auto source_name = request.string("SourceTableName");
  auto target = request.string("TargetTableName");
  auto use_latest = request.boolean("UseLatestRestorableTime");
  auto restore_time = request.timestamp("RestoreDateTime");
  const OverrideMembers members = read_override_members(request);
  if (source_arn) coral.check_length(*source_arn, "sourceTableArn", 1, 1024);
  if (source_name) coral.check_table_name(source_name, "sourceTableName");
  coral.check_table_name(target, "targetTableName");
  const RestoreOverrides overrides = check_overrides(members, coral);

  // The request's shape: one restore time, one source.
  const bool latest = use_latest.value_or(false);
  if (latest && restore_time) {
    throw ApiError::validation(
        "Invalid Request: Both RestoreDateTime and UseLatestRestorableTime cannot be set for "
        "point-in-time restore request. Please specify only one of them.");
  }
  if (!latest && !restore_time) {
    throw ApiError::validation(
        "Invalid Request: Either one of RestoreDateTime or UseLatestRestorableTime must be "
        "specified, but not both");
  }
  if (source_arn && source_name) {
    throw ApiError::validation("Must provide exactly one of: sourceTableArn, sourceTableName");
  }
  if (!source_arn && !source_name)
    throw ApiError::validation("The parameter 'TableName' is required");
  std::string name;
  if (source_arn) {
    const TableArn arn = parse_source_table_arn(ctx, *source_arn);
    if (arn.region != ctx.options.region && !members.sse) {
      throw ApiError::validation(
          "Invalid Request: sseSpecificationOverride must be provided for cross-region restores");
    }
    name = arn.name;
  } else {
    name = std::string(*source_name);
  }
  const std::string target_name(*target);
  engine::TablePtr table = ctx.engine.restore_table_to_time(
      name, target_name,
      [&](const engine::TablePtr& source, const std::optional<engine::PitrWindow>& window,
          const engine::RestoreCheck& check) {
        if (!source) {
          if (source_arn) throw ApiError::table_not_found_text("Table not found");
          throw ApiError::table_not_found(name);
        }
        if (!window) {
          throw ApiError::point_in_time_recovery_unavailable(
              fmt::format("Point in time recovery is not enabled for table '{}'", name));
        }
        // Times compare in whole milliseconds, as they are reported.
        const double earliest = static_cast<double>(window->earliest_ms) / 1000.0;
        const double latest_time = static_cast<double>(window->latest_ms) / 1000.0;
        double when = latest_time;
        if (restore_time) {
          const std::int64_t ms = epoch_milliseconds(*restore_time);
          if (ms < window->earliest_ms || ms > window->latest_ms) {
            throw ApiError::invalid_restore_time(fmt::format(
                "RestoreDateTime '{}' must be within EarliestRestorableDateTime '{}' and "
                "LatestRestorableDateTime '{}'",
                iso_seconds(*restore_time), iso_seconds(earliest), iso_seconds(latest_time)));
          }
          when = static_cast<double>(ms) / 1000.0;
        }
        // The settings are the source's current ones.
        TableDefinition def = restored_table(*source, target_name, overrides, ctx.options);
        if (check.target && check.target->restore) {
          const RestoreSource& r = *check.target->restore;
          throw ApiError::table_in_use(
              fmt::format("Table: {} is already being restored from backup: {}", target_name,
                          r.backup_arn.empty() ? r.source_table_arn : r.backup_arn));
        }
        if (check.target) throw ApiError::table_already_exists(target_name);
        if (check.running >= ctx.engine.options().restore_limit) {
          throw ApiError::limit_exceeded(fmt::format(
              "Subscriber limit exceeded: Only {} restore operations can be done simultaneously",
              ctx.engine.options().restore_limit));
        }
        def.creation_date_time = ctx.engine.clock().now_ms();
        def.restore = RestoreSource{"", "", table_arn(ctx, source->name), when, source->id};
        return def;
      });
  return table_description_response(ctx, *table, "TableDescription", "CREATING");
}

}  // namespace kumo::api
