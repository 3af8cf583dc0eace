// On-demand backups and restores from them (docs/backups.md).
//
// A backup is its record, meta/backup/<id>, and a copy of its table's items in the item
// space of a table id taken from the catalog's counter, which no table is ever given. The
// copy is read from one storage snapshot, so writes go on while it is made. While it is
// made, meta/backup_copy/<id> says which table's items go where: a copy cut short by a stop
// is made again, whole, at the next start, and the source's data is kept until it is done
// even if the table is deleted meanwhile.
//
// A restore creates its table with `restore` set (CREATING, which the catalog record
// keeps), then writes the backup's items through the write path, noting how far it got in
// meta/restore/<table id>; it resumes there after a stop. The table turns ACTIVE in the
// catalog change that clears `restore`: a table is never ACTIVE with part of its items.
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include "codec/key_codec.h"
#include "engine/engine.h"
#include "model/api_error.h"
#include "model/random_seed.h"

namespace kumo::engine {
namespace {

// Items read and written per step of a copy or a restore.
constexpr std::size_t kBackupJobPage = 256;
// How long a SYSTEM backup is kept.
constexpr double kSystemBackupSeconds = 35 * 86400.0;
// meta/restore/<table id> → the key of the backup's copy after which the restore goes on.
constexpr std::string_view kRestoreProgressPrefix = "meta/restore/";

std::string restore_progress_key(std::uint32_t table_id) {
  return std::string(kRestoreProgressPrefix) + std::to_string(table_id);
}

std::string backup_job(std::string_view id) {
  return "backup/" + std::string(id);
}

std::string restore_job(std::uint32_t table_id) {
  return "restore/" + std::to_string(table_id);
}

std::uint32_t backup_suffix() {
  thread_local std::mt19937 random{static_cast<std::uint32_t>(random_seed())};
  return static_cast<std::uint32_t>(random());
}

// Up to kBackupJobPage entries of [from, end) at `snapshot`.
std::vector<std::pair<std::string, std::string>> read_job_page(storage::Storage& storage,
                                                               const std::string& from,
                                                               const std::string& end,
                                                               const storage::Snapshot* snapshot) {
  std::vector<std::pair<std::string, std::string>> page;
  auto it = storage.iterator(from, end, snapshot);
  for (it->seek_to_first(); it->valid() && page.size() < kBackupJobPage; it->next()) {
    page.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  return page;
}

}  // namespace

void Engine::job_fault(std::string_view job, std::size_t before, std::size_t after) {
  if (backup_fault_.empty()) return;
  // <job>-<kill|hold>:<n>
  const std::size_t dash = backup_fault_.find('-'), colon = backup_fault_.find(':');
  if (dash == std::string::npos || colon == std::string::npos || colon < dash) return;
  if (std::string_view(backup_fault_).substr(0, dash) != job) return;
  const std::string action = backup_fault_.substr(dash + 1, colon - dash - 1);
  const std::size_t at = std::strtoull(backup_fault_.c_str() + colon + 1, nullptr, 10);
  if (!(before < at && at <= after)) return;
  spdlog::warn("KUMO_BACKUP_FAULT={}: {} job at {} items", backup_fault_, job, after);
  if (action == "kill") ::kill(::getpid(), SIGKILL);
  if (action != "hold") return;
  // Until the engine stops, or the file KUMO_BACKUP_FAULT_RELEASE names exists.
  const char* release = std::getenv("KUMO_BACKUP_FAULT_RELEASE");
  while (!stopping_ && !(release && ::access(release, F_OK) == 0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Backup Engine::create_backup(const TableDefinition& table, std::string name, BackupType type) {
  Backup backup;
  BackupCopy copy;
  std::shared_ptr<storage::Snapshot> snapshot;
  {
    MutexLock lock(backups_mutex_);
    // The instant the backup is of: what is committed now is in it, what is committed
    // later is not. (A storage that other processes share has no such snapshot: its copy
    // is read item by item.)
    if (!storage_->shared()) snapshot = storage_->snapshot();
    TablePtr latest = current(table);
    if (latest && latest->restore && latest->restore->imports()) {
      throw ApiError::continuous_backups_unavailable(table.name);
    }
    if (!latest || latest->restore) throw ApiError::table_not_found(table.name);
    backup.created = clock_->now_ms();
    for (;;) {
      backup.id = backup_id(backup.created, type == BackupType::kSystem ? 0 : backup_suffix());
      if (!storage_->get(backup_key(backup.id))) break;
      // SYSTEM ids all end in -00000000: another one of the same millisecond takes the next.
      if (type == BackupType::kSystem) {
        backup.created = static_cast<double>(epoch_milliseconds(backup.created) + 1) / 1000.0;
      }
    }
    backup.name = std::move(name);
    backup.type = type;
    backup.status = BackupStatus::kCreating;
    if (type == BackupType::kSystem) backup.expires = backup.created + kSystemBackupSeconds;
    backup.size_bytes = table_size_bytes(*latest);
    backup.item_count = item_count(*latest);
    backup.source = *latest;
    backup.source.meters.reset();
    copy.source_id = latest->id;
    catalog_.reserve_id([&](std::uint32_t id, storage::WriteBatch& batch) {
      backup.data_id = id;
      copy.data_id = id;
      batch.put(backup_key(backup.id), encode_backup(backup));
      batch.put(backup_copy_key(backup.id), encode_backup_copy(copy));
    });
  }
  if (static_cast<std::uint64_t>(backup.size_bytes) <= options_.backup_sync_bytes &&
      claim_backup_job(backup_job(backup.id))) {
    bool done = false;
    try {
      done = copy_backup(backup.id, copy, snapshot.get());
    } catch (...) {
      release_backup_job(backup_job(backup.id), false);
      throw;
    }
    release_backup_job(backup_job(backup.id), done);
    if (done) backup.status = BackupStatus::kAvailable;
    return backup;
  }
  start_copy(backup.id, copy, std::move(snapshot), false);
  return backup;
}

bool Engine::claim_backup_job(const std::string& name) {
  MutexLock lock(backup_jobs_mutex_);
  if (backup_jobs_.count(name)) return false;  // running here already
  try {
    if (!storage_->claim_job(name)) return false;  // another process runs it
  } catch (const std::exception& e) {
    spdlog::warn("claiming the job {} failed: {}", name, e.what());
    return false;
  }
  backup_jobs_.insert(name);
  return true;
}

void Engine::set_data_job_hook(std::function<void()> hook) {
  MutexLock lock(data_job_hook_mutex_);
  data_job_hook_ = std::move(hook);
}

void Engine::release_backup_job(const std::string& name, bool done) {
  MutexLock lock(backup_jobs_mutex_);
  backup_jobs_.erase(name);
  if (!done) return;
  try {
    storage_->release_job(name);
  } catch (const std::exception& e) {
    // The claim goes when this process stops; the job has nothing left to do.
    spdlog::warn("giving back the job {} failed: {}", name, e.what());
  }
}

void Engine::start_copy(const std::string& id, BackupCopy copy,
                        std::shared_ptr<storage::Snapshot> snapshot, bool again) {
  if (!claim_backup_job(backup_job(id))) return;
  start_worker("kumo-backup", [this, id, copy, snapshot = std::move(snapshot), again] {
    lower_job_priority();
    bool done = false;
    try {
      // A copy cut short starts over: what it wrote may be of another instant.
      if (again) {
        const std::string data = codec::table_prefix(copy.data_id);
        storage_->erase_range(data, codec::prefix_end(data));
      }
      done = copy_backup(id, copy, snapshot.get());
    } catch (const std::exception& e) {
      // Storage failed: the backup stays CREATING and its copy is made again at the next
      // start (on a shared storage, at the next look for jobs).
      spdlog::warn("copy of backup {} stopped: {}", id, e.what());
    }
    release_backup_job(backup_job(id), done);
  });
}

bool Engine::copy_backup(const std::string& id, BackupCopy copy,
                         const storage::Snapshot* snapshot) {
  const std::string from = codec::space_prefix(copy.source_id, codec::Space::kItems);
  const std::string end = codec::prefix_end(from);
  const std::string record = backup_key(id);
  const std::string data_prefix = codec::table_prefix(copy.data_id);
  std::string next = from;
  std::size_t copied = 0;
  for (;;) {
    if (stopping_) return false;
    const auto page = read_job_page(*storage_, next, end, snapshot);
    if (!storage_->get(record)) {
      // Deleted while it was being made.
      discard_backup_copy(id, copy.data_id);
      return true;
    }
    if (page.empty()) break;
    storage::WriteBatch batch;
    for (const auto& [key, value] : page) {
      // The same item key under the data id: [data id][items][token][pk][sk].
      std::string to = data_prefix;
      to.append(key, data_prefix.size());
      // On a storage that others share, each item alone (one partition per write).
      if (storage_->shared() && !batch.empty()) {
        storage_->write(batch);
        batch = storage::WriteBatch();
      }
      batch.partition(to);
      batch.put(std::move(to), value);
    }
    storage_->write(batch);
    pace_bulk_writes();
    job_fault("copy", copied, copied + page.size());
    copied += page.size();
    next = page.back().first;
    next.push_back('\0');
  }
  bool gone = false, source_dropped = false;
  {
    MutexLock lock(backups_mutex_);
    std::optional<std::string> stored = storage_->get(record);
    std::optional<Backup> backup = stored ? decode_backup(*stored) : std::nullopt;
    gone = !backup;
    if (backup) {
      backup->status = BackupStatus::kAvailable;
      storage::WriteBatch batch;
      batch.put(record, encode_backup(*backup));
      batch.del(backup_copy_key(id));
      storage_->write(batch);
      source_dropped = !catalog_.find_id(copy.source_id);
    }
  }
  if (gone) {
    discard_backup_copy(id, copy.data_id);
    return true;
  }
  // A source deleted while it was copied has kept its data until now.
  if (source_dropped) resume_drops();
  return true;
}

void Engine::discard_backup_copy(const std::string& id, std::uint32_t data_id) {
  const std::string data = codec::table_prefix(data_id);
  storage_->erase_range(data, codec::prefix_end(data));
  storage::WriteBatch batch;
  batch.del(backup_copy_key(id));
  storage_->write(batch);
}

bool Engine::backup_copies_from(std::uint32_t table_id) {
  const std::string lower(kBackupCopyPrefix);
  auto it = storage_->iterator(lower, codec::prefix_end(lower));
  for (it->seek_to_first(); it->valid(); it->next()) {
    std::optional<BackupCopy> copy = decode_backup_copy(it->value());
    if (copy && copy->source_id == table_id) return true;
  }
  return false;
}

std::optional<Backup> Engine::find_backup(std::string_view id) const {
  std::optional<std::string> stored = storage_->get(backup_key(id));
  if (!stored) return std::nullopt;
  std::optional<Backup> backup = decode_backup(*stored);
  if (!backup) throw storage::StorageError("corrupt backup record: " + std::string(id));
  return backup;
}

std::vector<Backup> Engine::list_backups() const {
  std::vector<Backup> out;
  const std::string lower(kBackupPrefix);
  auto it = storage_->iterator(lower, codec::prefix_end(lower));
  for (it->seek_to_first(); it->valid(); it->next()) {
    std::optional<Backup> backup = decode_backup(it->value());
    if (!backup) throw storage::StorageError("corrupt backup record: " + std::string(it->key()));
    out.push_back(std::move(*backup));
  }
  return out;
}

std::vector<TablePtr> Engine::restoring_tables() const {
  std::vector<TablePtr> out;
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    // (A table being imported is CREATING the same way, but no restore's.)
    if (table && table->restore && !table->restore->imports()) out.push_back(std::move(table));
  }
  return out;
}

Backup Engine::delete_backup(
    std::string_view id,
    const std::function<void(const Backup* backup, const TablePtr& restoring)>& check) {
  Backup deleted;
  bool copied = false;
  {
    MutexLock lock(backups_mutex_);
    std::optional<Backup> backup = find_backup(id);
    TablePtr restoring;
    if (backup) {
      for (TablePtr& table : restoring_tables()) {
        if (table->restore->backup_id == id) restoring = std::move(table);
      }
    }
    check(backup ? &*backup : nullptr, restoring);
    if (!backup) throw ApiError::internal();  // (`check` refuses a missing backup)
    deleted = std::move(*backup);
    copied = deleted.status == BackupStatus::kAvailable;
    storage::WriteBatch batch;
    batch.del(backup_key(id));
    storage_->write(batch);
  }
  // A backup still being made is removed by its copy job, which finds its record gone
  // (or, after a stop, by the next start).
  if (copied) {
    const std::string data = codec::table_prefix(deleted.data_id);
    storage_->erase_range(data, codec::prefix_end(data));
  }
  return deleted;
}

std::size_t Engine::expire_system_backups() {
  const double now = clock_->now();
  std::size_t expired = 0;
  for (const Backup& backup : list_backups()) {
    if (backup.type != BackupType::kSystem || !backup.expires || *backup.expires > now ||
        backup.status != BackupStatus::kAvailable) {
      continue;
    }
    // Kept while a restore reads it; gone already when another process sharing the storage
    // expired it.
    struct Kept {};
    try {
      delete_backup(backup.id, [](const Backup* found, const TablePtr& restoring) {
        if (!found || restoring) throw Kept{};
      });
      ++expired;
    } catch (const Kept&) {
    }
  }
  return expired;
}

TablePtr Engine::restore_table(std::string_view backup_id, std::string_view target_name,
                               const std::function<TableDefinition(const RestoreCheck&)>& plan) {
  TablePtr table;
  {
    MutexLock lock(backups_mutex_);
    std::optional<Backup> backup = find_backup(backup_id);
    RestoreCheck check;
    check.backup = backup ? &*backup : nullptr;
    check.target = catalog_.find(target_name);
    for (TablePtr& restoring : restoring_tables()) {
      ++check.running;
      if (restoring->restore->backup_id == backup_id) check.using_backup = restoring;
    }
    TableDefinition target = plan(check);
    if (!target.restore || target.name != target_name) {
      throw std::logic_error("a restore's table without its source");
    }
    table = create_table(std::move(target));
  }
  start_restore(table->name, table->id);
  return table;
}

void Engine::start_restore(const std::string& name, std::uint32_t id) {
  if (!claim_backup_job(restore_job(id))) return;
  start_worker("kumo-restore", [this, name, id] {
    lower_job_priority();
    bool done = false;
    try {
      done = run_restore(name, id);
    } catch (const std::exception& e) {
      // Storage failed: the table stays CREATING and the restore resumes at the next start
      // (on a shared storage, at the next look for jobs).
      spdlog::warn("restore of table {} stopped: {}", name, e.what());
    }
    release_backup_job(restore_job(id), done);
  });
}

bool Engine::run_restore(const std::string& name, std::uint32_t id) {
  const std::string progress = restore_progress_key(id);
  std::optional<Backup> backup;
  for (;;) {
    if (stopping_) return false;
    TablePtr table = catalog_.find(name);
    if (!table || table->id != id || !table->restore || table->restore->imports()) {
      return true;  // gone, or done
    }
    // A restore to a point in time replays its source's change log (pitr.cpp).
    if (table->restore->source_id) return run_pitr_restore(name, id);
    backup = find_backup(table->restore->backup_id);
    if (!backup) {
      fail_restore(name, id, "its backup is gone");
      return true;
    }
    if (backup->status == BackupStatus::kAvailable) break;
    // The backup is still being made: its copy is what is restored.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string from = codec::space_prefix(backup->data_id, codec::Space::kItems);
  const std::string end = codec::prefix_end(from);
  std::string next = storage_->get(progress).value_or(from);
  std::size_t written = 0;
  for (;;) {
    if (stopping_) return false;
    const auto page = read_job_page(*storage_, next, end, nullptr);
    if (page.empty()) break;
    for (const auto& entry : page) {
      std::optional<StoredItem> stored = StoredItem::from_bytes(entry.second);
      if (!stored) throw storage::StorageError("corrupt item in backup " + backup->id);
      const Item item = stored->decode();
      TablePtr table = catalog_.find(name);
      if (!table || table->id != id) return true;  // deleted meanwhile
      try {
        write_item(*table, item_key(*table, item),
                   [&item](const std::optional<Item>&) { return std::optional<Item>(item); });
      } catch (const ApiError& e) {
        // Refused for good (an item collection past --item-collection-limit, say): doing
        // it again would meet the same refusal. (A write that kept meeting other front
        // ends' writes is tried again later.)
        if (e.code() == ApiError::Code::kInternal) throw;
        fail_restore(name, id, e.what());
        return true;
      }
    }
    next = page.back().first;
    next.push_back('\0');
    storage::WriteBatch batch;
    batch.put(progress, next);
    storage_->write(batch);
    pace_bulk_writes();
    job_fault("restore", written, written + page.size());
    written += page.size();
  }
  finish_restore(name, id, progress);
  return true;
}

void Engine::finish_restore(const std::string& name, std::uint32_t id,
                            const std::string& progress) {
  TablePtr restored = catalog_.update(name, [&](TableDefinition& t) {
    if (t.id == id) t.restore.reset();
  });
  configure_meters(restored);
  storage::WriteBatch batch;
  batch.del(progress);
  storage_->write(batch);
}

TablePtr Engine::finish_import(const std::string& name, std::uint32_t id) {
  TablePtr table = catalog_.find(name);
  if (!table || table->id != id) return nullptr;
  TablePtr done = catalog_.update(name, [&](TableDefinition& t) {
    if (t.id == id && t.restore && t.restore->imports()) t.restore.reset();
  });
  configure_meters(done);
  return done;
}

void Engine::fail_restore(const std::string& name, std::uint32_t id, const std::string& why) {
  spdlog::error("the restore of table {} cannot be done ({}): the table is deleted", name, why);
  TablePtr table = catalog_.find(name);
  if (table && table->id == id) delete_table(name);
  storage::WriteBatch batch;
  batch.del(restore_progress_key(id));
  storage_->write(batch);
}

void Engine::resume_backup_jobs() {
  // Copies cut short, made again from what the storage holds now, before any request is
  // served (nothing has been written since the stop).
  std::vector<std::pair<std::string, BackupCopy>> copies;
  {
    const std::string lower(kBackupCopyPrefix);
    auto it = storage_->iterator(lower, codec::prefix_end(lower));
    for (it->seek_to_first(); it->valid(); it->next()) {
      std::optional<BackupCopy> copy = decode_backup_copy(it->value());
      if (copy) copies.emplace_back(std::string(it->key().substr(lower.size())), *copy);
    }
  }
  std::shared_ptr<storage::Snapshot> snapshot;
  if (!copies.empty() && !storage_->shared()) snapshot = storage_->snapshot();
  for (const auto& [id, copy] : copies) start_copy(id, copy, snapshot, true);
  // Restores in progress, and the progress records of restores that ended.
  std::set<std::uint32_t> restoring;
  for (const TablePtr& table : restoring_tables()) {
    restoring.insert(table->id);
    start_restore(table->name, table->id);
  }
  if (storage_->shared()) return;  // (another process may be about to record its progress)
  const std::string lower(kRestoreProgressPrefix);
  storage::WriteBatch ended;
  auto it = storage_->iterator(lower, codec::prefix_end(lower));
  for (it->seek_to_first(); it->valid(); it->next()) {
    const std::string id(it->key().substr(lower.size()));
    if (!restoring.count(static_cast<std::uint32_t>(std::strtoul(id.c_str(), nullptr, 10)))) {
      ended.del(std::string(it->key()));
    }
  }
  it.reset();
  if (!ended.empty()) storage_->write(ended);
}

}  // namespace kumo::engine
