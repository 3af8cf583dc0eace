// CreateTable, DescribeTable, UpdateTable, DeleteTable, ListTables, DescribeLimits,
// DescribeEndpoints (dynamodb-contract.md §3).
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "api/indexes.h"
#include "api/operations.h"
#include "model/api_error.h"
#include "model/clock.h"

namespace kumo::api {
namespace {

constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";
// DynamoDB's bound on a capacity value in a request (§3.2).
constexpr std::int64_t kMaxCapacityValue = 1'000'000'000'000;
// Default per-table quota (§3.7, §9.5).
constexpr std::int64_t kTableMaxCapacity = 40'000;

std::string_view billing_mode_name(BillingMode mode) {
  return mode == BillingMode::PAY_PER_REQUEST ? "PAY_PER_REQUEST" : "PROVISIONED";
}

// ---- Request parsing ------------------------------------------------------------------

struct ThroughputRequest {
  std::optional<std::int64_t> read;
  std::optional<std::int64_t> write;
};

std::optional<ThroughputRequest> read_throughput(const JsonObject& request, CoralErrors& coral) {
  auto pt = request.object("ProvisionedThroughput");
  if (!pt) return std::nullopt;
  ThroughputRequest t{pt->integer("ReadCapacityUnits", "Long"),
                      pt->integer("WriteCapacityUnits", "Long")};
  coral.require(t.read.has_value(), "provisionedThroughput.readCapacityUnits");
  if (t.read && *t.read < 1) {
    coral.add(std::to_string(*t.read), "provisionedThroughput.readCapacityUnits",
              "Member must have value greater than or equal to 1");
  }
  coral.require(t.write.has_value(), "provisionedThroughput.writeCapacityUnits");
  if (t.write && *t.write < 1) {
    coral.add(std::to_string(*t.write), "provisionedThroughput.writeCapacityUnits",
              "Member must have value greater than or equal to 1");
  }
  return t;
}

// Capacity values beyond what DynamoDB accepts at all, then beyond the table quota.
void check_throughput_bounds(const ThroughputRequest& t) {
  if (*t.read > kMaxCapacityValue) {
    throw ApiError::validation(
        fmt::format("Given value {} for ReadCapacityUnits is out of bounds", *t.read));
  }
  if (*t.write > kMaxCapacityValue) {
    throw ApiError::validation(
        fmt::format("Given value {} for WriteCapacityUnits is out of bounds", *t.write));
  }
  if (*t.read > kTableMaxCapacity || *t.write > kTableMaxCapacity) {
    throw ApiError::limit_exceeded(fmt::format(
        "Subscriber limit exceeded: Provisioned throughput for a table cannot exceed {} "
        "ReadCapacityUnits and {} WriteCapacityUnits",
        kTableMaxCapacity, kTableMaxCapacity));
  }
}

struct StreamRequest {
  std::optional<bool> enabled;
  std::optional<std::string_view> view_type;
};

std::optional<StreamRequest> read_stream(const JsonObject& request, CoralErrors& coral) {
  auto spec = request.object("StreamSpecification");
  if (!spec) return std::nullopt;
  StreamRequest s{spec->boolean("StreamEnabled"), spec->string("StreamViewType")};
  coral.require(s.enabled.has_value(), "streamSpecification.streamEnabled");
  coral.check_enum(s.view_type, "streamSpecification.streamViewType",
                   {"NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"});
  return s;
}

void check_table_class(std::optional<std::string_view> table_class) {
  if (table_class && *table_class != "STANDARD" && *table_class != "STANDARD_INFREQUENT_ACCESS") {
    throw ApiError::validation(
        "Invalid table-class parameter provided. Please try again with a valid table-class "
        "value: [STANDARD, STANDARD_INFREQUENT_ACCESS].");
  }
}

}  // namespace

// Tags on CreateTable and TagResource share their checks (tags.cpp).
std::vector<Tag> read_tags(const JsonArray& tags, CoralErrors& coral);
void check_tags(const std::vector<Tag>& tags, std::size_t existing);

namespace {

// ---- Description ----------------------------------------------------------------------

void write_description(JsonWriter& w, const Context& ctx, const TableDefinition& t,
                       std::string_view status) {
  const std::string arn = table_arn(ctx, t.name);
  w.StartObject();
  write_key(w, "AttributeDefinitions");
  w.StartArray();
  for (const auto& d : t.attribute_definitions) {
    w.StartObject();
    write_key(w, "AttributeName");
    write_string(w, d.name);
    write_key(w, "AttributeType");
    write_string(w, scalar_type_name(d.type));
    w.EndObject();
  }
  w.EndArray();
  write_key(w, "TableName");
  write_string(w, t.name);
  write_key(w, "KeySchema");
  write_key_schema(w, t.key_schema);
  write_key(w, "TableStatus");
  write_string(w, status);
  write_key(w, "CreationDateTime");
  w.Double(t.creation_date_time);
  write_key(w, "ProvisionedThroughput");
  w.StartObject();
  if (t.throughput.last_increase_date_time > 0) {
    write_key(w, "LastIncreaseDateTime");
    w.Double(t.throughput.last_increase_date_time);
  }
  if (t.throughput.last_decrease_date_time > 0) {
    write_key(w, "LastDecreaseDateTime");
    w.Double(t.throughput.last_decrease_date_time);
  }
  write_key(w, "NumberOfDecreasesToday");
  w.Int64(t.throughput.number_of_decreases_today);
  write_key(w, "ReadCapacityUnits");
  w.Int64(t.throughput.read_capacity_units);
  write_key(w, "WriteCapacityUnits");
  w.Int64(t.throughput.write_capacity_units);
  w.EndObject();
  write_key(w, "TableSizeBytes");
  w.Int64(ctx.engine.table_size_bytes(t));
  write_key(w, "ItemCount");
  w.Int64(ctx.engine.item_count(t));
  write_key(w, "TableArn");
  write_string(w, arn);
  write_index_descriptions(w, ctx, t);
  write_key(w, "TableId");
  write_string(w, t.table_id);
  if (t.billing_mode_given || t.billing_mode == BillingMode::PAY_PER_REQUEST) {
    write_key(w, "BillingModeSummary");
    w.StartObject();
    write_key(w, "BillingMode");
    write_string(w, billing_mode_name(t.billing_mode));
    if (t.last_update_to_pay_per_request > 0) {
      write_key(w, "LastUpdateToPayPerRequestDateTime");
      w.Double(t.last_update_to_pay_per_request);
    }
    w.EndObject();
  }
  if (t.stream && t.stream->enabled) {
    write_key(w, "StreamSpecification");
    w.StartObject();
    write_key(w, "StreamEnabled");
    w.Bool(true);
    write_key(w, "StreamViewType");
    write_string(w, t.stream->view_type);
    w.EndObject();
  }
  if (!t.latest_stream_label.empty()) {
    write_key(w, "LatestStreamLabel");
    write_string(w, t.latest_stream_label);
    write_key(w, "LatestStreamArn");
    write_string(w, stream_arn(ctx, t.name, t.latest_stream_label));
  }
  if (t.sse_enabled) {
    write_key(w, "SSEDescription");
    w.StartObject();
    write_key(w, "Status");
    write_string(w, "ENABLED");
    write_key(w, "SSEType");
    write_string(w, "KMS");
    write_key(w, "KMSMasterKeyArn");
    write_string(w, fmt::format("arn:aws:kms:{}:{}:key/{}", ctx.options.region,
                                ctx.options.account_id, t.table_id));
    w.EndObject();
  }
  if (t.table_class_given) {
    write_key(w, "TableClassSummary");
    w.StartObject();
    write_key(w, "TableClass");
    write_string(w, t.table_class);
    w.EndObject();
  }
  write_key(w, "DeletionProtectionEnabled");
  w.Bool(t.deletion_protection);
  w.EndObject();
}

std::string table_description_response(const Context& ctx, const TableDefinition& t,
                                       std::string_view member, std::string_view status) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, member);
  write_description(w, ctx, t, status);
  w.EndObject();
  return json_text(out);
}

