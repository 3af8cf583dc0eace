// Table lifecycle (create, update, delete) with the change streams and the TTL schedule
// kept in step, the TTL reaper, and the background loop that runs it and trims streams.
//
// TTL schedule: [table id][kTtl][enc(expiry)][item key] → the item's key attributes, one
// entry per item whose TTL attribute is a number, written in the item's own batch. The
// reaper reads the schedule up to now instead of scanning the table.
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/engine.h"
#include "model/api_error.h"
#include "model/clock.h"

namespace kumo::engine {
namespace {

// Items whose TTL lies more than five years in the past are never deleted: the value is
// taken for a mistake (milliseconds, or not a time at all).
constexpr double kTtlPastLimitSeconds = 5 * 365 * 24 * 3600.0;

// The schedule entry of `item` (stored under `storage_key`), or nullopt when its TTL
// attribute is absent or not a number.
std::optional<std::string> expiry_key(const TableDefinition& table, const Item& item,
                                      const std::string& storage_key) {
  auto it = item.find(table.ttl_attribute);
  if (it == item.end() || it->second.type() != AttrType::N) return std::nullopt;
  std::string key = codec::space_prefix(table.id, codec::Space::kTtl);
  codec::append_key_value(&key, it->second);
  key.append(storage_key);
  return key;
}

Item key_attributes(const TableDefinition& table, const Item& item) {
  Item key;
  key.emplace(table.key.hash.name, item.at(table.key.hash.name));
  if (table.key.range) key.emplace(table.key.range->name, item.at(table.key.range->name));
  return key;
}

AttributeValue seconds_value(double seconds) {
  return AttributeValue::number(Decimal::from_int(epoch_whole_seconds(seconds)));
}

// Whether `item`'s TTL attribute says it is expired at `now` and may be deleted.
bool is_expired(const TableDefinition& table, const Item& item, double now) {
  auto it = item.find(table.ttl_attribute);
  if (it == item.end() || it->second.type() != AttrType::N) return false;
  const Decimal& expiry = it->second.as_number();
  return expiry < seconds_value(now).as_number() &&
         !(expiry < seconds_value(now - kTtlPastLimitSeconds).as_number());
}

}  // namespace

std::string Engine::update_ttl_schedule(const TableDefinition& table,
                                        const std::string& storage_key, const WriteResult& result,
                                        storage::WriteBatch* batch) const {
  if (!table.ttl_enabled) return {};
  std::optional<std::string> old_entry, new_entry;
  if (result.old_item) old_entry = expiry_key(table, *result.old_item, storage_key);
  if (result.new_item) new_entry = expiry_key(table, *result.new_item, storage_key);
  if (old_entry == new_entry) return {};
  if (old_entry) batch->maintain_del(*old_entry);
  if (!new_entry) return {};
  batch->maintain_put(*new_entry, codec::encode_item(key_attributes(table, *result.new_item)));
  return std::move(*new_entry);
}

namespace {

// Late entries kept for the next pass, per table, before it walks the schedule from its
// beginning instead (a bulk load of items already expired, say).
constexpr std::size_t kMaxLateEntries = 100000;

// The part of a schedule entry that orders it within its table: enc(expiry), item key.
std::string_view schedule_position(std::string_view entry) {
  return entry.substr(codec::space_prefix(0, codec::Space::kTtl).size());
}

}  // namespace

void Engine::note_ttl_entry(std::uint32_t table_id, std::string_view entry) {
  // On a shared storage each pass walks the schedule from its start (expire_table), and
  // the table's reaper may be another process.
  if (storage_->shared()) return;
  MutexLock lock(ttl_mutex_);
  if (!(schedule_position(entry) < ttl_horizon_)) return;
  TtlProgress& progress = ttl_progress_[table_id];
  if (progress.overflow) return;
  if (progress.late.size() >= kMaxLateEntries) {
    progress.overflow = true;
    std::vector<std::string>().swap(progress.late);
    return;
  }
  progress.late.emplace_back(entry);
}

void Engine::reset_ttl_progress(std::uint32_t table_id) {
  MutexLock lock(ttl_mutex_);
  ttl_progress_.erase(table_id);
}

namespace {

// The provisioned capacity units a table holds: its own and its GSIs', read and write; none
// for an on-demand table.
std::pair<std::int64_t, std::int64_t> reserved_units(const TableDefinition& t) {
  if (t.billing_mode != BillingMode::PROVISIONED) return {0, 0};
  std::int64_t read = t.throughput.read_capacity_units;
  std::int64_t write = t.throughput.write_capacity_units;
  for (const auto& index : t.global_indexes) {
    read += index.throughput.read_capacity_units;
    write += index.throughput.write_capacity_units;
  }
  return {read, write};
}

}  // namespace

void Engine::verify_account_quota(const TableDefinition* before, const TableDefinition& after,
                                  const std::vector<const TableDefinition*>& others) const {
  const auto [read, write] = reserved_units(after);
  const auto [was_read, was_write] =
      before ? reserved_units(*before) : std::pair<std::int64_t, std::int64_t>{0, 0};
  std::int64_t others_read = 0, others_write = 0;
  for (const TableDefinition* t : others) {
    const auto [r, w] = reserved_units(*t);
    others_read += r;
    others_write += w;
  }
  // Only what raises the table's reservation is refused: a table may keep, or lower, what
  // it holds when the quota was lowered after it was provisioned.
  const struct {
    std::string_view name;
    std::int64_t requested, was, others, limit;
  } units[] = {
      {"ReadCapacityUnits", read, was_read, others_read, options_.account_quota_read},
      {"WriteCapacityUnits", write, was_write, others_write, options_.account_quota_write}};
  for (const auto& u : units) {
    if (u.limit <= 0 || u.requested <= u.was || u.others + u.requested <= u.limit) continue;
    throw ApiError::limit_exceeded(fmt::format(
        "This request would have caused the {} limit to be exceeded for the account in {}. "
        "Current {} reserved by the account: {}. Limit: {}. Requested: {}. Refer to the Amazon "
        "DynamoDB Developer Guide for current limits and how to request higher limits.",
        u.name, options_.region, u.name, u.others + u.was, u.limit, u.requested));
  }
}

TablePtr Engine::create_table(TableDefinition definition) {
  TablePtr table;
  {
    // (Announced once the streams' lock is released: the others' reloads take it here.)
    Catalog::Deferral deferral;
    ChangeStreams::Guard guard(streams_);
    if (definition.stream && definition.stream->enabled) {
      definition.latest_stream_label =
          streams_.free_label(guard, definition.name, definition.latest_stream_label);
    }
    // A catalog change that meets another's is made again from the start: each attempt's
    // meters are given back before the next attempt attaches its own, and the last's when
    // the change fails, so that only the stored table's meters stay registered.
    std::shared_ptr<capacity::TableMeters> attempt;
    auto detach_attempt = [this, &attempt] {
      if (attempt && capacity()) capacity()->detach(*attempt);
      attempt.reset();
    };
    try {
      table = catalog_.create(std::move(definition), [&](TableDefinition& t) {
        fit_partitions(t, false);
        detach_attempt();
        attach_meters(t);
        attempt = t.meters;
      });
    } catch (...) {
      detach_attempt();
      throw;
    }
    if (table->stream && table->stream->enabled) {
      streams_.open(guard, *table, table->creation_date_time);
      start_maintenance();
    }
  }
  catalog_.announce_deferred();
  if (table->stream && table->stream->enabled) announce_streams();
  // The storage's own partitions of the items (if it has any) start where the table's do.
  for (std::uint64_t token : new_boundaries(nullptr, table->capacity.partitions)) {
    storage_->split_partition(table->id, token);
  }
  return table;
}

TablePtr Engine::update_table(std::string_view name,
                              const std::function<void(TableDefinition&)>& change) {
  TablePtr before, after;
  std::vector<std::uint64_t> splits;
  bool streams_changed = false;
  {
    Catalog::Deferral deferral;  // (as in create_table)
    ChangeStreams::Guard guard(streams_);
    before = catalog_.find(name);
    after = catalog_.update(name, [&](TableDefinition& t) {
      const bool was_enabled = t.stream && t.stream->enabled;
      const std::string old_label = t.latest_stream_label;
      change(t);
      fit_partitions(t, true);
      if (t.stream && t.stream->enabled && (!was_enabled || t.latest_stream_label != old_label)) {
        t.latest_stream_label = streams_.free_label(guard, t.name, t.latest_stream_label);
      }
    });
    const bool was_enabled = before && before->stream && before->stream->enabled;
    const bool is_enabled = after->stream && after->stream->enabled;
    if (was_enabled && (!is_enabled || before->latest_stream_label != after->latest_stream_label)) {
      streams_.close(guard, after->id, clock_->now_ms());
      streams_changed = true;
    }
    if (is_enabled && (!was_enabled || before->latest_stream_label != after->latest_stream_label)) {
      streams_.open(guard, *after, clock_->now_ms());
      streams_changed = true;
    }
    // Partitions split by raised throughput split the stream's shards and the storage's
    // partitions with them (on shared storage, the shards once the storage reports its
    // split: they follow the partitions that number their records).
    splits =
        new_boundaries(before ? &before->capacity.partitions : nullptr, after->capacity.partitions);
    for (std::uint64_t token : storage_->shared() ? std::vector<std::uint64_t>{} : splits) {
      streams_changed =
          streams_.split(guard, after->id, token, clock_->now_ms()) || streams_changed;
    }
  }
  catalog_.announce_deferred();
  if (streams_changed) announce_streams();
  for (std::uint64_t token : splits) storage_->split_partition(after->id, token);
  configure_meters(after);
  if (after->ttl_enabled || (after->stream && after->stream->enabled)) start_maintenance();
  const bool ttl_was = before && before->ttl_enabled;
  if (after->ttl_enabled && !ttl_was) {
    start_ttl_scheduling(after->name, true);
  } else if (!after->ttl_enabled && ttl_was) {
    const std::string prefix = codec::space_prefix(after->id, codec::Space::kTtl);
    storage_->erase_range(prefix, codec::prefix_end(prefix));
    forget_ttl_scan(after->id);
    release_ttl_job(after->id);
    reset_ttl_progress(after->id);
  }
  return after;
}

TablePtr Engine::delete_table(std::string_view name) {
  // The removal of the table's data is recorded with its removal from the catalog, and
  // claimed before: the process that drops a table removes its data, unless it stops
  // midway (then another one finds the record and does it again).
  TablePtr found = catalog_.find(name);
  // A table with point-in-time recovery leaves a SYSTEM backup of its items as they are
  // just before the deletion, kept 35 days.
  if (found && found->pitr && !found->restore) {
    create_backup(*found, found->name + "$DeletedTableBackup", BackupType::kSystem);
  }
  std::optional<std::uint32_t> claimed;
  if (found && claim_drop(found->id)) claimed = found->id;
  TablePtr table;
  try {
    {
      Catalog::Deferral deferral;  // (as in create_table)
      ChangeStreams::Guard guard(streams_);
      table = catalog_.remove(name);
      if (table) streams_.close(guard, table->id, clock_->now_ms());
    }
    catalog_.announce_deferred();
  } catch (...) {
    if (claimed) unclaim_drop(*claimed);
    throw;
  }
  if (claimed && (!table || table->id != *claimed)) {
    // Dropped (and made again) through another process meanwhile.
    unclaim_drop(*claimed);
    claimed.reset();
  }
  if (!table) return nullptr;
  if (table->stream && table->stream->enabled) announce_streams();
  if (capacity() && table->meters) capacity()->detach(*table->meters);
  release_ttl_job(table->id);
  reset_ttl_progress(table->id);
  forget_ttl_scan(table->id);
  if (claimed || claim_drop(table->id)) run_drop(table->id, table->name);
  return table;
}

namespace {
std::string ttl_scan_job(std::uint32_t table_id) {
  return "ttl-scan/" + std::to_string(table_id);
}
// How far a table's scan went: [attribute name length u32][attribute name][next item key].
std::string ttl_scan_progress_key(std::uint32_t table_id) {
  return "meta/ttl_scan/" + std::to_string(table_id);
}
}  // namespace

void Engine::forget_ttl_scan(std::uint32_t table_id) {
  storage::WriteBatch batch;
  batch.del(ttl_scan_progress_key(table_id));
  storage_->write(batch);
  storage_->release_job(ttl_scan_job(table_id));
}

void Engine::start_ttl_scheduling(const std::string& table_name, bool again) {
  TablePtr found = catalog_.find(table_name);
  if (!found) return;
  const std::uint32_t id = found->id;
  if (again) forget_ttl_scan(id);
  if (!storage_->claim_job(ttl_scan_job(id))) return;  // another process runs it
  std::uint64_t scan = 0;
  {
    MutexLock lock(ttl_mutex_);
    // (Running here already: it goes on, unless TTL was enabled anew.)
    if (!again && ttl_scans_running_.count(id)) return;
    scan = ++next_ttl_scan_;
    ttl_scans_[id] = scan;
    ttl_scans_running_.insert(id);
  }
  start_worker("kumo-ttl-scan", [this, table_name, scan, id] {
    auto ran = [this, scan, id] {
      MutexLock lock(ttl_mutex_);
      auto latest = ttl_scans_.find(id);
      if (latest != ttl_scans_.end() && latest->second == scan) ttl_scans_running_.erase(id);
    };
    try {
      TablePtr table = catalog_.find(table_name);
      if (!table || table->id != id) {
        ran();
        return;
      }
      const std::string attribute = table->ttl_attribute;
      std::string mark;
      codec::append_u32(&mark, static_cast<std::uint32_t>(attribute.size()));
      mark += attribute;
      std::string from;
      if (std::optional<std::string> progress = storage_->get(ttl_scan_progress_key(id));
          progress && progress->compare(0, mark.size(), mark) == 0) {
        from = progress->substr(mark.size());
        spdlog::info("Time to Live scan of table {} ({}) resumed where it was left", table_name,
                     id);
      }
      auto current = [this, scan, id] {
        MutexLock lock(ttl_mutex_);
        auto latest = ttl_scans_.find(id);
        return latest != ttl_scans_.end() && latest->second == scan;
      };
      const bool done = walk_items(
          table_name, id,
          [&](const TableDefinition& t, const std::string& key, const Item& item) {
            if (!t.ttl_enabled || t.ttl_attribute != attribute) return false;
            std::optional<std::string> entry = expiry_key(t, item, key);
            if (!entry) return true;
            storage::WriteBatch batch;
            batch.partition(key);
            batch.maintain_put(*entry, codec::encode_item(key_attributes(t, item)));
            storage_->write(batch);
            note_ttl_entry(t.id, *entry);
            return true;
          },
          1, from,
          [&](const std::string& next) {
            if (!current()) return;
            storage::WriteBatch batch;
            batch.put(ttl_scan_progress_key(id), mark + next);
            storage_->write(batch);
            if (scan_fault_ == "page") ::kill(::getpid(), SIGKILL);
          });
      if (!done) {
        ran();
        return;
      }
      configure_meters(catalog_.update(table_name, [&](TableDefinition& t) {
        MutexLock lock(ttl_mutex_);
        auto latest = ttl_scans_.find(t.id);
        if (latest == ttl_scans_.end() || latest->second != scan) return;  // enabled again
        if (t.id == table->id && t.ttl_attribute == attribute) t.ttl_scheduling = false;
      }));
      if (current()) {
        forget_ttl_scan(id);
      }
      ran();
    } catch (const std::exception& e) {
      ran();
      // The table was deleted meanwhile, or storage failed: the scan is resumed where it
      // was left by the next process to claim it.
      spdlog::warn("Time to Live scheduling of table {} stopped: {}", table_name, e.what());
    }
  });
}

void Engine::resume_ttl_scans() {
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    if (!table || !table->ttl_enabled || !table->ttl_scheduling) continue;
    {
      MutexLock lock(ttl_mutex_);
      if (ttl_scans_running_.count(table->id)) continue;
    }
    start_ttl_scheduling(name);
  }
}

