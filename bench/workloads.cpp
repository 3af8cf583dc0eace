#include "workloads.h"

#include <fmt/format.h>

#include <array>
#include <iterator>

namespace kumo::bench {
namespace {

constexpr std::string_view kGetItem = "DynamoDB_20120810.GetItem";
constexpr std::string_view kPutItem = "DynamoDB_20120810.PutItem";
constexpr std::string_view kQuery = "DynamoDB_20120810.Query";
constexpr std::string_view kUpdateItem = "DynamoDB_20120810.UpdateItem";
constexpr std::string_view kBatchWriteItem = "DynamoDB_20120810.BatchWriteItem";
constexpr std::string_view kScan = "DynamoDB_20120810.Scan";
constexpr std::string_view kTransactWriteItems = "DynamoDB_20120810.TransactWriteItems";
constexpr std::string_view kDescribeTable = "DynamoDB_20120810.DescribeTable";
constexpr std::string_view kExecuteStatement = "DynamoDB_20120810.ExecuteStatement";

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

// Keys are fixed-width so that every item, and every request, has the same size whatever
// its number.
void append_key(std::string& out, std::uint64_t index) {
  fmt::format_to(std::back_inserter(out), "item-{:010d}", index);
}

// A printable filler that differs from item to item, so values are not all alike.
std::string_view filler(std::uint64_t index, std::size_t size) {
  static const std::string text = [] {
    std::string s;
    constexpr std::string_view alphabet =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    std::uint64_t state = 42;
    for (int i = 0; i < 8192; ++i) s.push_back(alphabet[splitmix64(state) % alphabet.size()]);
    return s;
  }();
  size = std::min(size, text.size() / 2);
  return std::string_view(text).substr((index * 97) % (text.size() - size), size);
}

// The PutItem body for item `index` with score `score`. Attribute names plus values add
// up to about config.item_bytes, DynamoDB's measure of an item's size: pk (2 + 15),
// name (4 + 15), score (5 + up to 11), active (6 + 1), payload (7 + the rest).
void make_put(const WorkloadConfig& config, std::uint64_t index, std::uint64_t score,
              Operation& op) {
  constexpr std::size_t kFixed = 2 + 15 + 4 + 15 + 5 + 11 + 6 + 1 + 7;
  const std::size_t payload = config.item_bytes > kFixed + 8 ? config.item_bytes - kFixed : 8;
  op.target = kPutItem;
  op.expect = Expect::kEmptyObject;
  op.body.clear();
  op.body.append(R"({"TableName":")").append(config.table);
  op.body.append(R"(","Item":{"pk":{"S":")");
  append_key(op.body, index);
  op.body.append(R"("},"name":{"S":"user )");
  fmt::format_to(std::back_inserter(op.body), "{:010d}", index);
  fmt::format_to(std::back_inserter(op.body), R"("}},"score":{{"N":"{}"}},"active":{{"BOOL":{}}})",
                 score, index % 2 == 0 ? "true" : "false");
  op.body.append(R"(,"payload":{"S":")").append(filler(index, payload)).append(R"("}}})");
}

void make_get(const WorkloadConfig& config, std::uint64_t index, Operation& op) {
  op.target = kGetItem;
  op.expect = Expect::kItem;
  op.key.clear();
  op.fragment.clear();
  append_key(op.key, index);
  op.body.clear();
  op.body.append(R"({"TableName":")").append(config.table);
  op.body.append(R"(","Key":{"pk":{"S":")").append(op.key).append(R"("}}})");
}

// UpdateItem of item `index`: adds 1 to its score, on condition that the item exists
// (a read-modify-write under the item's lock, with a condition to evaluate).
void make_update(const WorkloadConfig& config, std::uint64_t index, Operation& op) {
  op.target = kUpdateItem;
  op.expect = Expect::kEmptyObject;
  op.body.clear();
  op.body.append(R"({"TableName":")").append(config.table);
  op.body.append(R"(","Key":{"pk":{"S":")");
  append_key(op.body, index);
  op.body.append(R"x("}},"UpdateExpression":"SET score = score + :one",)x"
                 R"x("ConditionExpression":"attribute_exists(pk)",)x"
                 R"x("ExpressionAttributeValues":{":one":{"N":"1"}}})x");
}

