// Fuzzes the whole API layer: Service::handle over an in-memory engine, with an
// authenticator that lets every request through. The first byte picks the operation (one
// of the service's, an unknown one, or none); the rest is the JSON body. Every run starts
// from the same database, built once: a hash-only table and a hash+range table with a GSI
// and an LSI, holding a few items and a tag, so that data operations reach conditions,
// updates, index upkeep, Query and Scan. A run gets a fresh Engine over that data and its
// writes are undone afterwards, so no input depends on what earlier ones did. Checked:
// every response is a JSON object, an error carries __type, and no request causes an
// InternalServerError (memory storage cannot fail, so a 500 means an exception the API
// layer did not expect).

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "api/json_reader.h"
#include "api/service.h"
#include "engine/engine.h"
#include "expr/cache.h"
#include "storage/storage.h"

namespace {

using namespace kumo;

// DynamoDB accepts bodies up to 16 MiB, but nothing deeper is reached past a few KiB.
constexpr std::size_t kMaxBody = 64 << 10;

// The service's operations (api/service.cpp), the Streams API's, the backup operations and an
// unknown one, the PartiQL and Contributor Insights operations, then a missing target.
constexpr std::array<std::string_view, 39> kTargets{
    "DynamoDB_20120810.BatchGetItem",
    "DynamoDB_20120810.BatchWriteItem",
    "DynamoDB_20120810.CreateTable",
    "DynamoDB_20120810.DeleteTable",
    "DynamoDB_20120810.DeleteItem",
    "DynamoDB_20120810.DescribeEndpoints",
    "DynamoDB_20120810.DescribeLimits",
    "DynamoDB_20120810.DescribeTable",
    "DynamoDB_20120810.GetItem",
    "DynamoDB_20120810.ListTables",
    "DynamoDB_20120810.ListTagsOfResource",
    "DynamoDB_20120810.PutItem",
    "DynamoDB_20120810.Query",
    "DynamoDB_20120810.Scan",
    "DynamoDB_20120810.TagResource",
    "DynamoDB_20120810.TransactGetItems",
    "DynamoDB_20120810.TransactWriteItems",
    "DynamoDB_20120810.UntagResource",
    "DynamoDB_20120810.UpdateItem",
    "DynamoDB_20120810.UpdateTable",
    "DynamoDB_20120810.UpdateTimeToLive",
    "DynamoDB_20120810.DescribeTimeToLive",
    "DynamoDBStreams_20120810.ListStreams",
    "DynamoDBStreams_20120810.DescribeStream",
    "DynamoDBStreams_20120810.GetShardIterator",
    "DynamoDBStreams_20120810.GetRecords",
    "DynamoDB_20120810.ListBackups",
    "DynamoDB_20120810.CreateBackup",
    "DynamoDB_20120810.DescribeBackup",
    "DynamoDB_20120810.DeleteBackup",
    "DynamoDB_20120810.RestoreTableFromBackup",
    "DynamoDB_20120810.RestoreTableToPointInTime",
    "DynamoDB_20120810.ExecuteStatement",
    "DynamoDB_20120810.BatchExecuteStatement",
    "DynamoDB_20120810.ExecuteTransaction",
    "DynamoDB_20120810.UpdateContributorInsights",
    "DynamoDB_20120810.DescribeContributorInsights",
    "DynamoDB_20120810.ListContributorInsights",
    "",
};

// Requests that build the database every run starts from.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kSetup{{
    {"CreateTable", R"({"TableName":"hash","BillingMode":"PAY_PER_REQUEST",)"
                    R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
                    R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
                    R"("StreamSpecification":{"StreamEnabled":true,)"
                    R"("StreamViewType":"NEW_AND_OLD_IMAGES"}})"},
    {"CreateTable",
     R"({"TableName":"range","BillingMode":"PROVISIONED",)"
     R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5},)"
     R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},)"
     R"({"AttributeName":"sk","AttributeType":"N"},{"AttributeName":"gk","AttributeType":"S"},)"
     R"({"AttributeName":"lk","AttributeType":"B"}],)"
     R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},)"
     R"({"AttributeName":"sk","KeyType":"RANGE"}],)"
     R"("GlobalSecondaryIndexes":[{"IndexName":"gsi",)"
     R"("KeySchema":[{"AttributeName":"gk","KeyType":"HASH"},)"
     R"({"AttributeName":"sk","KeyType":"RANGE"}],)"
     R"("Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["a"]},)"
     R"("ProvisionedThroughput":{"ReadCapacityUnits":5,"WriteCapacityUnits":5}}],)"
     R"("LocalSecondaryIndexes":[{"IndexName":"lsi",)"
     R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},)"
     R"({"AttributeName":"lk","KeyType":"RANGE"}],)"
     R"("Projection":{"ProjectionType":"KEYS_ONLY"}}]})"},
    {"PutItem", R"({"TableName":"hash","Item":{"pk":{"S":"a"},"n":{"N":"1"},"s":{"S":"x"},)"
                R"("m":{"M":{"k":{"L":[{"N":"1"},{"SS":["a","b"]}]}}},"ns":{"NS":["1","2"]}}})"},
    {"PutItem",
     R"({"TableName":"hash","Item":{"pk":{"S":"b"},"b":{"B":"AAE="},"t":{"BOOL":true}}})"},
    {"PutItem", R"({"TableName":"range","Item":{"pk":{"S":"a"},"sk":{"N":"1"},"gk":{"S":"g"},)"
                R"("lk":{"B":"AQ=="},"a":{"S":"x"},"c":{"N":"5"}}})"},
    {"PutItem", R"({"TableName":"range","Item":{"pk":{"S":"a"},"sk":{"N":"2"},"gk":{"S":"g"},)"
                R"("a":{"L":[{"NULL":true}]}}})"},
    {"PutItem",
     R"({"TableName":"range","Item":{"pk":{"S":"b"},"sk":{"N":"-1.5"},"lk":{"B":"Ag=="},)"
     R"("bs":{"BS":["AA==","AQ=="]}}})"},
    {"TagResource", R"({"ResourceArn":"arn:aws:dynamodb:us-east-1:000000000000:table/hash",)"
                    R"("Tags":[{"Key":"k","Value":"v"}]})"},
    {"UpdateTimeToLive", R"({"TableName":"range",)"
                         R"("TimeToLiveSpecification":{"Enabled":true,"AttributeName":"c"}})"},
    {"UpdateContributorInsights",
     R"({"TableName":"range","IndexName":"gsi","ContributorInsightsAction":"ENABLE"})"},
}};

