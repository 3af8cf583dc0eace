// Catalog: the durable list of tables. Definitions are immutable snapshots
// (shared_ptr<const TableDefinition>); a change stores a new version, so a request keeps
// a consistent definition for its whole run while others change the table.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/mutex.h"
#include "model/table.h"
#include "storage/storage.h"

namespace kumo::engine {

using TablePtr = std::shared_ptr<const TableDefinition>;

// A key schema in stored records (the catalog's and the change streams'): a list of
// {"name", "type": "HASH"|"RANGE"} maps under the member "key_schema".
AttributeValue key_schema_value(const std::vector<KeySchemaElement>& schema);
std::vector<KeySchemaElement> key_schema_from(const Item& record);

// A table definition as the catalog stores it (a binary attribute map), and back: what a
// backup records of its source table.
Item table_record(const TableDefinition& definition);
TableDefinition table_from_record(const Item& record);

class Catalog {
 public:
  // Checks a new definition (`before` null) or a changed one against every other table,
  // under the catalog's lock so that two requests cannot both pass; throws ApiError to
  // refuse, and nothing is stored then.
  using Verify = std::function<void(const TableDefinition* before, const TableDefinition& after,
                                    const std::vector<const TableDefinition*>& others)>;

  // Loads every table stored in `storage` (which must outlive the catalog).
  explicit Catalog(storage::Storage& storage);

  // Called by every create and update from now on.
  void set_verify(Verify verify);
  // Completes each definition loaded from now on (reload, or a retried change), as the
  // engine completes those loaded at start (amend_loaded).
  void set_prepare_loaded(std::function<void(TableDefinition&)> prepare);
  // How a change that met another front end's reloads the catalog (the engine's reload,
  // which keeps meters and background work in step); by default, load with
  // set_prepare_loaded's function.
  void set_reload(std::function<void()> reload);

  // A table that changed in a reload: before null when added, after null when removed.
  struct Change {
    TablePtr before, after;
  };
  // Loads the catalog again from storage (another front end sharing it changed it):
  // tables whose stored record is unchanged keep their definition; the others get the
  // stored one, completed by `prepare`. Returns what changed.
  std::vector<Change> reload(const std::function<void(TableDefinition&)>& prepare);

  // The table named `name`, or null.
  TablePtr find(std::string_view name) const;

  // Whether the stored catalog changed since this one was loaded or last changed here:
  // one read of its version.
  bool stale() const;

  // While a Deferral lives, the changes this thread stores are not announced until
  // announce_deferred(): for a caller that holds a lock which the other front ends'
  // reloads take in this process too (they answer an announcement only once reloaded, and
  // one that does not answer is fenced). Deferrals nest.
  class Deferral {
   public:
    Deferral();
    ~Deferral();
    Deferral(const Deferral&) = delete;
    Deferral& operator=(const Deferral&) = delete;
  };
  // Announces the changes this thread stored under Deferrals that have ended, if any.
  void announce_deferred();

  // Every change below is stored only if the catalog is still as loaded (several front
  // ends may share the storage); otherwise it is loaded again and the change retried. Once
  // stored, the change is announced to the other front ends (Storage::notify_catalog).
  //
  // Stores a new table. Assigns id, TableId and CreationDateTime. Throws ApiError
  // ResourceInUse ("Table already exists: <name>") when the name is taken.
  // `prepare`, when given, completes the definition once its id is known, before it is
  // stored.
  TablePtr create(TableDefinition definition,
                  const std::function<void(TableDefinition&)>& prepare = {});

  // Takes the next table id for data that is not a table (a backup's copy of its table's
  // items), so that no table is ever given it. `with`, when given, adds to the batch that
  // stores the new next id what is to be stored with it.
  std::uint32_t reserve_id(
      const std::function<void(std::uint32_t id, storage::WriteBatch& batch)>& with = {});

  // Applies `change` to a copy of the table's definition and stores it. `change` may throw
  // ApiError to refuse; nothing is stored then. Throws ResourceNotFound when absent.
  TablePtr update(std::string_view name, const std::function<void(TableDefinition&)>& change);

  // Applies `change` to every table as loaded, in memory only: what it adds is stored with
  // the table's next change.
  void amend_loaded(const std::function<void(TableDefinition&)>& change);

  // The table whose id is `id`, or null.
  TablePtr find_id(std::uint32_t id) const;

  // Removes the table from the catalog, recording in the same write that its data is to be
  // removed (pending_drops). Returns the definition it had, or null if absent.
  TablePtr remove(std::string_view name);
  // Deletes the data of removed table `id`, except its stream records, then its record.
  // Idempotent: it may run again, whole or after a run cut short.
  void drop_data(std::uint32_t id);
  // The removed tables whose data is still to be deleted: (id, name).
  std::vector<std::pair<std::uint32_t, std::string>> pending_drops() const;

  // Table names in ascending byte order, starting after `exclusive_start` (empty: from the
  // first), at most `limit` of them. *more tells whether names remain after the page.
  std::vector<std::string> list(std::string_view exclusive_start, std::size_t limit,
                                bool* more) const;

 private:
  // A table as loaded or stored: its definition, and the record stored for it.
  struct Loaded {
    TablePtr table;
    std::string stored;
  };
  // Loads every table (keeping the definitions whose records did not change), the version
  // and the next id.
  void load(const std::function<void(TableDefinition&)>* prepare) KUMO_REQUIRES(mutex_);
  // Adds the table's record to `batch`; returns it.
  std::string store(const TableDefinition& definition, storage::WriteBatch* batch) const;
  // Adds to `batch` the guard of a change: the version is still the one loaded; and its
  // raise.
  void guard(storage::WriteBatch* batch) const KUMO_REQUIRES(mutex_);
  // Runs `attempt` (a change that takes the lock itself) until it is stored without
  // meeting another front end's change; then announces it.
  template <typename Attempt>
  auto change(const Attempt& attempt) -> decltype(attempt());

  void verify(const TableDefinition* before, const TableDefinition& after) const
      KUMO_REQUIRES_SHARED(mutex_);

  storage::Storage& storage_;
  mutable SharedMutex mutex_;
  Verify verify_ KUMO_GUARDED_BY(mutex_);
  std::function<void(TableDefinition&)> prepare_loaded_ KUMO_GUARDED_BY(mutex_);
  std::function<void()> reload_ KUMO_GUARDED_BY(mutex_);
  std::map<std::string, Loaded, std::less<>> tables_ KUMO_GUARDED_BY(mutex_);
  std::uint32_t next_id_ KUMO_GUARDED_BY(mutex_) = 1;
  std::uint64_t version_ KUMO_GUARDED_BY(mutex_) = 0;
};

}  // namespace kumo::engine
