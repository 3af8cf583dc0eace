#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "engine/engine.h"
#include "engine/forwarding_storage.h"
#include "engine/shared_memory_storage.h"
#include "model/clock.h"
#include "values.h"

namespace kumo::engine {
namespace {

using namespace kumo::test;

TEST(SequenceNumbers, FormatIsTwentyOneDigitsAndRoundTrips) {
  EXPECT_EQ(format_sequence(1), "100000000000000000001");
  EXPECT_EQ(format_sequence(UINT64_MAX), "118446744073709551615");
  for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{42}, UINT64_MAX}) {
    EXPECT_EQ(parse_sequence(format_sequence(v)), v);
  }
  // Numeric order is string order.
  EXPECT_LT(format_sequence(9), format_sequence(10));
}

TEST(SequenceNumbers, ParseRejectsWhatFormatNeverWrites) {
  EXPECT_EQ(parse_sequence(""), std::nullopt);
  EXPECT_EQ(parse_sequence("1"), std::nullopt);
  EXPECT_EQ(parse_sequence("200000000000000000001"), std::nullopt);
  EXPECT_EQ(parse_sequence("10000000000000000000a"), std::nullopt);
  EXPECT_EQ(parse_sequence("1000000000000000000001"), std::nullopt);  // 22 digits
  EXPECT_EQ(parse_sequence("199999999999999999999"), std::nullopt);   // beyond 64 bits
}

class StreamsTtlTest : public ::testing::Test {
 protected:
  StreamsTtlTest() : engine_(storage::open_memory(), options()) {
    TableDefinition def;
    def.name = "events";
    def.attribute_definitions = {{"pk", ScalarType::S}};
    def.key = {{"pk", ScalarType::S}, std::nullopt};
    def.stream = StreamSpecification{true, "NEW_AND_OLD_IMAGES"};
    def.latest_stream_label = "2026-11-22T00:00:00.000";
    table_ = engine_.create_table(def);
  }

  static EngineOptions options() {
    EngineOptions o;
    o.background_maintenance = false;  // the tests call expire_items and trim themselves
    return o;
  }

  StreamInfo stream() { return engine_.streams().list("events").back(); }

  std::vector<StreamRecord> records(const StreamInfo& s) {
    return engine_.streams().read(s, s.shards.front(), s.start, 1000, 1 << 20).records;
  }

  Engine engine_;
  TablePtr table_;
};

TEST_F(StreamsTtlTest, EveryChangeIsOneRecordInCommitOrder) {
  engine_.put_item(*table_, {{"pk", S("a")}, {"v", N(1)}});
  engine_.put_item(*table_, {{"pk", S("a")}, {"v", N(1)}});  // no change: no record
  engine_.put_item(*table_, {{"pk", S("a")}, {"v", N(2)}});
  engine_.delete_item(*table_, {{"pk", S("a")}});
  engine_.delete_item(*table_, {{"pk", S("a")}});  // nothing to delete: no record
  std::vector<StreamRecord> r = records(stream());
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].event, StreamEvent::kInsert);
  EXPECT_EQ(r[1].event, StreamEvent::kModify);
  EXPECT_EQ(r[2].event, StreamEvent::kRemove);
  EXPECT_FALSE(r[0].old_image.has_value());
  EXPECT_EQ(r[1].old_image->at("v"), N(1));
  EXPECT_EQ(r[1].new_image->at("v"), N(2));
  EXPECT_FALSE(r[2].new_image.has_value());
  EXPECT_LT(r[0].sequence, r[1].sequence);
  EXPECT_LT(r[1].sequence, r[2].sequence);
  EXPECT_EQ(r[2].keys, (Item{{"pk", S("a")}}));
}

