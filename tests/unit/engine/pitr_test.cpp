// Point-in-time recovery in the engine, on a manual clock: the window arithmetic, the log's
// records (written with each write, the base at the enable time), the table read at a time,
// the changes between two times, the trimming of what leaves the window, and enabling,
// disabling and enabling again.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
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

constexpr std::int64_t kStartMs = 1'700'000'000'000;
constexpr std::int64_t kDayMs = 86'400'000;

struct PitrFixture {
  std::shared_ptr<storage::Storage> store = storage::open_memory();
  ManualClock clock{kStartMs * 1'000'000};
  std::unique_ptr<Engine> engine;

  PitrFixture() { open(); }
  void open() {
    EngineOptions o;
    o.background_maintenance = false;
    o.clock = &clock;
    o.manual_clock = &clock;
    o.pitr_lag = 0;
    engine = std::make_unique<Engine>(std::make_unique<ForwardingStorage>(store), o);
  }
  std::int64_t now_ms() const { return clock.now_ns() / 1'000'000; }
  void advance_ms(std::int64_t ms) { clock.advance(ms * 1'000'000); }
  TablePtr table() const { return engine->catalog().find("t"); }
  // Enabling answers before the items present are logged: waits for the job that logs them.
  void wait_base() const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (table()->pitr && table()->pitr->base_pending) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  void put(const std::string& pk, int v) {
    engine->put_item(*table(), {{"pk", S(pk)}, {"v", N(v)}});
  }
  void del(const std::string& pk) { engine->delete_item(*table(), {{"pk", S(pk)}}); }
  // The table at `ms`: pk → v.
  std::map<std::string, std::string> at(std::int64_t ms) const {
    std::map<std::string, std::string> out;
    EXPECT_TRUE(engine->read_table_at("t", ms, [&](const Item& item) {
      out[item.at("pk").as_string()] = item.at("v").as_number().to_string();
      return true;
    }));
    return out;
  }
  std::size_t log_records() const {
    const std::string prefix = pitr_log_prefix(table()->id);
    std::size_t n = 0;
    auto it = store->iterator(prefix, codec::prefix_end(prefix));
    for (it->seek_to_first(); it->valid(); it->next()) ++n;
    return n;
  }
};

TableDefinition pitr_table_def() {
  TableDefinition def;
  def.name = "t";
  def.billing_mode = BillingMode::PAY_PER_REQUEST;
  def.attribute_definitions = {{"pk", ScalarType::S}};
  def.key = {{"pk", ScalarType::S}, std::nullopt};
  return def;
}

