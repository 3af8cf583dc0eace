#include "engine/backup_records.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "codec/item_codec.h"
#include "engine/catalog.h"
#include "engine/record_fields.h"
#include "model/clock.h"

namespace kumo::engine {
namespace {

AttributeValue backup_int(std::int64_t v) {
  return AttributeValue::number(Decimal::from_int(v));
}

std::optional<std::int64_t> backup_int_of(const Item& record, std::string_view name) {
  auto it = record.find(name);
  if (it == record.end() || it->second.type() != AttrType::N) return std::nullopt;
  return std::strtoll(it->second.as_number().to_string().c_str(), nullptr, 10);
}

double seconds_of_ms(std::int64_t ms) {
  return static_cast<double>(ms) / 1000.0;
}

// A creation time as compared by ListBackups: whole milliseconds.
std::int64_t backup_ms(double seconds) {
  return epoch_milliseconds(seconds);
}

}  // namespace

std::string_view backup_type_name(BackupType type) {
  switch (type) {
    case BackupType::kUser:
      return "USER";
    case BackupType::kSystem:
      return "SYSTEM";
    case BackupType::kAwsBackup:
      return "AWS_BACKUP";
  }
  return "USER";
}

std::string_view backup_status_name(BackupStatus status) {
  return status == BackupStatus::kAvailable ? "AVAILABLE" : "CREATING";
}

std::optional<BackupType> backup_type_from(std::string_view name) {
  if (name == "USER") return BackupType::kUser;
  if (name == "SYSTEM") return BackupType::kSystem;
  if (name == "AWS_BACKUP") return BackupType::kAwsBackup;
  return std::nullopt;
}

std::string backup_id(double created, std::uint32_t suffix) {
  return fmt::format("{:014d}-{:08x}", backup_ms(created), suffix);
}

bool is_backup_id(std::string_view id) {
  if (id.size() != 23 || id[14] != '-') return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    if (i == 14) continue;
    const char c = id[i];
    const bool digit = c >= '0' && c <= '9';
    if (i < 14 ? !digit : !(digit || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string backup_key(std::string_view id) {
  return std::string(kBackupPrefix) + std::string(id);
}

std::string backup_copy_key(std::string_view id) {
  return std::string(kBackupCopyPrefix) + std::string(id);
}

std::string encode_backup(const Backup& b) {
  Item r;
  r["id"] = str(b.id);
  r["name"] = str(b.name);
  r["type"] = str(std::string(backup_type_name(b.type)));
  r["status"] = str(std::string(backup_status_name(b.status)));
  r["created_ms"] = backup_int(backup_ms(b.created));
  if (b.expires) r["expires_ms"] = backup_int(backup_ms(*b.expires));
  r["size_bytes"] = backup_int(b.size_bytes);
  r["item_count"] = backup_int(b.item_count);
  r["data_id"] = backup_int(static_cast<std::int64_t>(b.data_id));
  r["source"] = AttributeValue::map(table_record(b.source));
  return codec::encode_item(r);
}

std::optional<Backup> decode_backup(std::string_view stored) {
  Item r;
  if (!codec::decode_item(stored, &r)) return std::nullopt;
  auto source = r.find("source");
  const std::optional<BackupType> type = backup_type_from(get_str(r, "type"));
  const std::optional<std::int64_t> created = backup_int_of(r, "created_ms");
  const std::optional<std::int64_t> data_id = backup_int_of(r, "data_id");
  if (source == r.end() || source->second.type() != AttrType::M || !type || !created || !data_id) {
    return std::nullopt;
  }
  Backup b;
  b.id = get_str(r, "id");
  b.name = get_str(r, "name");
  b.type = *type;
  b.status =
      get_str(r, "status") == "AVAILABLE" ? BackupStatus::kAvailable : BackupStatus::kCreating;
  b.created = seconds_of_ms(*created);
  if (std::optional<std::int64_t> expires = backup_int_of(r, "expires_ms")) {
    b.expires = seconds_of_ms(*expires);
  }
  b.size_bytes = backup_int_of(r, "size_bytes").value_or(0);
  b.item_count = backup_int_of(r, "item_count").value_or(0);
  b.data_id = static_cast<std::uint32_t>(*data_id);
  b.source = table_from_record(source->second.as_map());
  return b;
}

std::string encode_backup_copy(const BackupCopy& copy) {
  return fmt::format("{}:{}", copy.source_id, copy.data_id);
}

std::optional<BackupCopy> decode_backup_copy(std::string_view stored) {
  const std::size_t colon = stored.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string source(stored.substr(0, colon)), data(stored.substr(colon + 1));
  char* end = nullptr;
  const unsigned long s = std::strtoul(source.c_str(), &end, 10);
  if (source.empty() || *end != '\0') return std::nullopt;
  const unsigned long d = std::strtoul(data.c_str(), &end, 10);
  if (data.empty() || *end != '\0') return std::nullopt;
  return BackupCopy{static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(d)};
}

std::vector<const Backup*> select_backups(const std::vector<Backup>& all, const BackupQuery& query,
                                          bool* more) {
  std::vector<const Backup*> out;
  *more = false;
  for (const Backup& b : all) {
    if (query.exclusive_start && !(*query.exclusive_start < b.id)) continue;
    if (std::find(query.types.begin(), query.types.end(), b.type) == query.types.end()) continue;
    if (query.table && b.source.name != *query.table) continue;
    const std::int64_t created = backup_ms(b.created);
    if (query.lower && created < backup_ms(*query.lower)) continue;
    if (query.upper && !(created < backup_ms(*query.upper))) continue;
    if (query.limit != 0 && out.size() == query.limit) {
      *more = true;
      break;
    }
    out.push_back(&b);
  }
  return out;
}

}  // namespace kumo::engine
