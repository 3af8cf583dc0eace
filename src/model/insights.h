// Contributor Insights as DynamoDB runs it for a table or GSI: the status shown, how ENABLE
// and DISABLE change it, and the CloudWatch rules an enabled resource has.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/partition_map.h"

namespace kumo {

enum class InsightsStatus : std::uint8_t { kEnabling, kEnabled, kDisabling, kDisabled, kFailed };
// "ENABLING", "ENABLED", "DISABLING", "DISABLED", "FAILED".
std::string_view insights_status_name(InsightsStatus status);

// The two modes: every rule, or only the throttled-key rules (the cheaper mode).
inline constexpr std::string_view kAccessedAndThrottledKeys = "ACCESSED_AND_THROTTLED_KEYS";
inline constexpr std::string_view kThrottledKeys = "THROTTLED_KEYS";

// The status at `now` (epoch seconds): a change takes `delay` seconds, during which an
// ENABLE shows ENABLING (also when it is going to fail) and a DISABLE DISABLING.
InsightsStatus insights_status(const InsightsSettings& settings, double now, double delay);

// The rules a resource has in `mode`: most accessed and most throttled partition keys, and
// with a sort key the same for partition + sort keys; THROTTLED_KEYS keeps only the
// throttled ones. So 2 or 4 rules, or 1 or 2.
std::size_t insights_rule_count(std::string_view mode, bool sort_key);
// The rules an ENABLE has created and not yet removed (none while DISABLING or FAILED).
std::size_t insights_rules_held(const InsightsSettings& settings, bool sort_key);

// ENABLE in `mode` at `now`. Enabling again in the mode already set changes nothing. Any
// other ENABLE starts over: ENABLING, then ENABLED, or FAILED when `room` is false (the
// account's rule quota cannot take the rules). A mode change of an enabled resource keeps
// the rules' suffix; otherwise the rules are new and named by `now_ms`. Returns the status
// to answer.
InsightsStatus insights_enable(InsightsSettings& settings, std::string_view mode, bool room,
                               double now, std::int64_t now_ms, double delay);
// DISABLE at `now`: DISABLING, then DISABLED; nothing changes when already DISABLING or
// DISABLED. Returns the status to answer.
InsightsStatus insights_disable(InsightsSettings& settings, double now, double delay);

// The rule names, "DynamoDBContributorInsights-<kind>-<table>[-<index>]-<suffix>", kinds in
// the order PKC, SKC, PKT, SKT as the mode and the sort key have them. A name over 128
// characters (CloudWatch's limit) has the end of its "<table>[-<index>]" part cut.
std::vector<std::string> insights_rule_names(std::string_view table, std::string_view index,
                                             std::string_view mode, bool sort_key,
                                             std::int64_t suffix_ms);

}  // namespace kumo
