#include "api/attribute_json.h"

#include <random>

#include <gtest/gtest.h>

namespace kumo::api {
namespace {

// Decodes `json` as one AttributeValue; returns the first validation message ("" if none)
// or "Serialization: <message>" when a SerializationException was thrown.
std::string decode_error(std::string_view json,
                         DuplicateWording duplicates = DuplicateWording::kPlain) {
  JsonDocument document;
  EXPECT_TRUE(document.parse(json)) << json;
  const JsonValue& e = document.root();
  Validation v(duplicates);
  try {
    decode_value(e, v);
  } catch (const ApiError& error) {
    return "Serialization: " + error.message().value_or("");
  }
  return v.message().value_or("");
}

AttributeValue decode(std::string_view json) {
  JsonDocument document;
  EXPECT_TRUE(document.parse(json)) << json;
  const JsonValue& e = document.root();
  Validation v;
  AttributeValue value = decode_value(e, v);
  EXPECT_FALSE(v.failed()) << *v.message();
  return value;
}

std::string encode(const AttributeValue& value) {
  JsonOut out;
  JsonWriter w(out);
  write_value(w, value);
  return json_text(out);
}

TEST(AttributeJson, RoundTripsEveryType) {
  for (std::string_view json :
       {R"({"S":"text"})", R"({"S":""})", R"({"N":"-12.5"})", R"({"B":"AAEC/w=="})", R"({"B":""})",
        R"({"BOOL":true})", R"({"BOOL":false})", R"({"NULL":true})", R"({"SS":["a","b"]})",
        R"({"NS":["1","2.5"]})", R"({"BS":["AA==","AQ=="]})",
        R"({"L":[{"S":"a"},{"N":"1"},{"L":[]}]})", R"({"M":{"k":{"M":{}},"z":{"NULL":true}}})"}) {
    EXPECT_EQ(encode(decode(json)), json);
  }
}

// Every control character is escaped, wherever it falls in a 16-byte block (rapidjson
// 1.1.0's SSE2 scan let 0x1A-0x1F through).
TEST(AttributeJson, ControlCharactersAreEscaped) {
  for (int c = 0; c < 0x20; ++c) {
    for (std::size_t at = 0; at < 40; ++at) {
      std::string text(40, 'a');
      text[at] = static_cast<char>(c);
      const std::string json = encode(AttributeValue::string(text));
      EXPECT_EQ(json.find(static_cast<char>(c)), std::string::npos) << c << " at " << at;
      EXPECT_EQ(decode(json), AttributeValue::string(text)) << c << " at " << at;
    }
  }
}

// Strings and member names are written exactly as rapidjson's own Writer (built without
// RAPIDJSON_SSE2) writes them, for strings of every length up to 70 made mostly of the
// bytes that need escaping, next to plain ASCII and bytes of multi-byte UTF-8.
TEST(AttributeJson, StringsAreWrittenAsRapidjsonWritesThem) {
  const std::string palette = std::string("ab\"\\\x7f\x80\xc3\xa9\xff", 9) + '\0';
  std::mt19937 random(7);
  for (int round = 0; round < 20000; ++round) {
    std::string text(random() % 71, ' ');
    for (char& c : text) {
      const unsigned pick = random() % 4;
      c = pick == 0   ? static_cast<char>(random() % 0x20)
          : pick == 1 ? palette[random() % palette.size()]
                      : static_cast<char>(random() % 256);
    }
    rapidjson::StringBuffer expected_out;
    rapidjson::Writer<rapidjson::StringBuffer> expected(expected_out);
    expected.StartObject();
    expected.Key(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    expected.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    expected.EndObject();

    JsonOut out;
    JsonWriter w(out);
    w.StartObject();
    write_key(w, text);
    write_string(w, text);
    w.EndObject();
    ASSERT_EQ(json_text(out), std::string(expected_out.GetString(), expected_out.GetSize()))
        << "round " << round;
  }
}

TEST(AttributeJson, NumbersComeBackCanonical) {
  EXPECT_EQ(encode(decode(R"({"N":"0042.1200"})")), R"({"N":"42.12"})");
  EXPECT_EQ(encode(decode(R"({"N":"1e3"})")), R"({"N":"1000"})");
  EXPECT_EQ(encode(decode(R"({"N":"-0"})")), R"({"N":"0"})");
  EXPECT_EQ(encode(decode(R"({"N":"1.5e-3"})")), R"({"N":"0.0015"})");
}

TEST(AttributeJson, BooleansAreCoercedFromStrings) {
  EXPECT_EQ(encode(decode(R"({"BOOL":"yes"})")), R"({"BOOL":true})");
  EXPECT_EQ(encode(decode(R"({"BOOL":"0"})")), R"({"BOOL":false})");
  EXPECT_EQ(decode_error(R"({"BOOL":"maybe"})"),
            "Serialization: Unexpected token received from parser");
}

TEST(AttributeJson, ValidationMessages) {
  const std::string invalid = "One or more parameter values were invalid: ";
  EXPECT_EQ(decode_error("{}"),
            "Supplied AttributeValue is empty, must contain exactly one of the supported "
            "datatypes");
  EXPECT_EQ(decode_error(R"({"S":"a","N":"1"})"),
            "Supplied AttributeValue has more than one datatypes set, must contain exactly one "
            "of the supported datatypes");
  EXPECT_EQ(decode_error(R"({"NULL":false})"),
            invalid + "Null attribute value types must have the value of true");
  EXPECT_EQ(decode_error(R"({"SS":[]})"), invalid + "An string set  may not be empty");
  EXPECT_EQ(decode_error(R"({"NS":[]})"), invalid + "An number set  may not be empty");
  EXPECT_EQ(decode_error(R"({"BS":[]})"), invalid + "Binary sets should not be empty");
  EXPECT_EQ(decode_error(R"({"SS":["a","a"]})"),
            invalid + "Input collection [a, a] contains duplicates.");
  EXPECT_EQ(decode_error(R"({"BS":["Yg==","Yg=="]})"),
            invalid + "Input collection [Yg==, Yg==]of type BS contains duplicates.");
  EXPECT_EQ(decode_error(R"({"NS":["1","1.0"]})"), "Input collection contains duplicates");
  EXPECT_EQ(decode_error(R"({"N":"abc"})"),
            "The parameter cannot be converted to a numeric value: abc");
  EXPECT_EQ(decode_error(R"({"N":""})"), "The parameter cannot be converted to a numeric value");
  EXPECT_EQ(decode_error(R"({"N":"1e126"})"),
            "Number overflow. Attempting to store a number with magnitude larger than supported "
            "range");
  // The number check runs before the more-than-one-type check.
  EXPECT_EQ(decode_error(R"({"N":"x","S":"a"})"),
            "The parameter cannot be converted to a numeric value: x");
}

TEST(AttributeJson, QuotedDuplicateWording) {
  const std::string invalid = "One or more parameter values were invalid: ";
  auto quoted = [](std::string_view json) { return decode_error(json, DuplicateWording::kQuoted); };
  // The members before the first repeat sorted by bytes, then the repeat and the rest.
  EXPECT_EQ(quoted(R"({"SS":["c","b","c","a"]})"),
            invalid + R"(Input collection ["b", "c", "c", "a"] contains duplicates.)");
  EXPECT_EQ(quoted(R"({"SS":["a","a"]})"),
            invalid + R"(Input collection ["a", "a"] contains duplicates.)");
  EXPECT_EQ(quoted(R"({"SS":["b","é","B","a","b","z","a"]})"),
            invalid + R"(Input collection ["B", "a", "b", "é", "b", "z", "a"] contains )"
                      "duplicates.");
  EXPECT_EQ(quoted(R"({"NS":["1","1.0"]})"), invalid + "Input collection contains duplicates.");
  EXPECT_EQ(quoted(R"({"BS":["Yg==","Yg=="]})"),
            invalid + "Input collection [Yg==, Yg==]of type BS contains duplicates.");
  EXPECT_EQ(quoted(R"({"SS":["a","b"]})"), "");
}

TEST(AttributeJson, SerializationMessages) {
  EXPECT_EQ(decode_error(R"({"S":5})"),
            "Serialization: NUMBER_VALUE cannot be converted to String");
  EXPECT_EQ(decode_error(R"({"S":5.5})"),
            "Serialization: DECIMAL_VALUE cannot be converted to String");
  EXPECT_EQ(decode_error(R"({"S":true})"),
            "Serialization: TRUE_VALUE cannot be converted to String");
  EXPECT_EQ(decode_error(R"({"S":{}})"),
            "Serialization: Start of structure or map found where not expected");
  EXPECT_EQ(decode_error(R"({"B":"abc"})"),
            "Serialization: Base64 encoded length is expected a multiple of 4 bytes but found: 3");
  EXPECT_EQ(decode_error(R"({"B":"YR=="})"),
            "Serialization: Invalid last non-pad Base64 character dectected");
  EXPECT_EQ(decode_error("5"), "Serialization: Unexpected value type in payload");
}

TEST(AttributeJson, NestingLimit) {
  auto nested = [](int wraps) {
    std::string json = R"({"S":"x"})";
    for (int i = 0; i < wraps; ++i) json = R"({"L":[)" + json + "]}";
    return json;
  };
  EXPECT_EQ(decode_error(nested(31)), "");
  EXPECT_EQ(decode_error(nested(32)),
            "Nesting Levels have exceeded supported limits: Attributes in the item have nested "
            "levels beyond supported limit");
}

TEST(AttributeJson, AttributeNamesAreOneTo65535Bytes) {
  EXPECT_EQ(attribute_name_error(""), "Empty attribute name");
  EXPECT_EQ(attribute_name_error("a"), "");
  EXPECT_EQ(attribute_name_error(std::string(65535, 'n')), "");
  EXPECT_EQ(attribute_name_error(std::string(65536, 'n')),
            "Attribute name has exceeded the maximum allowed length of 65535 bytes");
  JsonDocument document;
  ASSERT_TRUE(document.parse(R"({"a":{"S":"x"},"":{"S":"y"}})"));
  Validation v;
  decode_item(document.root(), v);
  EXPECT_EQ(v.message(), "One or more parameter values were invalid: Empty attribute name");
}

}  // namespace
}  // namespace kumo::api
