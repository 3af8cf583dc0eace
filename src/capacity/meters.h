// The vocabulary of capacity metering: units in thousandths, directions, the limits that
// throttle and DynamoDB's names for them, and the operations CloudWatch reports by.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace kumo::capacity {

// Capacity units in thousandths: every unit DynamoDB charges is a multiple of 0.5, so
// meters in Milli are exact.
using Milli = std::int64_t;
inline Milli to_milli(double units) {
  // Rounds half away from zero, as llround does, without its call on the request path.
  const double m = units * 1000;
  return static_cast<Milli>(m < 0 ? m - 0.5 : m + 0.5);
}
inline double to_units(Milli milli) {
  return static_cast<double>(milli) / 1000.0;
}

enum class Dir : std::uint8_t { kRead, kWrite };

// Which limit refused: provisioned throughput, a partition's ceiling (key range), the
// account's per-table quota, or the on-demand maximum (OnDemandThroughput).
enum class Limit : std::uint8_t { kProvisioned, kKeyRange, kAccount, kMaxOnDemand };

// A ThrottlingReasons reason: <Table|Index><Read|Write><Limit>.
struct Reason {
  bool index = false;
  Dir dir = Dir::kRead;
  Limit limit = Limit::kProvisioned;
  bool operator==(const Reason&) const = default;
};
// "TableReadProvisionedThroughputExceeded", "IndexWriteKeyRangeThroughputExceeded",
// "TableWriteMaxOnDemandThroughputExceeded", "IndexReadAccountLimitExceeded", ...
std::string_view reason_name(Reason reason);
constexpr int kReasonCount = 16;
// 0..15, for arrays indexed by reason.
inline int reason_index(Reason r) {
  return (r.index ? 8 : 0) + (r.dir == Dir::kWrite ? 4 : 0) + static_cast<int>(r.limit);
}
Reason reason_at(int index);

// The operations CloudWatch's per-operation metrics are dimensioned by.
enum class Operation : std::uint8_t {
  kNone,  // not metered
  kGetItem,
  kBatchGetItem,
  kQuery,
  kScan,
  kPutItem,
  kUpdateItem,
  kDeleteItem,
  kBatchWriteItem,
  kTransactGetItems,
  kTransactWriteItems,
  kExecuteStatement,
  kBatchExecuteStatement,
  kExecuteTransaction,
  kCount,
};
std::string_view operation_name(Operation op);  // "GetItem", ...

}  // namespace kumo::capacity