TEST_F(StreamsTtlTest, DisablingClosesTheStreamAndANewOneStartsAfterIt) {
  engine_.put_item(*table_, {{"pk", S("a")}});
  const StreamInfo first = stream();
  engine_.update_table("events", [](TableDefinition& t) { t.stream->enabled = false; });
  engine_.put_item(*table_, {{"pk", S("b")}});  // no stream: no record
  engine_.update_table("events", [](TableDefinition& t) {
    t.stream = StreamSpecification{true, "KEYS_ONLY"};
    t.latest_stream_label = "2026-11-22T00:00:01.000";
  });
  engine_.put_item(*table_, {{"pk", S("c")}});

  std::vector<StreamInfo> all = engine_.streams().list("events");
  ASSERT_EQ(all.size(), 2u);
  const StreamInfo closed = all[0], open = all[1];
  EXPECT_EQ(closed.label, first.label);
  ASSERT_TRUE(closed.end.has_value());
  EXPECT_TRUE(open.open());
  EXPECT_GT(open.start, *closed.end);
  std::vector<StreamRecord> old_records = records(closed);
  ASSERT_EQ(old_records.size(), 1u);
  EXPECT_EQ(old_records[0].keys.at("pk"), S("a"));
  std::vector<StreamRecord> new_records = records(open);
  ASSERT_EQ(new_records.size(), 1u);
  EXPECT_EQ(new_records[0].keys.at("pk"), S("c"));
  EXPECT_FALSE(new_records[0].new_image.has_value());  // KEYS_ONLY
}

TEST_F(StreamsTtlTest, AStreamClosedWithoutRecordsNeverOverlapsTheNextOne) {
  engine_.update_table("events", [](TableDefinition& t) { t.stream->enabled = false; });
  engine_.update_table("events", [](TableDefinition& t) {
    t.stream = StreamSpecification{true, "NEW_IMAGE"};
    t.latest_stream_label = "2026-11-22T00:00:01.000";
  });
  engine_.put_item(*table_, {{"pk", S("a")}});
  std::vector<StreamInfo> all = engine_.streams().list("events");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(records(all[0]).empty());
  EXPECT_EQ(records(all[1]).size(), 1u);
}

TEST_F(StreamsTtlTest, StreamsEnabledWithinOneMillisecondGetLabelsOfTheirOwn) {
  engine_.update_table("events", [](TableDefinition& t) { t.stream->enabled = false; });
  engine_.update_table("events", [](TableDefinition& t) {
    t.stream = StreamSpecification{true, "NEW_IMAGE"};
    t.latest_stream_label = "2026-11-22T00:00:00.000";  // the first stream's label again
  });
  std::vector<StreamInfo> all = engine_.streams().list("events");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].label, "2026-11-22T00:00:00.000");
  EXPECT_EQ(all[1].label, "2026-11-22T00:00:00.001");
  EXPECT_EQ(engine_.catalog().find("events")->latest_stream_label, "2026-11-22T00:00:00.001");
}

TEST(StreamLabels, AreTheCreationTimeInMilliseconds) {
  EXPECT_EQ(stream_label(0), "1970-01-01T00:00:00.000");
  EXPECT_EQ(stream_label(1795319832.672), "2026-11-22T03:57:12.672");
  EXPECT_EQ(stream_label(59.9996), "1970-01-01T00:01:00.000");
}

TEST_F(StreamsTtlTest, TrimDeletesRecordsOlderThanRetention) {
  engine_.put_item(*table_, {{"pk", S("a")}});
  engine_.put_item(*table_, {{"pk", S("b")}});
  const double now = now_seconds();
  engine_.streams().trim(now + 10, 5);
  const StreamInfo s = stream();
  EXPECT_TRUE(records(s).empty());
  EXPECT_EQ(s.trimmed_before, engine_.streams().next_sequence());
}

