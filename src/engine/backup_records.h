// On-demand backups as the engine stores them: the record of each backup (what DynamoDB's
// BackupDescription reports, and where the backup's copy of its table's items lies), its
// id, and the selection ListBackups makes. Pure: no storage access here (backups.cpp holds
// the jobs that copy and restore). docs/backups.md describes the layout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/attribute_value.h"
#include "model/table.h"

namespace kumo::engine {

// USER: made by CreateBackup. SYSTEM: made by the service when a table with point-in-time
// recovery is deleted. AWS_BACKUP: made through AWS Backup (never by Kumo).
enum class BackupType : std::uint8_t { kUser, kSystem, kAwsBackup };
// A backup is CREATING until its copy of the table commits, then AVAILABLE. (DELETED is
// only the status DeleteBackup answers with: a deleted backup has no record.)
enum class BackupStatus : std::uint8_t { kCreating, kAvailable };

std::string_view backup_type_name(BackupType type);
std::string_view backup_status_name(BackupStatus status);
std::optional<BackupType> backup_type_from(std::string_view name);

// One backup.
struct Backup {
  // "<creation time in epoch milliseconds, 14 digits>-<8 lowercase hex digits>"; the end of
  // its ARN. Ids sort by creation time.
  std::string id;
  std::string name;  // BackupName; not unique
  BackupType type = BackupType::kUser;
  BackupStatus status = BackupStatus::kCreating;
  double created = 0;             // BackupCreationDateTime (epoch seconds, whole ms)
  std::optional<double> expires;  // BackupExpiryDateTime (SYSTEM backups only)
  std::int64_t size_bytes = 0;    // BackupSizeBytes: the table's size when backed up
  std::int64_t item_count = 0;    // the table's item count when backed up
  // The table id (never a table's) whose item space holds the backup's copy of the items.
  std::uint32_t data_id = 0;
  // The source table as it was when the backup was made: SourceTableDetails and
  // SourceTableFeatureDetails come from it, and a restore re-creates it.
  TableDefinition source;
};

// The id of a backup made at `created` (epoch seconds) with the random `suffix`. SYSTEM
// backups end in -00000000.
std::string backup_id(double created, std::uint32_t suffix);
// Whether `id` has the form of a backup id.
bool is_backup_id(std::string_view id);

// Storage keys. meta/backup/<id> → the backup's record; meta/backup_copy/<id> → the copy
// still to be made (source table id and data id) while the backup is CREATING.
std::string backup_key(std::string_view id);
std::string backup_copy_key(std::string_view id);
inline constexpr std::string_view kBackupPrefix = "meta/backup/";
inline constexpr std::string_view kBackupCopyPrefix = "meta/backup_copy/";

// A record as stored (a binary attribute map), and back; nullopt when corrupt.
std::string encode_backup(const Backup& backup);
std::optional<Backup> decode_backup(std::string_view stored);

// The copy a CREATING backup still owes: which table's items go to which data id.
struct BackupCopy {
  std::uint32_t source_id = 0;
  std::uint32_t data_id = 0;
};
std::string encode_backup_copy(const BackupCopy& copy);
std::optional<BackupCopy> decode_backup_copy(std::string_view stored);

// What ListBackups asks for. Times are epoch seconds and compare at millisecond precision:
// `lower` is inclusive, `upper` exclusive.
struct BackupQuery {
  std::optional<std::string> table;  // the source table's name
  std::optional<double> lower, upper;
  // The types listed: USER by default; ALL is USER and SYSTEM.
  std::vector<BackupType> types = {BackupType::kUser};
  // Resume after this position (a backup id, which need not exist).
  std::optional<std::string> exclusive_start;
  std::size_t limit = 0;  // 0: no limit
};

// The backups of `all` (in id order) that `query` selects, at most `limit` of them; *more
// tells whether others that it selects follow.
std::vector<const Backup*> select_backups(const std::vector<Backup>& all, const BackupQuery& query,
                                          bool* more);

}  // namespace kumo::engine