// The PartiQL equivalents of make_get and make_update: a SELECT of the whole item by its
// key, and an UPDATE adding 1 to its score (an UPDATE applies only to an existing item).
void make_select(const WorkloadConfig& config, std::uint64_t index, Operation& op) {
  op.target = kExecuteStatement;
  op.expect = Expect::kRow;
  op.key.clear();
  op.fragment.clear();
  append_key(op.key, index);
  op.body.clear();
  op.body.append(R"({"Statement":"SELECT * FROM \")").append(config.table);
  op.body.append(R"(\" WHERE pk = ?","Parameters":[{"S":")").append(op.key).append(R"("}]})");
}

void make_statement_update(const WorkloadConfig& config, std::uint64_t index, Operation& op) {
  op.target = kExecuteStatement;
  op.expect = Expect::kNoRows;
  op.body.clear();
  op.body.append(R"({"Statement":"UPDATE \")").append(config.table);
  op.body.append(R"(\" SET score = score + ? WHERE pk = ?","Parameters":[{"N":"1"},{"S":")");
  append_key(op.body, index);
  op.body.append(R"("}]})");
}

std::string create_items_table(const WorkloadConfig& config) {
  return fmt::format(
      R"({{"TableName":"{}","AttributeDefinitions":[{{"AttributeName":"pk","AttributeType":"S"}}],)"
      R"("KeySchema":[{{"AttributeName":"pk","KeyType":"HASH"}}],"BillingMode":"PAY_PER_REQUEST"}})",
      config.table);
}

void load_item(const WorkloadConfig& config, std::uint64_t index, Operation& op) {
  make_put(config, index, index % 1000, op);
}

// `items`: a table keyed by pk (S) holding items 0..items-1 of about item_bytes each.
constexpr Dataset kItems{"items", "", create_items_table, load_item};

// `partition`: one partition of `items` items (pk "p", sk 0..items-1), with a GSI whose key
// has two HASH and two RANGE attributes (tenant, region | day, seq): every item is in its
// partition ("t", "eu"), day = sk / 100 and seq = sk % 100, so a day holds 100 items.
std::string create_partition_table(const WorkloadConfig& config) {
  return fmt::format(
      R"({{"TableName":"{}","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[)"
      R"({{"AttributeName":"pk","AttributeType":"S"}},{{"AttributeName":"sk","AttributeType":"N"}},)"
      R"({{"AttributeName":"tenant","AttributeType":"S"}},{{"AttributeName":"region","AttributeType":"S"}},)"
      R"({{"AttributeName":"day","AttributeType":"N"}},{{"AttributeName":"seq","AttributeType":"N"}}],)"
      R"("KeySchema":[{{"AttributeName":"pk","KeyType":"HASH"}},{{"AttributeName":"sk","KeyType":"RANGE"}}],)"
      R"("GlobalSecondaryIndexes":[{{"IndexName":"by_tenant","KeySchema":[)"
      R"({{"AttributeName":"tenant","KeyType":"HASH"}},{{"AttributeName":"region","KeyType":"HASH"}},)"
      R"({{"AttributeName":"day","KeyType":"RANGE"}},{{"AttributeName":"seq","KeyType":"RANGE"}}],)"
      R"("Projection":{{"ProjectionType":"ALL"}}}}]}})",
      config.table);
}

void load_partition_item(const WorkloadConfig& config, std::uint64_t index, Operation& op) {
  constexpr std::size_t kFixed = 2 + 1 + 2 + 5 + 6 + 1 + 6 + 2 + 4 + 2 + 3 + 2 + 7;
  const std::size_t payload = config.item_bytes > kFixed + 8 ? config.item_bytes - kFixed : 8;
  op.target = kPutItem;
  op.expect = Expect::kEmptyObject;
  op.body.clear();
  fmt::format_to(std::back_inserter(op.body),
                 R"({{"TableName":"{}","Item":{{"pk":{{"S":"p"}},"sk":{{"N":"{}"}},)"
                 R"("tenant":{{"S":"t"}},"region":{{"S":"eu"}},"day":{{"N":"{}"}},)"
                 R"("seq":{{"N":"{}"}},"payload":{{"S":"{}"}}}}}})",
                 config.table, index, index / 100, index % 100, filler(index, payload));
}

