// The operations Kumo answers, by the X-Amz-Target of a request: DynamoDB's
// (DynamoDB_20120810.*) and DynamoDB Streams' (DynamoDBStreams_20120810.*), on one endpoint.
#pragma once

#include <string_view>

#include "api/operations.h"

namespace kumo::api {

// The function that answers `target`; nullptr for an operation Kumo does not have, which
// DynamoDB answers with UnknownOperationException.
Operation find_operation(std::string_view target);

}  // namespace kumo::api
