// The pieces of exports and imports that need no server: data lines (DynamoDB JSON, Ion
// text, CSV), the local S3's key checks and compressions, ids, ARNs and page tokens; and
// the limits of exports and imports running at once, on a service allowed one of each.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "api/allow_all.h"
#include "api/data_lines.h"
#include "api/data_movement.h"
#include "api/local_s3.h"
#include "api/service.h"
#include "model/api_error.h"
#include "storage/storage.h"

namespace kumo::api {
namespace {

Decimal dec(std::string_view text) {
  Decimal d;
  EXPECT_EQ(Decimal::parse(text, &d), Decimal::ParseError::kNone) << text;
  return d;
}

Item every_type() {
  Item item;
  item["pk"] = AttributeValue::string("a \"q\"\n\xc3\xa9");
  item["n"] = AttributeValue::number(dec("-12.5"));
  item["b"] = AttributeValue::binary(std::string("\0\x01\xff", 3));
  item["t"] = AttributeValue::boolean(true);
  item["z"] = AttributeValue::null();
  item["l"] = AttributeValue::list({AttributeValue::string("x"), AttributeValue::number(dec("1"))});
  item["m"] = AttributeValue::map(
      {{"odd name", AttributeValue::boolean(false)}, {"$d", AttributeValue::string("")}});
  item["ss"] = AttributeValue::string_set({"a", "b"});
  item["ns"] = AttributeValue::number_set({dec("1"), dec("2.5")});
  item["bs"] = AttributeValue::binary_set({"x", "y"});
  return item;
}

std::vector<LineOutcome> read_all(void (*reader)(std::string_view, const LineSink&),
                                  std::string_view text) {
  std::vector<LineOutcome> out;
  reader(text, [&](LineOutcome o) { out.push_back(std::move(o)); });
  return out;
}

TEST(DataLines, IonDecimalsAsDynamoDBWritesThem) {
  EXPECT_EQ(ion_decimal(dec("103")), "103.");
  EXPECT_EQ(ion_decimal(dec("600")), "6d2");
  EXPECT_EQ(ion_decimal(dec("2000")), "2d3");
  EXPECT_EQ(ion_decimal(dec("1.5")), "1.5");
  EXPECT_EQ(ion_decimal(dec("-0.00012")), "-0.00012");
  EXPECT_EQ(ion_decimal(dec("0")), "0.");
}

TEST(DataLines, JsonLineWrapsTheItem) {
  Item item{{"pk", AttributeValue::string("user1")}, {"binaryfoo", AttributeValue::binary("bar")}};
  std::string line;
  append_json_line(item, &line);
  EXPECT_EQ(line, "{\"Item\":{\"binaryfoo\":{\"B\":\"YmFy\"},\"pk\":{\"S\":\"user1\"}}}\n");
}

TEST(DataLines, IonLineAsInTheDocumentation) {
  Item item{{"Authors", AttributeValue::string_set({"Author1", "Author2"})},
            {"Dimensions", AttributeValue::string("8.5 x 11.0 x 1.5")},
            {"Id", AttributeValue::number(dec("103"))},
            {"InPublication", AttributeValue::boolean(false)},
            {"PageCount", AttributeValue::number(dec("600"))},
            {"Price", AttributeValue::number(dec("2000"))}};
  std::string line;
  append_ion_line(item, &line);
  EXPECT_EQ(line,
            "$ion_1_0 {Item:{Authors:$dynamodb_SS::[\"Author1\",\"Author2\"],Dimensions:\"8.5 x "
            "11.0 x 1.5\",Id:103.,InPublication:false,PageCount:6d2,Price:2d3}}\n");
}

TEST(DataLines, EveryTypeRoundTripsThroughJsonAndIon) {
  const Item item = every_type();
  std::string json, ion;
  append_json_line(item, &json);
  append_json_line(item, &json);
  append_ion_line(item, &ion);
  append_ion_line(item, &ion);
  for (const auto& outcomes : {read_all(read_json_lines, json), read_all(read_ion_lines, ion)}) {
    ASSERT_EQ(outcomes.size(), 2u);
    for (const LineOutcome& o : outcomes) {
      ASSERT_TRUE(o.item) << o.error;
      EXPECT_EQ(AttributeValue::map(*o.item), AttributeValue::map(item));
    }
  }
}

TEST(DataLines, JsonReadingRules) {
  // Blank lines are nothing; values run together on one line are each read.
  auto out = read_all(read_json_lines,
                      "\n  \n{\"Item\":{\"a\":{\"S\":\"1\"}}}{\"Item\":{\"a\":{\"S\":\"2\"}}}\n");
  ASSERT_EQ(out.size(), 2u);
  // A bad value costs its item only.
  out = read_all(read_json_lines,
                 "{\"Item\":{\"a\":{\"N\":\"x\"}}}\n{\"Item\":{\"a\":{\"S\":\"1\"}}}\n");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_FALSE(out[0].item);
  EXPECT_FALSE(out[0].abandons);
  EXPECT_TRUE(out[1].item);
  // Broken JSON or no Item abandons the object.
  out = read_all(read_json_lines, "{\"Item\":{}}\n{broken\n{\"Item\":{}}\n");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[1].abandons);
  out = read_all(read_json_lines, "{\"Other\":{}}\n{\"Item\":{}}\n");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].abandons);
}

