// On-demand backups in the engine: the record and id formats, ListBackups' selection, and
// the copy and restore jobs: a backup holds the items as they were when it was made, a
// restore writes them through the write path, and jobs cut short by a stop are finished
// at the next start.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "codec/key_codec.h"
#include "engine/backup_records.h"
#include "engine/engine.h"
#include "engine/forwarding_storage.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;

EngineOptions backup_options(std::uint64_t sync_bytes = std::uint64_t{1} << 20) {
  EngineOptions o;
  o.background_maintenance = false;
  o.backup_sync_bytes = sync_bytes;
  return o;
}

TableDefinition backup_table_def(const std::string& name = "src") {
  TableDefinition def;
  def.name = name;
  def.billing_mode = BillingMode::PAY_PER_REQUEST;
  def.attribute_definitions = {{"pk", ScalarType::S}, {"sk", ScalarType::N}, {"g", ScalarType::S}};
  def.key = {{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::N}};
  IndexDefinition gsi;
  gsi.name = "by_g";
  gsi.global = true;
  gsi.key_schema = {{"g", KeyType::HASH}};
  gsi.hash = {{"g", ScalarType::S}};
  gsi.key_attributes = {"g", "pk", "sk"};
  gsi.id = def.next_index_id++;
  def.global_indexes.push_back(gsi);
  return def;
}

std::size_t backup_keys_under(storage::Storage& storage, const std::string& prefix) {
  std::size_t n = 0;
  auto it = storage.iterator(prefix, codec::prefix_end(prefix));
  for (it->seek_to_first(); it->valid(); it->next()) ++n;
  return n;
}

// Every item of the table, by partition key.
std::map<std::string, Item> backup_all_items(const Engine& engine, const TableDefinition& table) {
  std::map<std::string, Item> out;
  PageOptions options;
  Page page = engine.scan(table, 0, 1, options);
  for (;;) {
    for (const StoredItem& stored : page.items) {
      Item item = stored.decode();
      out[item.at("pk").as_string()] = item;
    }
    if (!page.last_evaluated_key) break;
    options.exclusive_start_key = page.last_evaluated_key;
    page = engine.scan(table, 0, 1, options);
  }
  return out;
}

template <typename Predicate>
void backup_wait_for(Predicate done, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "timed out waiting for " << what;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A restore plan that takes the recorded table as it is.
std::function<TableDefinition(const RestoreCheck&)> plain_restore(const std::string& name) {
  return [name](const RestoreCheck& check) {
    if (!check.backup) throw std::runtime_error("no backup");
    TableDefinition def = check.backup->source;
    def.name = name;
    def.id = 0;
    def.table_id.clear();
    def.creation_date_time = 0;
    def.capacity = CapacitySettings{};
    def.restore = RestoreSource{check.backup->id, "arn-b", "arn-t", check.backup->created};
    return def;
  };
}

// Sets an environment variable for the engines made while it lives.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(BackupRecords, IdsAreCreationMillisecondsAndEightHexDigits) {
  EXPECT_EQ(backup_id(1489602797.149, 0x73d8d5bc), "01489602797149-73d8d5bc");
  EXPECT_EQ(backup_id(1.0, 0), "00000000001000-00000000");
  EXPECT_TRUE(is_backup_id("01489602797149-73d8d5bc"));
  EXPECT_FALSE(is_backup_id("01489602797149-73D8D5BC"));
  EXPECT_FALSE(is_backup_id("1489602797149-73d8d5bc"));
  EXPECT_FALSE(is_backup_id("01489602797149_73d8d5bc"));
}

