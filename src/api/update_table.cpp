// UpdateTable: the request decoded with the rules on which changes may go together, then
// applied to the table's definition under the catalog's lock (billing and throughput,
// stream, table class, deletion protection, global index updates, encryption), then the
// index work the change starts.
#include <algorithm>

#include <fmt/format.h>

#include "api/indexes.h"
#include "api/operations.h"
#include "api/table_names.h"
#include "api/table_requests.h"
#include "api/throughput_settings.h"
#include "engine/change_stream.h"
#include "model/api_error.h"
#include "model/clock.h"

namespace kumo::api {
namespace {

struct UpdateTableRequest {
  std::optional<std::string_view> table_name;
  std::optional<std::string_view> billing_mode;
  std::optional<ThroughputRequest> throughput;
  std::optional<UnitsRequest> on_demand, warm;
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
  r.on_demand = read_on_demand(request);
  r.warm = read_warm(request);
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
  // DynamoDB fails on an empty OnDemandThroughput or WarmThroughput.
  if ((r.on_demand && r.on_demand->empty()) || (r.warm && r.warm->empty())) {
    throw ApiError::internal_failure();
  }
  const int changes = (r.throughput || r.billing_mode) + !!r.stream + !!gsi_updates + !!r.sse +
                      !!r.table_class + !!r.deletion_protection + !!r.on_demand + !!r.warm;
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
    const bool index_warm = std::ranges::any_of(r.index_updates->updates,
                                                [](const IndexUpdate& u) { return !!u.warm; });
    if (r.index_updates->create && (r.warm || index_warm)) {
      throw ApiError::validation(
          "Create global secondary index cannot be specified when updating WarmThroughput");
    }
  }
  check_table_class(r.table_class);
  return r;
}

// The billing mode the table has once the request is applied.
BillingMode requested_mode(const UpdateTableRequest& r, const TableDefinition& t) {
  if (!r.billing_mode) return t.billing_mode;
  return *r.billing_mode == "PAY_PER_REQUEST" ? BillingMode::PAY_PER_REQUEST
                                              : BillingMode::PROVISIONED;
}

// A change of billing mode, for the table and each GSI: going on demand sets the
// provisioned values to zero; going provisioned needs new throughput for every GSI in the
// same request.
void switch_billing(const UpdateTableRequest& r, TableDefinition& t, BillingMode to, double now,
                    const ServiceOptions& options) {
  if (to == BillingMode::PROVISIONED && !t.global_indexes.empty()) {
    std::string missing;
    for (const auto& index : t.global_indexes) {
      const bool given =
          r.index_updates && std::ranges::any_of(r.index_updates->updates, [&](const auto& u) {
            return u.name == index.name && u.throughput;
          });
      if (!given) missing += (missing.empty() ? "" : ",") + index.name;
    }
    if (!missing.empty()) {
      throw ApiError::validation(std::string(kInvalidParameters) +
                                 "ProvisionedThroughput must be specified for index: " + missing);
    }
  }
  auto change = [&](CapacitySettings& settings, ProvisionedThroughput& provisioned) {
    switch_capacity(settings, to, provisioned, options);
    if (to == BillingMode::PAY_PER_REQUEST) {
      provisioned.read_capacity_units = 0;
      provisioned.write_capacity_units = 0;
    }
  };
  change(t.capacity, t.throughput);
  for (auto& index : t.global_indexes) change(index.capacity, index.throughput);
  if (to == BillingMode::PAY_PER_REQUEST) t.last_update_to_pay_per_request = now;
}

// The billing mode and provisioned throughput: a change of throughput is counted as an
// increase or a decrease (DynamoDB limits decreases per day) and raises the warm
// throughput to it.
void apply_billing(const UpdateTableRequest& r, TableDefinition& t, double now,
                   const ServiceOptions& options) {
  const BillingMode mode = requested_mode(r, t);
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
    check_provisioned_quota(*requested.read, *requested.write, {}, options);
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
    if (t.billing_mode != mode) switch_billing(r, t, mode, now, options);
    t.billing_mode = mode;
    t.billing_mode_given = true;
  }
  raise_warm_to(t.capacity, t.throughput);
}

// The table's own OnDemandThroughput (for the billing mode it will have) and
// WarmThroughput (against its current one).
void check_table_settings(const UpdateTableRequest& r, const TableDefinition& t,
                          const ServiceOptions& options) {
  if (r.on_demand) {
    check_on_demand(*r.on_demand, {}, SettingsCall::kUpdate, requested_mode(r, t), options);
  }
  if (r.warm) {
    check_warm(*r.warm, {}, SettingsCall::kUpdate, t.billing_mode, t.throughput, t.capacity,
               options);
  }
}

// The answer shows a maximum the request removed as −1, as DynamoDB's does.
void echo_removed(const UpdateTableRequest& r, TableDefinition& t) {
  auto echo = [](const std::optional<UnitsRequest>& request, CapacitySettings& settings) {
    if (!request) return;
    if (request->read == -1) settings.max_read = -1;
    if (request->write == -1) settings.max_write = -1;
  };
  echo(r.on_demand, t.capacity);
  if (!r.index_updates) return;
  for (const auto& u : r.index_updates->updates) {
    for (auto& index : t.global_indexes) {
      if (index.name == u.name) echo(u.on_demand, index.capacity);
    }
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
  engine::TablePtr current = changed_table(ctx, *r.table_name);
  std::uint32_t created_index = 0, dropped_index = 0;
  // A created index's backfill is claimed by this front end first (Engine::claim_backfill).
  std::optional<std::string> creating;
  if (r.index_updates && r.index_updates->create && r.index_updates->create->name) {
    creating = std::string(*r.index_updates->create->name);
  }
  const bool claimed = creating && ctx.engine.claim_backfill(current->id, *creating);
  engine::TablePtr updated;
  try {
    updated = ctx.engine.update_table(current->name, [&](TableDefinition& t) {
      const double now = ctx.engine.clock().now_ms();
      check_table_settings(r, t, ctx.options);
      apply_billing(r, t, now, ctx.options);
      if (r.stream) apply_stream(*r.stream, t, now);
      if (r.table_class) {
        t.table_class = std::string(*r.table_class);
        t.table_class_given = true;
      }
      if (r.deletion_protection) t.deletion_protection = *r.deletion_protection;
      if (r.index_updates) {
        created_index =
            apply_global_index_updates(*r.index_updates, ctx.options, t, &dropped_index);
      }
      update_capacity(t.capacity, r.on_demand, r.warm);
      if (r.sse) t.sse_enabled = r.sse->boolean("Enabled").value_or(t.sse_enabled);
    });
  } catch (...) {
    if (claimed) ctx.engine.release_backfill(current->id, *creating);
    throw;
  }
  if (claimed && !created_index) ctx.engine.release_backfill(current->id, *creating);
  // The catalog already routes new writes to a created index; the items that were there
  // before are added in the background while the index is CREATING. A deleted index's
  // entries go once nothing can read them.
  if (created_index) ctx.engine.start_backfill(updated->name, created_index);
  if (dropped_index) ctx.engine.drop_index(*updated, dropped_index);
  TableDefinition answered = *updated;
  echo_removed(r, answered);
  return table_description_response(ctx, answered, "TableDescription", "ACTIVE");
}

}  // namespace kumo::api
