#include "codec/item_codec.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include "values.h"

namespace kumo::codec {
namespace {

using namespace kumo::test;

// An item using all ten types, nested inside lists and maps.
Item sample_item() {
  AttributeMap inner{
      {"s", S("caf\xC3\xA9")},
      {"n", N("-12.5e-3")},
      {"b", B(std::string("\x00\x01\xFF", 3))},
      {"t", AttributeValue::boolean(true)},
      {"f", AttributeValue::boolean(false)},
      {"z", AttributeValue::null()},
      {"ss", AttributeValue::string_set({"x", "", "y"})},
      {"ns", AttributeValue::number_set(
                 {num("1"), num("9.9999999999999999999999999999999999999E+125"), num("-1e-130")})},
      {"bs", AttributeValue::binary_set({std::string(1, '\0'), "\xFF"})},
      {"empty_l", AttributeValue::list({})},
      {"empty_m", AttributeValue::map({})},
  };
  AttributeList list{S(""), N("0"), AttributeValue::map(inner),
                     AttributeValue::list({AttributeValue::list({N("42")})})};
  return Item{
      {"id", S("user#1")},
      {"", S("empty name")},
      {std::string("nul\0name", 8), N("3")},
      {"long", S(std::string(300, 'q'))},  // length needs a two-byte varint
      {"inner", AttributeValue::map(inner)},
      {"list", AttributeValue::list(list)},
  };
}

TEST(ItemCodec, RoundTripsAllTypesNested) {
  const Item item = sample_item();
  const std::string bytes = encode_item(item);
  Item back;
  ASSERT_TRUE(decode_item(bytes, &back));
  EXPECT_EQ(back, item);
  // Decoding is deterministic: re-encoding gives the same bytes.
  EXPECT_EQ(encode_item(back), bytes);

  std::string appended = "prefix";
  encode_item(item, &appended);
  EXPECT_EQ(appended, "prefix" + bytes);
}

TEST(ItemCodec, EmptyItem) {
  const std::string bytes = encode_item(Item{});
  EXPECT_EQ(bytes, std::string(1, '\0'));
  Item back{{"stale", S("x")}};
  ASSERT_TRUE(decode_item(bytes, &back));
  EXPECT_TRUE(back.empty());
}

TEST(ItemCodec, NumbersStoredCanonically) {
  const Item a{{"n", N("1000.0")}}, b{{"n", N("1e3")}};
  EXPECT_EQ(encode_item(a), encode_item(b));
  Item back;
  ASSERT_TRUE(decode_item(encode_item(a), &back));
  EXPECT_EQ(back.at("n").as_number().to_string(), "1000");
}

TEST(ItemCodec, SingleValues) {
  for (const AttributeValue& v :
       {S("x"), N("-0.001"), B(""), AttributeValue::boolean(true), AttributeValue::null(),
        AttributeValue::string_set({"a"}), AttributeValue::list({N("1"), S("a")})}) {
    std::string bytes;
    encode_value(v, &bytes);
    bytes += "tail";
    std::string_view in = bytes;
    AttributeValue back;
    ASSERT_TRUE(decode_value(&in, &back));
    EXPECT_EQ(back, v);
    EXPECT_EQ(in, "tail");
  }
}

TEST(ItemCodec, RejectsEveryTruncation) {
  const std::string bytes = encode_item(sample_item());
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    Item out;
    EXPECT_FALSE(decode_item(std::string_view(bytes).substr(0, len), &out)) << len;
  }
  Item out;
  EXPECT_FALSE(decode_item(bytes + "x", &out)) << "trailing bytes";