// ---- CreateTable ----------------------------------------------------------------------

std::string render_key_schema_element(const std::optional<std::string_view>& name,
                                      const std::optional<std::string_view>& type) {
  return fmt::format("KeySchemaElement(attributeName={}, keyType={})", name.value_or("null"),
                     type.value_or("null"));
}

// Reads the members Kumo accepts without acting on them, so that a member of the wrong
// JSON type still gets its SerializationException (§1.2 step 9).
void read_unused_members(const JsonObject& request, const std::optional<JsonObject>& sse) {
  request.string("ResourcePolicy");
  if (auto on_demand = request.object("OnDemandThroughput")) {
    on_demand->integer("MaxReadRequestUnits", "Long");
    on_demand->integer("MaxWriteRequestUnits", "Long");
  }
  if (auto warm = request.object("WarmThroughput")) {
    warm->integer("ReadUnitsPerSecond", "Long");
    warm->integer("WriteUnitsPerSecond", "Long");
  }
  if (sse) {
    sse->string("SSEType");
    sse->string("KMSMasterKeyId");
  }
}

}  // namespace

std::string create_table(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto table_name = request.string("TableName");
  auto definitions_json = request.array("AttributeDefinitions");
  auto key_schema_json = request.array("KeySchema");
  auto billing_mode = request.string("BillingMode");
  auto throughput = read_throughput(request, coral);
  auto stream = read_stream(request, coral);
  auto table_class = request.string("TableClass");
  auto deletion_protection = request.boolean("DeletionProtectionEnabled");
  auto tags_json = request.array("Tags");
  auto sse = request.object("SSESpecification");
  auto lsis = request.array("LocalSecondaryIndexes");
  auto gsis = request.array("GlobalSecondaryIndexes");
  read_unused_members(request, sse);

  // Model constraints, reported together.
  struct RawDefinition {
    std::optional<std::string_view> name, type;
  };
  std::vector<RawDefinition> definitions;
  if (definitions_json) {
    std::size_t i = 0;
    for (const auto& d : definitions_json->objects()) {
      ++i;
      RawDefinition def;
      if (d) def = {d->string("AttributeName"), d->string("AttributeType")};
      std::string path = fmt::format("attributeDefinitions.{}.member", i);
      coral.require(def.name.has_value(), path + ".attributeName");
      if (def.name) coral.check_length(*def.name, path + ".attributeName", 1, 255);
      coral.require(def.type.has_value(), path + ".attributeType");
      coral.check_enum(def.type, path + ".attributeType", {"B", "N", "S"});
      definitions.push_back(def);
    }
  }
  struct RawKey {
    std::optional<std::string_view> name, type;
  };
  std::vector<RawKey> keys;
  if (key_schema_json) {
    std::size_t i = 0;
    for (const auto& k : key_schema_json->objects()) {
      ++i;
      RawKey key;
      if (k) key = {k->string("AttributeName"), k->string("KeyType")};
      std::string path = fmt::format("keySchema.{}.member", i);
      coral.require(key.name.has_value(), path + ".attributeName");
      if (key.name) coral.check_length(*key.name, path + ".attributeName", 1, 255);
      coral.require(key.type.has_value(), path + ".keyType");
      coral.check_enum(key.type, path + ".keyType", {"HASH", "RANGE"});
      keys.push_back(key);
    }
  }
  coral.check_table_name(table_name, "tableName");
  coral.require(definitions_json.has_value(), "attributeDefinitions");
  coral.require(key_schema_json.has_value(), "keySchema");
  if (key_schema_json && (keys.empty() || keys.size() > 2)) {
    std::vector<std::string> rendered;
    for (const auto& k : keys) rendered.push_back(render_key_schema_element(k.name, k.type));
    coral.add(render_list(rendered), "keySchema",
              keys.empty() ? "Member must have length greater than or equal to 1"
                           : "Member must have length less than or equal to 2");
  }
  coral.check_enum(billing_mode, "billingMode", {"PROVISIONED", "PAY_PER_REQUEST"});
  std::vector<Tag> tags;
  if (tags_json) tags = read_tags(*tags_json, coral);
  std::optional<std::vector<IndexRequest>> lsi_requests, gsi_requests;
  if (lsis) lsi_requests = read_indexes(*lsis, "localSecondaryIndexes", false, coral);
  if (gsis) gsi_requests = read_indexes(*gsis, "globalSecondaryIndexes", true, coral);
  coral.throw_if_any();

  // Billing.
  const bool pay_per_request = billing_mode == "PAY_PER_REQUEST";
  if (pay_per_request && throughput) {
    throw ApiError::validation(std::string(kInvalid) +
                               "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
                               "specified when BillingMode is PAY_PER_REQUEST");
  }
  if (!pay_per_request && !throughput) {
    throw ApiError::validation(std::string(kInvalid) +
                               "ReadCapacityUnits and WriteCapacityUnits must both be "
                               "specified when BillingMode is PROVISIONED");
  }
  if (throughput) check_throughput_bounds(*throughput);

  // Key schema against the attribute definitions.
  std::vector<std::string> def_names, key_names;
  std::set<std::string_view> seen;
  for (const auto& d : definitions) {
    if (!seen.insert(*d.name).second) {
      throw ApiError::validation("Attribute Name is duplicated: " + std::string(*d.name));
    }
    def_names.emplace_back(*d.name);
  }
  for (const auto& k : keys) key_names.emplace_back(*k.name);
  if (keys.size() > definitions.size()) {
    throw ApiError::validation("Invalid KeySchema: Some index key attribute have no definition");
  }
  for (const auto& k : keys) {
    if (!seen.count(*k.name)) {
      throw ApiError::validation(fmt::format(
          "{}Some index key attributes are not defined in AttributeDefinitions. Keys: {}, "
          "AttributeDefinitions: {}",
          kInvalid, render_list(key_names), render_list(def_names)));
    }
  }
  if (keys.size() == 2 && *keys[0].name == *keys[1].name) {
    throw ApiError::validation(
        "Both the Hash Key and the Range Key element in the KeySchema have the same name");
  }
  if (*keys[0].type != "HASH") {
    throw ApiError::validation(
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
  }
  if (keys.size() == 2 && *keys[1].type != "RANGE") {
    throw ApiError::validation(
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
  }
  // The table's key and typed definitions, which index checks need.
  TableDefinition def;
  def.name = std::string(*table_name);
  for (const auto& d : definitions) {
    def.attribute_definitions.push_back(
        {std::string(*d.name),
         *d.type == "N" ? ScalarType::N : (*d.type == "B" ? ScalarType::B : ScalarType::S)});
  }
  auto definition_of = [&](std::string_view name) {
    for (const auto& d : def.attribute_definitions) {
      if (d.name == name) return d;
    }
    return AttributeDefinition{};
  };
  for (const auto& k : keys) {
    KeyType type = *k.type == "HASH" ? KeyType::HASH : KeyType::RANGE;
    def.key_schema.push_back({std::string(*k.name), type});
    if (type == KeyType::HASH) {
      def.key.hash = definition_of(*k.name);
    } else {
      def.key.range = definition_of(*k.name);
    }
  }
  if (lsis || gsis) {
    build_indexes(lsi_requests, gsi_requests, def.attribute_definitions, pay_per_request, def);
  } else if (definitions.size() != keys.size()) {
    throw ApiError::validation(std::string(kInvalid) +
                               "Number of attributes in KeySchema does not exactly match "
                               "number of attributes defined in AttributeDefinitions");
  }

  // Streams, tags, table class.
  if (stream) {
    if (*stream->enabled && !stream->view_type) {
      throw ApiError::validation(std::string(kInvalid) +
                                 "Table is being created with a stream enabled, "
                                 "UpdateViewType is required");
    }
    if (!*stream->enabled && stream->view_type) {
      throw ApiError::validation(std::string(kInvalid) +
                                 "Table is being created with a stream disabled, "
                                 "UpdateViewType should not be specified");
    }
  }
  check_tags(tags, 0);
  check_table_class(table_class);

  def.billing_mode = pay_per_request ? BillingMode::PAY_PER_REQUEST : BillingMode::PROVISIONED;
  def.billing_mode_given = billing_mode.has_value();
  if (throughput) {
    def.throughput.read_capacity_units = *throughput->read;
    def.throughput.write_capacity_units = *throughput->write;
  }
  def.creation_date_time = now_seconds();
  if (stream && *stream->enabled) {
    def.stream = StreamSpecification{true, std::string(*stream->view_type)};
    def.latest_stream_label = engine::stream_label(def.creation_date_time);
  }
  if (table_class) {
    def.table_class = std::string(*table_class);
    def.table_class_given = true;
  }
  def.deletion_protection = deletion_protection.value_or(false);
  def.tags = std::move(tags);
  def.sse_enabled = sse && sse->boolean("Enabled").value_or(false);

  engine::TablePtr created = ctx.engine.create_table(std::move(def));
  return table_description_response(ctx, *created, "TableDescription", "ACTIVE");
}

std::string describe_table(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  check_table_name_or_arn(coral, name, "tableName");
  coral.throw_if_any();
  engine::TablePtr table = control_table(ctx, *name);
  return table_description_response(ctx, *table, "Table", "ACTIVE");
}

std::string delete_table(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  check_table_name_or_arn(coral, name, "tableName");
  coral.throw_if_any();
  engine::TablePtr table = control_table(ctx, *name);
  if (table->deletion_protection) {
    throw ApiError::validation(
        "Resource cannot be deleted as it is currently protected against deletion. Disable "
        "deletion protection first.");
  }
  // Describe before the data goes, as DynamoDB's DELETING description still counts it.
  std::string body = table_description_response(ctx, *table, "TableDescription", "DELETING");
  ctx.engine.delete_table(table->name);
  return body;
}

std::string update_table(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  auto billing_mode = request.string("BillingMode");
  auto throughput = read_throughput(request, coral);
  auto stream = read_stream(request, coral);
  auto table_class = request.string("TableClass");
  auto deletion_protection = request.boolean("DeletionProtectionEnabled");
  auto gsi_updates = request.array("GlobalSecondaryIndexUpdates");
  auto sse = request.object("SSESpecification");
  check_table_name_or_arn(coral, name, "tableName");
  coral.check_enum(billing_mode, "billingMode", {"PROVISIONED", "PAY_PER_REQUEST"});
  coral.throw_if_any();

  const bool other_present = request.has("ReplicaUpdates") ||
                             request.has("MultiRegionConsistency") ||
                             request.has("OnDemandThroughput") || request.has("WarmThroughput");
  if (!throughput && !billing_mode && !stream && !gsi_updates && !sse && !table_class &&
      !deletion_protection && !other_present) {
    throw ApiError::validation(
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
        "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, "
        "MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
        "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is "
        "required");
  }
  const int changes = (throughput || billing_mode) + !!stream + !!gsi_updates + !!sse +
                      !!table_class + !!deletion_protection;
  if (deletion_protection && changes > 1) {
    throw ApiError::validation(std::string(kInvalid) +
                               "DeletionProtection modification must be the only operation in "
                               "the request");
  }
  if (table_class && changes > 1) {
    throw ApiError::validation(std::string(kInvalid) +
                               "TableClass modification must be the only operation in the "
                               "request");
  }
  if (throughput && stream) {
    throw ApiError::validation(std::string(kInvalid) +
                               "You cannot modify stream status while updating table IOPS");
  }
  std::optional<GlobalIndexUpdates> index_updates;
  if (gsi_updates) {
    CoralErrors index_coral;
    index_updates = read_global_index_updates(request, *gsi_updates, index_coral);
    const bool online = index_updates->create || index_updates->delete_name;
    if (online && throughput) {
      throw ApiError::validation(std::string(kInvalid) +
                                 "You cannot create or delete index while updating table IOPS");
    }
    if (online && stream) {
      throw ApiError::validation(std::string(kInvalid) +
                                 "You cannot create or delete index while changing stream status");
    }
  }
  check_table_class(table_class);
  engine::TablePtr current = control_table(ctx, *name);

  std::uint32_t created_index = 0, dropped_index = 0;
  engine::TablePtr updated = ctx.engine.update_table(current->name, [&](TableDefinition& t) {
    const double now = now_seconds();
    BillingMode mode = t.billing_mode;
    if (billing_mode) {
      mode = *billing_mode == "PAY_PER_REQUEST" ? BillingMode::PAY_PER_REQUEST
                                                : BillingMode::PROVISIONED;
    }
    if (throughput && mode == BillingMode::PAY_PER_REQUEST) {
      throw ApiError::validation(std::string(kInvalid) +
                                 "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
                                 "specified when BillingMode is PAY_PER_REQUEST");
    }
    if (!throughput && mode == BillingMode::PROVISIONED &&
        t.billing_mode == BillingMode::PAY_PER_REQUEST) {
      throw ApiError::validation(std::string(kInvalid) +
                                 "ProvisionedThroughput must be specified when BillingMode is "
                                 "PROVISIONED");
    }
    if (throughput) {
      check_throughput_bounds(*throughput);
      ProvisionedThroughput& p = t.throughput;
      if (t.billing_mode == BillingMode::PROVISIONED &&
          *throughput->read == p.read_capacity_units &&
          *throughput->write == p.write_capacity_units) {
        throw ApiError::validation(fmt::format(
            "The provisioned throughput for the table will not change. The requested value "
            "equals the current value. Current ReadCapacityUnits provisioned for the table: "
            "{}. Requested ReadCapacityUnits: {}. Current WriteCapacityUnits provisioned for "
            "the table: {}. Requested WriteCapacityUnits: {}. Refer to the Amazon DynamoDB "
            "Developer Guide for current limits and how to request higher limits.",
            p.read_capacity_units, *throughput->read, p.write_capacity_units, *throughput->write));
      }
      if (t.billing_mode == BillingMode::PROVISIONED) {
        if (*throughput->read < p.read_capacity_units ||
            *throughput->write < p.write_capacity_units) {
          ++p.number_of_decreases_today;
          p.last_decrease_date_time = now;
        }
        if (*throughput->read > p.read_capacity_units ||
            *throughput->write > p.write_capacity_units) {
          p.last_increase_date_time = now;
        }
      }
      p.read_capacity_units = *throughput->read;
      p.write_capacity_units = *throughput->write;
    }
    if (billing_mode) {
      if (mode == BillingMode::PAY_PER_REQUEST && t.billing_mode != mode) {
        t.last_update_to_pay_per_request = now;
        t.throughput.read_capacity_units = 0;
        t.throughput.write_capacity_units = 0;
      }
      t.billing_mode = mode;
      t.billing_mode_given = true;
    }
    if (stream) {
      const bool enabled_now = t.stream && t.stream->enabled;
      if (*stream->enabled) {
        if (enabled_now) {
          throw ApiError::validation("Table already has an enabled stream: TableName: " + t.name);
        }
        if (!stream->view_type) {
          throw ApiError::validation(std::string(kInvalid) +
                                     "If stream is being enabled then UpdateViewType is required");
        }
        t.stream = StreamSpecification{true, std::string(*stream->view_type)};
        t.latest_stream_label = engine::stream_label(now);
      } else {
        if (stream->view_type) {
          throw ApiError::validation(std::string(kInvalid) +
                                     "If stream is being disabled, then UpdateViewType must not "
                                     "be specified");
        }
        if (!enabled_now) {
          throw ApiError::validation("Table has no stream to disable: TableName: " + t.name);
        }
        t.stream->enabled = false;
      }
    }
    if (table_class) {
      t.table_class = std::string(*table_class);
      t.table_class_given = true;
    }
    if (deletion_protection) t.deletion_protection = *deletion_protection;
    if (index_updates)
      created_index = apply_global_index_updates(*index_updates, t, &dropped_index);
    if (sse) t.sse_enabled = sse->boolean("Enabled").value_or(t.sse_enabled);
  });
  // The catalog already routes new writes to a created index; the items that were there
  // before are added in the background while the index is CREATING. A deleted index's
  // entries go once nothing can read them.
  if (created_index) ctx.engine.start_backfill(updated->name, created_index);
  if (dropped_index) ctx.engine.drop_index(*updated, dropped_index);
  return table_description_response(ctx, *updated, "TableDescription", "ACTIVE");
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

std::string describe_limits(const Context&, const JsonObject&) {
  return R"({"AccountMaxReadCapacityUnits":80000,"AccountMaxWriteCapacityUnits":80000,)"
         R"("TableMaxReadCapacityUnits":40000,"TableMaxWriteCapacityUnits":40000})";
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
