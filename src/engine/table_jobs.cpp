// The table jobs that run in the background and are done once across the processes that
// share a storage (Storage::claim_job): a GSI's backfill, and the removal of a dropped
// table's data (docs/scale-out.md, "Background jobs").
#include <spdlog/spdlog.h>

#include "engine/engine.h"

namespace kumo::engine {

namespace {
// Named by the index's name, which is known before the catalog change that makes the index
// (its id is given by that change).
std::string backfill_job(std::uint32_t table_id, std::string_view index_name) {
  return "backfill/" + std::to_string(table_id) + "/" + std::string(index_name);
}
}  // namespace

bool Engine::claim_backfill(std::uint32_t table_id, std::string_view index_name) {
  return storage_->claim_job(backfill_job(table_id, index_name));
}

void Engine::release_backfill(std::uint32_t table_id, std::string_view index_name) {
  storage_->release_job(backfill_job(table_id, index_name));
}

void Engine::start_backfill(const std::string& table_name, std::uint32_t index_id) {
  TablePtr table = catalog_.find(table_name);
  if (!table) return;
  const std::uint32_t table_id = table->id;
  const IndexDefinition* index = nullptr;
  for (const auto& i : table->global_indexes) {
    if (i.id == index_id) index = &i;
  }
  if (!index) return;
  const std::string job = backfill_job(table_id, index->name);
  {
    MutexLock lock(backfills_mutex_);
    if (backfills_.count({table_id, index_id})) return;  // running here already
    try {
      if (!storage_->claim_job(job)) return;  // another process runs it
    } catch (const std::exception& e) {
      spdlog::warn("claiming the backfill of index {} of table {} failed: {}", index_id, table_name,
                   e.what());
      return;
    }
    backfills_.insert({table_id, index_id});
  }
  start_worker("kumo-backfill", [this, table_name, table_id, index_id, job] {
    try {
      if (backfill(table_name, index_id)) {
        configure_meters(catalog_.update(table_name, [&](TableDefinition& t) {
          for (auto& index : t.global_indexes) {
            if (index.id == index_id) index.backfilling = false;
          }
        }));
      }
      storage_->release_job(job);
    } catch (const std::exception& e) {
      // The table was deleted meanwhile, or storage failed: the index stays CREATING and
      // the backfill resumes at the next start (or, on a shared storage, when it is
      // claimed again).
      spdlog::warn("backfill of index {} of table {} stopped: {}", index_id, table_name, e.what());
    }
    MutexLock lock(backfills_mutex_);
    backfills_.erase({table_id, index_id});
  });
}

void Engine::resume_backfills() {
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    if (!table) continue;
    for (const auto& index : table->global_indexes) {
      if (index.backfilling) start_backfill(name, index.id);
    }
  }
}

namespace {
std::string drop_job(std::uint32_t table_id) {
  return "drop/" + std::to_string(table_id);
}
}  // namespace

bool Engine::claim_drop(std::uint32_t id) {
  MutexLock lock(drops_mutex_);
  if (drops_.count(id)) return false;  // running here already
  try {
    if (!storage_->claim_job(drop_job(id))) return false;  // another process runs it
  } catch (const std::exception& e) {
    spdlog::warn("claiming the removal of dropped table {}'s data failed: {}", id, e.what());
    return false;
  }
  drops_.insert(id);
  return true;
}

void Engine::unclaim_drop(std::uint32_t id) {
  {
    MutexLock lock(drops_mutex_);
    drops_.erase(id);
  }
  try {
    storage_->release_job(drop_job(id));
  } catch (const std::exception& e) {
    // The claim goes when this process stops; the job has nothing to do meanwhile.
    spdlog::warn("giving back the removal of table {}'s data failed: {}", id, e.what());
  }
}

void Engine::run_drop(std::uint32_t id, const std::string& name) {
  {
    // A backup still copying the table's items keeps them; its copy job removes them
    // once it is done (resume_drops).
    MutexLock lock(backups_mutex_);
    bool copying = false;
    try {
      copying = backup_copies_from(id);
    } catch (...) {
      MutexLock drops(drops_mutex_);
      drops_.erase(id);
      throw;
    }
    if (copying) {
      {
        MutexLock drops(drops_mutex_);
        drops_.erase(id);
      }
      storage_->release_job(drop_job(id));
      return;
    }
  }
  try {
    catalog_.drop_data(id);
    storage_->release_job(drop_job(id));
  } catch (...) {
    MutexLock lock(drops_mutex_);
    drops_.erase(id);
    throw;
  }
  MutexLock lock(drops_mutex_);
  drops_.erase(id);
  if (storage_->shared()) spdlog::info("removed the data of dropped table {} ({})", name, id);
}

void Engine::resume_drops() {
  std::vector<std::pair<std::uint32_t, std::string>> pending;
  try {
    pending = catalog_.pending_drops();
  } catch (const std::exception& e) {
    spdlog::warn("looking for dropped tables' data to remove failed: {}", e.what());
    return;
  }
  for (const auto& drop : pending) {
    const std::uint32_t id = drop.first;
    const std::string name = drop.second;
    if (!claim_drop(id)) continue;
    start_worker("kumo-drop", [this, id, name] {
      try {
        run_drop(id, name);
      } catch (const std::exception& e) {
        // Its record stays: the removal is done again (on a shared storage at the next
        // look for them, else at the next start).
        spdlog::warn("removing the data of dropped table {} ({}) stopped: {}", name, id, e.what());
      }
    });
  }
}

}  // namespace kumo::engine
