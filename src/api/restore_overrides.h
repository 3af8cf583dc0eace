// The table a restore from a backup creates: the source table as the backup recorded it,
// after RestoreTableFromBackup's overrides (billing mode, provisioned and on-demand
// throughput, the secondary indexes kept, server-side encryption), with what a restore
// does not bring back left out (stream, TTL, tags, table class, deletion protection).
// Pure: reads only its arguments.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "api/indexes.h"
#include "api/service.h"
#include "api/table_requests.h"
#include "api/throughput_settings.h"
#include "model/table.h"

namespace kumo::api {

struct RestoreOverrides {
  std::optional<BillingMode> billing_mode;          // BillingModeOverride
  std::optional<ThroughputRequest> throughput;      // ProvisionedThroughputOverride
  std::optional<UnitsRequest> on_demand;            // OnDemandThroughputOverride
  std::optional<std::vector<IndexRequest>> global;  // GlobalSecondaryIndexOverride
  std::optional<std::vector<IndexRequest>> local;   // LocalSecondaryIndexOverride
  std::optional<bool> sse_enabled;                  // SSESpecificationOverride.Enabled
};

// The definition of the table `name` restored from `source` (the backup's record of its
// table) with `overrides` applied. Throws ValidationException (or LimitExceededException
// for throughput above the per-table quota) for overrides DynamoDB refuses. Id, TableId,
// creation time and the restore's source are the caller's to set.
TableDefinition restored_table(const TableDefinition& source, std::string_view name,
                               const RestoreOverrides& overrides, const ServiceOptions& options);

}  // namespace kumo::api
