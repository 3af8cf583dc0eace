// The throttling exceptions exactly as DynamoDB words them.
#pragma once

#include <string>

#include "capacity/meters.h"
#include "capacity/options.h"
#include "model/api_error.h"

namespace kumo::capacity {

// The exception a throttle for `reason` answers: ProvisionedThroughputExceededException,
// ThrottlingException or RequestLimitExceeded, with DynamoDB's message for it and one
// ThrottlingReasons entry naming `resource_arn`. `provisioned` is the table's billing mode.
ApiError throttle_error(Reason reason, bool provisioned, std::string resource_arn,
                        const CapacityOptions& options);

// arn:aws:dynamodb:<region>:<account>:table/<table>[/index/<index>]
std::string resource_arn(const CapacityOptions& options, std::string_view table,
                         std::string_view index = {});

// `path` as it can be shown in a message: bytes outside printable ASCII percent-encoded.
std::string shown_path(std::string_view path);

}  // namespace kumo::capacity
