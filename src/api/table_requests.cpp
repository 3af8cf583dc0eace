#include "api/table_requests.h"

#include <cctype>

#include <fmt/format.h>

#include "api/indexes.h"
#include "api/table_names.h"
#include "api/throughput_settings.h"
#include "model/api_error.h"

namespace kumo::api {
namespace {

void write_attribute_definitions(JsonWriter& w, const TableDefinition& t) {
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
}

// The description of a table being deleted leaves out its schema: no
// AttributeDefinitions, KeySchema, CreationDateTime or index lists.
void write_description(JsonWriter& w, const Context& ctx, const TableDefinition& t,
                       std::string_view status, WarmShown warm) {
  const bool schema = status != kDeleting;
  const std::string arn = table_arn(ctx, t.name);
  w.StartObject();
  if (schema) write_attribute_definitions(w, t);
  write_key(w, "TableName");
  write_string(w, t.name);
  if (schema) {
    write_key(w, "KeySchema");
    write_key_schema(w, t.key.elements());
  }
  write_key(w, "TableStatus");
  write_string(w, status);
  if (schema) {
    write_key(w, "CreationDateTime");
    w.Double(t.creation_date_time);
  }
  write_key(w, "ProvisionedThroughput");
  write_provisioned_throughput(w, t.throughput);
  write_key(w, "TableSizeBytes");
  w.Int64(ctx.engine.table_size_bytes(t));
  write_key(w, "ItemCount");
  w.Int64(ctx.engine.item_count(t));
  write_key(w, "TableArn");
  write_string(w, arn);
  if (schema) write_index_descriptions(w, ctx, t, warm == WarmShown::kAll);
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
  write_stream_enabled(w, "StreamSpecification", t);
  if (!t.latest_stream_label.empty()) {
    write_key(w, "LatestStreamLabel");
    write_string(w, t.latest_stream_label);
    write_key(w, "LatestStreamArn");
    write_string(w, stream_arn(ctx, t.name, t.latest_stream_label));
  }
  if (t.restore && !t.restore->imports()) {
    // Only while the restore runs: the member is gone once the table is ACTIVE.
    write_key(w, "RestoreSummary");
    w.StartObject();
    // (A restore to a point in time has no backup.)
    if (!t.restore->backup_arn.empty()) {
      write_key(w, "SourceBackupArn");
      write_string(w, t.restore->backup_arn);
    }
    write_key(w, "SourceTableArn");
    write_string(w, t.restore->source_table_arn);
    write_key(w, "RestoreDateTime");
    w.Double(t.restore->restore_date_time);
    write_key(w, "RestoreInProgress");
    w.Bool(true);
    w.EndObject();
  }
  write_sse_description(w, ctx, t);
  if (t.table_class_given) {
    write_key(w, "TableClassSummary");
    w.StartObject();
    write_key(w, "TableClass");
    write_string(w, t.table_class);
    w.EndObject();
  }
  write_key(w, "DeletionProtectionEnabled");
  w.Bool(t.deletion_protection);
  write_on_demand(w, t.capacity);
  if (warm != WarmShown::kNone) {
    write_warm(w, reported_warm(t.capacity, t.billing_mode, t.throughput, ctx.options), status);
  }
  w.EndObject();
}

}  // namespace

std::string_view billing_mode_name(BillingMode mode) {
  return mode == BillingMode::PAY_PER_REQUEST ? "PAY_PER_REQUEST" : "PROVISIONED";
}

std::vector<RawAttribute> read_attributes(const JsonArray& list, std::string_view path,
                                          std::string_view type_member,
                                          std::initializer_list<std::string_view> types,
                                          CoralErrors& coral) {
  std::vector<RawAttribute> out;
  std::size_t i = 0;
  for (const auto& element : list.objects()) {
    ++i;
    RawAttribute a;
    if (element) a = {element->string("AttributeName"), element->string(type_member)};
    const std::string member = fmt::format("{}.{}.member", path, i);
    coral.require(a.name.has_value(), member + ".attributeName");
    if (a.name) coral.check_length(*a.name, member + ".attributeName", 1, 255);
    const std::string type_path = member + "." + static_cast<char>(std::tolower(type_member[0])) +
                                  std::string(type_member.substr(1));
    coral.require(a.type.has_value(), type_path);
    coral.check_enum(a.type, type_path, types);
    out.push_back(a);
  }
  return out;
}

ScalarType scalar_type_of(std::string_view type) {
  return type == "N" ? ScalarType::N : (type == "B" ? ScalarType::B : ScalarType::S);
}

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

void write_stream_enabled(JsonWriter& w, std::string_view member, const TableDefinition& t) {
  if (!t.stream || !t.stream->enabled) return;
  write_key(w, member);
  w.StartObject();
  write_key(w, "StreamEnabled");
  w.Bool(true);
  write_key(w, "StreamViewType");
  write_string(w, t.stream->view_type);
  w.EndObject();
}

void write_sse_description(JsonWriter& w, const Context& ctx, const TableDefinition& t) {
  if (!t.sse_enabled) return;
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

std::string table_description_response(const Context& ctx, const TableDefinition& t,
                                       std::string_view member, std::string_view status,
                                       WarmShown warm) {
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, member);
  write_description(w, ctx, t, status, warm);
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
