// Backup ARNs: arn:aws:dynamodb:<region>:<account>:table/<TableName>/backup/<id>, made for
// the responses and read back from requests with DynamoDB's answers to a bad one.
#pragma once

#include <string>
#include <string_view>

namespace kumo::api {

struct BackupArn {
  std::string region;
  std::string account;
  std::string table;  // the source table's name
  std::string id;     // the backup's id
};

// The ARN of backup `id` of table `table`.
std::string make_backup_arn(std::string_view region, std::string_view account,
                            std::string_view table, std::string_view id);

// Reads a backup ARN sent by a client. Throws ValidationException "Invalid Backup ARN" for
// a string that is not an ARN or names something else than a backup (a table ARN, say),
// "BackupArn is not valid" for an ARN of an unknown partition, service or region (a region is
// known when it has the form of one, or is the endpoint's `own_region`), and
// AccessDeniedException "Access is denied" for a backup of another account than `account`.
// Another known region than the endpoint's is accepted: the caller decides what it means.
BackupArn parse_backup_arn(std::string_view arn, std::string_view account,
                           std::string_view own_region);

// Whether `region` has the form of an AWS region name (us-east-1, eu-central-2,
// us-gov-west-1, ...).
bool is_region_name(std::string_view region);

}  // namespace kumo::api