bool Engine::expire_item(const TableDefinition& table, const Item& key, const std::string& entry,
                         double now) {
  const std::string storage_key = item_key(table, key);
  auto guard = locks_.lock(storage_key);
  TablePtr latest = current(table);
  if (!latest || !latest->ttl_enabled) return false;
  WriteResult result;
  std::optional<std::string> stored;
  try {
    stored = read_old(*latest, storage_key, result);
  } catch (const storage::WriteConflict&) {
    // The entries of the item's last write are still being applied: a later pass looks
    // at it again.
    return false;
  }
  storage::WriteBatch batch;
  if (!result.old_item || !is_expired(*latest, *result.old_item, now)) {
    // Written again since it was scheduled: its write moved the entry, unless this one is
    // left over from an earlier TTL setting.
    if (!result.old_item || expiry_key(*latest, *result.old_item, storage_key) != entry) {
      batch.partition(storage_key);
      batch.maintain_del(entry);
      storage_->write(batch);
    }
    return false;
  }
  Change change = add_write(*latest, storage_key, result, &batch);
  change.by_service = true;
  batch.expect(storage_key, std::move(stored));
  try {
    commit(batch, {change});
  } catch (const storage::WriteConflict&) {
    // Written by another front end since it was read: a later pass looks at it again.
    return false;
  }
  // A TTL deletion is not charged, but frees its partitions' bytes.
  charge_write(change.table ? *change.table : *latest, storage_key, result, Metering{});
  return true;
}

