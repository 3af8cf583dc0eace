#include <gtest/gtest.h>

#include <set>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "engine/engine.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;

class ReadsTest : public ::testing::Test {
 protected:
  ReadsTest() : engine_(storage::open_memory()) {
    TableDefinition def;
    def.name = "reads";
    def.attribute_definitions = {{"pk", ScalarType::S}, {"sk", ScalarType::N}};
    def.key = {{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::N}};
    table_ = engine_.create_table(def);
    for (std::string_view sk : kSortKeys) {
      engine_.put_item(*table_, {{"pk", S("p")}, {"sk", N(sk)}});
      engine_.put_item(*table_, {{"pk", S("other")}, {"sk", N(sk)}});
    }
  }

  std::vector<std::string> sort_keys(const Page& page) {
    std::vector<std::string> out;
    for (const auto& stored : page.items) {
      out.push_back(stored.decode().at("sk").as_number().to_string());
    }
    return out;
  }

  std::vector<std::string> query(SortCondition::Op op, std::string_view a, std::string_view b = "0",
                                 bool forward = true) {
    SortCondition sort{op, N(a), N(b)};
    PageOptions options;
    options.forward = forward;
    return sort_keys(engine_.query(*table_, S("p"), sort, options));
  }

  static constexpr std::string_view kSortKeys[] = {"-100", "-1.5", "-1", "0",  "0.001",
                                                   "1",    "1.5",  "2",  "10", "1E20"};
  Engine engine_;
  TablePtr table_;
};

using Op = SortCondition::Op;
using Keys = std::vector<std::string>;

TEST_F(ReadsTest, QueryOrdersNumbersNumerically) {
  EXPECT_EQ(query(Op::kNone, "0"), (Keys{"-100", "-1.5", "-1", "0", "0.001", "1", "1.5", "2", "10",
                                         "100000000000000000000"}));
  EXPECT_EQ(query(Op::kNone, "0", "0", false).front(), "100000000000000000000");
}

TEST_F(ReadsTest, QuerySortConditions) {
  EXPECT_EQ(query(Op::kEq, "1.0"), (Keys{"1"}));
  EXPECT_EQ(query(Op::kLt, "-1"), (Keys{"-100", "-1.5"}));
  EXPECT_EQ(query(Op::kLe, "-1"), (Keys{"-100", "-1.5", "-1"}));
  EXPECT_EQ(query(Op::kGt, "2"), (Keys{"10", "100000000000000000000"}));
  EXPECT_EQ(query(Op::kGe, "2"), (Keys{"2", "10", "100000000000000000000"}));
  EXPECT_EQ(query(Op::kBetween, "-1", "1"), (Keys{"-1", "0", "0.001", "1"}));
  EXPECT_EQ(query(Op::kBetween, "-1", "1", false), (Keys{"1", "0.001", "0", "-1"}));
}

TEST_F(ReadsTest, PagesResumeAfterTheLastEvaluatedKey) {
  for (bool forward : {true, false}) {
    PageOptions options;
    options.forward = forward;
    options.limit = 3;
    Keys all;
    for (int pages = 0;; ++pages) {
      ASSERT_LT(pages, 10);
      Page page = engine_.query(*table_, S("p"), {}, options);
      for (auto& k : sort_keys(page)) all.push_back(k);
      if (!page.last_evaluated_key) break;
      options.exclusive_start_key = page.last_evaluated_key;
    }
    Keys expected = query(Op::kNone, "0", "0", forward);
    EXPECT_EQ(all, expected);
  }
}

TEST_F(ReadsTest, ScanSegmentsCoverEveryItemOnce) {
  for (std::uint32_t total : {1u, 3u, 7u, 16u}) {
    std::multiset<std::string> seen;
    for (std::uint32_t segment = 0; segment < total; ++segment) {
      Page page = engine_.scan(*table_, segment, total, {});
      for (const auto& stored : page.items) {
        const Item item = stored.decode();
        EXPECT_EQ(item_size(item), stored.size());
        EXPECT_EQ(engine_.segment_of(*table_, item, total), segment);
        seen.insert(item.at("pk").as_string() + "/" + item.at("sk").as_number().to_string());
      }
    }
    EXPECT_EQ(seen.size(), 2 * std::size(kSortKeys));
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), seen.size());
  }
}

TEST_F(ReadsTest, BeginsWithOnStrings) {
  TableDefinition def;
  def.name = "strings";
  def.key = {{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::S}};
  TablePtr t = engine_.create_table(def);
  for (const std::string& sk :
       std::vector<std::string>{"a", "ab", "abc", "abd", "b", std::string("ab\0z", 4)}) {
    engine_.put_item(*t, {{"pk", S("p")}, {"sk", S(sk)}});
  }
  Page page = engine_.query(*t, S("p"), {Op::kBeginsWith, S("ab"), {}}, {});
  std::vector<std::string> got;
  for (const auto& stored : page.items) got.push_back(stored.decode().at("sk").as_string());
  EXPECT_EQ(got, (std::vector<std::string>{"ab", std::string("ab\0z", 4), "abc", "abd"}));
}

// Items written before their size was stored with them (encode_item's form alone) are
// still read, measured and rewritten.
TEST(StoredItems, ItemsWithoutTheirSizeAreStillRead) {
  std::unique_ptr<storage::Storage> owned = storage::open_memory();
  storage::Storage& storage = *owned;
  Engine engine(std::move(owned));
  TableDefinition def;
  def.name = "old";
  def.key = {{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::N}};
  TablePtr table = engine.create_table(def);
  const Item item{{"pk", S("p")}, {"sk", N("1")}, {"text", S(std::string(100, 'x'))}};
  engine.put_item(*table, item);
  const std::string key = codec::item_key(table->id, S("p"), &item.at("sk"));
  const std::optional<std::string> stored = storage.get(key);
  ASSERT_TRUE(stored);
  EXPECT_EQ(codec::split_stored_item(*stored)->size, std::optional(item_size(item)));
  storage::WriteBatch batch;
  batch.put(key, codec::encode_item(item));
  storage.write(batch);

  const std::optional<StoredItem> got = engine.get_stored(*table, {{"pk", S("p")}, {"sk", N("1")}});
  ASSERT_TRUE(got);
  EXPECT_EQ(got->size(), item_size(item));
  EXPECT_EQ(got->decode(), item);
  const Page page = engine.query(*table, S("p"), {}, {});
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.bytes_read, item_size(item));
  const WriteResult rewritten = engine.put_item(*table, item);
  ASSERT_TRUE(rewritten.old_item);
  EXPECT_EQ(*rewritten.old_item, item);
  EXPECT_EQ(rewritten.old_size, item_size(item));  // measured by walking it
  EXPECT_EQ(codec::split_stored_item(*storage.get(key))->size, std::optional(item_size(item)));
  EXPECT_EQ(engine.put_item(*table, item).old_size, item_size(item));  // as stored
}

}  // namespace
}  // namespace kumo::engine