constexpr Dataset kPartition{"partition", "_partition", create_partition_table,
                             load_partition_item};

// `groups`: items 0..items-1 in partitions of ten (pk "g<index / 10>", sk index % 10), so
// a table of many items is also a table of many partitions, as most tables are.
std::string create_groups_table(const WorkloadConfig& config) {
  return fmt::format(
      R"({{"TableName":"{}","BillingMode":"PAY_PER_REQUEST","AttributeDefinitions":[)"
      R"({{"AttributeName":"pk","AttributeType":"S"}},{{"AttributeName":"sk","AttributeType":"N"}}],)"
      R"("KeySchema":[{{"AttributeName":"pk","KeyType":"HASH"}},{{"AttributeName":"sk","KeyType":"RANGE"}}]}})",
      config.table);
}

void append_group(std::string& out, std::uint64_t group) {
  fmt::format_to(std::back_inserter(out), "g{:09d}", group);
}

// The PutItem body for item `index` of `groups` with score `score`: pk (2 + 10), sk (2 + 1),
// score (5 + up to 6) and a payload (7 + the rest) add up to about config.item_bytes.
void make_group_put(const WorkloadConfig& config, std::uint64_t index, std::uint64_t score,
                    Operation& op) {
  constexpr std::size_t kFixed = 2 + 10 + 2 + 1 + 5 + 6 + 7;
  const std::size_t payload = config.item_bytes > kFixed + 8 ? config.item_bytes - kFixed : 8;
  op.target = kPutItem;
  op.expect = Expect::kEmptyObject;
  op.body.clear();
  op.body.append(R"({"TableName":")").append(config.table).append(R"(","Item":{"pk":{"S":")");
  append_group(op.body, index / 10);
  fmt::format_to(std::back_inserter(op.body),
                 R"("}},"sk":{{"N":"{}"}},"score":{{"N":"{}"}},"payload":{{"S":"{}"}}}}}})",
                 index % 10, score, filler(index, payload));
}

// The key of item `index` of `groups`: {"pk":{"S":"g…"},"sk":{"N":"…"}}.
void append_group_key(std::string& out, std::uint64_t index) {
  out.append(R"({"pk":{"S":")");
  append_group(out, index / 10);
  fmt::format_to(std::back_inserter(out), R"("}},"sk":{{"N":"{}"}}}})", index % 10);
}

void load_group_item(const WorkloadConfig& config, std::uint64_t index, Operation& op) {
  make_group_put(config, index, index % 100000, op);
}

constexpr Dataset kGroups{"groups", "_groups", create_groups_table, load_group_item};

// GetItem of a random preloaded key; the answer must be that item.
void getitem(const WorkloadConfig& config, Rng& rng, Operation& op) {
  make_get(config, rng.below(config.items), op);
}

// PutItem overwriting a random preloaded key with a new score; the answer must be "{}".
void putitem(const WorkloadConfig& config, Rng& rng, Operation& op) {
  make_put(config, rng.below(config.items), rng.below(1000000), op);
}

// Conditional UpdateItem of a random preloaded key; the answer must be "{}".
void updateitem(const WorkloadConfig& config, Rng& rng, Operation& op) {
  make_update(config, rng.below(config.items), op);
}

// PartiQL SELECT * ... WHERE pk = ? of a random preloaded key; the answer is that item.
void partiql_get(const WorkloadConfig& config, Rng& rng, Operation& op) {
  make_select(config, rng.below(config.items), op);
}

// PartiQL UPDATE ... SET score = score + ? WHERE pk = ? of a random preloaded key.
void partiql_update(const WorkloadConfig& config, Rng& rng, Operation& op) {
  make_statement_update(config, rng.below(config.items), op);
}

// Half GetItem, half conditional UpdateItem, over the same random keys.
void mixed(const WorkloadConfig& config, Rng& rng, Operation& op) {
  const std::uint64_t draw = rng.next();
  const std::uint64_t index = (draw >> 1) % config.items;
  if (draw & 1) {
    make_get(config, index, op);
  } else {
    make_update(config, index, op);
  }
}