std::size_t Engine::expire_items(double now) {
  std::string horizon, past_limit;
  codec::append_key_value(&horizon, seconds_value(now));
  codec::append_key_value(&past_limit, seconds_value(now - kTtlPastLimitSeconds));
  {
    // From here on, an entry committed below the horizon is noted for the next pass: this
    // one may have passed its place already.
    MutexLock lock(ttl_mutex_);
    if (ttl_horizon_ < horizon) ttl_horizon_ = horizon;
  }
  std::size_t expired = 0;
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    if (stopping_) break;
    TablePtr table = catalog_.find(name);
    if (!table || !table->ttl_enabled || !reaps(table->id)) continue;
    const std::string prefix = codec::space_prefix(table->id, codec::Space::kTtl);
    const std::size_t deleted = expire_table(*table, prefix + past_limit, prefix + horizon, now);
    if (deleted > 0 && storage_->shared()) {
      spdlog::info("Time to Live deleted {} items of table {} ({})", deleted, name, table->id);
    }
    expired += deleted;
  }
  return expired;
}

void Engine::reclaim_tombstones() {
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    if (stopping_) break;
    TablePtr table = catalog_.find(name);
    if (!table) continue;
    try {
      const std::size_t removed = storage_->reclaim_tombstones(table->id);
      if (removed > 0) {
        spdlog::info("removed {} versions of deleted items of table {} ({})", removed, name,
                     table->id);
      }
    } catch (const std::exception& e) {
      // (Dropped meanwhile, or the storage failed: the next pass looks again.)
      spdlog::warn("removing versions of deleted items of table {} failed: {}", name, e.what());
    }
  }
}