TEST(DataLines, IonReadsAListOfItemsAndComments) {
  auto out = read_all(read_ion_lines,
                      "$ion_1_0 [{Item:{a:1,b:'quoted sym',c:null.string}}, /* x */ "
                      "{Item:{d:'''long''' '''er''', e:{{YmFy}}}}] // end\n");
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out[0].item && out[1].item);
  EXPECT_EQ(out[0].item->at("a"), AttributeValue::number(dec("1")));
  EXPECT_EQ(out[0].item->at("b"), AttributeValue::string("quoted sym"));
  EXPECT_EQ(out[0].item->at("c").type(), AttrType::NUL);
  EXPECT_EQ(out[1].item->at("d"), AttributeValue::string("longer"));
  EXPECT_EQ(out[1].item->at("e"), AttributeValue::binary("bar"));
  out = read_all(read_ion_lines, "$ion_1_0 {Item:{a:1}}\n$ion_1_0 {Item:{a:\"unterminated}}\n");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[1].abandons);
}

TEST(DataLines, Csv) {
  CsvOptions options;
  options.types = {{"pk", ScalarType::S}, {"sk", ScalarType::N}};
  std::vector<LineOutcome> out;
  read_csv("pk,sk,v,w\r\na,1,\"x, \"\"y\"\"\",\nb,x,1,2\nc,2\n", options,
           [&](LineOutcome o) { out.push_back(std::move(o)); });
  ASSERT_EQ(out.size(), 3u);
  ASSERT_TRUE(out[0].item);
  EXPECT_EQ(out[0].item->at("sk"), AttributeValue::number(dec("1")));
  EXPECT_EQ(out[0].item->at("v"), AttributeValue::string("x, \"y\""));
  EXPECT_EQ(out[0].item->count("w"), 0u);  // empty columns are left out
  EXPECT_FALSE(out[1].item);               // sk is not a number
  EXPECT_FALSE(out[2].item);               // too few columns
  options.delimiter = '\t';
  options.header = std::vector<std::string>{"pk", "sk"};
  out.clear();
  read_csv("a\t1\n", options, [&](LineOutcome o) { out.push_back(std::move(o)); });
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].item);
  // An unescaped quote inside a value.
  out.clear();
  read_csv("a\"b\t1\n", options, [&](LineOutcome o) { out.push_back(std::move(o)); });
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].item);
}

TEST(LocalS3, KeysAndBuckets) {
  EXPECT_TRUE(valid_object_key(""));
  EXPECT_TRUE(valid_object_key("a/b..c/d"));
  EXPECT_TRUE(valid_object_key("prefix/"));
  EXPECT_FALSE(valid_object_key("../x"));
  EXPECT_FALSE(valid_object_key("a/../x"));
  EXPECT_FALSE(valid_object_key("a/.."));
  EXPECT_FALSE(valid_object_key("/etc"));
  EXPECT_FALSE(valid_object_key(std::string("a\0b", 3)));
  EXPECT_TRUE(valid_bucket_name("my-bucket.v2"));
  EXPECT_TRUE(valid_bucket_name("UPPER_case"));
  EXPECT_FALSE(valid_bucket_name(""));
  EXPECT_FALSE(valid_bucket_name("a"));
  EXPECT_FALSE(valid_bucket_name("-a"));
  EXPECT_FALSE(valid_bucket_name("a/b"));
  EXPECT_FALSE(valid_bucket_name("arn:aws:s3:::b"));
  EXPECT_TRUE(valid_bucket_name("a..b"));  // one directory name all the same
}

