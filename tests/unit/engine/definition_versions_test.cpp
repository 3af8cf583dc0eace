// Definition versions on a storage that several front ends share: a write made with a table
// definition older than the one another front end stored since is refused by the storage
// (storage::DefinitionChanged), and the engine loads its catalog and makes it again with
// the new definition.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "codec/key_codec.h"
#include "engine/catalog.h"
#include "engine/engine.h"
#include "engine/engine_test_helpers.h"
#include "engine/forwarding_storage.h"
#include "engine/shared_memory_storage.h"
#include "model/api_error.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;

// Another front end enables TTL (its own catalog on the same storage); this front end has
// not heard of it (the shared memory store announces nothing) and writes with the
// definition it holds: the write is refused once, made again with TTL, and schedules the
// item's expiry.
TEST(DefinitionVersions, AWriteWithAnOldDefinitionIsRefusedAndMadeAgain) {
  auto shared = std::make_shared<SharedMemoryStorage>();
  Engine engine(std::make_unique<ForwardingStorage>(shared), test_helpers::options());
  const TablePtr table = engine.create_table(test_helpers::table_def());
  engine.put_item(*table, {{"pk", S("before")}, {"exp", N(2000000100)}});
  EXPECT_EQ(shared->definition_refusals, 0);
  const std::string schedule = codec::space_prefix(table->id, codec::Space::kTtl);
  EXPECT_EQ(test_helpers::keys_under(*shared, schedule), 0u);

  Catalog other(*shared);
  const TablePtr changed = other.update("t", [](TableDefinition& t) {
    t.ttl_enabled = true;
    t.ttl_attribute = "exp";
  });
  EXPECT_EQ(changed->definition_version, table->definition_version + 1);
  // A change that does not alter what a write does keeps the version.
  const TablePtr tagged = other.update("t", [](TableDefinition& t) {
    t.tags.push_back({"k", "v"});
  });
  EXPECT_EQ(tagged->definition_version, changed->definition_version);

  engine.put_item(*table, {{"pk", S("after")}, {"exp", N(2000000200)}});
  EXPECT_EQ(shared->definition_refusals, 1);
  EXPECT_EQ(test_helpers::keys_under(*shared, schedule), 1u);
  EXPECT_TRUE(engine.catalog().find("t")->ttl_enabled);
  // Written with the new definition from then on.
  engine.put_item(*table, {{"pk", S("later")}, {"exp", N(2000000300)}});
  EXPECT_EQ(shared->definition_refusals, 1);
  EXPECT_EQ(test_helpers::keys_under(*shared, schedule), 2u);
}

// A table another front end dropped: the write is refused, and once the catalog is loaded
// again the table is not found.
TEST(DefinitionVersions, AWriteToATableDroppedElsewhereFindsItGone) {
  auto shared = std::make_shared<SharedMemoryStorage>();
  Engine engine(std::make_unique<ForwardingStorage>(shared), test_helpers::options());
  const TablePtr table = engine.create_table(test_helpers::table_def());
  engine.put_item(*table, {{"pk", S("a")}});
  Catalog other(*shared);
  ASSERT_NE(other.remove("t"), nullptr);
  try {
    engine.put_item(*table, {{"pk", S("b")}});
    ADD_FAILURE() << "the write went through";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), ApiError::Code::kResourceNotFound);
    EXPECT_EQ(e.type(), "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException");
    EXPECT_EQ(e.message(), std::optional<std::string>("Requested resource not found"));
  }
  EXPECT_EQ(shared->definition_refusals, 1);
  EXPECT_EQ(engine.catalog().find("t"), nullptr);
}

}  // namespace
}  // namespace kumo::engine
