// UpdateTimeToLive, DescribeTimeToLive. The engine's reaper deletes expired items.
#include "api/operations.h"
#include "api/table_names.h"
#include "model/api_error.h"
#include "model/clock.h"

namespace kumo::api {

std::string update_time_to_live(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  auto spec = request.object("TimeToLiveSpecification");
  check_table_name_or_arn(coral, name, "tableName");
  coral.require(spec.has_value(), "timeToLiveSpecification");
  std::optional<std::string_view> attribute;
  std::optional<bool> enabled;
  if (spec) {
    attribute = spec->string("AttributeName");
    enabled = spec->boolean("Enabled");
    coral.require(attribute.has_value(), "timeToLiveSpecification.attributeName");
    if (attribute) coral.check_length(*attribute, "timeToLiveSpecification.attributeName", 1, 255);
    coral.require(enabled.has_value(), "timeToLiveSpecification.enabled");
  }
  coral.throw_if_any();
  engine::TablePtr table = changed_table(ctx, *name);
  ctx.engine.update_table(table->name, [&](TableDefinition& t) {
    if (t.ttl_enabled && t.ttl_attribute != *attribute) {
      throw ApiError::validation(
          "TimeToLive is active on a different AttributeName: current AttributeName is " +
          t.ttl_attribute);
    }
    if (*enabled && t.ttl_enabled) throw ApiError::validation("TimeToLive is already enabled");
    if (!*enabled && !t.ttl_enabled) throw ApiError::validation("TimeToLive is already disabled");
    const double now = ctx.engine.clock().now_ms();
    if (ctx.options.ttl_cooldown > 0 && t.ttl_updated > 0 &&
        now - t.ttl_updated < ctx.options.ttl_cooldown) {
      throw ApiError::validation(
          "Time to live has been modified multiple times within a fixed interval");
    }
    t.ttl_enabled = *enabled;
    t.ttl_attribute = std::string(*attribute);
    t.ttl_updated = now;
    t.ttl_scheduling = *enabled;
  });
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "TimeToLiveSpecification");
  w.StartObject();
  write_key(w, "Enabled");
  w.Bool(*enabled);
  write_key(w, "AttributeName");
  write_string(w, *attribute);
  w.EndObject();
  w.EndObject();
  return json_text(out);
}

std::string describe_time_to_live(const Context& ctx, const JsonObject& request) {
  CoralErrors coral;
  auto name = request.string("TableName");
  require_table_name(name);
  check_table_name_or_arn(coral, name, "tableName");
  coral.throw_if_any();
  engine::TablePtr table = control_table(ctx, *name);
  JsonOut out;
  JsonWriter w(out);
  w.StartObject();
  write_key(w, "TimeToLiveDescription");
  w.StartObject();
  write_key(w, "TimeToLiveStatus");
  write_string(w, table->ttl_enabled ? "ENABLED" : "DISABLED");
  if (table->ttl_enabled) {
    write_key(w, "AttributeName");
    write_string(w, table->ttl_attribute);
  }
  w.EndObject();
  w.EndObject();
  return json_text(out);
}

}  // namespace kumo::api
