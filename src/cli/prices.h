// DynamoDB's list prices that `kumo report` estimates a month's cost with: US East
// (N. Virginia), Standard table class, as checked on `kDate`. Prices change; every cost the
// report prints names this date and says it is an estimate.
#pragma once

namespace kumo::cli::prices {

inline constexpr const char* kDate = "2026-10-04";
inline constexpr const char* kRegion = "US East (N. Virginia)";
inline constexpr const char* kTableClass = "Standard";

// On-demand: dollars per request unit ($0.625 per million writes, $0.125 per million reads).
inline constexpr double kWriteRequestUnit = 0.625 / 1e6;
inline constexpr double kReadRequestUnit = 0.125 / 1e6;
// Provisioned: dollars per capacity unit and hour.
inline constexpr double kWcuHour = 0.00065;
inline constexpr double kRcuHour = 0.00013;
// Storage: dollars per GB-month, a GB being 2^30 bytes.
inline constexpr double kGbMonth = 0.25;
inline constexpr double kGb = 1073741824.0;

// AWS bills a month as 730 hours.
inline constexpr double kHoursPerMonth = 730;
inline constexpr double kSecondsPerMonth = kHoursPerMonth * 3600;  // 2,628,000
// Provisioned capacity sized for a peak runs at this utilisation (auto scaling's default
// target).
inline constexpr double kTargetUtilisation = 0.70;

}  // namespace kumo::cli::prices
