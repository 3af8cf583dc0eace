#include "capacity/messages.h"

namespace kumo::capacity {
namespace {

// The table's provisioned throughput, or a partition's of a provisioned table.
constexpr std::string_view kTableProvisioned =
    "The level of configured provisioned throughput for the table was exceeded. Consider "
    "increasing your provisioning level with the UpdateTable API.";
// A base-table write held back by a GSI's provisioned write throughput (no final period).
constexpr std::string_view kIndexWriteProvisioned =
    "The level of configured provisioned throughput for one or more global secondary indexes "
    "of the table was exceeded. Consider increasing your provisioning level for the "
    "under-provisioned global secondary indexes with the UpdateTable API";
// A Query or Scan of a GSI beyond its provisioned read throughput.
constexpr std::string_view kIndexReadProvisioned =
    "The level of configured provisioned throughput for the index was exceeded";
// An on-demand table or index past its current capacity (no final period).
constexpr std::string_view kKeyRange =
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically "
    "scaling your table or index so please try again shortly. If exceptions persist, check if "
    "you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html";
// A GSI partition past its capacity holding back a base-table write.
constexpr std::string_view kIndexWriteKeyRange =
    "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB "
    "is automatically scaling your index so please try again shortly.";
constexpr std::string_view kMaxOnDemand =
    "Throughput exceeds the maximum OnDemandThroughput configured on table or index";
constexpr std::string_view kAccountLimit =
    "Throughput exceeds the current throughput limit for your account. Please contact AWS "
    "Support at https://aws.amazon.com/support request a limit increase";

}  // namespace

std::string resource_arn(const CapacityOptions& options, std::string_view table,
                         std::string_view index) {
  std::string arn = "arn:aws:dynamodb:" + options.region + ":" + options.account_id + ":table/";
  arn += table;
  if (!index.empty()) {
    arn += "/index/";
    arn += index;
  }
  return arn;
}

ApiError throttle_error(Reason reason, bool provisioned, std::string resource_arn,
                        const CapacityOptions& options) {
  ThrottlingReason entry{std::string(reason_name(reason)), std::move(resource_arn)};
  auto ptee = [&](std::string_view text) {
    // In a transaction's cancellation reason the GSI text gains a final period.
    std::string cancel(text == kIndexWriteProvisioned ? std::string(text) + "."
                                                      : kTableProvisioned);
    return ApiError::provisioned_throughput_exceeded(std::string(text), std::move(entry),
                                                     std::move(cancel));
  };
  auto te = [&](std::string_view text) {
    std::string cancel(text == kKeyRange ? std::string(text) + "." : std::string(text));
    return ApiError::throttling(std::string(text), std::move(entry), std::move(cancel));
  };
  switch (reason.limit) {
    case Limit::kProvisioned:
      if (!reason.index) return ptee(kTableProvisioned);
      return ptee(reason.dir == Dir::kWrite ? kIndexWriteProvisioned : kIndexReadProvisioned);
    case Limit::kKeyRange:
      if (reason.index && reason.dir == Dir::kWrite) return te(kIndexWriteKeyRange);
      if (!provisioned) return te(kKeyRange);
      return ptee(reason.index ? kIndexReadProvisioned : kTableProvisioned);
    case Limit::kMaxOnDemand:
      return te(kMaxOnDemand);
    case Limit::kAccount:
      if (options.account_limit_request_limit_exceeded) {
        return ApiError::request_limit_exceeded(std::string(kAccountLimit), std::move(entry));
      }
      return te(kAccountLimit);
  }
  return te(kKeyRange);
}

// `path` as it can be shown in a message: bytes outside printable ASCII percent-encoded.
std::string shown_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 15]);
    }
  }
  return out;
}

}  // namespace kumo::capacity