TEST(BackupRecords, ARecordRoundTrips) {
  Backup b;
  b.id = "01489602797149-73d8d5bc";
  b.name = "nightly";
  b.type = BackupType::kSystem;
  b.status = BackupStatus::kAvailable;
  b.created = 1489602797.149;
  b.expires = 1489602797.149 + 35 * 86400;
  b.size_bytes = 1234;
  b.item_count = 7;
  b.data_id = 42;
  b.source = backup_table_def();
  b.source.id = 3;
  b.source.table_id = "uuid";
  b.source.ttl_enabled = true;
  b.source.ttl_attribute = "exp";
  std::optional<Backup> back = decode_backup(encode_backup(b));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->id, b.id);
  EXPECT_EQ(back->name, "nightly");
  EXPECT_EQ(back->type, BackupType::kSystem);
  EXPECT_EQ(back->status, BackupStatus::kAvailable);
  EXPECT_DOUBLE_EQ(back->created, 1489602797.149);
  ASSERT_TRUE(back->expires);
  EXPECT_DOUBLE_EQ(*back->expires, 1489602797.149 + 35 * 86400);
  EXPECT_EQ(back->size_bytes, 1234);
  EXPECT_EQ(back->item_count, 7);
  EXPECT_EQ(back->data_id, 42u);
  EXPECT_EQ(back->source.name, "src");
  EXPECT_EQ(back->source.id, 3u);
  EXPECT_EQ(back->source.global_indexes.size(), 1u);
  EXPECT_EQ(back->source.ttl_attribute, "exp");
  EXPECT_FALSE(decode_backup("garbage"));
  EXPECT_EQ(decode_backup_copy(encode_backup_copy({7, 9}))->data_id, 9u);
  EXPECT_FALSE(decode_backup_copy("7"));
}

std::vector<Backup> listed_backups() {
  std::vector<Backup> all;
  auto add = [&](const char* table, double created, BackupType type) {
    Backup b;
    b.created = created;
    b.id = backup_id(created, static_cast<std::uint32_t>(all.size()));
    b.type = type;
    b.source.name = table;
    all.push_back(b);
  };
  add("a", 100.000, BackupType::kUser);
  add("b", 100.500, BackupType::kUser);
  add("a", 101.250, BackupType::kSystem);
  add("a", 102.000, BackupType::kUser);
  add("b", 103.000, BackupType::kAwsBackup);
  return all;
}

std::vector<std::string> listed_ids(const std::vector<const Backup*>& page) {
  std::vector<std::string> out;
  for (const Backup* b : page) out.push_back(b->id.substr(0, 14));
  return out;
}

TEST(BackupRecords, ListingSelectsUserBackupsByDefault) {
  const std::vector<Backup> all = listed_backups();
  bool more = true;
  BackupQuery q;
  EXPECT_EQ(listed_ids(select_backups(all, q, &more)),
            (std::vector<std::string>{"00000000100000", "00000000100500", "00000000102000"}));
  EXPECT_FALSE(more);
  q.types = {BackupType::kSystem};
  EXPECT_EQ(listed_ids(select_backups(all, q, &more)),
            (std::vector<std::string>{"00000000101250"}));
  q.types = {BackupType::kUser, BackupType::kSystem};  // ALL
  EXPECT_EQ(select_backups(all, q, &more).size(), 4u);
  q.types = {BackupType::kAwsBackup};
  EXPECT_EQ(listed_ids(select_backups(all, q, &more)),
            (std::vector<std::string>{"00000000103000"}));
  q = BackupQuery{};
  q.table = "a";
  EXPECT_EQ(listed_ids(select_backups(all, q, &more)),
            (std::vector<std::string>{"00000000100000", "00000000102000"}));
  q.table = "missing";
  EXPECT_TRUE(select_backups(all, q, &more).empty());
}

TEST(BackupRecords, TimeBoundsCompareWholeMillisecondsLowerInclusiveUpperExclusive) {
  const std::vector<Backup> all = listed_backups();
  bool more = false;
  BackupQuery q;
  q.lower = 100.5;
  q.upper = 102.0;
  EXPECT_EQ(listed_ids(select_backups(all, q, &more)),
            (std::vector<std::string>{"00000000100500"}));
  q.lower = 100.4996;  // rounds to 100.500
  q.upper = 102.0004;  // rounds to 102.000: still excludes it
  EXPECT_EQ(listed_ids(select_backups(all, q, &more)),
            (std::vector<std::string>{"00000000100500"}));
  q.lower = 0;
  q.upper = 1e10;
  EXPECT_EQ(select_backups(all, q, &more).size(), 3u);
}