// BatchWriteItem of 25 PutRequests (~200-byte items) over 25 consecutive keys from a
// random start, so no key repeats within a batch; every write must be processed.
void batch_write(const WorkloadConfig& config, Rng& rng, Operation& op) {
  constexpr std::uint64_t kBatch = 25;
  const std::uint64_t first = config.items > kBatch ? rng.below(config.items - kBatch + 1) : 0;
  Operation put;
  std::string items;
  for (std::uint64_t i = 0; i < kBatch; ++i) {
    make_put(config, (first + i) % std::max<std::uint64_t>(config.items, kBatch),
             rng.below(1000000), put);
    // make_put's body is {"TableName":"…","Item":{…}}: keep the {"Item":…} part only.
    const auto item = put.body.find(R"("Item":)");
    if (i) items.push_back(',');
    items.append(R"({"PutRequest":{)").append(put.body.substr(item)).append("}");
  }
  op.target = kBatchWriteItem;
  op.expect = Expect::kAllProcessed;
  op.body.clear();
  fmt::format_to(std::back_inserter(op.body), R"({{"RequestItems":{{"{}":[{}]}}}})", config.table,
                 items);
}

// A random run of 10 consecutive sort keys of the one partition (needs items >= 10).
std::uint64_t first_of_ten(const WorkloadConfig& config, Rng& rng) {
  return config.items > 10 ? rng.below(config.items - 9) : 0;
}

// Query of 10 items from the partition: pk = "p" AND sk BETWEEN a AND a+9.
void query10(const WorkloadConfig& config, Rng& rng, Operation& op) {
  const std::uint64_t first = first_of_ten(config, rng);
  op.target = kQuery;
  op.expect = Expect::kCount10;
  op.body.clear();
  fmt::format_to(
      std::back_inserter(op.body),
      R"({{"TableName":"{}","KeyConditionExpression":"pk = :p AND sk BETWEEN :a AND :b",)"
      R"("ExpressionAttributeValues":{{":p":{{"S":"p"}},":a":{{"N":"{}"}},":b":{{"N":"{}"}}}}}})",
      config.table, first, first + 9);
}

// Query of the 10 items of a random partition of `groups`.
void group_query(const WorkloadConfig& config, Rng& rng, Operation& op) {
  op.target = kQuery;
  op.expect = Expect::kCount10;
  op.body.clear();
  op.body.append(R"({"TableName":")").append(config.table);
  op.body.append(
      R"(","KeyConditionExpression":"pk = :p","ExpressionAttributeValues":{":p":{"S":")");
  append_group(op.body, rng.below(std::max<std::uint64_t>(1, config.items / 10)));
  op.body.append(R"("}}})");
}

// Scan of 10 items (Limit 10) starting after a random preloaded key: a seek to a random
// place in the table and a walk of ten items. The last keys in token order have fewer
// than ten after them, so any page is right.
void scan10(const WorkloadConfig& config, Rng& rng, Operation& op) {
  op.target = kScan;
  op.expect = Expect::kPage;
  op.body.clear();
  op.body.append(R"({"TableName":")").append(config.table);
  op.body.append(R"(","Limit":10,"ExclusiveStartKey":{"pk":{"S":")");
  append_key(op.body, rng.below(config.items));
  op.body.append(R"("}}})");
}

// GetItem of a random item of `groups`; the answer must be that item (its pk and sk).
void group_get(const WorkloadConfig& config, Rng& rng, Operation& op) {
  const std::uint64_t index = rng.below(config.items);
  op.target = kGetItem;
  op.expect = Expect::kItem;
  op.key.clear();
  append_group(op.key, index / 10);
  op.fragment.clear();
  fmt::format_to(std::back_inserter(op.fragment), R"("sk":{{"N":"{}"}})", index % 10);
  op.body.clear();
  op.body.append(R"({"TableName":")").append(config.table).append(R"(","Key":)");
  append_group_key(op.body, index);
  op.body.push_back('}');
}

// PutItem overwriting a random item of `groups` with a new score; the answer must be "{}".
void group_put(const WorkloadConfig& config, Rng& rng, Operation& op) {
  make_group_put(config, rng.below(config.items), rng.below(100000), op);
}

