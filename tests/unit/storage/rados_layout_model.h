// The model, writers and checker of the RADOS layout tests (rados_layout_test.cpp): keys
// shaped as the engine shapes them (docs/storage.md, docs/scale-out.md section 3), items
// and LSI entries in their item's partition, GSI entries by their own token, TTL schedule
// entries in their item's partition, stream records in the stream object of their item's
// partition, table counters as deltas, and catalog keys; a model of what the back end must
// hold, writers that make random engine-like batches and keep the model, and a checker
// that reads everything back through the Storage API. Also the tests' fixture, which opens
// the back end in namespaces of its own on the cluster that KUMO_CEPH_CONF names.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "storage/backends.h"
#include "storage/storage.h"

namespace kumo::storage::layout_test {

using Entries = std::vector<std::pair<std::string, std::string>>;

// Partitions split past this many keys (items and index entries), so a few hundred items
// split each table's partitions many times.
constexpr std::uint64_t kPartitionKeys = 24;

// Table ids; adjacent, so that [A][0x04]..[B] is the end of table A's range.
constexpr std::uint32_t kTableA = 5;  // LSI, two GSIs, TTL, stream
constexpr std::uint32_t kTableB = 6;  // LSI, TTL; no GSI, no stream

constexpr std::uint8_t kCounters = 0x00, kItems = 0x01, kIndexes = 0x02, kStream = 0x03,
                       kTtl = 0x04;
constexpr std::uint32_t kLsi = 1, kGsi1 = 2, kGsi2 = 7;

inline std::string be32(std::uint32_t v) {
  std::string out;
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}
inline std::string be64(std::uint64_t v) {
  std::string out;
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}
inline std::string table_prefix(std::uint32_t table) {
  return be32(table);
}
inline std::string space_prefix(std::uint32_t table, std::uint8_t space) {
  return be32(table) + static_cast<char>(space);
}
// A string key attribute as the engine encodes it: 0x00 escaped as 0x00 0xFF, ended by
// 0x00 0x01.
inline std::string escaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    out.push_back(c);
    if (c == '\0') out.push_back('\xff');
  }
  out.append("\x00\x01", 2);
  return out;
}
// The key encoding of a positive integer: 0x03, the exponent (digits + 129), the digits
// without trailing zeros (0x10 + d each), 0x00.
inline std::string encode_number(std::uint64_t n) {
  std::string digits = std::to_string(n);
  const std::size_t count = digits.size();
  while (digits.back() == '0') digits.pop_back();
  std::string out;
  out.push_back('\x03');
  out.push_back(static_cast<char>(count + 129));
  for (char d : digits) out.push_back(static_cast<char>(0x10 + (d - '0')));
  out.push_back('\0');
  return out;
}
inline std::string item_key(std::uint32_t table, std::uint64_t token, std::string_view suffix) {
  return space_prefix(table, kItems) + be64(token) + std::string(suffix);
}
inline std::string index_key(std::uint32_t table, std::uint32_t index, std::uint64_t token,
                             std::string_view suffix) {
  return space_prefix(table, kIndexes) + be32(index) + be64(token) + std::string(suffix);
}
// A stream record: its sequence number, then its item's token.
inline std::string stream_key(std::uint32_t table, std::uint64_t sequence, std::uint64_t token) {
  return space_prefix(table, kStream) + be64(sequence) + be64(token);
}
inline std::string ttl_key(std::uint32_t table, std::uint64_t expiry, std::string_view item) {
  return space_prefix(table, kTtl) + encode_number(expiry) + std::string(item);
}
inline std::string counter_key(std::uint32_t table, std::string_view name) {
  return space_prefix(table, kCounters) + std::string(name);
}
inline bool is_counter(std::string_view key) {
  return key.size() > 4 && key[0] == '\0' && key[4] == '\0';
}

