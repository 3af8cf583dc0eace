#include "capacity/meters.h"

#include <array>

namespace kumo::capacity {

std::string_view reason_name(Reason r) {
  static constexpr std::array<std::string_view, kReasonCount> kNames = {
      "TableReadProvisionedThroughputExceeded",  "TableReadKeyRangeThroughputExceeded",
      "TableReadAccountLimitExceeded",           "TableReadMaxOnDemandThroughputExceeded",
      "TableWriteProvisionedThroughputExceeded", "TableWriteKeyRangeThroughputExceeded",
      "TableWriteAccountLimitExceeded",          "TableWriteMaxOnDemandThroughputExceeded",
      "IndexReadProvisionedThroughputExceeded",  "IndexReadKeyRangeThroughputExceeded",
      "IndexReadAccountLimitExceeded",           "IndexReadMaxOnDemandThroughputExceeded",
      "IndexWriteProvisionedThroughputExceeded", "IndexWriteKeyRangeThroughputExceeded",
      "IndexWriteAccountLimitExceeded",          "IndexWriteMaxOnDemandThroughputExceeded",
  };
  return kNames[static_cast<std::size_t>(reason_index(r))];
}

Reason reason_at(int index) {
  return {index >= 8, (index & 4) ? Dir::kWrite : Dir::kRead, static_cast<Limit>(index & 3)};
}

std::string_view operation_name(Operation op) {
  static constexpr std::array<std::string_view, static_cast<std::size_t>(Operation::kCount)>
      kNames = {"",
                "GetItem",
                "BatchGetItem",
                "Query",
                "Scan",
                "PutItem",
                "UpdateItem",
                "DeleteItem",
                "BatchWriteItem",
                "TransactGetItems",
                "TransactWriteItems",
                "ExecuteStatement",
                "BatchExecuteStatement",
                "ExecuteTransaction"};
  return kNames[static_cast<std::size_t>(op)];
}

}  // namespace kumo::capacity
