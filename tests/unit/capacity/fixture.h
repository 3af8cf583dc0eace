// A manager on a manual clock and table definitions for the capacity tests.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "capacity/manager.h"
#include "codec/key_codec.h"
#include "model/api_error.h"
#include "model/clock.h"
#include "model/table.h"

namespace kumo::capacity::testing {

constexpr std::int64_t kStart = 1767225600LL * 1'000'000'000;  // 2026-01-01, a whole minute
constexpr std::int64_t kSecond = 1'000'000'000;

inline TableDefinition provisioned_table(std::string name, std::int64_t rcu, std::int64_t wcu) {
  TableDefinition t;
  t.name = std::move(name);
  t.id = 7;
  t.key.hash = {"pk", ScalarType::S};
  t.billing_mode = BillingMode::PROVISIONED;
  t.throughput.read_capacity_units = rcu;
  t.throughput.write_capacity_units = wcu;
  t.creation_date_time = static_cast<double>(kStart) / 1e9;
  std::uint32_t next = 1;
  t.capacity.partitions = even_partitions(
      partitions_needed(true, rcu, wcu, 0, 0, PartitionLimits{}), t.creation_date_time, &next);
  t.next_partition_id = next;
  return t;
}

inline TableDefinition on_demand_table(std::string name) {
  TableDefinition t = provisioned_table(std::move(name), 0, 0);
  t.billing_mode = BillingMode::PAY_PER_REQUEST;
  std::uint32_t next = 1;
  t.capacity.partitions = even_partitions(4, t.creation_date_time, &next);
  t.next_partition_id = next;
  return t;
}

// Adds a GSI keyed by `status` (S).
inline IndexDefinition& add_gsi(TableDefinition& t, std::string name, std::int64_t rcu,
                                std::int64_t wcu) {
  IndexDefinition index;
  index.name = std::move(name);
  index.id = t.next_index_id++;
  index.hash = {{"status", ScalarType::S}};
  index.throughput.read_capacity_units = rcu;
  index.throughput.write_capacity_units = wcu;
  const bool provisioned = t.billing_mode == BillingMode::PROVISIONED;
  index.capacity.partitions =
      even_partitions(provisioned ? partitions_needed(true, rcu, wcu, 0, 0, PartitionLimits{}) : 4,
                      t.creation_date_time, &t.next_partition_id);
  t.global_indexes.push_back(std::move(index));
  return t.global_indexes.back();
}

inline std::string encoded(std::string_view s) {
  std::string out;
  codec::append_key_value(&out, AttributeValue::string(std::string(s)));
  return out;
}

class CapacityTest : public ::testing::Test {
 protected:
  void make(Mode mode = Mode::kEnforce) {
    options.mode = mode;
    manager = std::make_unique<CapacityManager>(options, clock);
  }
  void advance(double seconds) {
    const std::int64_t before = clock.now_ns();
    const std::int64_t after = clock.advance(static_cast<std::int64_t>(seconds * 1e9 + 0.5));
    for (std::int64_t s = before / kSecond + 1; s <= after / kSecond; ++s)
      manager->tick(s * kSecond);
  }
  // An access to the partition of key `key`.
  Access access(ResourceMeter* r, Dir dir, std::string_view key, Milli min = 1000) {
    keys.push_back(encoded(key));
    Access a;
    a.resource = r;
    a.token = codec::token(keys.back());
    a.dir = dir;
    a.min = min;
    a.partition_key = keys.back();
    return a;
  }
  // Admits and charges; the reason name of a refusal, or "" when admitted.
  std::string request(const Access& a, Milli units, bool insights = true) {
    try {
      manager->admit(a, Operation::kGetItem, insights);
    } catch (const ApiError& e) {
      last_error = e;
      return e.throttling_reasons().at(0).reason;
    }
    manager->charge(a, units, Operation::kGetItem, insights);
    return "";
  }

  CapacityOptions options;
  ManualClock clock{kStart};
  std::unique_ptr<CapacityManager> manager;
  std::deque<std::string> keys;
  std::optional<ApiError> last_error;
};

}  // namespace kumo::capacity::testing