// A key or value, printable: bytes outside [0-9A-Za-z/_-] as \xHH.
inline std::string show(std::string_view bytes) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (std::isalnum(b) || c == '/' || c == '_' || c == '-') {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(hex[b >> 4]);
      out.push_back(hex[b & 15]);
    }
  }
  return out;
}

// What the store must hold: the keys and values, and the counters apart (a range read
// never returns a counter).
struct Model {
  std::map<std::string, std::string> kv;
  std::map<std::string, std::int64_t> counters;

  void apply(const WriteBatch& batch) {
    for (const WriteBatch::Op& op : batch.ops()) {
      switch (op.type) {
        case WriteBatch::OpType::kPut:
          kv[op.key] = op.value;
          break;
        case WriteBatch::OpType::kDelete:
          if (is_counter(op.key)) {
            counters.erase(op.key);
          } else {
            kv.erase(op.key);
          }
          break;
        case WriteBatch::OpType::kAddCounter:
          counters[op.key] += op.delta;
          break;
      }
    }
  }
  // Storage::erase_range: every key of [lower, upper) goes, counters included.
  void erase(const std::string& lower, const std::string& upper) {
    auto in = [&](const std::string& k) { return k >= lower && (upper.empty() || k < upper); };
    std::erase_if(kv, [&](const auto& e) { return in(e.first); });
    std::erase_if(counters, [&](const auto& e) { return in(e.first); });
  }
  void merge(const Model& other) {
    for (const auto& [k, v] : other.kv) kv[k] = v;
    for (const auto& [k, v] : other.counters) counters[k] += v;
  }
  std::map<std::string, std::string>::const_iterator begin_at(const std::string& lower) const {
    return kv.lower_bound(lower);
  }
  std::map<std::string, std::string>::const_iterator end_at(const std::string& upper) const {
    return upper.empty() ? kv.end() : kv.lower_bound(upper);
  }
  Entries range(const std::string& lower, const std::string& upper) const {
    Entries out;
    if (!upper.empty() && upper <= lower) return out;
    for (auto it = begin_at(lower), end = end_at(upper); it != end; ++it) out.push_back(*it);
    return out;
  }
};

// Engine-like writes to the items of some tables: one item per partition group, with its
// LSI entry and the table's counters in the group, and its GSI entries, TTL schedule entry
// and stream record as maintenance. `tag` makes this writer's item keys its own.
class Writer {
 public:
  struct Table {
    std::uint32_t id;
    bool gsi;
    bool stream;
  };

  Writer(std::vector<Table> tables, std::string tag, std::atomic<std::uint64_t>* sequence,
         std::uint64_t seed, int collections_per_table)
      : tables_(std::move(tables)), tag_(std::move(tag)), sequence_(sequence), rng_(seed) {
    // A hot item collection in the first table, written often, at token 0: the table's
    // first partition holds it at every split (a split leaves the lower half in its
    // object), so that object gets many counter deltas. Its sort keys hold a zero byte.
    for (int i = 0; i < 4; ++i) add_item(0, 0, std::string("h\0", 2) + std::to_string(i), true);
    for (std::size_t t = 0; t < tables_.size(); ++t) {
      // An item collection: one token, 1 to 3 items.
      for (int c = 0; c < collections_per_table; ++c) {
        const std::uint64_t token = rng_();
        const int n = 1 + static_cast<int>(rng_() % 3);
        for (int i = 0; i < n; ++i) add_item(t, token, "k" + std::to_string(i), false);
      }
    }
  }

  // The catalog's keys of this writer's tables, which the engine writes before any of a
  // table's keys.
  WriteBatch create_tables() {
    WriteBatch batch;
    batch.put("meta/next_table_id", be32(kTableB + 1));
    for (const Table& table : tables_) {
      batch.put("meta/table/" + tag_ + std::to_string(table.id), "definition");
    }
    return batch;
  }