namespace {
std::string ttl_job(std::uint32_t table_id) {
  return "ttl/" + std::to_string(table_id);
}
}  // namespace

bool Engine::reaps(std::uint32_t table_id) {
  if (!storage_->shared()) return true;
  MutexLock lock(ttl_jobs_mutex_);
  return ttl_jobs_.count(table_id) > 0;
}

void Engine::release_ttl_job(std::uint32_t table_id) {
  if (!storage_->shared()) return;
  MutexLock lock(ttl_jobs_mutex_);
  if (ttl_jobs_.erase(table_id) == 0) return;
  try {
    storage_->release_job(ttl_job(table_id));
  } catch (const std::exception& e) {
    // The claim stays until this process stops; nothing runs under it.
    spdlog::warn("giving back the Time to Live job of table {} failed: {}", table_id, e.what());
  }
}

std::int64_t Engine::ttl_weight(const TableDefinition& table) const {
  const auto weight = static_cast<std::uint64_t>(std::max<std::int64_t>(item_count(table), 0)) + 1;
  const int low = std::bit_width(weight) - 3;
  return static_cast<std::int64_t>(low > 0 ? (weight >> low) << low : weight);
}

void Engine::balance_ttl_jobs() {
  struct Job {
    std::uint32_t id = 0;
    std::string name;
    std::int64_t weight = 0;
  };
  std::vector<Job> jobs;
  std::set<std::uint32_t> enabled;
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    if (!table || !table->ttl_enabled) continue;
    jobs.push_back({table->id, table->name, ttl_weight(*table)});
    enabled.insert(table->id);
  }
  const std::uint64_t self = storage_->process_id();
  std::vector<std::uint64_t> live = storage_->live_processes();
  if (std::find(live.begin(), live.end(), self) == live.end()) live.push_back(self);
  std::sort(live.begin(), live.end());
  std::map<std::string, storage::Storage::JobClaim> claims;
  for (auto& [name, claim] : storage_->job_claims("ttl/")) claims[name] = claim;
  // The spread every process computes alike from the same tables, weights and processes.
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.id < b.id;
  });
  std::map<std::uint64_t, std::int64_t> load;
  for (std::uint64_t process : live) load[process] = 0;
  std::map<std::uint32_t, std::uint64_t> target;
  for (const Job& job : jobs) {
    auto least = load.begin();
    for (auto it = load.begin(); it != load.end(); ++it) {
      if (it->second < least->second) least = it;
    }
    target[job.id] = least->first;
    least->second += job.weight;
  }
  const auto alive = [&live](std::uint64_t process) {
    return std::binary_search(live.begin(), live.end(), process);
  };
  MutexLock lock(ttl_jobs_mutex_);
  // Tables dropped, or whose TTL was disabled, through another process.
  for (std::uint32_t id : std::vector<std::uint32_t>(ttl_jobs_.begin(), ttl_jobs_.end())) {
    if (enabled.count(id)) continue;
    ttl_jobs_.erase(id);
    storage_->release_job(ttl_job(id));
    spdlog::info("gave back the Time to Live job of table {} (no Time to Live any more)", id);
  }
  std::int64_t weight_here = 0;
  for (const Job& job : jobs) {
    const std::string name = ttl_job(job.id);
    const storage::Storage::JobClaim claim =
        claims.count(name) ? claims[name] : storage::Storage::JobClaim{};
    const std::uint64_t to = target[job.id];
    bool held = claim.holder == self;
    if (!held && claim.taker == self) {
      held = storage_->claim_job(name);  // handed to this process
    } else if (!held && to == self && claim.holder == 0) {
      held = storage_->claim_job(name);
    } else if (!held && to == self && !alive(claim.holder)) {
      // Its holder stopped: reaped here from now on, before its lease lapses.
      held = storage_->take_job(name, claim.holder);
    }
    if (held && to != self && claim.taker != to) {
      // Handed over to the process the spread gives it; reaped here until that one holds it.
      held = storage_->hand_over_job(name, to);
      if (held)
        spdlog::info("handing the Time to Live job of table {} ({}) over to front end {:016x}",
                     job.name, job.id, to);
    } else if (held && to == self && claim.holder == self && claim.taker != 0) {
      held = storage_->hand_over_job(name, 0);  // the spread changed back: kept here
    }
    if (!held) {
      if (ttl_jobs_.erase(job.id) > 0) {
        spdlog::info("the Time to Live job of table {} is held by another front end", job.id);
      }
      continue;
    }
    weight_here += job.weight;
    if (ttl_jobs_.insert(job.id).second) {
      spdlog::info("claimed the Time to Live job of table {} ({})", job.name, job.id);
    }
  }
  std::int64_t total = 0;
  for (const Job& job : jobs) total += job.weight;
  const std::string share = fmt::format("{} tables of weight {} of {}, over {} front ends",
                                        ttl_jobs_.size(), weight_here, total, live.size());
  if (share != ttl_share_) {
    ttl_share_ = share;
    spdlog::info("Time to Live jobs held by front end {:016x}: {}", self, share);
  }
}

