// The operations Kumo answers, by the X-Amz-Target of a request: DynamoDB's
// (DynamoDB_20120810.*) and DynamoDB Streams' (DynamoDBStreams_20120810.*), on one endpoint.
#pragma once

#include <string_view>

#include "api/operations.h"
#include "capacity/meters.h"

namespace kumo::api {

struct Found {
  // The function that answers the target; nullptr for an operation Kumo does not have,
  // which DynamoDB answers with UnknownOperationException.
  Operation answer = nullptr;
  // The operation CloudWatch's per-operation metrics name it by (kNone for the operations
  // they do not cover).
  capacity::Operation metered = capacity::Operation::kNone;
};
Found find_operation(std::string_view target);

}  // namespace kumo::api
