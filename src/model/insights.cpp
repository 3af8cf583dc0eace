#include "model/insights.h"

#include <algorithm>

namespace kumo {
namespace {

using State = InsightsSettings::State;

// CloudWatch's longest rule name.
constexpr std::size_t kMaxRuleName = 128;

}  // namespace

std::string_view insights_status_name(InsightsStatus status) {
  switch (status) {
    case InsightsStatus::kEnabling:
      return "ENABLING";
    case InsightsStatus::kEnabled:
      return "ENABLED";
    case InsightsStatus::kDisabling:
      return "DISABLING";
    case InsightsStatus::kDisabled:
      return "DISABLED";
    case InsightsStatus::kFailed:
      return "FAILED";
  }
  return "DISABLED";
}

InsightsStatus insights_status(const InsightsSettings& settings, double now, double delay) {
  const bool changing = now < settings.changed + delay;
  switch (settings.state) {
    case State::kNever:
      return InsightsStatus::kDisabled;
    case State::kEnabled:
      return changing ? InsightsStatus::kEnabling : InsightsStatus::kEnabled;
    case State::kFailed:
      return changing ? InsightsStatus::kEnabling : InsightsStatus::kFailed;
    case State::kDisabled:
      return changing ? InsightsStatus::kDisabling : InsightsStatus::kDisabled;
  }
  return InsightsStatus::kDisabled;
}

std::size_t insights_rule_count(std::string_view mode, bool sort_key) {
  const std::size_t per_key = mode == kThrottledKeys ? 1 : 2;
  return sort_key ? 2 * per_key : per_key;
}

std::size_t insights_rules_held(const InsightsSettings& settings, bool sort_key) {
  return settings.state == State::kEnabled ? insights_rule_count(settings.mode, sort_key) : 0;
}

InsightsStatus insights_enable(InsightsSettings& settings, std::string_view mode, bool room,
                               double now, std::int64_t now_ms, double delay) {
  const bool enabled = settings.state == State::kEnabled;
  if (enabled && settings.mode == mode) return insights_status(settings, now, delay);
  settings.mode = std::string(mode);
  settings.changed = now;
  settings.failed = !room;
  if (!room) {
    settings.state = State::kFailed;
    settings.rule_suffix_ms = 0;
  } else {
    settings.state = State::kEnabled;
    if (!enabled) settings.rule_suffix_ms = now_ms;
  }
  return InsightsStatus::kEnabling;
}

InsightsStatus insights_disable(InsightsSettings& settings, double now, double delay) {
  const InsightsStatus status = insights_status(settings, now, delay);
  if (status == InsightsStatus::kDisabled || status == InsightsStatus::kDisabling) return status;
  settings.failed = status == InsightsStatus::kFailed;
  settings.state = State::kDisabled;
  settings.changed = now;
  return InsightsStatus::kDisabling;
}

std::vector<std::string> insights_rule_names(std::string_view table, std::string_view index,
                                             std::string_view mode, bool sort_key,
                                             std::int64_t suffix_ms) {
  std::string resource(table);
  if (!index.empty()) resource.append("-").append(index);
  const std::string tail = "-" + std::to_string(suffix_ms);
  std::vector<std::string> kinds;
  if (mode != kThrottledKeys) kinds.push_back("PKC");
  if (mode != kThrottledKeys && sort_key) kinds.push_back("SKC");
  kinds.push_back("PKT");
  if (sort_key) kinds.push_back("SKT");
  std::vector<std::string> names;
  for (const auto& kind : kinds) {
    const std::string head = "DynamoDBContributorInsights-" + kind + "-";
    const std::size_t room = kMaxRuleName - std::min(kMaxRuleName, head.size() + tail.size());
    names.push_back(head + resource.substr(0, room) + tail);
  }
  return names;
}

}  // namespace kumo