std::size_t Engine::expire_table(const TableDefinition& table, const std::string& past_limit,
                                 const std::string& upper, double now) {
  const std::string prefix = codec::space_prefix(table.id, codec::Space::kTtl);
  std::string resume = prefix;
  std::vector<std::string> late;
  {
    MutexLock lock(ttl_mutex_);
    TtlProgress& progress = ttl_progress_[table.id];
    if (progress.overflow) {
      progress = TtlProgress{};
    } else if (progress.resume > resume && !storage_->shared()) {
      // (On a storage other processes share, their writes add entries below the horizon
      // that this process is never told of, and an entry whose deletion met another
      // process's write is due again: each pass walks the schedule from its start, where
      // what is due and not yet handled lies. The entries handled are gone from it.)
      resume = progress.resume;
    }
    late.swap(progress.late);
  }
  std::size_t expired = 0;
  storage::WriteBatch dropped;
  // Entries too far in the past will never be due: they are dropped from the schedule.
  auto handle = [&](const std::string& entry, std::string_view value) {
    if (entry < past_limit) {
      dropped.del(entry);
      return;
    }
    Item key;
    if (codec::decode_item(value, &key) && expire_item(table, key, entry, now)) ++expired;
  };
  std::vector<std::string> not_due;  // late for a pass with a later horizon than this one
  for (std::string& entry : late) {
    if (stopping_) return expired;
    if (!(entry < upper)) {
      not_due.push_back(std::move(entry));
    } else if (std::optional<std::string> value = storage_->get(entry)) {
      handle(entry, *value);
    }
  }
  std::string next = resume;
  while (!stopping_) {
    std::vector<std::pair<std::string, std::string>> due;
    {
      auto it = storage_->iterator(next, upper);
      for (it->seek_to_first(); it->valid() && due.size() < 1000; it->next()) {
        due.emplace_back(std::string(it->key()), std::string(it->value()));
      }
    }
    if (due.empty()) break;
    for (const auto& [entry, value] : due) handle(entry, value);
    if (!dropped.empty()) {
      storage_->write(dropped);
      dropped = storage::WriteBatch();
    }
    next = due.back().first + '\0';
  }
  if (!dropped.empty()) storage_->write(dropped);
  if (stopping_) return expired;
  // Every entry below `upper` has been handled, but those committed since the pass began,
  // which note_ttl_entry kept for the next one.
  MutexLock lock(ttl_mutex_);
  auto it = ttl_progress_.find(table.id);
  if (it == ttl_progress_.end() || it->second.overflow) return expired;
  if (it->second.resume < upper) it->second.resume = upper;
  for (std::string& entry : not_due) it->second.late.push_back(std::move(entry));
  return expired;
}