TEST(LocalS3, WritesListsAndReads) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("kumo-s3-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "b");
  const LocalS3 s3(root.string());
  EXPECT_THROW(s3.put("missing", "k", "x"), S3Error);
  try {
    s3.list("missing", "");
  } catch (const S3Error& e) {
    EXPECT_EQ(e.code(), "S3NoSuchBucket");
  }
  s3.put("b", "data/one", "1");
  s3.put("b", "data2/two", "2");
  s3.put("b", "other", "3");
  auto writer = s3.gzip_writer("b", "data/z.gz");
  writer->write("hello ");
  writer->write("world");
  writer->finish();
  EXPECT_EQ(s3.list("b", "data"), (std::vector<std::string>{"data/one", "data/z.gz", "data2/two"}));
  EXPECT_EQ(s3.list("b", "data/"), (std::vector<std::string>{"data/one", "data/z.gz"}));
  const std::string gz = s3.get("b", "data/z.gz");
  EXPECT_EQ(decompress(gz, Compression::kGzip), "hello world");
  EXPECT_EQ(writer->md5_base64(), md5_base64(gz));
  EXPECT_EQ(writer->md5_hex(), md5_hex(gz));
  // Two gzip members one after the other read as one stream.
  EXPECT_EQ(decompress(gz + gz, Compression::kGzip), "hello worldhello world");
  EXPECT_THROW(decompress("plain", Compression::kGzip), std::runtime_error);
  EXPECT_THROW(decompress("plain", Compression::kZstd), std::runtime_error);
  EXPECT_EQ(decompress("", Compression::kGzip), "");
  std::filesystem::remove_all(root);
}

TEST(LocalS3, Md5AsS3WritesIt) {
  EXPECT_EQ(md5_hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5_base64(""), "1B2M2Y8AsgTpgAmY7PhCfg==");
}

TEST(DataMovement, ArnsIdsAndTokens) {
  EXPECT_EQ(make_data_arn("us-east-1", "000000000000", "t1", "export", "01489602797149-73d8d5bc"),
            "arn:aws:dynamodb:us-east-1:000000000000:table/t1/export/01489602797149-73d8d5bc");
  const DataArn arn = parse_data_arn(
      "arn:aws:dynamodb:eu-west-1:000000000000:table/tbl/import/01489602797149-73d8d5bc", "import",
      "000000000000");
  EXPECT_EQ(arn.region, "eu-west-1");
  EXPECT_EQ(arn.table, "tbl");
  EXPECT_EQ(arn.id, "01489602797149-73d8d5bc");
  try {
    parse_data_arn("arn:aws:dynamodb:us-east-1:000000000000:table/tbl", "export", "000000000000");
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_STREQ(e.what(), "Invalid Export ARN");
  }
  EXPECT_THROW(
      parse_data_arn("arn:aws:dynamodb:us-east-1:1:table/tbl/export/x", "export", "000000000000"),
      ApiError);
  const std::string id = new_data_id(1489602797.149);
  EXPECT_EQ(id.substr(0, 15), "01489602797149-");
  EXPECT_EQ(iso_time_ms(1604474914.028), "2020-11-04T07:28:34.028Z");
  EXPECT_EQ(iso_time_s(1604474914.028), "2020-11-04T07:28:34Z");
  const std::string token = page_token("export", id);
  EXPECT_GE(token.size(), 112u);
  EXPECT_EQ(token.size() % 16, 0u);
  EXPECT_EQ(page_position("export", token), id);
  EXPECT_EQ(page_position("import", token), std::nullopt);
  EXPECT_EQ(page_position("export", std::string(112, 'a')), std::nullopt);
}

constexpr std::string_view kLimitExceeded =
    R"({"__type":"com.amazonaws.dynamodb.v20120810#LimitExceededException","message":)";

