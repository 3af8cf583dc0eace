// Point-in-time recovery (docs/backups.md, "Point-in-time recovery").
//
// A table with recovery enabled keeps a change log in its own key space (pitr_log.h): one
// record per committed write of an item, in the write's batch, so it is atomic with the
// item on every back end. Enabling writes a record of every item present at the enable
// time: that is the log's base, and the log alone then gives the table at any time since.
// The maintenance pass trims each item's records that lie before the window to the one
// that gives its state at the window's start (none when it was absent then), so the log
// holds the table at its earliest restorable time plus the changes since.
//
// A restore to a time runs the restore job of restores from backups: the table is created
// CREATING with `restore.source_id` naming the source, and the job writes each item's
// state at the time through the write path, noting how far it got.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/engine.h"
#include "model/api_error.h"

namespace kumo::engine {
namespace {

// Records read per page of a walk of a log, and items written between two notes of a
// restore's progress.
constexpr std::size_t kPitrPage = 256;
// A table's log is trimmed again once its window's start moved this far (µs).
constexpr std::int64_t kPitrTrimStepUs = 60'000'000;
// What RecoveryPeriodInDays is when not given.
constexpr int kDefaultPeriodDays = 35;

std::int64_t since_us(const PitrSettings& pitr) {
  return epoch_milliseconds(pitr.enabled_since) * 1000;
}

// The last microsecond of millisecond `ms`: a time given in milliseconds takes in every
// write committed within it.
std::int64_t end_of_ms(std::int64_t ms) {
  return ms * 1000 + 999;
}

std::string past(std::string key) {
  key.push_back('\0');
  return key;
}

// The key attributes of `item`.
Item key_of(const TableDefinition& table, const Item& item) {
  Item key;
  key.emplace(table.key.hash.name, item.at(table.key.hash.name));
  if (table.key.range) key.emplace(table.key.range->name, item.at(table.key.range->name));
  return key;
}

// `stored` (encode_stored_item's form) as an item.
Item decode_stored_bytes(std::string_view stored) {
  std::optional<StoredItem> item = StoredItem::from_bytes(stored);
  if (!item) throw storage::StorageError("corrupt item in a point-in-time recovery log");
  return item->decode();
}

}  // namespace

std::optional<PitrWindow> Engine::pitr_window(const TableDefinition& table) const {
  if (!table.pitr || table.restore) return std::nullopt;
  const std::int64_t lag_ms = static_cast<std::int64_t>(options_.pitr_lag * 1000);
  return pitr_window_at(*table.pitr, clock_->now_ns() / 1'000'000, lag_ms);
}

std::optional<PitrWindow> Engine::pitr_window(const std::string& table) const {
  TablePtr t = catalog_.find(table);
  if (!t) return std::nullopt;
  return pitr_window(*t);
}

void Engine::add_pitr_record(const TableDefinition& table, const std::string& storage_key,
                             const WriteResult& result, storage::WriteBatch* batch) const {
  const PitrSettings& pitr = *table.pitr;
  const std::int64_t base = since_us(pitr);
  const std::int64_t now = std::max(base, clock_->now_ns() / 1000);
  auto value = [&](const std::optional<Item>& item, std::size_t size) {
    if (item) return pitr_put_value(codec::encode_stored_item(*item, size));
    const Item& any = result.new_item ? *result.new_item : *result.old_item;
    return pitr_delete_value(key_of(table, any));
  };
  if (!result.old_item && !result.new_item) return;
  // While the base is being written, the first write of an item gives its state at the
  // enable time (the base walk skips an item that has it).
  if (pitr.base_pending && now > base) {
    std::string base_key = pitr_log_key(storage_key, base);
    if (!storage_->get(base_key))
      batch->put(std::move(base_key), value(result.old_item, result.old_size));
  }
  batch->put(pitr_log_key(storage_key, now), value(result.new_item, result.new_size));
}

TablePtr Engine::update_pitr(std::string_view name, bool enable, std::optional<int> period_days) {
  TablePtr before = catalog_.find(name);
  // A table that ImportTable is still creating is there, but its backups are not yet; one
  // being restored is not there yet.
  auto refuse = [&name](const TableDefinition& t) {
    if (t.restore && t.restore->imports()) throw ApiError::continuous_backups_unavailable(name);
    throw ApiError::table_not_found(name);
  };
  if (!before) throw ApiError::table_not_found(name);
  if (before->restore) refuse(*before);
  const std::uint32_t id = before->id;
  if (!enable) {
    TablePtr after = catalog_.update(name, [&](TableDefinition& t) {
      if (t.id != id) throw ApiError::table_not_found(name);
      if (t.restore) refuse(t);
      t.pitr.reset();
    });
    if (before->pitr) {
      // The log is forgotten: a re-enabling starts afresh (and a record a write prepared
      // before the change adds after this erase lies before the next enable time, where
      // no read looks).
      const std::string prefix = pitr_log_prefix(id);
      storage_->erase_range(prefix, codec::prefix_end(prefix));
      MutexLock lock(pitr_mutex_);
      pitr_trimmed_.erase(id);
    }
    return after;
  }
  const double now_ms = clock_->now_ms();
  bool started = false;
  TablePtr after = catalog_.update(name, [&](TableDefinition& t) {
    if (t.id != id) throw ApiError::table_not_found(name);
    if (t.restore) refuse(t);
    if (t.pitr) {
      // Already enabled: only the period changes. A longer one cannot bring back what the
      // log lost under the shorter one.
      if (period_days && *period_days != t.pitr->period_days) {
        const PitrWindow w = pitr_window_at(*t.pitr, epoch_milliseconds(now_ms), 0);
        if (*period_days > t.pitr->period_days) {
          t.pitr->floor = std::max(t.pitr->floor, static_cast<double>(w.earliest_ms) / 1000.0);
        }
        t.pitr->period_days = *period_days;
      }
      return;
    }
    started = true;
    t.pitr = PitrSettings{now_ms, period_days.value_or(kDefaultPeriodDays), 0, true};
  });
  start_maintenance();
  // The items present are logged in the background: the answer does not wait for them.
  if (started || (after->pitr && after->pitr->base_pending)) start_pitr_base(after->name, id);
  return after;
}

void Engine::start_pitr_base(const std::string& name, std::uint32_t id) {
  const std::string job = "pitr_base/" + std::to_string(id);
  if (!claim_backup_job(job)) return;  // running here already, or in another process
  start_worker("kumo-pitr-base", [this, name, id, job] {
    bool done = false;
    try {
      // Again while the table has a base to write: recovery disabled and enabled anew
      // during a walk makes the walk stop, and the new enable time needs its own.
      while (!stopping_) {
        TablePtr table = catalog_.find(name);
        if (!table || table->id != id || !table->pitr || !table->pitr->base_pending) {
          done = true;
          break;
        }
        write_pitr_base(name, id);
      }
    } catch (const std::exception& e) {
      // Storage failed: base_pending stays set and the walk is done again at the next start
      // (on a shared storage, at the next look for jobs).
      spdlog::warn("logging the items of table {} for point-in-time recovery stopped: {}", name,
                   e.what());
    }
    release_backup_job(job, done);
  });
}

void Engine::resume_pitr_bases() {
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    if (table && table->pitr && table->pitr->base_pending) start_pitr_base(name, table->id);
  }
}