TEST_F(StreamsTtlTest, ExpireItemsDeletesOnlyPastNumbersWithinFiveYears) {
  engine_.update_table("events", [](TableDefinition& t) {
    t.ttl_enabled = true;
    t.ttl_attribute = "exp";
  });
  const auto now = static_cast<long long>(now_seconds());
  engine_.put_item(*table_, {{"pk", S("past")}, {"exp", N(now - 10)}});
  engine_.put_item(*table_, {{"pk", S("future")}, {"exp", N(now + 3600)}});
  engine_.put_item(*table_, {{"pk", S("string")}, {"exp", S("1")}});
  engine_.put_item(*table_, {{"pk", S("ancient")}, {"exp", N(now - 6LL * 365 * 86400)}});
  engine_.put_item(*table_, {{"pk", S("none")}});
  EXPECT_EQ(engine_.expire_items(static_cast<double>(now)), 1u);
  EXPECT_FALSE(engine_.get_item(*table_, {{"pk", S("past")}}).has_value());
  for (const char* kept : {"future", "string", "ancient", "none"}) {
    EXPECT_TRUE(engine_.get_item(*table_, {{"pk", S(kept)}}).has_value()) << kept;
  }
  std::vector<StreamRecord> r = records(stream());
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.back().event, StreamEvent::kRemove);
  EXPECT_TRUE(r.back().by_service);
  EXPECT_EQ(r.back().keys.at("pk"), S("past"));
}

TEST_F(StreamsTtlTest, AnUpdateThatMovesTheTtlIsHonoured) {
  engine_.update_table("events", [](TableDefinition& t) {
    t.ttl_enabled = true;
    t.ttl_attribute = "exp";
  });
  const auto now = static_cast<long long>(now_seconds());
  engine_.put_item(*table_, {{"pk", S("a")}, {"exp", N(now - 10)}});
  engine_.put_item(*table_, {{"pk", S("a")}, {"exp", N(now + 3600)}});
  EXPECT_EQ(engine_.expire_items(static_cast<double>(now)), 0u);
  EXPECT_TRUE(engine_.get_item(*table_, {{"pk", S("a")}}).has_value());
  EXPECT_EQ(engine_.expire_items(static_cast<double>(now + 7200)), 1u);
}

TableDefinition shared_stream_table() {
  TableDefinition table;
  table.name = "events";
  table.id = 7;
  table.key = {{"pk", ScalarType::S}, std::nullopt};
  table.stream = StreamSpecification{true, "KEYS_ONLY"};
  table.latest_stream_label = "2026-11-22T00:00:00.000";
  return table;
}

// (first token, open) of each of the stream's shards, as `streams` finds them.
std::vector<std::pair<std::uint64_t, bool>> shard_ranges(ChangeStreams& streams,
                                                         const TableDefinition& table) {
  std::vector<std::pair<std::uint64_t, bool>> out;
  const std::optional<StreamInfo> stream = streams.find(table.name, table.latest_stream_label);
  for (const StreamShard& shard : stream.value().shards) {
    out.emplace_back(shard.first_token, shard.open());
  }
  return out;
}

// Opens the table's stream through `streams`.
void open_stream(ChangeStreams& streams, const TableDefinition& table) {
  ChangeStreams::Guard guard(streams);
  streams.open(guard, table, 0);
}

// Opens the table's stream through `one`; `two` loads it.
void open_through_one(ChangeStreams& one, ChangeStreams& two, const TableDefinition& table) {
  open_stream(one, table);
  two.reload();
}

// Two front ends on one shared storage, each with its own ChangeStreams: a change of a
// stream is stored against the state loaded, so one front end's change of a stream never
// undoes another's.
TEST(SharedStreamsTest, ShardSplitsByTwoFrontEndsAreBothKept) {
  SharedMemoryStorage storage;
  SystemClock clock;
  const TableDefinition table = shared_stream_table();
  ChangeStreams one(storage, clock), two(storage, clock);
  open_through_one(one, two, table);
  {
    ChangeStreams::Guard guard(one);
    EXPECT_TRUE(one.split(guard, table.id, 1ull << 62, 1, 0));
  }
  // `two` has not loaded the first split: its own is stored after loading it again.
  {
    ChangeStreams::Guard guard(two);
    EXPECT_TRUE(two.split(guard, table.id, 3ull << 62, 2, 0));
  }
  one.reload();
  for (ChangeStreams* streams : {&one, &two}) {
    EXPECT_EQ(
        shard_ranges(*streams, table),
        (std::vector<std::pair<std::uint64_t, bool>>{
            {0, false}, {0, true}, {1ull << 62, false}, {1ull << 62, true}, {3ull << 62, true}}));
  }
  // Closed through the second: closed for the first once it loads the streams again.
  {
    ChangeStreams::Guard guard(two);
    two.close(guard, table.id, 3);
  }
  one.reload();
  ChangeStreams::Guard guard(one);
  EXPECT_EQ(one.active(guard, table.id), nullptr);
}