// Scan of 10 items (Limit 10) after a random item of `groups`. The table's last items in
// scan order have fewer than ten after them, so any page is right.
void group_scan(const WorkloadConfig& config, Rng& rng, Operation& op) {
  op.target = kScan;
  op.expect = Expect::kPage;
  op.body.clear();
  op.body.append(R"({"TableName":")").append(config.table);
  op.body.append(R"(","Limit":10,"ExclusiveStartKey":)");
  append_group_key(op.body, rng.below(config.items));
  op.body.push_back('}');
}

// TransactWriteItems of one Put over a random item of `groups`, with a ClientRequestToken
// no other request carries (the run's nonce and a random number: at most 36 characters),
// so that the server keeps one more token live for ten minutes after each. The answer
// must be "{}".
void transact_put(const WorkloadConfig& config, Rng& rng, Operation& op) {
  Operation put;
  make_group_put(config, rng.below(config.items), rng.below(100000), put);
  op.target = kTransactWriteItems;
  op.expect = Expect::kEmptyObject;
  op.body.clear();
  // The PutItem body {"TableName":…,"Item":{…}} is also the Put of a transaction.
  op.body.append(R"({"TransactItems":[{"Put":)").append(put.body);
  fmt::format_to(std::back_inserter(op.body), R"(}}],"ClientRequestToken":"{:012x}-{:016x}"}})",
                 config.run_nonce & 0xffffffffffffULL, rng.next());
}

// DescribeTable of the `groups` table, whose answer counts its items and bytes.
void describe_table(const WorkloadConfig& config, Rng&, Operation& op) {
  op.target = kDescribeTable;
  op.expect = Expect::kActiveTable;
  op.body = describe_table_body(config);
}

// Query of 10 entries of the 2+2 GSI: both HASH attributes, equality on day, a seq range.
void gsi_query10(const WorkloadConfig& config, Rng& rng, Operation& op) {
  const std::uint64_t day = rng.below(std::max<std::uint64_t>(1, config.items / 100));
  const std::uint64_t seq = rng.below(91);
  op.target = kQuery;
  op.expect = Expect::kCount10;
  op.body.clear();
  fmt::format_to(std::back_inserter(op.body),
                 R"({{"TableName":"{}","IndexName":"by_tenant","KeyConditionExpression":)"
                 R"("tenant = :t AND #r = :r AND #d = :d AND seq BETWEEN :a AND :b",)"
                 R"("ExpressionAttributeNames":{{"#r":"region","#d":"day"}},)"
                 R"("ExpressionAttributeValues":{{":t":{{"S":"t"}},":r":{{"S":"eu"}},)"
                 R"(":d":{{"N":"{}"}},":a":{{"N":"{}"}},":b":{{"N":"{}"}}}}}})",
                 config.table, day, seq, seq + 9);
}

// GET / : the HTTP path alone, with no signature, JSON or storage; against a server that
// answers a fixed body it measures the loopback ceiling.
void health(const WorkloadConfig&, Rng&, Operation& op) {
  op.target = {};
  op.body.clear();
  op.expect = Expect::kAnyBody;
}