bool Engine::write_pitr_base(const std::string& name, std::uint32_t id) {
  TablePtr table = catalog_.find(name);
  if (!table || table->id != id || !table->pitr || !table->pitr->base_pending) return false;
  const double since = table->pitr->enabled_since;
  const std::int64_t base = since_us(*table->pitr);
  const std::string space = codec::space_prefix(id, codec::Space::kItems);
  const std::string end = codec::prefix_end(space);
  std::string next = space;
  std::size_t logged = 0;
  auto visit = [&](const TableDefinition& t, const std::string& key, const Item& item) {
    if (!t.pitr || t.pitr->enabled_since != since) return false;  // disabled meanwhile
    // Under the item's lock: a write of the item after the enable time has put its state
    // at that time already.
    std::string record = pitr_log_key(key, base);
    if (storage_->get(record)) return true;
    storage::WriteBatch batch;
    batch.partition(key);
    batch.put(std::move(record), pitr_put_value(codec::encode_stored_item(item, item_size(item))));
    storage_->write(batch);
    return true;
  };
  for (;;) {
    TablePtr t = catalog_.find(name);
    if (stopping_ || !t || t->id != id || !t->pitr || t->pitr->enabled_since != since) {
      return false;
    }
    // Keys in pages; each item is re-read under its lock.
    std::vector<std::string> keys;
    {
      auto it = storage_->iterator(next, end);
      for (it->seek_to_first(); it->valid() && keys.size() < kPitrPage; it->next()) {
        keys.emplace_back(it->key());
      }
    }
    if (keys.empty()) break;
    if (!visit_page(*t, keys, visit, 1)) return false;
    next = past(keys.back());
    job_fault("pitr", logged, logged + keys.size());
    logged += keys.size();
  }
  catalog_.update(name, [&](TableDefinition& t) {
    if (t.id == id && t.pitr && t.pitr->enabled_since == since) t.pitr->base_pending = false;
  });
  return true;
}

