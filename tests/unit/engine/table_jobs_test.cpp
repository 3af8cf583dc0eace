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
#include "engine/engine_test_helpers.h"
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

TEST(TableJobs, DeleteTableRemovesTheDataAndItsRecord) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  std::uint32_t id = 0;
  {
    Engine engine(std::make_unique<StoppingStorage>(store), test_helpers::options());
    TablePtr t = engine.create_table(test_helpers::table_def());
    id = t->id;
    for (int i = 0; i < 10; ++i) engine.put_item(*t, {{"pk", S("k" + std::to_string(i))}});
    EXPECT_EQ(test_helpers::keys_under(*store, codec::space_prefix(id, codec::Space::kItems)), 10u);
    ASSERT_NE(engine.delete_table("t"), nullptr);
    EXPECT_EQ(engine.catalog().pending_drops().size(), 0u);
  }
  EXPECT_EQ(test_helpers::keys_under(*store, codec::table_prefix(id)), 0u);
  EXPECT_EQ(test_helpers::keys_under(*store, "meta/drop/"), 0u);
}

TEST(TableJobs, ARemovalCutShortIsDoneAgainAtTheNextOpen) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  std::uint32_t id = 0;
  {
    Engine engine(std::make_unique<StoppingStorage>(store, true), test_helpers::options());
    TablePtr t = engine.create_table(test_helpers::table_def());
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
  EXPECT_EQ(test_helpers::keys_under(*store, codec::space_prefix(id, codec::Space::kItems)), 10u);

  Engine engine(std::make_unique<StoppingStorage>(store), test_helpers::options());
  // The removal runs on a worker of its own.
  for (int i = 0; i < 500 && test_helpers::keys_under(*store, "meta/drop/") > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(test_helpers::keys_under(*store, "meta/drop/"), 0u);
  EXPECT_EQ(test_helpers::keys_under(*store, codec::table_prefix(id)), 0u);
  // A table of the same name is a new one, with nothing of the old one's.
  TablePtr again = engine.create_table(test_helpers::table_def());
  EXPECT_NE(again->id, id);
  EXPECT_EQ(test_helpers::keys_under(*store, codec::space_prefix(again->id, codec::Space::kItems)),
            0u);
}

TEST(TableJobs, DroppingTheDataAgainIsHarmless) {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  Engine engine(std::make_unique<StoppingStorage>(store), test_helpers::options());
  TablePtr t = engine.create_table(test_helpers::table_def());
  engine.put_item(*t, {{"pk", S("a")}});
  ASSERT_NE(engine.delete_table("t"), nullptr);
  storage::Storage& same = *store;
  Catalog catalog(same);
  catalog.drop_data(t->id);
  EXPECT_EQ(test_helpers::keys_under(*store, codec::table_prefix(t->id)), 0u);
  EXPECT_EQ(catalog.pending_drops().size(), 0u);
}

}  // namespace
}  // namespace kumo::engine
