#include "api/json_reader.h"

#include <string>

#include <gtest/gtest.h>

#include "model/api_error.h"

namespace kumo::api {
namespace {

using namespace std::string_literals;

TEST(JsonDocument, ParsesOneValue) {
  JsonDocument document;
  ASSERT_TRUE(document.parse(R"( {"TableName": "t", "Limit": 5, "L": [1, "x", null]} )"));
  const JsonObject request(document.root());
  EXPECT_EQ(request.string("TableName"), "t");
  EXPECT_EQ(request.integer("Limit"), 5);
  EXPECT_EQ(request.array("L")->size(), 3u);
  EXPECT_EQ(request.size(), 3u);
}

TEST(JsonDocument, RefusesWhatIsNotExactlyOneJsonValue) {
  JsonDocument document;
  for (const std::string text : {"", "{", "{}}", "{} {}", "{\"a\":1,}", "[1,]", "{'a':1}",
                                 "{\"a\":NaN}", "{\"a\":1e400}", "{\"a\":01}", "{} x"}) {
    EXPECT_FALSE(document.parse(text)) << text;
    EXPECT_TRUE(document.root().IsNull()) << text;
  }
}

TEST(JsonDocument, RefusesNulBytesAnywhere) {
  JsonDocument document;
  EXPECT_FALSE(document.parse("{}\0"s));
  EXPECT_FALSE(document.parse("{}\0{}"s));
  EXPECT_FALSE(document.parse("{\"a\":\"x\0y\"}"s));
  // An escaped NUL is a character like any other.
  ASSERT_TRUE(document.parse(R"({"a":"x\u0000y"})"));
  EXPECT_EQ(JsonObject(document.root()).string("a"), "x\0y"s);
}

TEST(JsonDocument, RefusesInvalidUtf8AndLoneSurrogates) {
  JsonDocument document;
  for (const std::string& bad : {"\xff"s, "\xc0\xaf"s, "\xed\xa0\x80"s, "\xe2\x82"s, "\\ud800"s,
                                 "\\udc00"s, "\\udfff"s, "\\ud800\\u0041"s}) {
    EXPECT_FALSE(document.parse("{\"a\":\"" + bad + "\"}")) << bad;
    EXPECT_FALSE(document.parse("{\"" + bad + "\":1}")) << bad;
  }
  ASSERT_TRUE(document.parse(R"({"a":"\ud83d\ude00 \u00e9 \ud7ff \ue000"})"));
  EXPECT_EQ(JsonObject(document.root()).string("a"),
            "\xf0\x9f\x98\x80 \xc3\xa9 \xed\x9f\xbf \xee\x80\x80");
}

// ASCII text is parsed without UTF-8 validation: a bad byte must be seen wherever it is.
TEST(JsonDocument, ValidatesUtf8WhereverTheFirstNonAsciiByteIs) {
  JsonDocument document;
  for (std::size_t at = 0; at < 24; ++at) {
    std::string text(24, 'x');
    text[at] = '\xff';
    EXPECT_FALSE(document.parse("{\"a\":\"" + text + "\"}")) << at;
    text[at] = 'y';
    EXPECT_TRUE(document.parse("{\"a\":\"" + text + "\"}")) << at;
    text.replace(at, 1, "\xc3\xa9");
    ASSERT_TRUE(document.parse("{\"a\":\"" + text + "\"}")) << at;
    EXPECT_EQ(JsonObject(document.root()).string("a"), text);
  }
}

TEST(JsonDocument, RefusesNestingPastTheLimit) {
  const auto nested = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  JsonDocument document;
  EXPECT_TRUE(document.parse(nested(JsonDocument::kMaxDepth)));
  EXPECT_FALSE(document.parse(nested(JsonDocument::kMaxDepth + 1)));
  EXPECT_FALSE(document.parse(std::string(100000, '[')));
}

TEST(JsonDocument, KeepsWorkingAfterLargeAndFailedBodies) {
  JsonDocument document;
  std::string big = "{\"a\":[";
  for (int i = 0; i < 20000; ++i) big += "\"some text\",";
  big += "1]}";
  ASSERT_TRUE(document.parse(big));
  EXPECT_EQ(JsonObject(document.root()).array("a")->size(), 20001u);
  EXPECT_FALSE(document.parse("{\"a\":"));
  ASSERT_TRUE(document.parse(R"({"b":true})"));
  EXPECT_EQ(JsonObject(document.root()).boolean("b"), true);
  document.clear();
  EXPECT_TRUE(document.root().IsNull());
}

TEST(JsonObject, TypeErrorsUseJacksonsWords) {
  JsonDocument document;
  ASSERT_TRUE(document.parse(
      R"({"i": 5, "d": 5.5, "big": 18446744073709551615, "s": "x", "o": {}, "a": [], "t": true})"));
  const JsonObject request(document.root());
  const auto message = [&](auto read) {
    try {
      read();
    } catch (const ApiError& e) {
      return e.message().value_or("");
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { request.string("i"); }), "NUMBER_VALUE cannot be converted to String");
  EXPECT_EQ(message([&] { request.string("d"); }), "DECIMAL_VALUE cannot be converted to String");
  EXPECT_EQ(message([&] { request.string("t"); }), "TRUE_VALUE cannot be converted to String");
  EXPECT_EQ(message([&] { request.integer("s"); }), "STRING_VALUE cannot be converted to Integer");
  EXPECT_EQ(message([&] { request.integer("big", "Long"); }),
            "NUMBER_VALUE cannot be converted to Long");
  EXPECT_EQ(request.integer("d"), 5);
  EXPECT_EQ(message([&] { request.object("a"); }), "Start of list found where not expected");
  EXPECT_EQ(message([&] { request.array("o"); }),
            "Start of structure or map found where not expected");
  EXPECT_FALSE(request.string("absent").has_value());
}

TEST(CoralErrors, LengthsCountCharactersNotBytes) {
  std::string aleph;
  for (int i = 0; i < 128; ++i) aleph += "\u05d0";  // two UTF-8 bytes each
  CoralErrors fits;
  fits.check_length(aleph, "tags.1.member.key", 1, 128);
  EXPECT_TRUE(fits.empty());
  CoralErrors over;
  over.check_length(aleph + "\u05d0", "tags.1.member.key", 1, 128);
  EXPECT_FALSE(over.empty());
  CoralErrors pair;  // one character outside the BMP counts twice, as in Java
  pair.check_length("\U0001F600", "shardId", 2, 65);
  EXPECT_TRUE(pair.empty());
}

TEST(CoralErrors, ValueOmittedWhereDynamoDbOmitsIt) {
  CoralErrors coral;
  coral.add_without_value("Limit", "Member must have value greater than or equal to 1");
  try {
    coral.throw_if_any();
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.coral());
    EXPECT_EQ(e.message().value_or(""),
              "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member "
              "must have value greater than or equal to 1");
  }
}

TEST(JavaLength, CountsUtf16CodeUnits) {
  EXPECT_EQ(java_length(""), 0u);
  EXPECT_EQ(java_length("abc"), 3u);
  EXPECT_EQ(java_length("\u00e9\u05d0"), 2u);  // two bytes each
  EXPECT_EQ(java_length("\u20ac"), 1u);        // three bytes
  EXPECT_EQ(java_length("\U0001F600"), 2u);    // four bytes: a surrogate pair
}

}  // namespace
}  // namespace kumo::api