bool Engine::wait_pitr_base(const std::string& table, double since) const {
  for (;;) {
    TablePtr t = catalog_.find(table);
    if (!t || !t->pitr || t->pitr->enabled_since != since) return false;
    if (!t->pitr->base_pending) return true;
    if (stopping_) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool Engine::walk_pitr_log(std::uint32_t table_id, const std::string& from,
                           const PitrGroup& group) const {
  const std::string prefix = pitr_log_prefix(table_id);
  const std::string end = codec::prefix_end(prefix);
  std::string next = from.empty() ? prefix : from;
  std::vector<std::pair<std::string, std::string>> records;
  std::string item;  // the item part of `records`' keys
  for (;;) {
    std::vector<std::pair<std::string, std::string>> page;
    {
      auto it = storage_->iterator(next, end);
      for (it->seek_to_first(); it->valid() && page.size() < kPitrPage; it->next()) {
        page.emplace_back(std::string(it->key()), std::string(it->value()));
      }
    }
    if (page.empty()) break;
    next = past(page.back().first);
    for (auto& entry : page) {
      std::optional<PitrLogKey> key = parse_pitr_log_key(prefix, entry.first);
      if (!key) continue;
      if (!records.empty() && key->item != item) {
        if (!group(records.front().first, records)) return false;
        records.clear();
      }
      if (records.empty()) item = std::string(key->item);
      records.push_back(std::move(entry));
    }
  }
  if (!records.empty()) return group(records.front().first, records);
  return true;
}

std::optional<std::string> Engine::pitr_state_at(
    std::uint32_t table_id, const std::vector<std::pair<std::string, std::string>>& records,
    std::int64_t since_us, std::int64_t time_us) {
  const std::string prefix = pitr_log_prefix(table_id);
  const std::pair<std::string, std::string>* last = nullptr;
  for (const auto& record : records) {
    std::optional<PitrLogKey> key = parse_pitr_log_key(prefix, record.first);
    if (!key || key->time_us < since_us) continue;
    if (key->time_us > time_us) break;
    last = &record;
  }
  if (!last) return std::nullopt;
  std::optional<PitrRecord> record = parse_pitr_value(last->second);
  if (!record) throw storage::StorageError("corrupt point-in-time recovery record");
  if (record->deleted) return std::nullopt;
  return std::string(record->stored);
}

bool Engine::read_table_at(const std::string& table, std::int64_t time_ms,
                           const std::function<bool(const Item& item)>& visit) const {
  TablePtr t = catalog_.find(table);
  if (!t || !t->pitr || !wait_pitr_base(table, t->pitr->enabled_since)) return false;
  const std::int64_t since = since_us(*t->pitr);
  const std::uint32_t id = t->id;
  return walk_pitr_log(id, "", [&](std::string_view, const auto& records) {
    std::optional<std::string> stored = pitr_state_at(id, records, since, end_of_ms(time_ms));
    if (!stored) return true;
    return visit(decode_stored_bytes(*stored));
  });
}

bool Engine::changes_between(const std::string& table, std::int64_t from_ms, std::int64_t to_ms,
                             const std::function<bool(const PitrChange& change)>& visit) const {
  TablePtr t = catalog_.find(table);
  if (!t || !t->pitr || !wait_pitr_base(table, t->pitr->enabled_since)) return false;
  const std::int64_t since = since_us(*t->pitr);
  const std::int64_t from = end_of_ms(from_ms), to = end_of_ms(to_ms);
  const std::string prefix = pitr_log_prefix(t->id);
  const TableDefinition def = *t;
  return walk_pitr_log(t->id, "", [&](std::string_view, const auto& records) {
    // The last record in (from, to]; the base records at the enable time are no change.
    const std::pair<std::string, std::string>* last = nullptr;
    std::int64_t last_time = 0;
    for (const auto& record : records) {
      std::optional<PitrLogKey> key = parse_pitr_log_key(prefix, record.first);
      if (!key || key->time_us <= since || key->time_us <= from) continue;
      if (key->time_us > to) break;
      last = &record;
      last_time = key->time_us;
    }
    if (!last) return true;
    std::optional<PitrRecord> record = parse_pitr_value(last->second);
    if (!record) throw storage::StorageError("corrupt point-in-time recovery record");
    PitrChange change;
    change.time_us = last_time;
    if (record->deleted) {
      change.key = std::move(record->key);
    } else {
      change.new_image = decode_stored_bytes(record->stored);
      change.key = key_of(def, *change.new_image);
    }
    return visit(change);
  });
}

std::size_t Engine::trim_pitr_logs() {
  std::size_t removed = 0;
  bool more = false;
  for (const auto& name : catalog_.list("", SIZE_MAX, &more)) {
    TablePtr table = catalog_.find(name);
    if (!table || !table->pitr || table->pitr->base_pending) continue;
    std::optional<PitrWindow> window = pitr_window(*table);
    if (!window) continue;
    const std::int64_t since = since_us(*table->pitr);
    std::int64_t cutoff = window->earliest_ms * 1000;
    // A restore from the table still running keeps the log as it needs it.
    for (const TablePtr& restoring : restoring_tables()) {
      if (restoring->restore->source_id == table->id) {
        cutoff = std::min(cutoff, epoch_milliseconds(restoring->restore->restore_date_time) * 1000);
      }
    }
    {
      MutexLock lock(pitr_mutex_);
      auto it = pitr_trimmed_.find(table->id);
      if (it != pitr_trimmed_.end() && cutoff - it->second < kPitrTrimStepUs) continue;
      pitr_trimmed_[table->id] = cutoff;
    }
    const std::string prefix = pitr_log_prefix(table->id);
    const std::uint32_t id = table->id;
    walk_pitr_log(id, "", [&](std::string_view, const auto& records) {
      // Records before the enable time are dropped; of those at or before the cutoff only
      // the last stays, as the item's state at the window's start (none when deleted).
      std::vector<std::size_t> drop;
      std::optional<std::size_t> kept;
      for (std::size_t i = 0; i < records.size(); ++i) {
        std::optional<PitrLogKey> key = parse_pitr_log_key(prefix, records[i].first);
        if (!key) continue;
        if (key->time_us < since) {
          drop.push_back(i);
          continue;
        }
        if (key->time_us > cutoff) break;
        if (kept) drop.push_back(*kept);
        kept = i;
      }
      if (kept) {
        std::optional<PitrRecord> record = parse_pitr_value(records[*kept].second);
        if (record && record->deleted) drop.push_back(*kept);
      }
      if (drop.empty()) return true;
      std::optional<PitrLogKey> key = parse_pitr_log_key(prefix, records.front().first);
      storage::WriteBatch batch;
      batch.partition(pitr_item_key(id, key->item));
      for (std::size_t i : drop) batch.del(records[i].first);
      storage_->write(batch);
      removed += drop.size();
      return !stopping_;
    });
  }
  return removed;
}

TablePtr Engine::restore_table_to_time(
    std::string_view source, std::string_view target_name,
    const std::function<TableDefinition(const TablePtr& source,
                                        const std::optional<PitrWindow>& window,
                                        const RestoreCheck& check)>& plan) {
  TablePtr table;
  {
    MutexLock lock(backups_mutex_);
    TablePtr from = catalog_.find(source);
    if (from && from->restore) from.reset();
    std::optional<PitrWindow> window;
    if (from) window = pitr_window(*from);
    RestoreCheck check;
    check.target = catalog_.find(target_name);
    for (const TablePtr& restoring : restoring_tables()) {
      (void)restoring;
      ++check.running;
    }
    TableDefinition target = plan(from, window, check);
    if (!target.restore || !target.restore->source_id || target.name != target_name) {
      throw std::logic_error("a point-in-time restore's table without its source");
    }
    table = create_table(std::move(target));
  }
  start_restore(table->name, table->id);
  return table;
}

bool Engine::run_pitr_restore(const std::string& name, std::uint32_t id) {
  TablePtr table = catalog_.find(name);
  if (!table || table->id != id || !table->restore) return true;  // gone, or done
  const RestoreSource restore = *table->restore;
  const std::string progress = "meta/restore/" + std::to_string(id);
  TablePtr source = catalog_.find_id(restore.source_id);
  if (!source || !source->pitr) {
    fail_restore(name, id, "its source table or its point-in-time recovery is gone");
    return true;
  }
  // The log gives the table's past only once the items present at the enable time are in
  // it.
  if (source->pitr->base_pending && !wait_pitr_base(source->name, source->pitr->enabled_since)) {
    if (stopping_) return false;
    fail_restore(name, id, "its source table or its point-in-time recovery is gone");
    return true;
  }
  const std::int64_t since = since_us(*source->pitr);
  const std::int64_t time = end_of_ms(epoch_milliseconds(restore.restore_date_time));
  const std::string from = storage_->get(progress).value_or("");
  std::size_t written = 0;
  bool stopped = false, failed = false;
  walk_pitr_log(restore.source_id, from, [&](std::string_view start, const auto& records) {
    if (stopping_) {
      stopped = true;
      return false;
    }
    if (written > 0 && written % kPitrPage == 0) {
      // Resumed at this item after a stop.
      storage::WriteBatch batch;
      batch.put(progress, std::string(start));
      storage_->write(batch);
      job_fault("restore", written - kPitrPage, written);
    }
    std::optional<std::string> stored = pitr_state_at(restore.source_id, records, since, time);
    ++written;
    if (!stored) return true;
    const Item item = decode_stored_bytes(*stored);
    TablePtr target = catalog_.find(name);
    if (!target || target->id != id) {
      stopped = true;  // deleted meanwhile
      return false;
    }
    try {
      write_item(*target, item_key(*target, item),
                 [&item](const std::optional<Item>&) { return std::optional<Item>(item); });
    } catch (const ApiError& e) {
      if (e.code() == ApiError::Code::kInternal) throw;
      fail_restore(name, id, e.what());
      failed = true;
      return false;
    }
    return true;
  });
  if (failed) return true;
  if (stopped) return stopping_ ? false : true;
  // The source deleted, or its recovery disabled, meanwhile: its log went with it.
  TablePtr still = catalog_.find_id(restore.source_id);
  if (!still || !still->pitr || since_us(*still->pitr) != since) {
    fail_restore(name, id, "its source table or its point-in-time recovery is gone");
    return true;
  }
  finish_restore(name, id, progress);
  return true;
}

}  // namespace kumo::engine