TEST(PitrWindow, EarliestAndLatest) {
  PitrSettings p{kStartMs / 1000.0, 1, 0, false};
  // Right after enabling: one instant.
  PitrWindow w = pitr_window_at(p, kStartMs, 300'000);
  EXPECT_EQ(w.enabled_since_ms, kStartMs);
  EXPECT_EQ(w.earliest_ms, kStartMs);
  EXPECT_EQ(w.latest_ms, kStartMs);
  // Latest stays at the enable time for the lag, then follows now − lag.
  w = pitr_window_at(p, kStartMs + 200'000, 300'000);
  EXPECT_EQ(w.latest_ms, kStartMs);
  w = pitr_window_at(p, kStartMs + 400'000, 300'000);
  EXPECT_EQ(w.latest_ms, kStartMs + 100'000);
  EXPECT_EQ(w.earliest_ms, kStartMs);
  // Earliest follows now − the period once it has passed.
  w = pitr_window_at(p, kStartMs + 3 * kDayMs, 0);
  EXPECT_EQ(w.earliest_ms, kStartMs + 2 * kDayMs);
  EXPECT_EQ(w.latest_ms, kStartMs + 3 * kDayMs);
  // The floor holds it back after a lengthening.
  p.period_days = 35;
  p.floor = (kStartMs + 2 * kDayMs) / 1000.0;
  w = pitr_window_at(p, kStartMs + 3 * kDayMs, 0);
  EXPECT_EQ(w.earliest_ms, kStartMs + 2 * kDayMs);
}

TEST(PitrLog, KeysSortByItemThenTime) {
  const std::string a = codec::item_key(7, S("a"), nullptr);
  const std::string b = codec::item_key(7, S("a\x01"), nullptr);
  const std::string k1 = pitr_log_key(a, 5), k2 = pitr_log_key(a, 1'000'000'000'000'000);
  const std::string k3 = pitr_log_key(b, 1);
  EXPECT_LT(k1, k2);
  EXPECT_LT(k2, k3);
  const std::optional<PitrLogKey> parsed = parse_pitr_log_key(pitr_log_prefix(7), k2);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->time_us, 1'000'000'000'000'000);
  EXPECT_EQ(pitr_item_key(7, parsed->item), a);
  EXPECT_FALSE(parse_pitr_log_key(pitr_log_prefix(8), k2));
}

TEST(Pitr, TheTableAtEachTimeOfTheWindow) {
  PitrFixture f;
  f.engine->create_table(pitr_table_def());
  f.put("before", 1);
  f.put("gone", 1);
  // Not enabled: no window, no log.
  EXPECT_FALSE(f.engine->pitr_window("t"));
  EXPECT_EQ(f.log_records(), 0u);
  f.advance_ms(1000);
  const std::int64_t t0 = f.now_ms();
  f.engine->update_pitr("t", true, std::nullopt);
  ASSERT_TRUE(f.engine->pitr_window("t"));
  EXPECT_EQ(f.engine->pitr_window("t")->earliest_ms, t0);
  EXPECT_EQ(f.table()->pitr->period_days, 35);
  f.wait_base();
  EXPECT_EQ(f.log_records(), 2u);  // the base
  f.advance_ms(1000);
  f.put("before", 2);
  f.del("gone");
  f.put("new", 1);
  const std::int64_t t1 = f.now_ms();
  f.advance_ms(1000);
  f.put("new", 2);
  f.put("before", 3);
  const std::int64_t t2 = f.now_ms();
  EXPECT_EQ(f.at(t0), (std::map<std::string, std::string>{{"before", "1"}, {"gone", "1"}}));
  EXPECT_EQ(f.at(t1 - 1), f.at(t0));
  EXPECT_EQ(f.at(t1), (std::map<std::string, std::string>{{"before", "2"}, {"new", "1"}}));
  EXPECT_EQ(f.at(t2), (std::map<std::string, std::string>{{"before", "3"}, {"new", "2"}}));

  // The last change of each item in (t0, t1] and in (t1, t2].
  std::map<std::string, std::string> changes;
  EXPECT_TRUE(f.engine->changes_between("t", t0, t1, [&](const PitrChange& c) {
    changes[c.key.at("pk").as_string()] =
        c.new_image ? c.new_image->at("v").as_number().to_string() : "deleted";
    EXPECT_EQ(c.time_us, t1 * 1000);
    return true;
  }));
  EXPECT_EQ(changes, (std::map<std::string, std::string>{
                         {"before", "2"}, {"gone", "deleted"}, {"new", "1"}}));
  changes.clear();
  f.engine->changes_between("t", t1, t2, [&](const PitrChange& c) {
    changes[c.key.at("pk").as_string()] = c.new_image->at("v").as_number().to_string();
    return true;
  });
  EXPECT_EQ(changes, (std::map<std::string, std::string>{{"before", "3"}, {"new", "2"}}));
}

TEST(Pitr, TrimmingKeepsTheStateAtTheWindowsStart) {
  PitrFixture f;
  f.engine->create_table(pitr_table_def());
  f.put("a", 1);
  f.put("b", 1);
  f.engine->update_pitr("t", true, 1);
  f.wait_base();
  f.advance_ms(1000);
  f.put("a", 2);
  f.del("b");
  f.advance_ms(1000);
  f.put("a", 3);
  f.put("c", 1);
  EXPECT_EQ(f.log_records(), 6u);
  // The window's start falls between the first and the second second of changes.
  f.advance_ms(kDayMs - 500);
  f.put("c", 2);
  const std::int64_t start = f.engine->pitr_window("t")->earliest_ms;
  EXPECT_EQ(start, f.now_ms() - kDayMs);
  const auto before = f.at(start);
  // a: its records at or before the start fold into the last; b: deleted then, gone; c:
  // nothing before the start.
  EXPECT_EQ(f.engine->trim_pitr_logs(), 3u);
  EXPECT_EQ(f.log_records(), 4u);
  EXPECT_EQ(f.at(start), before);
  EXPECT_EQ(f.at(start), (std::map<std::string, std::string>{{"a", "2"}}));
  // Trimmed again only once the start moved on by a minute.
  f.advance_ms(1000);
  EXPECT_EQ(f.engine->trim_pitr_logs(), 0u);
  f.advance_ms(60'000);
  EXPECT_EQ(f.engine->trim_pitr_logs(), 1u);  // a=3 makes a=2 redundant
  EXPECT_EQ(f.at(f.engine->pitr_window("t")->earliest_ms),
            (std::map<std::string, std::string>{{"a", "3"}, {"c", "1"}}));
}

TEST(Pitr, ARestoreWritesTheTableAsItWasAtItsTime) {
  PitrFixture f;
  f.engine->create_table(pitr_table_def());
  f.put("a", 1);
  f.put("gone", 1);
  f.engine->update_pitr("t", true, std::nullopt);
  const std::int64_t t0 = f.now_ms();
  f.advance_ms(1000);
  f.put("a", 2);
  f.del("gone");
  f.put("b", 1);
  auto restore = [&](const std::string& target, std::int64_t at) {
    return f.engine->restore_table_to_time(
        "t", target,
        [&](const TablePtr& source, const std::optional<PitrWindow>& window,
            const RestoreCheck& check) {
          EXPECT_TRUE(source);
          EXPECT_TRUE(window);
          EXPECT_FALSE(check.target);
          TableDefinition def = pitr_table_def();
          def.name = target;
          def.restore = RestoreSource{"", "", "arn", static_cast<double>(at) / 1000.0, source->id};
          return def;
        });
  };
  TablePtr r = restore("r0", t0);
  EXPECT_TRUE(r->restore);
  EXPECT_FALSE(r->pitr);
  TablePtr r1 = restore("r1", f.now_ms());
  for (const std::string name : {"r0", "r1"}) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (f.engine->catalog().find(name)->restore) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << name;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  auto get = [&](const std::string& table, const std::string& pk) -> std::string {
    std::optional<Item> item =
        f.engine->get_item(*f.engine->catalog().find(table), {{"pk", S(pk)}});
    return item ? item->at("v").as_number().to_string() : "absent";
  };
  EXPECT_EQ(get("r0", "a"), "1");
  EXPECT_EQ(get("r0", "gone"), "1");
  EXPECT_EQ(get("r0", "b"), "absent");
  EXPECT_EQ(get("r1", "a"), "2");
  EXPECT_EQ(get("r1", "gone"), "absent");
  EXPECT_EQ(get("r1", "b"), "1");
  EXPECT_EQ(f.engine->item_count(*f.engine->catalog().find("r1")), 2);
  (void)r1;
}

TEST(Pitr, DisablingForgetsTheLogAndTheSettingsSurviveARestart) {
  PitrFixture f;
  f.engine->create_table(pitr_table_def());
  f.put("a", 1);
  f.engine->update_pitr("t", true, 7);
  f.wait_base();
  f.advance_ms(1000);
  f.put("a", 2);
  EXPECT_EQ(f.log_records(), 2u);
  f.engine.reset();
  f.open();
  ASSERT_TRUE(f.table()->pitr);
  EXPECT_EQ(f.table()->pitr->period_days, 7);
  EXPECT_EQ(f.engine->pitr_window("t")->enabled_since_ms, f.now_ms() - 1000);
  f.engine->update_pitr("t", false, std::nullopt);
  EXPECT_FALSE(f.table()->pitr);
  EXPECT_FALSE(f.engine->pitr_window("t"));
  EXPECT_EQ(f.log_records(), 0u);
  f.put("a", 3);  // not logged
  EXPECT_EQ(f.log_records(), 0u);
  f.advance_ms(1000);
  f.engine->update_pitr("t", true, std::nullopt);
  EXPECT_EQ(f.table()->pitr->period_days, 35);
  EXPECT_EQ(f.engine->pitr_window("t")->earliest_ms, f.now_ms());
  EXPECT_EQ(f.at(f.now_ms()), (std::map<std::string, std::string>{{"a", "3"}}));
}

TEST(Pitr, ABaseCutShortIsFinishedAtTheNextStart) {
  PitrFixture f;
  f.engine->create_table(pitr_table_def());
  for (int i = 0; i < 10; ++i) f.put("k" + std::to_string(i), i);
  f.engine->update_pitr("t", true, std::nullopt);
  f.wait_base();
  const double since = f.table()->pitr->enabled_since;
  // As a stop in the middle of enabling leaves it: the settings stored, the base not all
  // written.
  const std::string prefix = pitr_log_prefix(f.table()->id);
  f.store->erase_range(prefix, codec::prefix_end(prefix));
  f.engine->update_table("t", [&](TableDefinition& d) { d.pitr->base_pending = true; });
  f.engine.reset();
  f.open();
  f.wait_base();
  EXPECT_EQ(f.table()->pitr->enabled_since, since);
  EXPECT_EQ(f.log_records(), 10u);
  EXPECT_EQ(f.at(f.now_ms()).size(), 10u);
}

TEST(Pitr, WritesWhileTheBaseIsPendingKeepTheTableAtTheEnableTime) {
  PitrFixture f;
  f.engine->create_table(pitr_table_def());
  for (int i = 0; i < 600; ++i) f.put("k" + std::to_string(i), i);
  f.engine->update_pitr("t", true, std::nullopt);
  f.wait_base();
  const std::int64_t t0 = f.now_ms();
  const auto at_enable = f.at(t0);
  ASSERT_EQ(at_enable.size(), 600u);
  // As a stop in the middle of the base leaves it, with writes after it: an update, a
  // deletion and a new item, each logging the item's state at the enable time first.
  const std::string prefix = pitr_log_prefix(f.table()->id);
  f.store->erase_range(prefix, codec::prefix_end(prefix));
  f.engine->update_table("t", [&](TableDefinition& d) { d.pitr->base_pending = true; });
  f.advance_ms(1000);
  f.put("k1", 1001);
  f.del("k2");
  f.put("new", 1);
  const std::int64_t t1 = f.now_ms();
  f.engine.reset();
  f.open();
  // Reads of the log wait for the base.
  EXPECT_EQ(f.at(t0), at_enable);
  EXPECT_FALSE(f.table()->pitr->base_pending);
  auto now = at_enable;
  now["k1"] = "1001";
  now.erase("k2");
  now["new"] = "1";
  EXPECT_EQ(f.at(t1), now);
}

}  // namespace
}  // namespace kumo::engine
