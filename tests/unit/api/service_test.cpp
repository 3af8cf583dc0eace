#include "api/service.h"

#include <gtest/gtest.h>

#include "api/allow_all.h"
#include "storage/storage.h"

namespace kumo::api {
namespace {

using test::AllowAll;

class DenyAll : public Authenticator {
 public:
  void authenticate() const override { throw ApiError::missing_authentication_token(); }
};

class ServiceTest : public ::testing::Test {
 protected:
  ServiceTest() : engine_(storage::open_memory()), service_(engine_, ServiceOptions{}) {}

  Response call(std::string_view op, std::string_view body) {
    return service_.handle("DynamoDB_20120810." + std::string(op), body, allow_);
  }

  engine::Engine engine_;
  Service service_;
  AllowAll allow_;
};

TEST_F(ServiceTest, PreDispatchOrder) {
  DenyAll deny;
  // Bad JSON is reported before an unknown target, which is reported before auth.
  Response r = service_.handle("Nope", "{", deny);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#SerializationException"})");
  r = service_.handle("DynamoDB_20120810.Nope", "{}", deny);
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#UnknownOperationException"})");
  r = service_.handle("DynamoDB_20120810.ListTables", "{}", deny);
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#MissingAuthenticationTokenException",)"
                    R"("message":"Request is missing Authentication Token"})");
  r = service_.handle("DynamoDB_20120810.ListTables", "", allow_);
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#SerializationException"})");
}

TEST_F(ServiceTest, CreatePutGetDelete) {
  Response r =
      call("CreateTable",
           R"({"TableName":"tab1","AttributeDefinitions":[{"AttributeName":"pk",)"
           R"("AttributeType":"S"}],"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
           R"("BillingMode":"PAY_PER_REQUEST"})");
  ASSERT_EQ(r.status, 200) << r.body;
  r = call(
      "PutItem",
      R"({"TableName":"tab1","Item":{"pk":{"S":"a"},"n":{"N":"0042.1200"},"b":{"B":"AAE="}}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "{}");
  r = call("GetItem",
           R"({"TableName":"tab1","Key":{"pk":{"S":"a"}},"ReturnConsumedCapacity":"TOTAL"})");
  EXPECT_EQ(r.body, R"({"Item":{"b":{"B":"AAE="},"n":{"N":"42.12"},"pk":{"S":"a"}},)"
                    R"("ConsumedCapacity":{"TableName":"tab1","CapacityUnits":0.5}})");
  r = call("DeleteItem", R"({"TableName":"tab1","Key":{"pk":{"S":"a"}},"ReturnValues":"ALL_OLD"})");
  EXPECT_EQ(r.body, R"({"Attributes":{"b":{"B":"AAE="},"n":{"N":"42.12"},"pk":{"S":"a"}}})");
  r = call("GetItem", R"({"TableName":"tab1","Key":{"pk":{"S":"a"}}})");
  EXPECT_EQ(r.body, "{}");
}

TEST_F(ServiceTest, ValidationMessages) {
  Response r = call("CreateTable", R"({"TableName":"tab1"})");
  EXPECT_EQ(r.body,
            R"({"__type":"com.amazon.coral.validate#ValidationException","message":"2 validation )"
            R"(errors detected: Value null at 'attributeDefinitions' failed to satisfy )"
            R"(constraint: Member must not be null; Value null at 'keySchema' failed to satisfy )"
            R"(constraint: Member must not be null"})");
  r = call("ListTables", R"({"Limit":"5"})");
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#SerializationException",)"
                    R"("Message":"STRING_VALUE cannot be converted to Integer"})");
  r = call("GetItem", R"({"TableName":"missing","Key":{"pk":{"S":"a"}}})");
  EXPECT_EQ(r.body, R"({"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",)"
                    R"("message":"Requested resource not found"})");
  r = call("PutItem", R"({"TableName":"missing","Item":{"pk":{"SS":[]}}})");
  EXPECT_EQ(r.body,
            R"({"__type":"com.amazon.coral.validate#ValidationException","message":"1 validation )"
            R"(error detected: One or more parameter values were invalid: An string set  may not )"
            R"(be empty"})");
}

}  // namespace
}  // namespace kumo::api