  std::string value;
  encode_value(AttributeValue::map(sample_item()), &value);
  for (std::size_t len = 0; len < value.size(); ++len) {
    std::string_view in = std::string_view(value).substr(0, len);
    const std::string_view before = in;
    AttributeValue v;
    EXPECT_FALSE(decode_value(&in, &v)) << len;
    EXPECT_EQ(in, before);
  }
}

// Records what a visitor sees, as text.
class Recorder : public ValueVisitor {
 public:
  std::string log;
  void key(std::string_view name) override { log += "k:" + std::string(name) + ";"; }
  void scalar(AttrType type, std::string_view text) override {
    log += std::string(type_name(type)) + ":" + std::string(text) + ";";
  }
  void boolean(bool value) override { log += value ? "true;" : "false;"; }
  void null() override { log += "null;"; }
  void begin(AttrType type, std::size_t count) override {
    log += "begin " + std::string(type_name(type)) + " " + std::to_string(count) + ";";
  }
  void member(std::string_view text) override { log += "m:" + std::string(text) + ";"; }
  void end(AttrType type) override { log += "end " + std::string(type_name(type)) + ";"; }
};

// Walking the encoding sees exactly what visiting the decoded item sees, and measures it
// as item_size does.
TEST(ItemCodec, WalkMatchesVisitAndSize) {
  for (const Item& item : {sample_item(), Item{}, Item{{"a", N("-0.000123")}}}) {
    const std::string bytes = encode_item(item);
    Recorder walked, visited;
    ASSERT_TRUE(walk_item(bytes, walked));
    visit_item(item, visited);
    EXPECT_EQ(walked.log, visited.log);
    SizeCounter size;
    ASSERT_TRUE(walk_item(bytes, size));
    EXPECT_TRUE(size.valid());
    EXPECT_EQ(size.size(), item_size(item));
  }
  Recorder small;
  ASSERT_TRUE(walk_item(encode_item(Item{{"l", AttributeValue::list({N("1.50"), S("x")})},
                                         {"ns", AttributeValue::number_set({num("2")})}}),
                        small));
  EXPECT_EQ(small.log, "k:l;begin L 2;N:1.5;S:x;end L;k:ns;begin NS 1;m:2;end NS;");
}

TEST(ItemCodec, StoredItemsKeepTheirSize) {
  const Item item = sample_item();
  const std::string bytes = encode_stored_item(item, 70000);  // a three-byte varint
  const std::optional<StoredForm> form = split_stored_item(bytes);
  ASSERT_TRUE(form);
  EXPECT_EQ(form->size, std::optional<std::size_t>(70000));
  EXPECT_EQ(form->item, encode_item(item));

  // An item written before the size was kept is encode_item's form alone.
  const std::string bare = encode_item(item);
  const std::optional<StoredForm> old = split_stored_item(bare);
  ASSERT_TRUE(old);
  EXPECT_EQ(old->size, std::nullopt);
  EXPECT_EQ(old->item, bare);

  // A size cut short or over-long is refused.
  EXPECT_EQ(split_stored_item(std::string("\0", 1)), std::nullopt);
  EXPECT_EQ(split_stored_item(std::string("\0\x80", 2)), std::nullopt);
  EXPECT_EQ(split_stored_item(std::string(1, '\0') + std::string(10, '\xFF') + "\x01"),
            std::nullopt);
}

// Restamped, a stored item has other bytes that read as the same item and size; restamped
// again, it is back to its first bytes.
TEST(ItemCodec, ARestampedItemReadsAlikeInOtherBytes) {
  const Item item = sample_item();
  for (const std::size_t size : {std::size_t{0}, std::size_t{100}, std::size_t{70000}}) {
    const std::string bytes = encode_stored_item(item, size);
    const std::optional<std::string> once = restamp_stored_item(bytes);
    ASSERT_TRUE(once);
    EXPECT_NE(*once, bytes);
    EXPECT_EQ(once->size(), bytes.size() + 1);
    const std::optional<StoredForm> form = split_stored_item(*once);
    ASSERT_TRUE(form);
    EXPECT_EQ(form->size, std::optional<std::size_t>(size));
    EXPECT_EQ(form->item, encode_item(item));
    EXPECT_EQ(restamp_stored_item(*once), std::optional<std::string>(bytes));
  }
  EXPECT_EQ(restamp_stored_item(encode_item(item)), std::nullopt);  // stored before sizes
  EXPECT_EQ(restamp_stored_item(std::string("\0\x80", 2)), std::nullopt);
}

TEST(ItemCodec, WalkRejectsEveryTruncation) {
  const std::string bytes = encode_item(sample_item());
  for (std::size_t len = 0; len < bytes.size(); ++len) {
    Recorder r;
    EXPECT_FALSE(walk_item(std::string_view(bytes).substr(0, len), r)) << len;
  }
  Recorder r;
  EXPECT_FALSE(walk_item(bytes + "x", r)) << "trailing bytes";
}

TEST(ItemCodec, RejectsMalformedFields) {
  Item out;
  // Unknown type byte.
  EXPECT_FALSE(decode_item(std::string("\x01\x01"
                                       "a\x0A",
                                       4),
                           &out));
  // BOOL byte other than 0/1.
  EXPECT_FALSE(decode_item(std::string("\x01\x01"
                                       "a\x03\x02",
                                       5),
                           &out));
  // N text that is not a number.
  EXPECT_FALSE(decode_item(std::string("\x01\x01"
                                       "a\x01\x02"
                                       "1x",
                                       7),
                           &out));
  // Length beyond the input.
  EXPECT_FALSE(decode_item(std::string("\x01\x05"
                                       "a",
                                       3),
                           &out));
  // Huge counts are rejected without allocating for them.
  EXPECT_FALSE(decode_item(std::string("\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x7F", 9), &out));
  EXPECT_FALSE(decode_item(std::string("\x01\x01"
                                       "a\x06\xFF\xFF\xFF\xFF\x0F",
                                       9),
                           &out));
  // Over-long varint (more than 64 bits).
  EXPECT_FALSE(decode_item(std::string("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11), &out));
  // Duplicate attribute name.
  EXPECT_FALSE(decode_item(std::string("\x02\x01"
                                       "a\x04\x01"
                                       "a\x04",
                                       7),
                           &out));
  // The same minus the duplicate is fine.
  EXPECT_TRUE(decode_item(std::string("\x02\x01"
                                      "a\x04\x01"
                                      "b\x04",
                                      7),
                          &out));
  EXPECT_EQ(out.size(), 2u);
}

TEST(ItemCodec, BoundsNestingDepth) {
  // 40 levels of lists decode (DynamoDB allows 32) ...
  AttributeValue v = N("1");
  for (int i = 0; i < 40; ++i) v = AttributeValue::list({v});
  std::string bytes;
  encode_value(v, &bytes);
  std::string_view in = bytes;
  AttributeValue back;
  ASSERT_TRUE(decode_value(&in, &back));
  EXPECT_EQ(back, v);

  // ... but a corrupt value nesting far deeper is refused rather than recursed into.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += std::string("\x06\x01", 2);
  deep += std::string("\x04", 1);
  in = deep;
  EXPECT_FALSE(decode_value(&in, &back));
}

TEST(ItemCodec, RandomGarbageNeverCrashes) {
  std::mt19937_64 rng(2024);
  std::uniform_int_distribution<int> len(0, 64), byte(0, 255), small(0, 12);
  for (int i = 0; i < 20000; ++i) {
    std::string bytes;
    // Bias towards small bytes so type bytes, counts and lengths are often plausible.
    for (int k = len(rng); k > 0; --k) {
      bytes.push_back(static_cast<char>(i % 2 == 0 ? byte(rng) : small(rng)));
    }
    Item item;
    (void)decode_item(bytes, &item);
    std::string_view in = bytes;
    AttributeValue v;
    (void)decode_value(&in, &v);
  }
  // Mutations of a valid encoding.
  const std::string valid = encode_item(sample_item());
  for (int i = 0; i < 5000; ++i) {
    std::string bytes = valid;
    for (int k = 0; k < 3; ++k) {
      bytes[std::uniform_int_distribution<std::size_t>(0, bytes.size() - 1)(rng)] =
          static_cast<char>(byte(rng));
    }
    Item item;
    (void)decode_item(bytes, &item);
  }
}

}  // namespace
}  // namespace kumo::codec
