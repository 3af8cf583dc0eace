// A dropped table's data is removed as a job recorded with the table's removal from the
// catalog: a removal cut short (the process stopped, the storage failed) is done again when
// the engine next opens, and doing it again is harmless.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "codec/key_codec.h"
#include "engine/engine.h"
#include "engine/forwarding_storage.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;

// Storage shared by several engines in turn (a restart), whose erase_range fails while
// `fail_erase` is set (the process stopped in the middle of a removal).
class StoppingStorage : public ForwardingStorage {
 public:
  explicit StoppingStorage(std::shared_ptr<storage::Storage> inner, bool fail_erase = false)
      : ForwardingStorage(std::move(inner)), fail_erase_(fail_erase) {}
  void erase_range(const std::string& lower, const std::string& upper) override {
    if (fail_erase_) throw storage::StorageError("stopped midway");
    ForwardingStorage::erase_range(lower, upper);
  }

 private:
  bool fail_erase_;
};

EngineOptions options() {
  EngineOptions o;
  o.background_maintenance = false;
  return o;
}

TableDefinition table_def() {
  TableDefinition def;
  def.name = "t";
  def.attribute_definitions = {{"pk", ScalarType::S}};
  def.key = {{"pk", ScalarType::S}, std::nullopt};
  return def;
}

// The keys stored under `prefix`.
std::size_t keys_under(storage::Storage& storage, const std::string& prefix) {
  std::size_t n = 0;
  auto it = storage.iterator(prefix, codec::prefix_end(prefix));
  for (it->seek_to_first(); it->valid(); it->next()) ++n;
  return n;
}

TEST(TableJobs, DeleteTableRemovesTheDataAndItsRecord) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  std::uint32_t id = 0;
  {
    Engine engine(std::make_unique<StoppingStorage>(store), options());
    TablePtr t = engine.create_table(table_def());
    id = t->id;
    for (int i = 0; i < 10; ++i) engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}});
    EXPECT_EQ(keys_under(*store, codec::space_prefix(id, codec::Space::kItems)), 10u);
    ASSERT_NE(engine.delete_table("t"), nullptr);
    EXPECT_EQ(engine.catalog().pending_drops().size(), 0u);
  }
  EXPECT_EQ(keys_under(*store, codec::table_prefix(id)), 0u);
  EXPECT_EQ(keys_under(*store, "meta/drop/"), 0u);
}

TEST(TableJobs, ARemovalCutShortIsDoneAgainAtTheNextOpen) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  std::uint32_t id = 0;
  {
    Engine engine(std::make_unique<StoppingStorage>(store, true), options());
    TablePtr t = engine.create_table(table_def());
    id = t->id;
    for (int i = 0; i < 10; ++i) engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}});
    EXPECT_THROW(engine.delete_table("t"), storage::StorageError);
    // Gone from the catalog, its data still there, and the removal recorded.
    EXPECT_EQ(engine.catalog().find("t"), nullptr);
    const auto pending = engine.catalog().pending_drops();
    ASSERT_EQ(pending.size(), 1u);
    EXPECT_EQ(pending[0].first, id);
    EXPECT_EQ(pending[0].second, "t");
  }
  EXPECT_EQ(keys_under(*store, codec::space_prefix(id, codec::Space::kItems)), 10u);

  Engine engine(std::make_unique<StoppingStorage>(store), options());
  // The removal runs on a worker of its own.
  for (int i = 0; i < 500 && keys_under(*store, "meta/drop/") > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(keys_under(*store, "meta/drop/"), 0u);
  EXPECT_EQ(keys_under(*store, codec::table_prefix(id)), 0u);
  // A table of the same name is a new one, with nothing of the old one's.
  TablePtr again = engine.create_table(table_def());
  EXPECT_NE(again->id, id);
  EXPECT_EQ(keys_under(*store, codec::space_prefix(again->id, codec::Space::kItems)), 0u);
}

TEST(TableJobs, DroppingTheDataAgainIsHarmless) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  Engine engine(std::make_unique<StoppingStorage>(store), options());
  TablePtr t = engine.create_table(table_def());
  engine.put_item(*t, {{"pk", S("a")}});
  ASSERT_NE(engine.delete_table("t"), nullptr);
  storage::Storage& same = *store;
  Catalog catalog(same);
  catalog.drop_data(t->id);
  EXPECT_EQ(keys_under(*store, codec::table_prefix(t->id)), 0u);
  EXPECT_EQ(catalog.pending_drops().size(), 0u);
}

}  // namespace
}  // namespace kumo::engine