  // The table's keys were erased: its items are absent, and have no entries.
  void forget(std::uint32_t table) {
    for (Item& item : items_) {
      if (item.table != table) continue;
      item.present = false;
      item.value.clear();
      item.lsi.clear();
      item.gsi.clear();
      item.ttl.clear();
    }
  }

  // Applies `batch` to the model once the store has it.
  void committed(const WriteBatch& batch) { model.apply(batch); }

  // A random batch: mostly one item's write, sometimes a transaction, a backfilled GSI
  // entry, a counter's removal, or catalog keys.
  WriteBatch next() {
    WriteBatch batch;
    const unsigned roll = static_cast<unsigned>(rng_() % 100);
    if (roll < 5) {
      const int n = 1 + static_cast<int>(rng_() % 3);
      for (int i = 0; i < n; ++i) {
        // Half of them ClientRequestTokens, which live in objects of their own.
        const std::string key = (rng_() % 2 == 0 ? "meta/tokens/" : "meta/") + tag_ + "/t" +
                                std::to_string(rng_() % 30);
        if (rng_() % 3 == 0) {
          batch.del(key);
        } else {
          batch.put(key, "definition " + std::to_string(rng_() % 1000));
        }
      }
    } else if (roll < 13) {
      // A transaction: 2 to 4 distinct items, in any partitions of any tables.
      const std::size_t n = 2 + rng_() % 3;
      std::vector<std::size_t> chosen;
      while (chosen.size() < n) {
        const std::size_t i = pick();
        if (std::find(chosen.begin(), chosen.end(), i) == chosen.end()) chosen.push_back(i);
      }
      for (std::size_t i : chosen) write_item(&batch, i, items_[i].present && rng_() % 4 == 0);
    } else if (roll < 16) {
      // A backfilled GSI entry: the group of its item, the entry and a counter, all in the
      // entry's partition.
      std::vector<std::size_t> with_gsi;
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (items_[i].present && !items_[i].gsi.empty()) with_gsi.push_back(i);
      }
      if (with_gsi.empty()) return next();
      Item& item = items_[with_gsi[rng_() % with_gsi.size()]];
      batch.partition(item.key);
      batch.put(item.gsi, item.value);
      batch.add_counter(counter_key(item.table, "backfilled"), 1);
    } else if (roll < 18) {
      const Table& table = tables_[rng_() % tables_.size()];
      batch.del(counter_key(table.id, "scratch/" + tag_));
    } else {
      const std::size_t i = pick();
      write_item(&batch, i, items_[i].present && rng_() % 4 == 0);
    }
    return batch;
  }

  // Item keys this writer uses (present or not).
  std::vector<std::string> item_keys() const {
    std::vector<std::string> out;
    for (const Item& item : items_) out.push_back(item.key);
    return out;
  }
  // Counters this writer adds to.
  std::vector<std::string> counter_keys() const {
    std::vector<std::string> out;
    for (const Table& table : tables_) {
      for (const char* name : {"items", "bytes", "backfilled", "gsi/count"}) {
        out.push_back(counter_key(table.id, name));
      }
      out.push_back(counter_key(table.id, "scratch/" + tag_));
    }
    for (const Item& item : items_) out.push_back(size_counter(item));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  // Counter deltas added in the hot collection's partition.
  int hot_deltas() const { return hot_deltas_; }

  Model model;

 private:
  struct Item {
    std::uint32_t table;
    std::size_t shape;  // index into tables_
    std::uint64_t token;
    std::string suffix;
    std::string key;
    bool hot;
    bool present = false;
    std::string value;
    std::string lsi, gsi, ttl;  // the item's entries; empty when none
  };

  void add_item(std::size_t t, std::uint64_t token, const std::string& sort, bool hot) {
    Item item;
    item.table = tables_[t].id;
    item.shape = t;
    item.token = token;
    item.suffix = escaped(tag_ + "/" + sort);
    item.key = item_key(item.table, token, item.suffix);
    item.hot = hot;
    items_.push_back(std::move(item));
  }

  std::size_t pick() {
    if (rng_() % 10 < 4) {
      std::vector<std::size_t> hot;
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (items_[i].hot) hot.push_back(i);
      }
      return hot[rng_() % hot.size()];
    }
    return rng_() % items_.size();
  }

  std::string size_counter(const Item& item) const {
    return counter_key(item.table, "size/" + be64(item.token));
  }

  std::string random_value() {
    std::string out = "v";
    const std::size_t n = rng_() % 40;
    for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(rng_() % 256));
    return out;
  }

  void add(WriteBatch* batch, const Item& item, const std::string& counter, std::int64_t delta) {
    if (delta == 0) return;
    batch->add_counter(counter, delta);
    if (item.hot) ++hot_deltas_;
  }

  // One item's write (a put, or its deletion) as the engine makes it.
  void write_item(WriteBatch* batch, std::size_t i, bool remove) {
    Item& item = items_[i];
    const Table& table = tables_[item.shape];
    batch->partition(item.key);
    const auto old_size = static_cast<std::int64_t>(item.present ? item.value.size() : 0);
    std::string lsi, gsi, ttl;
    std::string value;
    if (!remove) {
      value = random_value();
      lsi = index_key(item.table, kLsi, item.token,
                      escaped("l" + std::to_string(rng_() % 5)) + item.suffix);
      if (table.gsi && rng_() % 4 != 0) {
        // A GSI entry has its own token (the hash of its own partition key).
        const std::uint64_t g = rng_() % 30;
        gsi = index_key(item.table, g % 2 == 0 ? kGsi1 : kGsi2, g * 0x9e3779b97f4a7c15ULL,
                        escaped(std::to_string(rng_() % 7)) + be64(item.token) + item.suffix);
      }
      if (rng_() % 2 == 0) {
        // Expiries of 1 to 7 digits, some with trailing zeros.
        std::uint64_t expiry = 1 + rng_() % 9999999;
        if (rng_() % 3 == 0) expiry = (expiry / 1000 + 1) * 1000;
        ttl = ttl_key(item.table, expiry, item.key);
      }
    }
    // The partition group: the item, its LSI entry, the counters.
    if (remove) {
      batch->del(item.key);
    } else {
      batch->put(item.key, value);
    }
    if (!item.lsi.empty() && item.lsi != lsi) batch->del(item.lsi);
    if (!lsi.empty()) batch->put(lsi, value.substr(0, 8));
    const auto new_size = static_cast<std::int64_t>(value.size());
    add(batch, item, counter_key(item.table, "items"), (remove ? 0 : 1) - (item.present ? 1 : 0));
    add(batch, item, counter_key(item.table, "bytes"), new_size - old_size);
    add(batch, item, size_counter(item), new_size - old_size);
    if (rng_() % 3 == 0) add(batch, item, counter_key(item.table, "scratch/" + tag_), 1);
    // Maintenance: the GSI entry (and its counter), the TTL entry, the stream record.
    if (!item.gsi.empty() && item.gsi != gsi) {
      batch->maintain_del(item.gsi);
      batch->maintain_add_counter(counter_key(item.table, "gsi/count"), -1);
    }
    if (!gsi.empty()) {
      batch->maintain_put(gsi, value);
      if (item.gsi != gsi) batch->maintain_add_counter(counter_key(item.table, "gsi/count"), 1);
    }
    if (!item.ttl.empty() && item.ttl != ttl) batch->maintain_del(item.ttl);
    if (!ttl.empty()) batch->maintain_put(ttl, "");
    if (table.stream) {
      const std::uint64_t sequence = sequence_->fetch_add(1);
      batch->maintain_put(stream_key(item.table, sequence, item.token),
                          (remove ? "REMOVE " : "MODIFY ") + item.key + value);
    }
    item.present = !remove;
    item.value = std::move(value);
    item.lsi = std::move(lsi);
    item.gsi = std::move(gsi);
    item.ttl = std::move(ttl);
  }

  std::vector<Table> tables_;
  std::string tag_;
  std::atomic<std::uint64_t>* sequence_;
  std::mt19937_64 rng_;
  std::vector<Item> items_;
  int hot_deltas_ = 0;
};