// The database every run starts from. Writes made through a Recorder are applied to it
// and undone by restore(), which puts back every key's value from before the first of them.
class Baseline {
 public:
  storage::Storage& data() { return *data_; }

  void write(const storage::WriteBatch& batch) {
    // Background work (index backfills) may write while a request does.
    std::lock_guard lock(mutex_);
    for (const auto& op : batch.ops()) {
      if (!before_.contains(op.key)) before_.emplace(op.key, data_->get(op.key));
    }
    data_->write(batch);
  }

  // Makes the current data the state restore() returns to.
  void restore_point() {
    std::lock_guard lock(mutex_);
    before_.clear();
  }

  void restore() {
    std::lock_guard lock(mutex_);
    storage::WriteBatch undo;
    for (auto& [key, value] : before_) {
      if (value) {
        undo.put(key, std::move(*value));
      } else {
        undo.del(key);
      }
    }
    before_.clear();
    data_->write(undo);
  }

 private:
  std::unique_ptr<storage::Storage> data_ = storage::open_memory();
  std::mutex mutex_;
  std::map<std::string, std::optional<std::string>> before_;
};

// The Storage one run's Engine owns: reads go to the baseline, writes are recorded.
class Recorder final : public storage::Storage {
 public:
  explicit Recorder(Baseline& baseline) : baseline_(baseline) {}

  std::optional<std::string> get(std::string_view key, const storage::Snapshot* snapshot) override {
    return baseline_.data().get(key, snapshot);
  }
  void write(const storage::WriteBatch& batch) override { baseline_.write(batch); }
  std::unique_ptr<storage::Snapshot> snapshot() override { return baseline_.data().snapshot(); }
  std::unique_ptr<storage::Iterator> iterator(std::string lower, std::string upper,
                                              const storage::Snapshot* snapshot) override {
    return baseline_.data().iterator(std::move(lower), std::move(upper), snapshot);
  }

 private:
  Baseline& baseline_;
};

class AllowAll final : public api::Authenticator {
 public:
  void authenticate() const override {}
};

[[noreturn]] void fail(const char* what, std::string_view target, std::string_view body,
                       const api::Response& response) {
  std::fprintf(stderr, "fuzz_request: %s\ntarget: %.*s\nrequest: %.*s\nresponse %d: %s\n", what,
               static_cast<int>(target.size()), target.data(), static_cast<int>(body.size()),
               body.data(), response.status, response.body.c_str());
  std::abort();
}

void check_response(std::string_view target, std::string_view body, const api::Response& response) {
  if (response.status == 500) fail("internal server error", target, body, response);
  // TagResource and UntagResource answer success with an empty body, as DynamoDB does.
  const bool tagging = target.ends_with(".TagResource") || target.ends_with(".UntagResource");
  if (response.status == 200 && tagging && response.body.empty()) return;
  api::JsonDocument document;
  if (!document.parse(response.body) || !document.root().IsObject()) {
    fail("response is not a JSON object", target, body, response);
  }
  if (response.status == 200) return;
  if (response.status < 400 || response.status > 599)
    fail("unexpected status", target, body, response);
  const std::optional<std::string_view> type = api::JsonObject(document.root()).string("__type");
  if (!type || type->empty()) {
    fail("error response without __type", target, body, response);
  }
}

// No background thread: a run does only what its request does, so it is repeatable.
engine::EngineOptions engine_options() {
  engine::EngineOptions options;
  options.background_maintenance = false;
  return options;
}

Baseline& baseline() {
  static Baseline* const baseline = [] {
    auto* b = new Baseline;
    engine::Engine engine(std::make_unique<Recorder>(*b), engine_options());
    const api::Service service(engine, api::ServiceOptions{});
    const AllowAll auth;
    for (const auto& [operation, request] : kSetup) {
      const std::string target = "DynamoDB_20120810." + std::string(operation);
      const api::Response response = service.handle(target, request, auth);
      if (response.status != 200) fail("setup request failed", target, request, response);
    }
    b->restore_point();
    return b;
  }();
  return *baseline;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  baseline();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 1 + kMaxBody) return 0;
  Baseline& base = baseline();
  expr::expression_cache().clear();
  {
    engine::Engine engine(std::make_unique<Recorder>(base), engine_options());
    const api::Service service(engine, api::ServiceOptions{});
    const std::string_view target = kTargets[data[0] % kTargets.size()];
    const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
    check_response(target, body, service.handle(target, body, AllowAll{}));
  }  // the engine stops its background work here
  base.restore();
  return 0;
}
