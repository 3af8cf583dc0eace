// UpdateTable: the request decoded with the rules on which changes may go together, then
// applied to the table's definition under the catalog's lock (billing and throughput,
// stream, table class, deletion protection, global index updates, encryption), then the
// index work the change starts.
#include <fmt/format.h>

#include "api/indexes.h"
#include "api/operations.h"
#include "api/table_names.h"
#include "api/table_requests.h"
#include "engine/change_stream.h"
#include "model/api_error.h"
#include "model/clock.h"

namespace kumo::api {
namespace {

struct UpdateTableRequest {
  std::optional<std::string_view> table_name;
  std::optional<std::string_view> billing_mode;
  std::optional<ThroughputRequest> throughput;
  std::optional<StreamRequest> stream;
  std::optional<std::string_view> table_class;
  std::optional<bool> deletion_protection;
  std::optional<GlobalIndexUpdates> index_updates;
  std::optional<JsonObject> sse;
};

// The request's AttributeDefinitions, their model constraints already checked.
std::vector<AttributeDefinition> typed_definitions(const std::vector<RawAttribute>& raw) {
  std::vector<AttributeDefinition> out;
  out.reserve(raw.size());
  for (const auto& d : raw) out.push_back({std::string(*d.name), scalar_type_of(*d.type)});
  return out;
}

// The members' model constraints, then the rules on what one request may change: at least
// one thing, a deletion-protection or table-class change alone, no stream change or index
// creation with a throughput change.
UpdateTableRequest decode_update_table(const JsonObject& request) {
  UpdateTableRequest r;
  CoralErrors coral;
  r.table_name = request.string("TableName");
  r.billing_mode = request.string("BillingMode");
  r.throughput = read_throughput(request, coral);
  r.stream = read_stream(request, coral);
  r.table_class = request.string("TableClass");
  r.deletion_protection = request.boolean("DeletionProtectionEnabled");
  auto definitions = request.array("AttributeDefinitions");
  auto gsi_updates = request.array("GlobalSecondaryIndexUpdates");
  r.sse = request.object("SSESpecification");
  require_table_name(r.table_name);
  std::vector<RawAttribute> raw_definitions;
  if (definitions) {
    raw_definitions = read_attributes(*definitions, "attributeDefinitions", "AttributeType",
                                      {"B", "N", "S"}, coral);
  }
  check_table_name_or_arn(coral, r.table_name, "tableName");
  coral.check_enum(r.billing_mode, "billingMode", {"PROVISIONED", "PAY_PER_REQUEST"});
  coral.throw_if_any();
  // An empty list of index updates asks for no change.
  if (gsi_updates && gsi_updates->size() == 0) gsi_updates.reset();

  const bool other_present = request.has("ReplicaUpdates") ||
                             request.has("MultiRegionConsistency") ||
                             request.has("OnDemandThroughput") || request.has("WarmThroughput");
  if (!r.throughput && !r.billing_mode && !r.stream && !gsi_updates && !r.sse && !r.table_class &&
      !r.deletion_protection && !other_present) {
    throw ApiError::validation(
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
        "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, "
        "MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, "
        "DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is "
        "required");
  }
  const int changes = (r.throughput || r.billing_mode) + !!r.stream + !!gsi_updates + !!r.sse +
                      !!r.table_class + !!r.deletion_protection;
  if (r.deletion_protection && changes > 1) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "DeletionProtection modification must be the only operation in "
                               "the request");
  }
  if (r.table_class && changes > 1) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "TableClass modification must be the only operation in the "
                               "request");
  }
  if (r.throughput && r.stream) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "You cannot modify stream status while updating table IOPS");
  }
  if (gsi_updates) {
    CoralErrors index_coral;
    r.index_updates = read_global_index_updates(*gsi_updates, index_coral);
    r.index_updates->definitions = typed_definitions(raw_definitions);
    const bool online = r.index_updates->create || r.index_updates->delete_name;
    if (online && r.throughput) {
      throw ApiError::validation(std::string(kInvalidParameters) +
                                 "You cannot create or delete index while updating table IOPS");
    }
    if (online && r.stream) {
      throw ApiError::validation(std::string(kInvalidParameters) +
                                 "You cannot create or delete index while changing stream status");
    }
  }
  check_table_class(r.table_class);
  return r;
}