// Compares what the store returned with what the model holds; on a difference, says where.
inline testing::AssertionResult same(const std::string& what, const Entries& expected,
                                     const Entries& actual) {
  if (expected == actual) return testing::AssertionSuccess();
  std::size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  auto entry = [](const Entries& e, std::size_t at) {
    if (at >= e.size()) return std::string("(end)");
    return show(e[at].first) + " = " + show(e[at].second);
  };
  return testing::AssertionFailure()
         << what << ": " << expected.size() << " entries expected, " << actual.size()
         << " read; first difference at " << i << ":\n  expected " << entry(expected, i)
         << "\n  read     " << entry(actual, i);
}

inline testing::AssertionResult same_value(const std::string& what,
                                           const std::optional<std::string>& expected,
                                           const std::optional<std::string>& actual) {
  if (expected == actual) return testing::AssertionSuccess();
  auto value = [](const std::optional<std::string>& v) {
    return v ? "\"" + show(*v) + "\"" : std::string("absent");
  };
  return testing::AssertionFailure()
         << what << ": expected " << value(expected) << ", read " << value(actual);
}

// The reads that differed from the model, by kind of read: each kind is reported once, with
// how many of its reads differed and the first one's details.
class Findings {
 public:
  void expect(const std::string& kind, const std::string& context,
              const testing::AssertionResult& result) {
    std::lock_guard lock(mutex_);
    Kind& k = kinds_[kind];
    ++k.reads;
    if (result) return;
    if (k.differed++ == 0) k.first = context + ": " + result.message();
  }
  void report() const {
    std::lock_guard lock(mutex_);
    for (const auto& [kind, k] : kinds_) {
      if (k.differed > 0) {
        ADD_FAILURE() << kind << ": " << k.differed << " of " << k.reads
                      << " reads differ from the model; the first, " << k.first;
      }
    }
  }

