// Table definitions as the engine keeps them: key schema, billing, streams, tags and the
// rest of what DescribeTable reports. Already validated.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/attribute_value.h"
#include "model/partition_map.h"

namespace kumo {

namespace capacity {
class TableMeters;
}

// Types a key attribute may have.
enum class ScalarType : std::uint8_t { S, N, B };
std::string_view scalar_type_name(ScalarType type);
AttrType to_attr_type(ScalarType type);

enum class KeyType : std::uint8_t { HASH, RANGE };

// Key attribute values, of a table or of an index, are 1 to 2,048 bytes for a partition key
// and 1 to 1,024 for a sort key (all RANGE components of an index together). S and B count
// their bytes, N its number size.
constexpr std::size_t kMaxPartitionKeyBytes = 2048;
constexpr std::size_t kMaxSortKeyBytes = 1024;
std::size_t key_value_size(const AttributeValue& v);

struct AttributeDefinition {
  std::string name;
  ScalarType type;
  bool operator==(const AttributeDefinition&) const = default;
};

struct KeySchemaElement {
  std::string name;
  KeyType type;
  bool operator==(const KeySchemaElement&) const = default;
};

// A table's primary key: one HASH attribute and at most one RANGE attribute.
struct KeySchema {
  AttributeDefinition hash;
  std::optional<AttributeDefinition> range;

  // As DescribeTable lists it: the HASH element, then the RANGE element if any.
  std::vector<KeySchemaElement> elements() const;
};

enum class BillingMode : std::uint8_t { PROVISIONED, PAY_PER_REQUEST };

struct ProvisionedThroughput {
  std::int64_t read_capacity_units = 0;
  std::int64_t write_capacity_units = 0;
  std::int64_t number_of_decreases_today = 0;
  double last_increase_date_time = 0;  // epoch seconds; 0 = never
  double last_decrease_date_time = 0;
};

struct StreamSpecification {
  bool enabled = false;
  std::string view_type;  // KEYS_ONLY | NEW_IMAGE | OLD_IMAGE | NEW_AND_OLD_IMAGES
};

struct Tag {
  std::string key;
  std::string value;
};

enum class ProjectionType : std::uint8_t { ALL, KEYS_ONLY, INCLUDE };
std::string_view projection_type_name(ProjectionType type);

struct Projection {
  ProjectionType type = ProjectionType::ALL;
  std::vector<std::string> non_key_attributes;  // INCLUDE only, request order
};

// A local or global secondary index. A GSI key may have up to 4 HASH and 4 RANGE
// attributes (multi-attribute keys); an LSI has the table's HASH and one RANGE attribute.
struct IndexDefinition {
  std::string name;
  bool global = true;
  std::uint32_t id = 0;  // storage prefix inside the table, never reused within it
  std::vector<KeySchemaElement> key_schema;  // request order: all HASH, then all RANGE
  std::vector<AttributeDefinition> hash;     // HASH components in order, with their types
  std::vector<AttributeDefinition> range;    // RANGE components in order
  Projection projection;
  ProvisionedThroughput throughput;  // GSIs of provisioned tables
  // A GSI added by UpdateTable is CREATING, and backfilling, until every existing item is
  // in it; it cannot be read meanwhile. Indexes created with the table are ACTIVE at once.
  bool backfilling = false;
  // GSIs: partitions, OnDemandThroughput, WarmThroughput, Contributor Insights.
  CapacitySettings capacity;
  // Every attribute an index entry carries besides projected non-key attributes: the
  // index key components and the table key, in no particular order.
  std::vector<std::string> key_attributes;
};

// Where a table being restored from a backup (RestoreTableFromBackup) comes from. The table
// is CREATING while it is set: its items are still being written, and it answers only
// DescribeTable (with a RestoreSummary) and ListTables. Cleared when the restore commits.
struct RestoreSource {
  std::string backup_id;         // the backup's id (the end of its ARN)
  std::string backup_arn;        // SourceBackupArn
  std::string source_table_arn;  // SourceTableArn
  double restore_date_time = 0;  // RestoreDateTime: the backup's creation time
  // A point-in-time restore (RestoreTableToPointInTime): the source table's id, whose
  // change log is replayed up to restore_date_time; backup_id and backup_arn are empty.
  // 0: a restore from a backup.
  std::uint32_t source_id = 0;
  // A table that ImportTable is creating carries a RestoreSource too (it is CREATING while
  // it is set, as a restore's target is), whose backup_id is "import/<import id>" and whose
  // other members are empty: no RestoreSummary, no restore job.
  bool imports() const { return backup_id.starts_with("import/"); }
};

// Point-in-time recovery while it is enabled on a table (UpdateContinuousBackups). The
// window it gives is Engine::pitr_window's arithmetic.
struct PitrSettings {
  double enabled_since = 0;  // epoch seconds (whole ms): the enable time
  int period_days = 35;      // RecoveryPeriodInDays
  // The earliest time the change log still holds: set when the period is lengthened, as
  // the log was trimmed under the shorter period until then.
  double floor = 0;
  // The items present when recovery was enabled are still being written to the log.
  bool base_pending = false;
};

// Everything stored about one table.
struct TableDefinition {
  std::string name;
  std::uint32_t id = 0;                                    // storage prefix, never reused
  std::string table_id;                                    // the UUID DynamoDB reports as TableId
  double creation_date_time = 0;                           // epoch seconds with fraction
  std::vector<AttributeDefinition> attribute_definitions;  // request order
  KeySchema key;
  BillingMode billing_mode = BillingMode::PROVISIONED;
  bool billing_mode_given = false;  // BillingMode was named at create or update
  double last_update_to_pay_per_request = 0;
  ProvisionedThroughput throughput;
  std::optional<StreamSpecification> stream;  // as last specified
  std::string latest_stream_label;            // empty: no stream was ever enabled
  // Time to Live: the top-level N attribute holding each item's expiry in epoch seconds.
  // Kept after TTL is disabled, to tell the attribute last used; empty when TTL was never
  // enabled.
  std::string ttl_attribute;
  bool ttl_enabled = false;
  double ttl_updated = 0;  // epoch seconds of the last UpdateTimeToLive (cool-down)
  // Items written before TTL was enabled are still being added to the expiry schedule.
  bool ttl_scheduling = false;
  std::string table_class = "STANDARD";
  bool table_class_given = false;
  bool deletion_protection = false;
  std::vector<Tag> tags;
  bool sse_enabled = false;
  std::vector<IndexDefinition> local_indexes;   // request order
  std::vector<IndexDefinition> global_indexes;  // creation order
  std::uint32_t next_index_id = 1;
  // The table's own partitions, OnDemandThroughput, WarmThroughput, Contributor Insights.
  CapacitySettings capacity;
  // Partition ids of the table and its GSIs come from here; never reused.
  std::uint32_t next_partition_id = 1;
  // Set while the table is being restored from a backup (TableStatus CREATING).
  std::optional<RestoreSource> restore;
  // Set while point-in-time recovery is enabled.
  std::optional<PitrSettings> pitr;
  // Raised by every change of what a write of the table must do besides the item (its
  // indexes, TTL, the stream, point-in-time recovery): a storage shared by several
  // processes refuses a write made with an older one (storage::WriteBatch::definition).
  std::uint64_t definition_version = 0;
  // The live capacity meters (not stored): shared by every version of the definition, so
  // a change of the table keeps its consumption; null when capacity is off.
  std::shared_ptr<capacity::TableMeters> meters;

  // The index named `name`, or null.
  const IndexDefinition* find_index(std::string_view name) const;
};

}  // namespace kumo
