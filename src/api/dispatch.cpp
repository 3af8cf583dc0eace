#include "api/dispatch.h"

#include <array>

namespace kumo::api {
namespace {

constexpr std::string_view kTargetPrefix = "DynamoDB_20120810.";
constexpr std::string_view kStreamsTargetPrefix = "DynamoDBStreams_20120810.";

struct Entry {
  std::string_view name;
  Operation operation;
  capacity::Operation metered = capacity::Operation::kNone;
};

// Operations Kumo answers; any other target is UnknownOperationException, as DynamoDB
// answers an operation it does not have.
constexpr std::array kOperations{
    Entry{"BatchExecuteStatement", batch_execute_statement,
          capacity::Operation::kBatchExecuteStatement},
    Entry{"BatchGetItem", batch_get_item, capacity::Operation::kBatchGetItem},
    Entry{"BatchWriteItem", batch_write_item, capacity::Operation::kBatchWriteItem},
    Entry{"CreateBackup", create_backup},
    Entry{"CreateTable", create_table},
    Entry{"DeleteBackup", delete_backup},
    Entry{"DeleteTable", delete_table},
    Entry{"DeleteItem", delete_item, capacity::Operation::kDeleteItem},
    Entry{"DescribeBackup", describe_backup},
    Entry{"DescribeContinuousBackups", describe_continuous_backups},
    Entry{"DescribeContributorInsights", describe_contributor_insights},
    Entry{"DescribeEndpoints", describe_endpoints},
    Entry{"DescribeExport", describe_export},
    Entry{"DescribeImport", describe_import},
    Entry{"DescribeLimits", describe_limits},
    Entry{"DescribeTable", describe_table},
    Entry{"DescribeTimeToLive", describe_time_to_live},
    Entry{"ExecuteStatement", execute_statement, capacity::Operation::kExecuteStatement},
    Entry{"ExecuteTransaction", execute_transaction, capacity::Operation::kExecuteTransaction},
    Entry{"ExportTableToPointInTime", export_table_to_point_in_time},
    Entry{"GetItem", get_item, capacity::Operation::kGetItem},
    Entry{"ImportTable", import_table},
    Entry{"ListBackups", list_backups},
    Entry{"ListContributorInsights", list_contributor_insights},
    Entry{"ListExports", list_exports},
    Entry{"ListImports", list_imports},
    Entry{"ListTables", list_tables},
    Entry{"ListTagsOfResource", list_tags_of_resource},
    Entry{"PutItem", put_item, capacity::Operation::kPutItem},
    Entry{"Query", query, capacity::Operation::kQuery},
    Entry{"RestoreTableFromBackup", restore_table_from_backup},
    Entry{"RestoreTableToPointInTime", restore_table_to_point_in_time},
    Entry{"Scan", scan, capacity::Operation::kScan},
    Entry{"TagResource", tag_resource},
    Entry{"TransactGetItems", transact_get_items, capacity::Operation::kTransactGetItems},
    Entry{"TransactWriteItems", transact_write_items, capacity::Operation::kTransactWriteItems},
    Entry{"UntagResource", untag_resource},
    Entry{"UpdateContinuousBackups", update_continuous_backups},
    Entry{"UpdateContributorInsights", update_contributor_insights},
    Entry{"UpdateItem", update_item, capacity::Operation::kUpdateItem},
    Entry{"UpdateTable", update_table},
    Entry{"UpdateTimeToLive", update_time_to_live},
};

// DynamoDB Streams, answered on the same endpoint.
constexpr std::array kStreamsOperations{
    Entry{"DescribeStream", describe_stream},
    Entry{"GetRecords", get_records},
    Entry{"GetShardIterator", get_shard_iterator},
    Entry{"ListStreams", list_streams},
};

template <std::size_t N>
Found find_in(const std::array<Entry, N>& operations, std::string_view name) {
  for (const auto& e : operations) {
    if (e.name == name) return {e.operation, e.metered};
  }
  return {};
}

}  // namespace

Found find_operation(std::string_view target) {
  if (target.substr(0, kTargetPrefix.size()) == kTargetPrefix) {
    return find_in(kOperations, target.substr(kTargetPrefix.size()));
  }
  if (target.substr(0, kStreamsTargetPrefix.size()) == kStreamsTargetPrefix) {
    return find_in(kStreamsOperations, target.substr(kStreamsTargetPrefix.size()));
  }
  return {};
}

}  // namespace kumo::api