TEST(BackupRecords, PagesResumeAfterAPositionAndSayWhenMoreFollow) {
  const std::vector<Backup> all = listed_backups();
  bool more = false;
  BackupQuery q;
  q.limit = 2;
  const auto first = select_backups(all, q, &more);
  EXPECT_EQ(listed_ids(first), (std::vector<std::string>{"00000000100000", "00000000100500"}));
  EXPECT_TRUE(more);
  q.exclusive_start = first.back()->id;
  EXPECT_EQ(listed_ids(select_backups(all, q, &more)),
            (std::vector<std::string>{"00000000102000"}));
  EXPECT_FALSE(more);
  // Exactly `limit` left: no further page.
  q.exclusive_start.reset();
  q.limit = 3;
  EXPECT_EQ(select_backups(all, q, &more).size(), 3u);
  EXPECT_FALSE(more);
  // A position that no backup has (deleted, or never made) still places the page.
  q.limit = 0;
  q.exclusive_start = backup_id(101.0, 0xffffffff);
  EXPECT_EQ(listed_ids(select_backups(all, q, &more)),
            (std::vector<std::string>{"00000000102000"}));
}

TEST(Backups, ABackupHoldsTheItemsAsTheyWereAndARestoreWritesThemWithTheirIndexes) {
  Engine engine(storage::open_memory(), backup_options());
  TablePtr t = engine.create_table(backup_table_def());
  for (int i = 0; i < 600; ++i) {
    engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}, {"sk", N(i)}, {"g", S("x")}});
  }
  const Backup b = engine.create_backup(*t, "first");
  EXPECT_EQ(b.status, BackupStatus::kAvailable);  // small: copied before it answered
  EXPECT_EQ(b.item_count, 600);
  EXPECT_EQ(b.size_bytes, engine.table_size_bytes(*t));
  EXPECT_NE(b.data_id, t->id);
  // Writes after the backup are not in it.
  engine.put_item(*t, {{"pk", S("late")}, {"sk", N(1)}, {"g", S("x")}});
  engine.delete_item(*t, {{"pk", S("k0")}, {"sk", N(0)}});
  // The data id is never a table's.
  TablePtr other = engine.create_table(backup_table_def("other"));
  EXPECT_GT(other->id, b.data_id);

  TablePtr restored = engine.restore_table(b.id, "dst", plain_restore("dst"));
  ASSERT_TRUE(restored->restore);
  backup_wait_for([&] { return !engine.catalog().find("dst")->restore; }, "the restore");
  restored = engine.catalog().find("dst");
  const std::map<std::string, Item> items = backup_all_items(engine, *restored);
  EXPECT_EQ(items.size(), 600u);
  EXPECT_TRUE(items.count("k0"));
  EXPECT_FALSE(items.count("late"));
  EXPECT_EQ(engine.item_count(*restored), 600);
  EXPECT_EQ(engine.index_item_count(*restored, restored->global_indexes[0]), 600);
  EXPECT_EQ(engine.table_size_bytes(*restored), b.size_bytes);
}

