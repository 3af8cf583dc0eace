// CreateTable: the request decoded with its model constraints, then validated in
// DynamoDB's order into a table definition (billing, key schema, indexes, stream, tags,
// table class), then created.
#include <set>

#include <fmt/format.h>

#include "api/indexes.h"
#include "api/operations.h"
#include "api/table_names.h"
#include "api/table_requests.h"
#include "api/tags.h"
#include "api/throughput_settings.h"
#include "engine/change_stream.h"
#include "model/api_error.h"
#include "model/clock.h"

namespace kumo::api {
namespace {

struct CreateTableRequest {
  std::optional<std::string_view> table_name;
  std::vector<RawAttribute> definitions;
  std::vector<RawAttribute> keys;
  std::optional<std::string_view> billing_mode;
  std::optional<ThroughputRequest> throughput;
  std::optional<UnitsRequest> on_demand, warm;
  std::optional<StreamRequest> stream;
  std::optional<std::string_view> table_class;
  std::optional<bool> deletion_protection;
  std::vector<Tag> tags;
  std::optional<JsonObject> sse;
  bool has_indexes = false;
  std::optional<std::vector<IndexRequest>> lsis;
  std::optional<std::vector<IndexRequest>> gsis;
};

std::string render_key_schema_element(const RawAttribute& key) {
  return fmt::format("KeySchemaElement(attributeName={}, keyType={})", key.name.value_or("null"),
                     key.type.value_or("null"));
}

// Reads the members Kumo accepts without acting on them, so that a member of the wrong
// JSON type still gets its SerializationException.
void read_unused_members(const JsonObject& request, const std::optional<JsonObject>& sse) {
  request.string("ResourcePolicy");
  if (sse) {
    sse->string("SSEType");
    sse->string("KMSMasterKeyId");
  }
}

// JSON types while reading, then every model constraint of the request, added to `coral`.
// ImportTable's TableCreationParameters (`import`) has CreateTable's members but
// LocalSecondaryIndexes, StreamSpecification, Tags, TableClass, DeletionProtectionEnabled,
// WarmThroughput and ResourcePolicy: those are unknown members there, ignored whatever
// they hold.
CreateTableRequest decode_create_table(const JsonObject& request, CoralErrors& coral, bool import) {
  CreateTableRequest r;
  r.table_name = request.string("TableName");
  auto definitions = request.array("AttributeDefinitions");
  auto key_schema = request.array("KeySchema");
  r.billing_mode = request.string("BillingMode");
  r.throughput = read_throughput(request, coral);
  r.on_demand = read_on_demand(request);
  std::optional<JsonArray> tags, lsis;
  if (!import) {
    r.warm = read_warm(request);
    r.stream = read_stream(request, coral);
    r.table_class = request.string("TableClass");
    r.deletion_protection = request.boolean("DeletionProtectionEnabled");
    tags = request.array("Tags");
  }
  r.sse = request.object("SSESpecification");
  if (!import) lsis = request.array("LocalSecondaryIndexes");
  auto gsis = request.array("GlobalSecondaryIndexes");
  if (!import) {
    read_unused_members(request, r.sse);
  } else if (r.sse) {
    r.sse->string("SSEType");
    r.sse->string("KMSMasterKeyId");
  }

  if (definitions) {
    r.definitions = read_attributes(*definitions, "attributeDefinitions", "AttributeType",
                                    {"B", "N", "S"}, coral);
  }
  if (key_schema) {
    r.keys = read_attributes(*key_schema, "keySchema", "KeyType", {"HASH", "RANGE"}, coral);
  }
  coral.check_table_name(r.table_name, "tableName");
  coral.require(definitions.has_value(), "attributeDefinitions");
  coral.require(key_schema.has_value(), "keySchema");
  if (key_schema && (r.keys.empty() || r.keys.size() > 2)) {
    std::vector<std::string> rendered;
    for (const auto& k : r.keys) rendered.push_back(render_key_schema_element(k));
    coral.add(render_list(rendered), "keySchema",
              r.keys.empty() ? "Member must have length greater than or equal to 1"
                             : "Member must have length less than or equal to 2");
  }
  coral.check_enum(r.billing_mode, "billingMode", {"PROVISIONED", "PAY_PER_REQUEST"});
  if (tags) r.tags = read_tags(*tags, coral);
  if (lsis) r.lsis = read_indexes(*lsis, "localSecondaryIndexes", false, coral);
  if (gsis) r.gsis = read_indexes(*gsis, "globalSecondaryIndexes", true, coral);
  r.has_indexes = lsis || gsis;
  return r;
}

CreateTableRequest decode_create_table(const JsonObject& request) {
  CoralErrors coral;
  CreateTableRequest r = decode_create_table(request, coral, false);
  require_table_name(r.table_name);
  coral.throw_if_any();
  return r;
}

// PAY_PER_REQUEST takes no throughput, PROVISIONED needs it, within bounds and the quota;
// then OnDemandThroughput and WarmThroughput.
void check_billing(const CreateTableRequest& r, const ServiceOptions& options) {
  const bool pay_per_request = r.billing_mode == "PAY_PER_REQUEST";
  if (pay_per_request && r.throughput) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
                               "specified when BillingMode is PAY_PER_REQUEST");
  }
  if (!pay_per_request && !r.throughput) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "ReadCapacityUnits and WriteCapacityUnits must both be "
                               "specified when BillingMode is PROVISIONED");
  }
  if (r.throughput) check_provisioned_quota(*r.throughput->read, *r.throughput->write, {}, options);
  const BillingMode mode =
      pay_per_request ? BillingMode::PAY_PER_REQUEST : BillingMode::PROVISIONED;
  if (r.on_demand) check_on_demand(*r.on_demand, {}, SettingsCall::kCreate, mode, options);
  if (r.warm) {
    ProvisionedThroughput provisioned;
    if (r.throughput) provisioned = {*r.throughput->read, *r.throughput->write};
    check_warm(*r.warm, {}, SettingsCall::kCreate, mode, provisioned, CapacitySettings{}, options);
  }
}