// A service with a local S3 in a fresh directory (bucket "bk"), on an engine whose jobs
// `fault` (KUMO_BACKUP_FAULT) holds, allowed one export and one import at a time.
struct LimitedService {
  explicit LimitedService(const char* fault)
      : root(std::filesystem::temp_directory_path() /
             ("kumo-limits-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root / "bk");
    ::setenv("KUMO_BACKUP_FAULT", fault, 1);
    engine::EngineOptions options;
    options.background_maintenance = false;
    options.export_limit = 1;
    options.import_limit = 1;
    engine = std::make_unique<engine::Engine>(storage::open_memory(), options);
    ::unsetenv("KUMO_BACKUP_FAULT");
    ServiceOptions service_options;
    service_options.export_root = root.string();
    service = std::make_unique<Service>(*engine, service_options);
  }
  ~LimitedService() {
    service.reset();
    engine.reset();  // a held job ends when its engine stops
    std::filesystem::remove_all(root);
  }
  Response call(std::string_view op, const std::string& body) {
    return service->handle("DynamoDB_20120810." + std::string(op), body, allow);
  }
  std::filesystem::path root;
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<Service> service;
  test::AllowAll allow;
};

std::string table_parameters(std::string_view name) {
  return R"({"TableName":")" + std::string(name) +
         R"(","AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
         R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"BillingMode":"PAY_PER_REQUEST"})";
}

// Exports running at once are limited (DynamoDB: 300 per account): with the first held
// after its first item, a second export is refused; the first's ClientToken still answers.
TEST(DataMovementLimits, ExportsPastTheLimitAreSubscriberLimitExceeded) {
  LimitedService s("export-hold:1");
  ASSERT_EQ(s.call("CreateTable", table_parameters("tab1")).status, 200);
  ASSERT_EQ(
      s.call("UpdateContinuousBackups", R"({"TableName":"tab1","PointInTimeRecoverySpecification":)"
                                        R"({"PointInTimeRecoveryEnabled":true}})")
          .status,
      200);
  ASSERT_EQ(s.call("PutItem", R"({"TableName":"tab1","Item":{"pk":{"S":"a"}}})").status, 200);
  auto export_body = [](std::string_view token) {
    return R"({"TableArn":"arn:aws:dynamodb:us-east-1:000000000000:table/tab1","S3Bucket":"bk",)"
           R"("ClientToken":")" +
           std::string(token) + R"("})";
  };
  Response first = s.call("ExportTableToPointInTime", export_body("one"));
  ASSERT_EQ(first.status, 200) << first.body;
  Response second = s.call("ExportTableToPointInTime", export_body("two"));
  EXPECT_EQ(second.status, 400);
  EXPECT_EQ(
      second.body,
      std::string(kLimitExceeded) +
          R"("Subscriber limit exceeded: Only 1 export operations can be done simultaneously"})");
  Response again = s.call("ExportTableToPointInTime", export_body("one"));
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(count_in_progress(*s.engine, "meta/export/"), 1u);
}

// Imports running at once are limited (DynamoDB: 50 per account): with the first held
// after 256 items, a second import is refused and makes no table.
TEST(DataMovementLimits, ImportsPastTheLimitAreSubscriberLimitExceeded) {
  LimitedService s("import-hold:256");
  {
    std::ofstream out(s.root / "bk" / "items.json");
    for (int i = 0; i < 300; ++i) out << R"({"Item":{"pk":{"S":"k)" << i << R"("}}})" << '\n';
  }
  auto import_body = [](std::string_view token, std::string_view table) {
    return R"({"ClientToken":")" + std::string(token) +
           R"(","S3BucketSource":{"S3Bucket":"bk"},"InputFormat":"DYNAMODB_JSON",)"
           R"("TableCreationParameters":)" +
           table_parameters(table) + "}";
  };
  Response first = s.call("ImportTable", import_body("one", "first"));
  ASSERT_EQ(first.status, 200) << first.body;
  Response second = s.call("ImportTable", import_body("two", "second"));
  EXPECT_EQ(second.status, 400);
  EXPECT_EQ(
      second.body,
      std::string(kLimitExceeded) +
          R"("Subscriber limit exceeded: Only 1 import operations can be done simultaneously"})");
  EXPECT_FALSE(s.engine->catalog().find("second"));
  EXPECT_EQ(count_in_progress(*s.engine, "meta/import/"), 1u);
}

}  // namespace
}  // namespace kumo::api