constexpr std::array kWorkloads{
    Workload{"getitem", "GetItem of a random preloaded key", &kItems, getitem},
    Workload{"putitem", "PutItem (~200-byte item) overwriting a random key", &kItems, putitem},
    Workload{"updateitem", "UpdateItem (SET score = score + 1) with a condition", &kItems,
             updateitem},
    Workload{"partiql-get", "ExecuteStatement SELECT * ... WHERE pk = ? of a random key", &kItems,
             partiql_get},
    Workload{"partiql-update", "ExecuteStatement UPDATE ... SET score = score + ? by key", &kItems,
             partiql_update},
    Workload{"mixed", "50% GetItem, 50% conditional UpdateItem on random keys", &kItems, mixed},
    Workload{"batch-write", "BatchWriteItem of 25 PutRequests (~200-byte items)", &kItems,
             batch_write},
    Workload{"query", "Query of 10 items from a partition of --items", &kPartition, query10},
    Workload{"gsi-query", "Query of 10 entries of a 2+2 multi-attribute GSI", &kPartition,
             gsi_query10},
    Workload{"group-query", "Query of one partition of 10 items, among --items / 10", &kGroups,
             group_query},
    Workload{"scan", "Scan of 10 items after a random preloaded key", &kItems, scan10},
    Workload{"group-get", "GetItem of a random item of --items, in partitions of ten", &kGroups,
             group_get},
    Workload{"group-put", "PutItem overwriting a random item, in partitions of ten", &kGroups,
             group_put},
    Workload{"group-scan", "Scan of 10 items after a random item, in partitions of ten", &kGroups,
             group_scan},
    Workload{"transact-put", "TransactWriteItems of one Put, each with a new ClientRequestToken",
             &kGroups, transact_put},
    Workload{"describe-table", "DescribeTable of the table of partitions of ten", &kGroups,
             describe_table},
    Workload{"health", "GET / (health check): HTTP only", nullptr, health},
};

}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& word : s_) word = splitmix64(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::below(std::uint64_t bound) {
  // Lemire's multiply-shift; the bias for bounds far below 2^64 is negligible here.
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
}

std::span<const Workload> workloads() {
  return kWorkloads;
}

const Workload* find_workload(std::string_view name) {
  for (const auto& workload : kWorkloads) {
    if (workload.name == name) return &workload;
  }
  return nullptr;
}

std::string describe_table_body(const WorkloadConfig& config) {
  return fmt::format(R"({{"TableName":"{}"}})", config.table);
}

void make_load_batch(const Dataset& dataset, const WorkloadConfig& config, std::uint64_t first,
                     std::uint64_t count, Operation& op) {
  Operation put;
  std::string items;
  for (std::uint64_t i = 0; i < count; ++i) {
    dataset.load(config, first + i, put);
    // A preload request is a PutItem body {"TableName":"…","Item":{…}}: keep {"Item":…}.
    const auto item = put.body.find(R"("Item":)");
    if (i) items.push_back(',');
    items.append(R"({"PutRequest":{)").append(put.body.substr(item)).append("}");
  }
  op.target = kBatchWriteItem;
  op.expect = Expect::kAllProcessed;
  op.body.clear();
  fmt::format_to(std::back_inserter(op.body), R"({{"RequestItems":{{"{}":[{}]}}}})", config.table,
                 items);
}

std::string list_tables_body() {
  return "{}";
}

namespace {

// The key appears quoted as the pk value; finding it rules out another item.
bool holds_key(std::string_view key, std::string_view body) {
  if (body.size() < key.size() + 2) return false;
  for (auto at = body.find(key); at != std::string_view::npos; at = body.find(key, at + 1)) {
    if (at > 0 && body[at - 1] == '"' && at + key.size() < body.size() &&
        body[at + key.size()] == '"') {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view check_body(const Operation& op, std::string_view body) {
  switch (op.expect) {
    case Expect::kAnyBody:
      return {};
    case Expect::kEmptyObject: {
      const auto first = body.find_first_not_of(" \t\r\n");
      const auto last = body.find_last_not_of(" \t\r\n");
      if (first == std::string_view::npos || body.substr(first, last - first + 1) != "{}") {
        return "body is not {}";
      }
      return {};
    }
    case Expect::kItem:
      if (body.find("\"Item\"") == std::string_view::npos) return "no Item in body";
      if (!op.fragment.empty() && body.find(op.fragment) == std::string_view::npos) {
        return "wrong item";
      }
      return holds_key(op.key, body) ? "" : "wrong item";
    case Expect::kRow:
      if (!body.starts_with(R"({"Items":[{)")) return "no row in body";
      return holds_key(op.key, body) ? "" : "wrong item";
    case Expect::kNoRows:
      return body == R"({"Items":[]})" ? "" : "body is not {\"Items\":[]}";
    case Expect::kAllProcessed:
      return body.find(R"("UnprocessedItems":{})") == std::string_view::npos ? "unprocessed items"
                                                                             : "";
    case Expect::kCount10:
      return body.find("\"Count\":10,") == std::string_view::npos ? "not 10 items" : "";
    case Expect::kPage:
      return body.find("\"Items\":[") == std::string_view::npos ? "no Items in body" : "";
    case Expect::kActiveTable:
      return body.find(R"("TableStatus":"ACTIVE")") == std::string_view::npos ? "table not ACTIVE"
                                                                              : "";
  }
  return "unknown expectation";
}

}  // namespace kumo::bench