TEST(Backups, ALargeTableIsCopiedFromTheSnapshotWhileWritesGoOn) {
  ScopedEnv fault("KUMO_BACKUP_FAULT", "copy-hold:1");
  char release[] = "/tmp/kumo-backup-release-XXXXXX";
  ASSERT_NE(::mkdtemp(release), nullptr);
  const std::string release_file = std::string(release) + "/go";
  ScopedEnv release_env("KUMO_BACKUP_FAULT_RELEASE", release_file.c_str());
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  Engine engine(std::make_unique<ForwardingStorage>(store), backup_options(0));
  TablePtr t = engine.create_table(backup_table_def());
  for (int i = 0; i < 600; ++i) {
    engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}, {"sk", N(i)}, {"v", N(1)}});
  }
  const std::map<std::string, Item> before = backup_all_items(engine, *t);
  const Backup b = engine.create_backup(*t, "held");
  EXPECT_EQ(b.status, BackupStatus::kCreating);
  // The job holds after its first page: every item changes meanwhile.
  backup_wait_for([&] { return backup_keys_under(*store, codec::table_prefix(b.data_id)) > 0; },
                  "the first page");
  EXPECT_EQ(engine.find_backup(b.id)->status, BackupStatus::kCreating);
  for (int i = 0; i < 600; ++i) {
    if (i % 2) {
      engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}, {"sk", N(i)}, {"v", N(2)}});
    } else {
      engine.delete_item(*t, {{"pk", S("k" + std::to_string(i))}, {"sk", N(i)}});
    }
  }
  engine.put_item(*t, {{"pk", S("new")}, {"sk", N(0)}});
  {
    std::FILE* f = std::fopen(release_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  backup_wait_for([&] { return engine.find_backup(b.id)->status == BackupStatus::kAvailable; },
                  "the backup");
  engine.restore_table(b.id, "dst", plain_restore("dst"));
  backup_wait_for([&] { return !engine.catalog().find("dst")->restore; }, "the restore");
  EXPECT_EQ(backup_all_items(engine, *engine.catalog().find("dst")), before);
  std::remove(release_file.c_str());
  ::rmdir(release);
}

TEST(Backups, DeletingABackupRemovesItsRecordAndItsCopy) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  Engine engine(std::make_unique<ForwardingStorage>(store), backup_options());
  TablePtr t = engine.create_table(backup_table_def());
  for (int i = 0; i < 10; ++i)
    engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}, {"sk", N(i)}});
  const Backup b = engine.create_backup(*t, "gone");
  EXPECT_EQ(backup_keys_under(*store, codec::table_prefix(b.data_id)), 10u);
  const Backup deleted =
      engine.delete_backup(b.id, [](const Backup* found, const TablePtr& restoring) {
        ASSERT_NE(found, nullptr);
        EXPECT_EQ(restoring, nullptr);
      });
  EXPECT_EQ(deleted.id, b.id);
  EXPECT_FALSE(engine.find_backup(b.id));
  EXPECT_TRUE(engine.list_backups().empty());
  EXPECT_EQ(backup_keys_under(*store, codec::table_prefix(b.data_id)), 0u);
  // The source table is untouched.
  EXPECT_EQ(engine.item_count(*t), 10);
}

TEST(Backups, ARestoreCutShortIsFinishedAtTheNextStart) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  std::string id;
  {
    Engine engine(std::make_unique<ForwardingStorage>(store), backup_options());
    TablePtr t = engine.create_table(backup_table_def());
    for (int i = 0; i < 600; ++i) {
      engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}, {"sk", N(i)}, {"g", S("x")}});
    }
    id = engine.create_backup(*t, "first").id;
  }
  {
    ScopedEnv fault("KUMO_BACKUP_FAULT", "restore-hold:1");
    Engine engine(std::make_unique<ForwardingStorage>(store), backup_options());
    engine.restore_table(id, "dst", plain_restore("dst"));
    backup_wait_for([&] { return engine.item_count(*engine.catalog().find("dst")) >= 256; },
                    "the first page");
    // Stopped here: the table stays CREATING.
  }
  Engine engine(std::make_unique<ForwardingStorage>(store), backup_options());
  TablePtr dst = engine.catalog().find("dst");
  ASSERT_TRUE(dst);
  // The restore's progress record is removed just after the table turns ACTIVE.
  backup_wait_for(
      [&] {
        return !engine.catalog().find("dst")->restore &&
               backup_keys_under(*store, "meta/restore/") == 0;
      },
      "the restore");
  dst = engine.catalog().find("dst");
  EXPECT_EQ(backup_all_items(engine, *dst).size(), 600u);
  EXPECT_EQ(engine.item_count(*dst), 600);
  EXPECT_EQ(engine.index_item_count(*dst, dst->global_indexes[0]), 600);
}