// The key schema against the attribute definitions: every key defined, a HASH key first
// and a RANGE key second of another name. Fills the definition's typed attributes and key.
void build_key(const CreateTableRequest& r, TableDefinition& def) {
  std::vector<std::string> def_names, key_names;
  std::set<std::string_view> seen;
  for (const auto& d : r.definitions) {
    if (!seen.insert(*d.name).second) {
      throw ApiError::validation("Attribute Name is duplicated: " + std::string(*d.name));
    }
    def_names.emplace_back(*d.name);
  }
  for (const auto& k : r.keys) key_names.emplace_back(*k.name);
  if (r.keys.size() > r.definitions.size()) {
    throw ApiError::validation("Invalid KeySchema: Some index key attribute have no definition");
  }
  for (const auto& k : r.keys) {
    if (!seen.count(*k.name)) {
      throw ApiError::validation(fmt::format(
          "{}Some index key attributes are not defined in AttributeDefinitions. Keys: {}, "
          "AttributeDefinitions: {}",
          kInvalidParameters, render_list(key_names), render_list(def_names)));
    }
  }
  if (r.keys.size() == 2 && *r.keys[0].name == *r.keys[1].name) {
    throw ApiError::validation(
        "Both the Hash Key and the Range Key element in the KeySchema have the same name");
  }
  if (*r.keys[0].type != "HASH") {
    throw ApiError::validation(
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
  }
  if (r.keys.size() == 2 && *r.keys[1].type != "RANGE") {
    throw ApiError::validation(
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
  }
  for (const auto& d : r.definitions) {
    def.attribute_definitions.push_back({std::string(*d.name), scalar_type_of(*d.type)});
  }
  auto definition_of = [&](std::string_view name) {
    for (const auto& d : def.attribute_definitions) {
      if (d.name == name) return d;
    }
    return AttributeDefinition{};
  };
  for (const auto& k : r.keys) {
    const KeyType type = *k.type == "HASH" ? KeyType::HASH : KeyType::RANGE;
    if (type == KeyType::HASH) {
      def.key.hash = definition_of(*k.name);
    } else {
      def.key.range = definition_of(*k.name);
    }
  }
}

// A stream enabled at creation names its view type; a disabled one names none.
void check_stream(const std::optional<StreamRequest>& stream) {
  if (!stream) return;
  if (*stream->enabled && !stream->view_type) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "Table is being created with a stream enabled, "
                               "UpdateViewType is required");
  }
  if (!*stream->enabled && stream->view_type) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "Table is being created with a stream disabled, "
                               "UpdateViewType should not be specified");
  }
}