 private:
  struct Kind {
    int reads = 0, differed = 0;
    std::string first;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Kind> kinds_;
};

// Reads of every kind, compared with the model.
class Checker {
 public:
  Checker(Storage& db, const Model& model, std::vector<std::uint32_t> tables, std::uint64_t seed,
          Findings& findings, std::string context)
      : db_(db),
        model_(model),
        tables_(std::move(tables)),
        rng_(seed),
        findings_(findings),
        context_(std::move(context)) {}

  // `items`: item keys the writers use, present or not; `counters`: counter keys to read.
  void all(const std::vector<std::string>& items, const std::vector<std::string>& counters) {
    gets(items);
    for (const std::string& counter : counters) {
      auto it = model_.counters.find(counter);
      const std::int64_t want = it == model_.counters.end() ? 0 : it->second;
      const std::int64_t read = db_.get_counter(counter);
      findings_.expect("get_counter", context_,
                       read == want ? testing::AssertionSuccess()
                                    : testing::AssertionFailure()
                                          << "counter " << show(counter) << ": expected " << want
                                          << ", read " << read);
    }
    for (const auto& [lower, upper] : ranges()) {
      findings_.expect("forward scan", context_,
                       same("[" + show(lower) + ", " + show(upper) + ")",
                            model_.range(lower, upper), scan(lower, upper)));
    }
    findings_.expect("forward scan", context_,
                     same("the tables", model_.range("", "\x01"), scan("", "\x01")));
    findings_.expect("forward scan", context_,
                     same("everything", model_.range("", ""), scan("", "")));
    for (std::uint32_t table : tables_) {
      for (std::uint8_t space = kItems; space <= kTtl; ++space) {
        const std::string lower = space_prefix(table, space);
        const std::string upper = space_prefix(table, space + 1);
        backward(rng_() % 3 == 0 ? std::pair(lower, upper) : sub_range(lower, upper));
        seeks(sub_range(lower, upper));
      }
    }
    seeks({"", "\x01"});
    seeks({"", ""});
  }

