// Backup ARNs as requests send them, the table a restore makes from a backup's record with
// RestoreTableFromBackup's overrides, and the answers of the backup operations for what the
// end-to-end tests cannot make (SYSTEM backups).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "api/allow_all.h"
#include "api/backup_arns.h"
#include "api/restore_overrides.h"
#include "api/service.h"
#include "model/api_error.h"
#include "storage/storage.h"

namespace kumo::api {
namespace {

constexpr std::string_view kAccount = "000000000000";

// The error `f` throws: its type's name and message.
template <typename F>
std::pair<std::string, std::string> backup_error(F f) {
  try {
    f();
  } catch (const ApiError& e) {
    return {e.type().substr(e.type().find('#') + 1), e.message().value_or("")};
  }
  return {"none", ""};
}

TEST(BackupArns, AreReadBackIntoTheirParts) {
  const std::string arn =
      make_backup_arn("us-east-1", kAccount, "Music", "01489602797149-73d8d5bc");
  EXPECT_EQ(arn,
            "arn:aws:dynamodb:us-east-1:000000000000:table/Music/backup/01489602797149-73d8d5bc");
  const BackupArn parsed = parse_backup_arn(arn, kAccount, "us-east-1");
  EXPECT_EQ(parsed.region, "us-east-1");
  EXPECT_EQ(parsed.table, "Music");
  EXPECT_EQ(parsed.id, "01489602797149-73d8d5bc");
  // Another known region is read (the caller decides).
  EXPECT_EQ(parse_backup_arn("arn:aws:dynamodb:eu-west-3:000000000000:table/T/backup/x", kAccount,
                             "us-east-1")
                .region,
            "eu-west-3");
  // So is the endpoint's own region, whatever its name.
  EXPECT_EQ(
      parse_backup_arn("arn:aws:dynamodb:local:000000000000:table/T/backup/x", kAccount, "local")
          .region,
      "local");
}

TEST(BackupArns, RefusalsSayWhatIsWrong) {
  const auto invalid =
      std::pair<std::string, std::string>{"ValidationException", "Invalid Backup ARN"};
  const auto not_valid =
      std::pair<std::string, std::string>{"ValidationException", "BackupArn is not valid"};
  auto parse = [](std::string_view arn) {
    return backup_error([&] { parse_backup_arn(arn, kAccount, "us-east-1"); });
  };
  EXPECT_EQ(parse("not-an-arn-at-all-but-long-enough-to-pass"), invalid);
  EXPECT_EQ(parse("arn:aws:dynamodb:us-east-1:000000000000:table/Music"), invalid);
  EXPECT_EQ(parse("arn:aws:dynamodb:us-east-1:000000000000:table/Music/stream/2017"), invalid);
  EXPECT_EQ(parse("arn:aws:dynamodb:us-east-1:000000000000:table/Music/backup/"), invalid);
  EXPECT_EQ(parse("arn:aws:dynamodb:us-east-1:000000000000:table//backup/01489602797149-x"),
            invalid);
  EXPECT_EQ(parse("arn:aws:dynamodb:moon-1:000000000000:table/Music/backup/01489602797149-x"),
            not_valid);
  EXPECT_EQ(parse("arn:aws:s3:us-east-1:000000000000:table/Music/backup/01489602797149-x"),
            not_valid);
  EXPECT_EQ(parse("arn:aws-xx:dynamodb:us-east-1:000000000000:table/M/backup/01489602797149-x"),
            not_valid);
  EXPECT_EQ(parse("arn:aws:dynamodb:us-east-1:111122223333:table/Music/backup/01489602797149-x"),
            (std::pair<std::string, std::string>{"AccessDeniedException", "Access is denied"}));
}

TEST(BackupArns, RegionNames) {
  for (const char* name : {"us-east-1", "eu-central-2", "ap-southeast-7", "us-gov-west-1"}) {
    EXPECT_TRUE(is_region_name(name)) << name;
  }
  for (const char* name : {"", "moon", "us-east", "useast-1", "us-East-1", "u-east-1", "us--1"}) {
    EXPECT_FALSE(is_region_name(name)) << name;
  }
}

IndexDefinition recorded_index(const std::string& name, bool global,
                               std::vector<KeySchemaElement> keys, Projection projection) {
  IndexDefinition index;
  index.name = name;
  index.global = global;
  index.key_schema = keys;
  for (const auto& k : keys) {
    (k.type == KeyType::HASH ? index.hash : index.range).push_back({k.name, ScalarType::S});
  }
  index.projection = std::move(projection);
  return index;
}

// A provisioned table (5/5) with an LSI and two GSIs (the first at 3/4), SSE, a stream, TTL,
// tags, a table class and deletion protection.
TableDefinition recorded_source() {
  TableDefinition t;
  t.name = "src";
  t.attribute_definitions = {{"pk", ScalarType::S},
                             {"sk", ScalarType::S},
                             {"l", ScalarType::S},
                             {"g", ScalarType::S},
                             {"h", ScalarType::S}};
  t.key = {{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::S}};
  t.billing_mode = BillingMode::PROVISIONED;
  t.throughput.read_capacity_units = 5;
  t.throughput.write_capacity_units = 5;
  t.throughput.number_of_decreases_today = 2;
  t.local_indexes.push_back(recorded_index("lsi1", false,
                                           {{"pk", KeyType::HASH}, {"l", KeyType::RANGE}},
                                           {ProjectionType::KEYS_ONLY, {}}));
  IndexDefinition g1 =
      recorded_index("gsi1", true, {{"g", KeyType::HASH}}, {ProjectionType::INCLUDE, {"a", "b"}});
  g1.throughput.read_capacity_units = 3;
  g1.throughput.write_capacity_units = 4;
  t.global_indexes.push_back(g1);
  IndexDefinition g2 = recorded_index("gsi2", true, {{"h", KeyType::HASH}, {"sk", KeyType::RANGE}},
                                      {ProjectionType::ALL, {}});
  g2.throughput.read_capacity_units = 1;
  g2.throughput.write_capacity_units = 1;
  t.global_indexes.push_back(g2);
  t.sse_enabled = true;
  t.stream = StreamSpecification{true, "NEW_IMAGE"};
  t.latest_stream_label = "2017";
  t.ttl_enabled = true;
  t.ttl_attribute = "exp";
  t.tags = {{"k", "v"}};
  t.table_class = "STANDARD_INFREQUENT_ACCESS";
  t.table_class_given = true;
  t.deletion_protection = true;
  return t;
}

// An index override as a request would write it (views into `storage`).
IndexRequest index_override(const std::string& name,
                            std::vector<std::pair<std::string, std::string>> keys,
                            const std::string& projection,
                            std::optional<std::vector<std::string>> non_key = std::nullopt) {
  static std::vector<std::string> storage;
  storage.reserve(1000);
  auto keep = [&](const std::string& s) -> std::string_view {
    storage.push_back(s);
    return storage.back();
  };
  IndexRequest r;
  r.name = keep(name);
  for (const auto& [k, type] : keys) r.keys.emplace_back(keep(k), keep(type));
  r.projection_type = keep(projection);
  r.non_key_attributes = std::move(non_key);
  return r;
}

TEST(RestoreOverrides, WithoutOverridesTheRecordedTableComesBackButNotWhatARestoreDrops) {
  const TableDefinition t = restored_table(recorded_source(), "dst", {}, ServiceOptions{});
  EXPECT_EQ(t.name, "dst");
  EXPECT_EQ(t.billing_mode, BillingMode::PROVISIONED);
  EXPECT_EQ(t.throughput.read_capacity_units, 5);
  EXPECT_EQ(t.throughput.number_of_decreases_today, 0);
  ASSERT_EQ(t.local_indexes.size(), 1u);
  ASSERT_EQ(t.global_indexes.size(), 2u);
  EXPECT_EQ(t.global_indexes[0].name, "gsi1");
  EXPECT_EQ(t.global_indexes[0].throughput.read_capacity_units, 3);
  EXPECT_EQ(t.global_indexes[0].throughput.write_capacity_units, 4);
  EXPECT_EQ(t.local_indexes[0].id, 1u);
  EXPECT_EQ(t.global_indexes[1].id, 3u);
  EXPECT_EQ(t.next_index_id, 4u);
  EXPECT_TRUE(t.sse_enabled);
  EXPECT_EQ(t.attribute_definitions.size(), 5u);
  // Not restored.
  EXPECT_FALSE(t.stream);
  EXPECT_TRUE(t.latest_stream_label.empty());
  EXPECT_FALSE(t.ttl_enabled);
  EXPECT_TRUE(t.ttl_attribute.empty());
  EXPECT_TRUE(t.tags.empty());
  EXPECT_EQ(t.table_class, "STANDARD");
  EXPECT_FALSE(t.table_class_given);
  EXPECT_FALSE(t.deletion_protection);
}

TEST(RestoreOverrides, BillingAndThroughput) {
  const TableDefinition source = recorded_source();
  const ServiceOptions options;
  RestoreOverrides o;
  o.billing_mode = BillingMode::PAY_PER_REQUEST;
  TableDefinition t = restored_table(source, "dst", o, options);
  EXPECT_EQ(t.billing_mode, BillingMode::PAY_PER_REQUEST);
  EXPECT_EQ(t.throughput.read_capacity_units, 0);
  EXPECT_EQ(t.global_indexes[0].throughput.read_capacity_units, 0);  // GSIs turn 0/0

  o.throughput = ThroughputRequest{7, 8};
  EXPECT_EQ(backup_error([&] { restored_table(source, "dst", o, options); }).second,
            "Cannot override ProvisionedThroughput unless BillingMode is PROVISIONED");
  o = RestoreOverrides{};
  o.billing_mode = BillingMode::PROVISIONED;
  EXPECT_EQ(backup_error([&] { restored_table(source, "dst", o, options); }).second,
            "Must override ProvisionedThroughput if BillingMode is overridden to PROVISIONED");
  o.throughput = ThroughputRequest{7, 8};
  t = restored_table(source, "dst", o, options);
  EXPECT_EQ(t.throughput.read_capacity_units, 7);
  EXPECT_EQ(t.throughput.write_capacity_units, 8);
  // The override is the base table's only.
  EXPECT_EQ(t.global_indexes[0].throughput.read_capacity_units, 3);

  // An on-demand source: a throughput override needs the billing mode overridden.
  TableDefinition on_demand = source;
  on_demand.billing_mode = BillingMode::PAY_PER_REQUEST;
  for (auto& index : on_demand.global_indexes) index.throughput = {};
  o = RestoreOverrides{};
  o.throughput = ThroughputRequest{7, 8};
  EXPECT_EQ(backup_error([&] { restored_table(on_demand, "dst", o, options); }).second,
            "Cannot override ProvisionedThroughput unless BillingMode is PROVISIONED");
  o.billing_mode = BillingMode::PROVISIONED;
  t = restored_table(on_demand, "dst", o, options);
  EXPECT_EQ(t.global_indexes[0].throughput.read_capacity_units, 7);
}

TEST(RestoreOverrides, OnDemandThroughput) {
  TableDefinition source = recorded_source();
  source.billing_mode = BillingMode::PAY_PER_REQUEST;
  source.capacity.max_read = 100;
  const ServiceOptions options;
  TableDefinition t = restored_table(source, "dst", {}, options);
  EXPECT_EQ(t.capacity.max_read, 100);  // as recorded
  RestoreOverrides o;
  o.on_demand = UnitsRequest{0, 0};
  EXPECT_EQ(backup_error([&] { restored_table(source, "dst", o, options); }),
            (std::pair<std::string, std::string>{
                "ValidationException",
                "Requested MaxReadRequestUnits for OnDemandThroughput is outside of valid range"}));
  o.on_demand = UnitsRequest{std::nullopt, 0};
  EXPECT_EQ(backup_error([&] { restored_table(source, "dst", o, options); }).second,
            "Requested MaxWriteRequestUnits for OnDemandThroughput is outside of valid range");
  // {} is taken as absent.
  o.on_demand = UnitsRequest{};
  EXPECT_EQ(restored_table(source, "dst", o, options).capacity.max_read, 100);
  o.on_demand = UnitsRequest{std::nullopt, 50};
  t = restored_table(source, "dst", o, options);
  EXPECT_EQ(t.capacity.max_read, 100);
  EXPECT_EQ(t.capacity.max_write, 50);
}

TEST(RestoreOverrides, IndexOverridesKeepRenameOrDropRecordedIndexes) {
  const TableDefinition source = recorded_source();
  const ServiceOptions options;
  RestoreOverrides o;
  o.global = std::vector<IndexRequest>{};
  o.local = std::vector<IndexRequest>{};
  TableDefinition t = restored_table(source, "dst", o, options);
  EXPECT_TRUE(t.global_indexes.empty());
  EXPECT_TRUE(t.local_indexes.empty());
  // The attributes only the dropped indexes used go with them.
  EXPECT_EQ(t.attribute_definitions.size(), 2u);

  // Matched by key schema and projection (non-key attributes in any order), renamed.
  IndexRequest renamed =
      index_override("renamed", {{"g", "HASH"}}, "INCLUDE", std::vector<std::string>{"b", "a"});
  renamed.has_throughput = true;
  renamed.read = 9;
  renamed.write = 10;
  o.global = std::vector<IndexRequest>{renamed};
  o.local.reset();
  t = restored_table(source, "dst", o, options);
  ASSERT_EQ(t.global_indexes.size(), 1u);
  EXPECT_EQ(t.global_indexes[0].name, "renamed");
  EXPECT_EQ(t.global_indexes[0].throughput.read_capacity_units, 9);
  EXPECT_EQ(t.local_indexes.size(), 1u);
  EXPECT_EQ(t.attribute_definitions.size(), 4u);  // h went with gsi2

  const std::string no_match =
      "Index new does not match a secondary index that existed in the source table and cannot "
      "be created during the restore operation";
  for (const IndexRequest& wrong :
       {index_override("new", {{"g", "HASH"}}, "ALL"),
        index_override("new", {{"g", "HASH"}}, "INCLUDE", std::vector<std::string>{"a"}),
        index_override("new", {{"g", "RANGE"}}, "INCLUDE", std::vector<std::string>{"a", "b"}),
        index_override("new", {{"x", "HASH"}}, "KEYS_ONLY")}) {
    o.global = std::vector<IndexRequest>{wrong};
    EXPECT_EQ(backup_error([&] { restored_table(source, "dst", o, options); }),
              (std::pair<std::string, std::string>{"ValidationException", no_match}));
  }
  // An LSI override must match an LSI.
  o.global.reset();
  o.local = std::vector<IndexRequest>{
      index_override("new", {{"g", "HASH"}}, "INCLUDE", std::vector<std::string>{"a", "b"})};
  EXPECT_EQ(backup_error([&] { restored_table(source, "dst", o, options); }).second, no_match);
  o.local = std::vector<IndexRequest>{
      index_override("lsi_b", {{"pk", "HASH"}, {"l", "RANGE"}}, "KEYS_ONLY")};
  EXPECT_EQ(restored_table(source, "dst", o, options).local_indexes[0].name, "lsi_b");
  // A GSI override with throughput on an on-demand restore.
  o = RestoreOverrides{};
  o.billing_mode = BillingMode::PAY_PER_REQUEST;
  o.global = std::vector<IndexRequest>{renamed};
  EXPECT_EQ(backup_error([&] { restored_table(source, "dst", o, options); }).second,
            "One or more parameter values were invalid: ProvisionedThroughput should not be "
            "specified for index: renamed when BillingMode is PAY_PER_REQUEST");
}

TEST(RestoreOverrides, EncryptionAsRecordedUnlessOverridden) {
  const TableDefinition source = recorded_source();
  RestoreOverrides o;
  o.sse_enabled = false;
  EXPECT_FALSE(restored_table(source, "dst", o, ServiceOptions{}).sse_enabled);
  TableDefinition plain = source;
  plain.sse_enabled = false;
  o.sse_enabled = true;
  EXPECT_TRUE(restored_table(plain, "dst", o, ServiceOptions{}).sse_enabled);
}

// SYSTEM backups are made by the service (when a table with point-in-time recovery is
// deleted): listed only when asked for, and not deletable.
class SystemBackupTest : public ::testing::Test {
 protected:
  SystemBackupTest() : engine_(storage::open_memory()), service_(engine_, ServiceOptions{}) {}