// The billing mode and provisioned throughput: a change of throughput is counted as an
// increase or a decrease (DynamoDB limits decreases per day), and going on demand sets the
// provisioned values to zero.
void apply_billing(const UpdateTableRequest& r, TableDefinition& t, double now) {
  BillingMode mode = t.billing_mode;
  if (r.billing_mode) {
    mode = *r.billing_mode == "PAY_PER_REQUEST" ? BillingMode::PAY_PER_REQUEST
                                                : BillingMode::PROVISIONED;
  }
  if (r.throughput && mode == BillingMode::PAY_PER_REQUEST) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "Neither ReadCapacityUnits nor WriteCapacityUnits can be "
                               "specified when BillingMode is PAY_PER_REQUEST");
  }
  if (!r.throughput && mode == BillingMode::PROVISIONED &&
      t.billing_mode == BillingMode::PAY_PER_REQUEST) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "ProvisionedThroughput must be specified when BillingMode is "
                               "PROVISIONED");
  }
  if (r.throughput) {
    const ThroughputRequest& requested = *r.throughput;
    check_throughput_bounds(requested);
    ProvisionedThroughput& p = t.throughput;
    if (t.billing_mode == BillingMode::PROVISIONED && *requested.read == p.read_capacity_units &&
        *requested.write == p.write_capacity_units) {
      throw ApiError::validation(fmt::format(
          "The provisioned throughput for the table will not change. The requested value "
          "equals the current value. Current ReadCapacityUnits provisioned for the table: "
          "{}. Requested ReadCapacityUnits: {}. Current WriteCapacityUnits provisioned for "
          "the table: {}. Requested WriteCapacityUnits: {}. Refer to the Amazon DynamoDB "
          "Developer Guide for current limits and how to request higher limits.",
          p.read_capacity_units, *requested.read, p.write_capacity_units, *requested.write));
    }
    if (t.billing_mode == BillingMode::PROVISIONED) {
      if (*requested.read < p.read_capacity_units || *requested.write < p.write_capacity_units) {
        ++p.number_of_decreases_today;
        p.last_decrease_date_time = now;
      }
      if (*requested.read > p.read_capacity_units || *requested.write > p.write_capacity_units) {
        p.last_increase_date_time = now;
      }
    }
    p.read_capacity_units = *requested.read;
    p.write_capacity_units = *requested.write;
  }
  if (r.billing_mode) {
    if (mode == BillingMode::PAY_PER_REQUEST && t.billing_mode != mode) {
      t.last_update_to_pay_per_request = now;
      t.throughput.read_capacity_units = 0;
      t.throughput.write_capacity_units = 0;
    }
    t.billing_mode = mode;
    t.billing_mode_given = true;
  }
}

// Enabling a stream (with its view type) opens a new one; disabling closes the current.
void apply_stream(const StreamRequest& stream, TableDefinition& t, double now) {
  const bool enabled_now = t.stream && t.stream->enabled;
  if (*stream.enabled) {
    if (enabled_now) {
      throw ApiError::validation("Table already has an enabled stream: TableName: " + t.name);
    }
    if (!stream.view_type) {
      throw ApiError::validation(std::string(kInvalidParameters) +
                                 "If stream is being enabled then UpdateViewType is required");
    }
    t.stream = StreamSpecification{true, std::string(*stream.view_type)};
    t.latest_stream_label = engine::stream_label(now);
    return;
  }
  if (stream.view_type) {
    throw ApiError::validation(std::string(kInvalidParameters) +
                               "If stream is being disabled, then UpdateViewType must not "
                               "be specified");
  }
  if (!enabled_now) {
    throw ApiError::validation("Table has no stream to disable: TableName: " + t.name);
  }
  t.stream->enabled = false;
}

}  // namespace

std::string update_table(const Context& ctx, const JsonObject& request) {
  const UpdateTableRequest r = decode_update_table(request);
  engine::TablePtr current = control_table(ctx, *r.table_name);
  std::uint32_t created_index = 0, dropped_index = 0;
  engine::TablePtr updated = ctx.engine.update_table(current->name, [&](TableDefinition& t) {
    const double now = now_seconds();
    apply_billing(r, t, now);
    if (r.stream) apply_stream(*r.stream, t, now);
    if (r.table_class) {
      t.table_class = std::string(*r.table_class);
      t.table_class_given = true;
    }
    if (r.deletion_protection) t.deletion_protection = *r.deletion_protection;
    if (r.index_updates) {
      created_index = apply_global_index_updates(*r.index_updates, t, &dropped_index);
    }
    if (r.sse) t.sse_enabled = r.sse->boolean("Enabled").value_or(t.sse_enabled);
  });
  // The catalog already routes new writes to a created index; the items that were there
  // before are added in the background while the index is CREATING. A deleted index's
  // entries go once nothing can read them.
  if (created_index) ctx.engine.start_backfill(updated->name, created_index);
  if (dropped_index) ctx.engine.drop_index(*updated, dropped_index);
  return table_description_response(ctx, *updated, "TableDescription", "ACTIVE");
}

}  // namespace kumo::api
