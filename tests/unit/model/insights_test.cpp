#include "model/insights.h"

#include <gtest/gtest.h>

namespace kumo {
namespace {

constexpr std::string_view kAll = kAccessedAndThrottledKeys;
constexpr std::string_view kThrottled = kThrottledKeys;

TEST(InsightsStatus, NeverConfiguredIsDisabled) {
  InsightsSettings s;
  EXPECT_EQ(insights_status(s, 100, 2), InsightsStatus::kDisabled);
  EXPECT_EQ(insights_rules_held(s, true), 0u);
}

TEST(InsightsStatus, EnableTakesTheDelay) {
  InsightsSettings s;
  EXPECT_EQ(insights_enable(s, kAll, true, 100, 100'000, 2), InsightsStatus::kEnabling);
  EXPECT_EQ(insights_status(s, 101.999, 2), InsightsStatus::kEnabling);
  EXPECT_EQ(insights_status(s, 102, 2), InsightsStatus::kEnabled);
  EXPECT_EQ(s.rule_suffix_ms, 100'000);
  EXPECT_EQ(s.changed, 100);
  EXPECT_EQ(insights_rules_held(s, true), 4u);
  EXPECT_EQ(insights_rules_held(s, false), 2u);
}

TEST(InsightsStatus, NoDelayIsImmediate) {
  InsightsSettings s;
  EXPECT_EQ(insights_enable(s, kAll, true, 100, 100'000, 0), InsightsStatus::kEnabling);
  EXPECT_EQ(insights_status(s, 100, 0), InsightsStatus::kEnabled);
  EXPECT_EQ(insights_disable(s, 100, 0), InsightsStatus::kDisabling);
  EXPECT_EQ(insights_status(s, 100, 0), InsightsStatus::kDisabled);
}

TEST(InsightsStatus, EnableAgainInTheSameModeChangesNothing) {
  InsightsSettings s;
  insights_enable(s, kAll, true, 100, 100'000, 2);
  const InsightsSettings before = s;
  EXPECT_EQ(insights_enable(s, kAll, true, 101, 101'000, 2), InsightsStatus::kEnabling);
  EXPECT_EQ(insights_enable(s, kAll, true, 105, 105'000, 2), InsightsStatus::kEnabled);
  EXPECT_EQ(s, before);
}

TEST(InsightsStatus, ModeChangeGoesThroughEnablingAndKeepsTheSuffix) {
  InsightsSettings s;
  insights_enable(s, kAll, true, 100, 100'000, 2);
  EXPECT_EQ(insights_enable(s, kThrottled, true, 110, 110'000, 2), InsightsStatus::kEnabling);
  EXPECT_EQ(insights_status(s, 111, 2), InsightsStatus::kEnabling);
  EXPECT_EQ(insights_status(s, 112, 2), InsightsStatus::kEnabled);
  EXPECT_EQ(s.mode, kThrottled);
  EXPECT_EQ(s.rule_suffix_ms, 100'000);
  EXPECT_EQ(insights_rules_held(s, true), 2u);
  EXPECT_EQ(insights_rules_held(s, false), 1u);
  insights_enable(s, kAll, true, 120, 120'000, 2);
  EXPECT_EQ(s.rule_suffix_ms, 100'000);
}

TEST(InsightsStatus, DisableTakesTheDelayAndIsIdempotent) {
  InsightsSettings s;
  EXPECT_EQ(insights_disable(s, 100, 2), InsightsStatus::kDisabled);
  EXPECT_EQ(s.state, InsightsSettings::State::kNever);
  insights_enable(s, kAll, true, 100, 100'000, 2);
  EXPECT_EQ(insights_disable(s, 103, 2), InsightsStatus::kDisabling);
  EXPECT_EQ(insights_rules_held(s, true), 0u);
  const InsightsSettings disabling = s;
  EXPECT_EQ(insights_disable(s, 104, 2), InsightsStatus::kDisabling);
  EXPECT_EQ(s, disabling);
  EXPECT_EQ(insights_status(s, 105, 2), InsightsStatus::kDisabled);
  EXPECT_EQ(insights_disable(s, 106, 2), InsightsStatus::kDisabled);
  EXPECT_EQ(s, disabling);
  EXPECT_EQ(s.mode, kAll);
}

TEST(InsightsStatus, ReEnableAfterDisableGetsANewSuffix) {
  InsightsSettings s;
  insights_enable(s, kAll, true, 100, 100'000, 0);
  insights_disable(s, 101, 0);
  insights_enable(s, kThrottled, true, 102, 102'500, 0);
  EXPECT_EQ(s.rule_suffix_ms, 102'500);
}

TEST(InsightsStatus, NoRoomFailsAfterEnabling) {
  InsightsSettings s;
  EXPECT_EQ(insights_enable(s, kAll, false, 100, 100'000, 2), InsightsStatus::kEnabling);
  EXPECT_EQ(insights_status(s, 101, 2), InsightsStatus::kEnabling);
  EXPECT_EQ(insights_status(s, 102, 2), InsightsStatus::kFailed);
  EXPECT_TRUE(s.failed);
  EXPECT_EQ(insights_rules_held(s, true), 0u);
  // FAILED stays until an ENABLE retries (new suffix) or a DISABLE.
  EXPECT_EQ(insights_status(s, 1e9, 2), InsightsStatus::kFailed);
  EXPECT_EQ(insights_enable(s, kAll, true, 200, 200'000, 2), InsightsStatus::kEnabling);
  EXPECT_FALSE(s.failed);
  EXPECT_EQ(s.rule_suffix_ms, 200'000);
  EXPECT_EQ(insights_status(s, 202, 2), InsightsStatus::kEnabled);
}

TEST(InsightsStatus, DisableAfterFailureKeepsTheFailureUntilDisabled) {
  InsightsSettings s;
  insights_enable(s, kAll, false, 100, 100'000, 2);
  EXPECT_EQ(insights_disable(s, 105, 2), InsightsStatus::kDisabling);
  EXPECT_TRUE(s.failed);
  // A DISABLE before the failure shows carries none.
  InsightsSettings early;
  insights_enable(early, kAll, false, 100, 100'000, 2);
  insights_disable(early, 101, 2);
  EXPECT_FALSE(early.failed);
}

TEST(InsightsRules, CountsByModeAndSortKey) {
  EXPECT_EQ(insights_rule_count(kAll, false), 2u);
  EXPECT_EQ(insights_rule_count(kAll, true), 4u);
  EXPECT_EQ(insights_rule_count(kThrottled, false), 1u);
  EXPECT_EQ(insights_rule_count(kThrottled, true), 2u);
}

TEST(InsightsRules, Names) {
  using V = std::vector<std::string>;
  EXPECT_EQ(insights_rule_names("Music", "", kAll, true, 1576629651520),
            (V{"DynamoDBContributorInsights-PKC-Music-1576629651520",
               "DynamoDBContributorInsights-SKC-Music-1576629651520",
               "DynamoDBContributorInsights-PKT-Music-1576629651520",
               "DynamoDBContributorInsights-SKT-Music-1576629651520"}));
  EXPECT_EQ(insights_rule_names("t", "g", kThrottled, false, 1791501766746),
            (V{"DynamoDBContributorInsights-PKT-t-g-1791501766746"}));
  EXPECT_EQ(insights_rule_names("t", "g", kAll, false, 5),
            (V{"DynamoDBContributorInsights-PKC-t-g-5", "DynamoDBContributorInsights-PKT-t-g-5"}));
}

TEST(InsightsRules, LongNamesAreCutTo128) {
  const std::string table(255, 'T'), index(255, 'i');
  for (const auto& name : insights_rule_names(table, index, kAll, true, 1791501766746)) {
    EXPECT_EQ(name.size(), 128u);
    EXPECT_EQ(name.substr(name.size() - 14), "-1791501766746");
    EXPECT_EQ(name.substr(32, 10), "TTTTTTTTTT");
  }
  const std::string fits(128 - 32 - 14, 'x');
  EXPECT_EQ(insights_rule_names(fits, "", kAll, false, 1791501766746)[0].size(), 128u);
  EXPECT_EQ(insights_rule_names(fits, "", kAll, false, 1791501766746)[0].substr(32, fits.size()),
            fits);
}

TEST(InsightsStatus, Names) {
  EXPECT_EQ(insights_status_name(InsightsStatus::kEnabling), "ENABLING");
  EXPECT_EQ(insights_status_name(InsightsStatus::kEnabled), "ENABLED");
  EXPECT_EQ(insights_status_name(InsightsStatus::kDisabling), "DISABLING");
  EXPECT_EQ(insights_status_name(InsightsStatus::kDisabled), "DISABLED");
  EXPECT_EQ(insights_status_name(InsightsStatus::kFailed), "FAILED");
}

}  // namespace
}  // namespace kumo