  Response call(std::string_view op, const std::string& body) {
    return service_.handle("DynamoDB_20120810." + std::string(op), body, allow_);
  }

  engine::Engine engine_;
  Service service_;
  test::AllowAll allow_;
};

TEST_F(SystemBackupTest, IsListedOnlyWhenAskedForAndCannotBeDeleted) {
  ASSERT_EQ(call("CreateTable",
                 R"({"TableName":"tab1","AttributeDefinitions":[{"AttributeName":"pk",)"
                 R"("AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
                 R"("BillingMode":"PAY_PER_REQUEST"})")
                .status,
            200);
  const engine::Backup b = engine_.create_backup(
      *engine_.catalog().find("tab1"), "tab1$DeletedTableBackup", engine::BackupType::kSystem);
  EXPECT_EQ(b.id.substr(14), "-00000000");
  ASSERT_TRUE(b.expires);
  EXPECT_DOUBLE_EQ(*b.expires, b.created + 35 * 86400);
  const std::string arn = make_backup_arn("us-east-1", kAccount, "tab1", b.id);
  EXPECT_EQ(call("ListBackups", "{}").body, R"({"BackupSummaries":[]})");
  for (const char* type : {"SYSTEM", "ALL"}) {
    Response r = call("ListBackups", std::string(R"({"BackupType":")") + type + R"("})");
    EXPECT_NE(r.body.find(R"("BackupType":"SYSTEM")"), std::string::npos) << r.body;
    EXPECT_NE(r.body.find(R"("BackupExpiryDateTime":)"), std::string::npos) << r.body;
  }
  EXPECT_EQ(call("ListBackups", R"({"BackupType":"USER"})").body, R"({"BackupSummaries":[]})");
  Response r = call("DeleteBackup", R"({"BackupArn":")" + arn + R"("})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("Invalid Request: User is not allowed to delete the system backup with "
                        "arn " +
                        arn + ". It will automatically expire on "),
            std::string::npos)
      << r.body;
  EXPECT_EQ(call("DescribeBackup", R"({"BackupArn":")" + arn + R"("})").status, 200);
}

// Only so many restores run at once (DynamoDB: 50 per account): held after their first
// page, the restores of a server allowed one leave no room for a second.
TEST(RestoreLimit, IsSubscriberLimitExceeded) {
  ::setenv("KUMO_BACKUP_FAULT", "restore-hold:1", 1);
  engine::EngineOptions options;
  options.background_maintenance = false;
  options.restore_limit = 1;
  engine::Engine engine(storage::open_memory(), options);
  ::unsetenv("KUMO_BACKUP_FAULT");
  Service service(engine, ServiceOptions{});
  test::AllowAll allow;
  auto call = [&](std::string_view op, const std::string& body) {
    return service.handle("DynamoDB_20120810." + std::string(op), body, allow);
  };
  ASSERT_EQ(call("CreateTable",
                 R"({"TableName":"tab1","AttributeDefinitions":[{"AttributeName":"pk",)"
                 R"("AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
                 R"("BillingMode":"PAY_PER_REQUEST"})")
                .status,
            200);
  ASSERT_EQ(call("PutItem", R"({"TableName":"tab1","Item":{"pk":{"S":"a"}}})").status, 200);
  const engine::Backup b = engine.create_backup(*engine.catalog().find("tab1"), "one");
  const std::string arn = make_backup_arn("us-east-1", kAccount, "tab1", b.id);
  Response r =
      call("RestoreTableFromBackup", R"({"TargetTableName":"first","BackupArn":")" + arn + R"("})");
  ASSERT_EQ(r.status, 200) << r.body;
  const engine::Backup other = engine.create_backup(*engine.catalog().find("tab1"), "two");
  r = call("RestoreTableFromBackup", R"({"TargetTableName":"second","BackupArn":")" +
                                         make_backup_arn("us-east-1", kAccount, "tab1", other.id) +
                                         R"("})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(
      r.body,
      R"({"__type":"com.amazonaws.dynamodb.v20120810#LimitExceededException","message":)"
      R"("Subscriber limit exceeded: Only 1 restore operations can be done simultaneously"})");
  EXPECT_FALSE(engine.catalog().find("second"));
}

}  // namespace
}  // namespace kumo::api