  // get() of present keys and of absent ones of every shape.
  void gets(const std::vector<std::string>& items) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : model_.kv) keys.push_back(k);
    for (int i = 0; i < 40 && !keys.empty(); ++i) {
      const std::string& key = keys[rng_() % keys.size()];
      findings_.expect("get", context_, same_value(show(key), model_.kv.at(key), db_.get(key)));
    }
    std::vector<std::string> absent;
    for (std::uint32_t table : tables_) {
      absent.push_back(item_key(table, rng_(), escaped("absent")));
      absent.push_back(index_key(table, kLsi, rng_(), escaped("absent")));
      absent.push_back(index_key(table, kGsi2, rng_(), escaped("absent")));
      absent.push_back(stream_key(table, rng_(), rng_()));
      absent.push_back(ttl_key(table, 1 + rng_() % 1000, item_key(table, rng_(), "x")));
    }
    absent.push_back("meta/absent");
    for (int i = 0; i < 20 && !items.empty(); ++i) absent.push_back(items[rng_() % items.size()]);
    for (const std::string& key : absent) {
      auto it = model_.kv.find(key);
      findings_.expect(
          "get", context_,
          same_value(show(key), it == model_.kv.end() ? std::nullopt : std::optional(it->second),
                     db_.get(key)));
    }
  }

  Entries scan(const std::string& lower, const std::string& upper) {
    Entries out;
    auto it = db_.iterator(lower, upper);
    for (it->seek_to_first(); it->valid(); it->next()) {
      out.emplace_back(std::string(it->key()), std::string(it->value()));
    }
    return out;
  }

  // The whole range backward (seek_to_last, then prev), its first entries backward through
  // visit_range, and from a random key backward (seek_for_prev, then prev).
  void backward(const std::pair<std::string, std::string>& range) {
    const auto& [lower, upper] = range;
    const std::string where = "[" + show(lower) + ", " + show(upper) + ")";
    Entries expected = model_.range(lower, upper);
    std::reverse(expected.begin(), expected.end());
    {
      Entries read;
      auto it = db_.iterator(lower, upper);
      for (it->seek_to_last(); it->valid(); it->prev()) {
        read.emplace_back(std::string(it->key()), std::string(it->value()));
      }
      findings_.expect("backward walk (seek_to_last, prev)", context_, same(where, expected, read));
    }
    {
      // As a descending Query with a Limit: stops after a few entries.
      const std::size_t limit = 1 + rng_() % 10;
      Entries read;
      db_.visit_range(
          lower, upper, false,
          [&](std::string_view k, std::string_view v) {
            read.emplace_back(std::string(k), std::string(v));
            return read.size() < limit;
          },
          nullptr);
      if (expected.size() > limit) expected.resize(limit);
      findings_.expect("backward visit_range", context_, same(where, expected, read));
    }
    const std::string target = random_key(lower, upper);
    Entries want;
    for (auto it = model_.end_at(upper); it != model_.begin_at(lower) && want.size() < 20;) {
      --it;
      if (it->first <= target) want.push_back(*it);
    }
    Entries read;
    auto it = db_.iterator(lower, upper);
    for (it->seek_for_prev(target); it->valid() && read.size() < 20; it->prev()) {
      read.emplace_back(std::string(it->key()), std::string(it->value()));
    }
    findings_.expect("seek_for_prev, then prev", context_,
                     same("from " + show(target) + " in " + where, want, read));
  }

  // seek() to random targets, a few steps forward, then back.
  void seeks(const std::pair<std::string, std::string>& range) {
    const auto& [lower, upper] = range;
    for (int i = 0; i < 3; ++i) {
      const std::string target = random_key(lower.empty() ? table_prefix(tables_.front()) : lower,
                                            upper.empty() ? "\x01" : upper);
      const std::string where =
          "seek(" + show(target) + ") in [" + show(lower) + ", " + show(upper) + ")";
      auto from = model_.begin_at(std::max(target, lower));
      const auto end = model_.end_at(upper);
      auto it = db_.iterator(lower, upper);
      it->seek(target);
      Entries want, read;
      const int steps = 1 + static_cast<int>(rng_() % 10);
      auto m = from;
      for (int s = 0; s < steps && m != end; ++s, ++m) want.push_back(*m);
      for (int s = 0; s < steps && it->valid(); ++s) {
        read.emplace_back(std::string(it->key()), std::string(it->value()));
        if (s + 1 < steps) it->next();
      }
      findings_.expect("seek, then next", context_, same(where, want, read));
      if (want.empty() || !it->valid()) continue;
      // Turn back from the last entry read.
      --m;
      Entries back_want, back_read;
      for (int s = 0; s < 3 && m != model_.begin_at(lower); ++s) {
        --m;
        back_want.push_back(*m);
      }
      for (int s = 0; s < 3; ++s) {
        it->prev();
        if (!it->valid()) break;
        back_read.emplace_back(std::string(it->key()), std::string(it->value()));
      }
      findings_.expect("seek and next, then prev", context_, same(where, back_want, back_read));
    }
  }

 private:
  // Each space of each table, and the catalog's keys.
  std::vector<std::pair<std::string, std::string>> ranges() {
    std::vector<std::pair<std::string, std::string>> out;
    for (std::uint32_t table : tables_) {
      for (std::uint8_t space = kItems; space <= kTtl; ++space) {
        out.emplace_back(space_prefix(table, space), space_prefix(table, space + 1));
      }
      out.emplace_back(space_prefix(table, kIndexes) + be32(kGsi1),
                       space_prefix(table, kIndexes) + be32(kGsi1 + 1));
      out.emplace_back(table_prefix(table), table_prefix(table + 1));
    }
    out.emplace_back("meta/", "meta0");
    out.emplace_back("meta/tokens/", "meta/tokens0");
    return out;
  }

  // A key of [lower, upper): one the model holds, one just past it, or random bytes after
  // the range's prefix.
  std::string random_key(const std::string& lower, const std::string& upper) {
    std::vector<std::string> in;
    for (auto it = model_.begin_at(lower), end = model_.end_at(upper); it != end; ++it) {
      in.push_back(it->first);
    }
    switch (rng_() % 3) {
      case 0:
        if (!in.empty()) return in[rng_() % in.size()];
        [[fallthrough]];
      case 1:
        if (!in.empty()) return in[rng_() % in.size()] + '\0';
        [[fallthrough]];
      default: {
        std::string key = lower;
        const std::size_t n = 1 + rng_() % 12;
        for (std::size_t i = 0; i < n; ++i) key.push_back(static_cast<char>(rng_() % 256));
        return key < upper ? key : lower;
      }
    }
  }

  std::pair<std::string, std::string> sub_range(const std::string& lower,
                                                const std::string& upper) {
    std::string a = random_key(lower, upper), b = random_key(lower, upper);
    if (b < a) std::swap(a, b);
    if (rng_() % 4 == 0) a = lower;
    if (rng_() % 4 == 0) b = upper;
    return {a, b};
  }

  Storage& db_;
  const Model& model_;
  std::vector<std::uint32_t> tables_;
  std::mt19937_64 rng_;
  Findings& findings_;
  std::string context_;
};