// A front end that split a shard may stop before its announcement reaches the others: a
// reader elsewhere still finds the split, since finding a stream compares it with its
// stored value.
TEST(SharedStreamsTest, AShardSplitNeverAnnouncedIsFoundByTheOthers) {
  SharedMemoryStorage storage;
  SystemClock clock;
  const TableDefinition table = shared_stream_table();
  ChangeStreams one(storage, clock), two(storage, clock);
  open_through_one(one, two, table);
  EXPECT_EQ(shard_ranges(two, table), (std::vector<std::pair<std::uint64_t, bool>>{{0, true}}));
  {
    ChangeStreams::Guard guard(one);
    EXPECT_TRUE(one.split(guard, table.id, 1ull << 62, 1, 0));
  }
  EXPECT_EQ(shard_ranges(two, table), (std::vector<std::pair<std::uint64_t, bool>>{
                                          {0, false}, {0, true}, {1ull << 62, true}}));
}

// A close on shared storage first splits the shards of the splits no front end has split
// yet (their front end stopped first): each open shard then ends at its own partition's
// number, and none is left without the new partition's records.
TEST(SharedStreamsTest, ACloseSplitsTheShardsOfUnnotedSplitsFirst) {
  SharedMemoryStorage storage;
  SystemClock clock;
  const TableDefinition table = shared_stream_table();
  ChangeStreams streams(storage, clock);
  open_stream(streams, table);
  // Made in the order of their numbers (the second split is of the first one's upper half);
  // another table's is not this stream's.
  storage.unnoted = {{table.id, 3ull << 62, 5}, {table.id, 1ull << 62, 2}, {8, 2ull << 62, 1}};
  {
    ChangeStreams::Guard guard(streams);
    streams.close(guard, table.id, clock.now());
  }
  EXPECT_EQ(
      shard_ranges(streams, table),
      (std::vector<std::pair<std::uint64_t, bool>>{
          {0, false}, {0, false}, {1ull << 62, false}, {1ull << 62, false}, {3ull << 62, false}}));
}

// A split published while a close is being made, after its read of the unnoted splits and
// before its read of the partitions' numbers: the new partition is among those read, with
// the records it numbered since the split, so its shard is split too and ends at its number
// (not left inside the parent's shard, which reads the parent partition's records only).
TEST(SharedStreamsTest, ASplitPublishedDuringACloseGetsItsShard) {
  SharedMemoryStorage storage;
  SystemClock clock;
  const TableDefinition table = shared_stream_table();
  ChangeStreams streams(storage, clock);
  open_stream(streams, table);
  // The partition split at 2^63 when its last number was 4; since then the lower half
  // numbered up to 9 and the new one up to 7.
  storage.before_partitions = [&] {
    storage.unnoted = {{table.id, 1ull << 63, 4}};
    storage.partitions = std::vector<storage::Storage::StreamPartition>{{0, 9}, {1ull << 63, 7}};
  };
  {
    ChangeStreams::Guard guard(streams);
    streams.close(guard, table.id, clock.now());
  }
  const std::optional<StreamInfo> stream = streams.find(table.name, table.latest_stream_label);
  ASSERT_TRUE(stream.has_value());
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::optional<std::uint64_t>>> shards;
  for (const StreamShard& shard : stream->shards) {
    shards.emplace_back(shard.first_token, shard.start, shard.end);
  }
  EXPECT_EQ(shards,
            (std::vector<std::tuple<std::uint64_t, std::uint64_t, std::optional<std::uint64_t>>>{
                {0, 1, 4}, {0, 5, 9}, {1ull << 63, 5, 7}}));
  EXPECT_EQ(stream->end, 9u);
}