// The table the request describes, validated in DynamoDB's order. Throws
// ValidationException or LimitExceededException.
TableDefinition validate_create_table(CreateTableRequest& r, const ServiceOptions& options,
                                      double now) {
  check_billing(r, options);
  const bool pay_per_request = r.billing_mode == "PAY_PER_REQUEST";
  TableDefinition def;
  def.name = std::string(*r.table_name);
  build_key(r, def);
  if (r.has_indexes) {
    build_indexes(r.lsis, r.gsis, def.attribute_definitions, pay_per_request, options, def);
  } else if (r.definitions.size() != r.keys.size()) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "Number of attributes in KeySchema does not exactly match "
                               "number of attributes defined in AttributeDefinitions");
  }
  check_stream(r.stream);
  check_tags(r.tags, 0);
  check_table_class(r.table_class);

  def.billing_mode = pay_per_request ? BillingMode::PAY_PER_REQUEST : BillingMode::PROVISIONED;
  def.billing_mode_given = r.billing_mode.has_value();
  if (r.throughput) {
    def.throughput.read_capacity_units = *r.throughput->read;
    def.throughput.write_capacity_units = *r.throughput->write;
  }
  init_capacity(def.capacity, r.on_demand, r.warm, def.billing_mode, def.throughput, options);
  def.creation_date_time = now;
  if (r.stream && *r.stream->enabled) {
    def.stream = StreamSpecification{true, std::string(*r.stream->view_type)};
    def.latest_stream_label = engine::stream_label(def.creation_date_time);
  }
  if (r.table_class) {
    def.table_class = std::string(*r.table_class);
    def.table_class_given = true;
  }
  def.deletion_protection = r.deletion_protection.value_or(false);
  def.tags = std::move(r.tags);
  def.sse_enabled = r.sse && r.sse->boolean("Enabled").value_or(false);
  return def;
}

}  // namespace

TableDefinition table_creation_parameters(const JsonObject& parameters, CoralErrors& coral,
                                          const ServiceOptions& options, double now) {
  // Checked with the rest of ImportTable's request: one list of violations, the paths
  // under tableCreationParameters (where TableName is required as the others are).
  coral.set_path_prefix("tableCreationParameters.");
  CreateTableRequest r = decode_create_table(parameters, coral, true);
  coral.set_path_prefix("");
  coral.throw_if_any();
  return validate_create_table(r, options, now);
}

std::string create_table(const Context& ctx, const JsonObject& request) {
  CreateTableRequest r = decode_create_table(request);
  TableDefinition def = validate_create_table(r, ctx.options, ctx.engine.clock().now_ms());
  engine::TablePtr created = ctx.engine.create_table(std::move(def));
  // The answer shows the table's warm throughput only when the request set it.
  return table_description_response(ctx, *created, "TableDescription", "ACTIVE",
                                    r.warm ? WarmShown::kTable : WarmShown::kNone);
}

}  // namespace kumo::api