class RadosLayoutTest : public testing::Test {
 protected:
  void SetUp() override {
    const char* conf = std::getenv("KUMO_CEPH_CONF");
    if (conf == nullptr || *conf == '\0') {
      GTEST_SKIP() << "KUMO_CEPH_CONF is not set (no Ceph cluster to test against)";
    }
    conf_ = conf;
    const char* pool = std::getenv("KUMO_RADOS_POOL");
    pool_ = pool != nullptr && *pool != '\0' ? pool : "kumo";
    // Namespaces of this test's own: no test sees another's data, nor an earlier run's.
    static std::atomic<int> counter{0};
    std::random_device random;
    prefix_ = "unit-" + std::to_string(::getpid()) + "-" + std::to_string(random() % 100000) + "-" +
              std::to_string(counter++) + "-";
    // KUMO_TEST_SEED makes a run's writes and reads again (not its threads' interleaving).
    const char* seed = std::getenv("KUMO_TEST_SEED");
    seed_ = seed != nullptr ? std::strtoull(seed, nullptr, 10) : random();
    check_seed_ = seed_ + 1;
    RecordProperty("seed", std::to_string(seed_));
    open();
  }

  void TearDown() override {
    if (IsSkipped()) return;
    findings_.report();
    if (HasFailure()) std::cerr << "seed " << seed_ << ", namespaces " << prefix_ << "\n";
    if (!db_) return;
    // Removes the test's keys from the pool.
    try {
      for (std::uint32_t table : {kTableA, kTableB}) {
        db_->erase_range(table_prefix(table), table_prefix(table + 1));
      }
      db_->erase_range("meta/", "meta0");
    } catch (const StorageError&) {
    }
    db_.reset();
  }