// Front ends forget a closed stream at their own trim passes; past the retention every one
// of them answers as if it were gone, whether or not its own pass has run yet.
TEST(SharedStreamsTest, AClosedStreamPastRetentionIsGoneForEveryFrontEnd) {
  SharedMemoryStorage storage;
  ManualClock clock(100'000'000'000);  // 100 s
  const TableDefinition table = shared_stream_table();
  ChangeStreams one(storage, clock, 10), two(storage, clock, 10);
  open_through_one(one, two, table);
  {
    ChangeStreams::Guard guard(one);
    one.close(guard, table.id, clock.now());
  }
  two.reload();
  clock.advance(10'000'000'000);  // exactly the retention: still listed
  for (ChangeStreams* streams : {&one, &two}) {
    EXPECT_EQ(streams->list(std::nullopt).size(), 1u);
    EXPECT_TRUE(streams->find(table.name, table.latest_stream_label).has_value());
  }
  clock.advance(1'000'000);
  one.trim(clock.now(), 10);
  for (ChangeStreams* streams : {&one, &two}) {
    EXPECT_TRUE(streams->list(std::nullopt).empty());
    EXPECT_TRUE(streams->list(table.name).empty());
    EXPECT_FALSE(streams->find(table.name, table.latest_stream_label).has_value());
  }
}

// Two front ends (engines) on one shared storage write one item in turn: the storage
// numbers the records as it writes them, so the stream holds the changes in the order they
// were made, whichever front end made them. (Numbers taken by each front end from blocks
// of its own would order all of one front end's changes before the other's.)
TEST(SharedStreamsTest, RecordsOfTwoFrontEndsAreInTheOrderOfTheirChanges) {
  auto shared = std::make_shared<SharedMemoryStorage>();
  EngineOptions o;
  o.background_maintenance = false;
  Engine one(std::make_unique<ForwardingStorage>(shared), o);
  TableDefinition def;
  def.name = "events";
  def.attribute_definitions = {{"pk", ScalarType::S}};
  def.key = {{"pk", ScalarType::S}, std::nullopt};
  def.stream = StreamSpecification{true, "NEW_IMAGE"};
  def.latest_stream_label = "2026-11-22T00:00:00.000";
  TablePtr table = one.create_table(def);
  Engine two(std::make_unique<ForwardingStorage>(shared), o);  // loads the table and stream
  for (int v = 0; v < 6; ++v) {
    Engine& writer = v % 2 == 0 ? one : two;
    writer.put_item(*table, {{"pk", S("a")}, {"v", N(v)}});
  }
  for (Engine* reader : {&one, &two}) {
    const StreamInfo s = reader->streams().list("events").back();
    ASSERT_TRUE(s.numbered_by_storage);
    ASSERT_EQ(s.shards.size(), 1u);
    const std::vector<StreamRecord> records =
        reader->streams().read(s, s.shards.front(), s.shards.front().start, 1000, 1 << 20).records;
    ASSERT_EQ(records.size(), 6u);
    for (std::size_t v = 0; v < records.size(); ++v) {
      EXPECT_EQ(records[v].sequence, v + 1);
      EXPECT_EQ(records[v].new_image->at("v"), N(static_cast<long long>(v)));
    }
    // Both read up to the storage's horizon, whoever wrote last.
    EXPECT_EQ(reader->streams().horizon(s, s.shards.front()), 6u);
  }
}

// ChangeStreams on its own: records whose batches are written out of number order.
class SequenceOrderTest : public ::testing::Test {
 protected:
  SequenceOrderTest() : storage_(storage::open_memory()) {
    table_.name = "events";
    table_.id = 7;
    table_.attribute_definitions = {{"pk", ScalarType::S}};
    table_.key = {{"pk", ScalarType::S}, std::nullopt};
    table_.stream = StreamSpecification{true, "NEW_IMAGE"};
    table_.latest_stream_label = "2026-11-22T00:00:00.000";
  }

  void open(ChangeStreams& streams) { open_stream(streams, table_); }

  // Adds the record of a new item `pk` to `batch`, its number to `written`.
  void add(ChangeStreams& streams, const std::string& pk, storage::WriteBatch* batch,
           std::vector<std::uint64_t>* written) {
    ChangeStreams::Guard guard(streams);
    const StreamInfo* stream = streams.active(guard, table_.id);
    ASSERT_NE(stream, nullptr);
    streams.add_record(guard, *stream, table_.key, std::nullopt, Item{{"pk", S(pk)}}, false, batch,
                       written);
  }

  std::vector<std::string> read_all(ChangeStreams& streams) {
    const StreamInfo s = *streams.find("events", table_.latest_stream_label);
    std::vector<std::string> out;
    for (const StreamRecord& r :
         streams.read(s, s.shards.front(), s.start, 1000, 1 << 20).records) {
      out.push_back(r.keys.at("pk").as_string());
    }
    return out;
  }

  SystemClock clock_;
  std::unique_ptr<storage::Storage> storage_;
  TableDefinition table_;
};

TEST_F(SequenceOrderTest, AReaderStopsBelowARecordStillBeingWrittenAndStepsOverGaps) {
  ChangeStreams streams(*storage_, clock_);
  open(streams);
  storage::WriteBatch first, second;
  std::vector<std::uint64_t> first_numbers, second_numbers;
  add(streams, "a", &first, &first_numbers);
  add(streams, "b", &second, &second_numbers);
  ASSERT_LT(first_numbers.at(0), second_numbers.at(0));
  // The later number is written first: a reader must not pass the earlier one yet.
  storage_->write(second);
  streams.done(second_numbers);
  EXPECT_EQ(streams.horizon(), first_numbers[0] - 1);
  EXPECT_EQ(read_all(streams), std::vector<std::string>{});
  storage_->write(first);
  streams.done(first_numbers);
  EXPECT_EQ(streams.horizon(), second_numbers[0]);
  EXPECT_EQ(read_all(streams), (std::vector<std::string>{"a", "b"}));
  // A batch that failed leaves a gap that readers step over.
  storage::WriteBatch lost, kept;
  std::vector<std::uint64_t> lost_numbers, kept_numbers;
  add(streams, "lost", &lost, &lost_numbers);
  add(streams, "c", &kept, &kept_numbers);
  streams.done(lost_numbers);  // never written
  storage_->write(kept);
  streams.done(kept_numbers);
  EXPECT_EQ(read_all(streams), (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(SequenceOrderTest, ARestartNeverHandsOutANumberAgain) {
  std::uint64_t last = 0;
  {
    ChangeStreams streams(*storage_, clock_);
    open(streams);
    storage::WriteBatch batch;
    std::vector<std::uint64_t> numbers;
    add(streams, "a", &batch, &numbers);
    add(streams, "b", &batch, &numbers);
    storage_->write(batch);
    streams.done(numbers);
    last = numbers.back();
    // Numbers handed out and never written (a process that stopped mid-write).
    storage::WriteBatch unwritten;
    std::vector<std::uint64_t> more;
    add(streams, "c", &unwritten, &more);
    last = std::max(last, more.back());
  }
  ChangeStreams again(*storage_, clock_);
  EXPECT_GT(again.next_sequence(), last);
  storage::WriteBatch batch;
  std::vector<std::uint64_t> numbers;
  add(again, "d", &batch, &numbers);
  EXPECT_GT(numbers.at(0), last);
  storage_->write(batch);
  again.done(numbers);
  EXPECT_EQ(read_all(again), (std::vector<std::string>{"a", "b", "d"}));
}

}  // namespace
}  // namespace kumo::engine
