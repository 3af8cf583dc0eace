#include "api/backup_arns.h"

#include <vector>

#include <fmt/format.h>

#include "model/api_error.h"

namespace kumo::api {
namespace {

[[noreturn]] void invalid_backup_arn() {
  throw ApiError::validation("Invalid Backup ARN");
}

bool lower_letters(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < 'a' || c > 'z') return false;
  }
  return true;
}

}  // namespace

std::string make_backup_arn(std::string_view region, std::string_view account,
                            std::string_view table, std::string_view id) {
  return fmt::format("arn:aws:dynamodb:{}:{}:table/{}/backup/{}", region, account, table, id);
}

bool is_region_name(std::string_view region) {
  // <2 letters>(-<letters>)+-<digits>
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t dash; (dash = region.find('-', start)) != std::string_view::npos;
       start = dash + 1) {
    parts.push_back(region.substr(start, dash - start));
  }
  parts.push_back(region.substr(start));
  if (parts.size() < 3 || parts[0].size() != 2 || !lower_letters(parts[0])) return false;
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    if (!lower_letters(parts[i])) return false;
  }
  const std::string_view number = parts.back();
  if (number.empty()) return false;
  for (char c : number) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

BackupArn parse_backup_arn(std::string_view arn, std::string_view account,
                           std::string_view own_region) {
  // arn:<partition>:<service>:<region>:<account>:<resource>
  if (arn.substr(0, 4) != "arn:") invalid_backup_arn();
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (int i = 0; i < 5; ++i) {
    const std::size_t colon = arn.find(':', start);
    if (colon == std::string_view::npos) invalid_backup_arn();
    parts.push_back(arn.substr(start, colon - start));
    start = colon + 1;
  }
  const std::string_view resource = arn.substr(start);
  if (parts[1] != "aws" || parts[2] != "dynamodb" ||
      (parts[3] != own_region && !is_region_name(parts[3]))) {
    throw ApiError::validation("BackupArn is not valid");
  }
  // table/<name>/backup/<id>
  constexpr std::string_view kTable = "table/", kBackup = "/backup/";
  const std::size_t backup = resource.find(kBackup);
  if (resource.substr(0, kTable.size()) != kTable || backup == std::string_view::npos ||
      backup == kTable.size()) {
    invalid_backup_arn();
  }
  const std::string_view table = resource.substr(kTable.size(), backup - kTable.size());
  const std::string_view id = resource.substr(backup + kBackup.size());
  if (id.empty() || id.find('/') != std::string_view::npos ||
      table.find('/') != std::string_view::npos) {
    invalid_backup_arn();
  }
  if (parts[4] != account) throw ApiError::access_denied("Access is denied");
  return BackupArn{std::string(parts[3]), std::string(parts[4]), std::string(table),
                   std::string(id)};
}

}  // namespace kumo::api