  void open() { db_ = open_rados(pool_, conf_, prefix_, kPartitionKeys); }

  // Creates the writer's tables in the catalog.
  void create(Writer& writer) {
    const WriteBatch batch = writer.create_tables();
    db_->write(batch);
    writer.committed(batch);
  }

  // A writer of both tables (`items` item keys) that created them and wrote `batches`
  // batches, checking everything every `every`.
  std::unique_ptr<Writer> writing(int items, int batches, int every) {
    auto writer = std::make_unique<Writer>(tables(), "w", &sequence_, seed_, items);
    create(*writer);
    run(*writer, batches, every);
    return writer;
  }

  // Writes `batches` of the writer's batches, checking everything every `every`.
  void run(Writer& writer, int batches, int every) {
    for (int i = 1; i <= batches; ++i) {
      const WriteBatch batch = writer.next();
      db_->write(batch);
      writer.committed(batch);
      written_++;
      if (i % every == 0 || i == batches) check(writer, i == batches);
    }
  }

  // Every kind of read against the writer's model. With `every_counter` false, the tables'
  // counters and a sample of the item collections' (a read of a counter sums its deltas in
  // every partition of its table).
  void check(const Writer& writer, bool every_counter = true) {
    std::vector<std::string> counters;
    std::mt19937_64 rng(check_seed_);
    for (const std::string& key : writer.counter_keys()) {
      if (every_counter || key.find("size/") == std::string::npos || rng() % 16 == 0) {
        counters.push_back(key);
      }
    }
    Checker(*db_, writer.model, {kTableA, kTableB}, check_seed_++, findings_, where())
        .all(writer.item_keys(), counters);
  }

  std::string where() const {
    return "seed " + std::to_string(seed_) + ", after " + std::to_string(written_) + " batches" +
           (phase_.empty() ? "" : ", " + phase_);
  }

  static std::vector<Writer::Table> tables() {
    return {{kTableA, true, true}, {kTableB, false, false}};
  }

  std::string conf_, pool_, prefix_;
  std::atomic<std::uint64_t> sequence_{1};  // the stream records' sequence numbers
  std::uint64_t seed_ = 0;
  std::uint64_t check_seed_ = 1;
  int written_ = 0;
  std::string phase_;  // what happened before the batches counted in written_
  Findings findings_;
  std::unique_ptr<Storage> db_;
};

}  // namespace kumo::storage::layout_test