TEST(Backups, ACopyCutShortIsMadeAgainAndItsDeletedSourceKeepsItsDataUntilThen) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  std::string id;
  std::uint32_t source_id = 0;
  {
    ScopedEnv fault("KUMO_BACKUP_FAULT", "copy-hold:1");
    Engine engine(std::make_unique<ForwardingStorage>(store), backup_options(0));
    TablePtr t = engine.create_table(backup_table_def());
    source_id = t->id;
    for (int i = 0; i < 600; ++i) {
      engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}, {"sk", N(i)}, {"g", S("x")}});
    }
    const Backup b = engine.create_backup(*t, "held");
    id = b.id;
    backup_wait_for([&] { return backup_keys_under(*store, codec::table_prefix(b.data_id)) > 0; },
                    "the first page");
    ASSERT_NE(engine.delete_table("src"), nullptr);
    EXPECT_FALSE(engine.catalog().find("src"));
    // The backup still reads the table: its data stays.
    EXPECT_EQ(backup_keys_under(*store, codec::space_prefix(source_id, codec::Space::kItems)),
              600u);
    EXPECT_EQ(engine.catalog().pending_drops().size(), 1u);
  }
  Engine engine(std::make_unique<ForwardingStorage>(store), backup_options(0));
  backup_wait_for([&] { return engine.find_backup(id)->status == BackupStatus::kAvailable; },
                  "the copy made again");
  backup_wait_for([&] { return engine.catalog().pending_drops().empty(); }, "the source's removal");
  EXPECT_EQ(backup_keys_under(*store, codec::table_prefix(source_id)), 0u);
  EXPECT_EQ(backup_keys_under(*store, std::string(kBackupCopyPrefix)), 0u);
  engine.restore_table(id, "dst", plain_restore("dst"));
  backup_wait_for([&] { return !engine.catalog().find("dst")->restore; }, "the restore");
  EXPECT_EQ(backup_all_items(engine, *engine.catalog().find("dst")).size(), 600u);
}

TEST(Backups, ABackupDeletedWhileItIsCopiedHasItsCopyRemovedByTheJob) {
  ScopedEnv fault("KUMO_BACKUP_FAULT", "copy-hold:1");
  char release[] = "/tmp/kumo-backup-release-XXXXXX";
  ASSERT_NE(::mkdtemp(release), nullptr);
  const std::string release_file = std::string(release) + "/go";
  ScopedEnv release_env("KUMO_BACKUP_FAULT_RELEASE", release_file.c_str());
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  Engine engine(std::make_unique<ForwardingStorage>(store), backup_options(0));
  TablePtr t = engine.create_table(backup_table_def());
  for (int i = 0; i < 600; ++i)
    engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}, {"sk", N(i)}});
  const Backup b = engine.create_backup(*t, "held");
  backup_wait_for([&] { return backup_keys_under(*store, codec::table_prefix(b.data_id)) > 0; },
                  "the first page");
  engine.delete_backup(b.id,
                       [](const Backup* found, const TablePtr&) { ASSERT_NE(found, nullptr); });
  EXPECT_FALSE(engine.find_backup(b.id));
  {
    std::FILE* f = std::fopen(release_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  backup_wait_for([&] { return backup_keys_under(*store, std::string(kBackupCopyPrefix)) == 0; },
                  "the job's end");
  EXPECT_EQ(backup_keys_under(*store, codec::table_prefix(b.data_id)), 0u);
  std::remove(release_file.c_str());
  ::rmdir(release);
}

TEST(Backups, ARestoreTheWritePathRefusesDeletesItsTable) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  std::string id;
  TableDefinition def = backup_table_def();
  IndexDefinition lsi;
  lsi.name = "by_g";
  lsi.global = false;
  lsi.key_schema = {{"pk", KeyType::HASH}, {"g", KeyType::RANGE}};
  lsi.hash = {{"pk", ScalarType::S}};
  lsi.range = {{"g", ScalarType::S}};
  lsi.key_attributes = {"pk", "g", "sk"};
  lsi.id = def.next_index_id++;
  def.local_indexes.push_back(lsi);
  {
    Engine engine(std::make_unique<ForwardingStorage>(store), backup_options());
    TablePtr t = engine.create_table(def);
    for (int i = 0; i < 50; ++i) {
      engine.put_item(*t, {{"pk", S("one")}, {"sk", N(i)}, {"g", S(std::string(100, 'x'))}});
    }
    id = engine.create_backup(*t, "big").id;
  }
  // A server whose item collections are full at 1,000 bytes cannot restore that one.
  EngineOptions small = backup_options();
  small.item_collection_limit = 1000;
  Engine engine(std::make_unique<ForwardingStorage>(store), small);
  engine.restore_table(id, "dst", plain_restore("dst"));
  backup_wait_for([&] { return !engine.catalog().find("dst"); }, "the table's removal");
  EXPECT_EQ(backup_keys_under(*store, "meta/restore/"), 0u);
  EXPECT_TRUE(engine.find_backup(id));
}

}  // namespace
}  // namespace kumo::engine