void Engine::maintain() {
  const double retention = options_.stream_retention;
  const double ttl_interval = std::clamp(options_.ttl_interval, 0.01, 3600.0);
  const double trim_interval = std::clamp(retention / 4, 0.05, 60.0);
  // Passes are one interval of real time apart, the first one interval after the thread
  // starts. What is due is decided on the engine's clock: an item expires, and a record
  // is trimmed, when the engine's time passes theirs (a manual clock's, as a test moves it).
  double next_expire = now_seconds() + ttl_interval, next_trim = now_seconds() + trim_interval;
  // Expired ClientRequestTokens are looked for this often (those kept in a shared storage).
  constexpr double kSweepInterval = 10;
  double next_sweep = now_seconds() + kSweepInterval;
  // Deleted items' versions kept past their bound are looked for this often (what is old
  // enough is decided on the engine's clock; they are kept 10 minutes).
  constexpr double kReclaimInterval = 300;
  double next_reclaim = now_seconds() + kReclaimInterval;
  // On a storage other processes share, the background jobs (backfills, dropped tables'
  // removals, TTL reaping) that a process that stopped left, or that are not spread, are
  // looked at this often (of real time: a lease lapses in real time).
  constexpr auto kBackfillInterval = std::chrono::seconds(2);
  auto next_backfills = std::chrono::steady_clock::now() + kBackfillInterval;
  MutexLock lock(maintenance_mutex_);
  while (!stopping_) {
    double wait = std::max(0.0, std::min({next_expire, next_trim, next_sweep}) - now_seconds());
    if (storage_->shared()) {
      wait = std::min(
          wait,
          std::chrono::duration<double>(next_backfills - std::chrono::steady_clock::now()).count());
      wait = std::max(wait, 0.0);
    }
    // Woken early, by the engine stopping, the manual clock moving, a shard split to make
    // or announce, or spuriously: in the last case the checks below find nothing due.
    if (!clock_moved_ && !split_unannounced_ &&
        !shard_splits_due_.load(std::memory_order_acquire)) {
      maintenance_wake_.wait_for(lock, std::chrono::duration<double>(wait));
    }
    if (stopping_) break;
    const bool moved = std::exchange(clock_moved_, false);
    bool announce = std::exchange(split_unannounced_, false);
    lock.unlock();
    try {
      if (shard_splits_due_.load(std::memory_order_acquire)) {
        // Splits the storage reported with no write of this process after them.
        split_shards();
        MutexLock relock(maintenance_mutex_);
        announce = std::exchange(split_unannounced_, false) || announce;
      }
      // (Not waiting for the answers: a dead process would hold back the next split's
      // announcement, and the others' readers, for seconds.)
      if (announce) storage_->announce_catalog();
      const double now = now_seconds();
      if (moved || now >= next_expire) {
        expire_items(clock_->now());
        next_expire = now + ttl_interval;
      }
      if (moved || now >= next_trim) {
        streams_.trim(clock_->now(), retention);
        trim_pitr_logs();
        expire_system_backups();
        next_trim = now + trim_interval;
      }
      if (moved || now >= next_sweep) {
        next_sweep = now + kSweepInterval;
        tokens_->sweep();
      }
      if (storage_->shared() && (moved || now >= next_reclaim)) {
        next_reclaim = now + kReclaimInterval;
        reclaim_tombstones();
      }
      if (storage_->shared() && std::chrono::steady_clock::now() >= next_backfills) {
        next_backfills = std::chrono::steady_clock::now() + kBackfillInterval;
        resume_backfills();
        // Splits whose process stopped before it split the shards.
        split_shards();
        resume_backup_jobs();
        resume_pitr_bases();
        {
          // (Called under the lock: setting the hook to null waits for a call in progress.)
          MutexLock lock(data_job_hook_mutex_);
          if (data_job_hook_) data_job_hook_();
        }
        resume_drops();
        resume_ttl_scans();
        balance_ttl_jobs();
      }
    } catch (const std::exception& e) {
      // Storage failed; the next pass tries again.
      spdlog::error("expiry, stream trimming or token sweeping pass failed: {}", e.what());
    }
    lock.lock();
  }
}

}  // namespace kumo::engine
