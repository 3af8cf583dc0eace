#include "codec/key_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>
#include "values.h"

namespace kumo::codec {
namespace {

using namespace kumo::test;

std::string enc(const AttributeValue& v) {
  std::string out;
  append_key_value(&out, v);
  return out;
}

ScalarType scalar(const AttributeValue& v) {
  switch (v.type()) {
    case AttrType::N:
      return ScalarType::N;
    case AttrType::B:
      return ScalarType::B;
    default:
      return ScalarType::S;
  }
}

// Decodes `encoded` completely as one value of `type`.
bool decode_all(std::string_view encoded, ScalarType type, AttributeValue* out) {
  return read_key_value(&encoded, type, out) && encoded.empty();
}

// Checks that encoding preserves the strict order of `sorted` and round-trips every value.
void expect_order_preserved(const std::vector<AttributeValue>& sorted) {
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const std::string ei = enc(sorted[i]);
    AttributeValue back;
    ASSERT_TRUE(decode_all(ei, scalar(sorted[i]), &back)) << i;
    EXPECT_EQ(back, sorted[i]) << i;
    for (std::size_t j = i + 1; j < sorted.size(); ++j) {
      EXPECT_LT(ei, enc(sorted[j])) << "index " << i << " vs " << j;
    }
  }
}

TEST(KeyCodecNumber, OrderMatchesNumericOrder) {
  std::vector<std::string> texts = {"-9.9999999999999999999999999999999999999E+125",
                                    "-1e125",
                                    "-123456789012345678901234567890",
                                    "-1000",
                                    "-999.9",
                                    "-100",
                                    "-11",
                                    "-10.5",
                                    "-10",
                                    "-9",
                                    "-1.5",
                                    "-1.01",
                                    "-1",
                                    "-0.5",
                                    "-0.123",
                                    "-0.12",
                                    "-0.1",
                                    "-1e-129",
                                    "-1e-130",
                                    "0",
                                    "1e-130",
                                    "1.1e-130",
                                    "2e-130",
                                    "1e-129",
                                    "0.001",
                                    "0.0011",
                                    "0.1",
                                    "0.12",
                                    "0.123",
                                    "0.5",
                                    "1",
                                    "1.0001",
                                    "1.01",
                                    "1.5",
                                    "2",
                                    "9",
                                    "9.99",
                                    "10",
                                    "10.5",
                                    "11",
                                    "99",
                                    "100",
                                    "101",
                                    "1000",
                                    "12345678901234567890123456789012345678",
                                    "1e125",
                                    "9.9999999999999999999999999999999999999E+125"};
  std::vector<AttributeValue> values;
  for (const auto& t : texts) values.push_back(N(t));
  expect_order_preserved(values);
}

TEST(KeyCodecNumber, EqualNumbersEncodeIdentically) {
  EXPECT_EQ(enc(N("1")), enc(N("1.0")));
  EXPECT_EQ(enc(N("1")), enc(N("1E0")));
  EXPECT_EQ(enc(N("1")), enc(N("+0001.000e0")));
  EXPECT_EQ(enc(N("1000")), enc(N("1e3")));
  EXPECT_EQ(enc(N("0")), enc(N("-0.0")));
  EXPECT_EQ(enc(N("-2.5")), enc(N("-25e-1")));
  EXPECT_EQ(enc(N("0")).size(), 1u);
}

TEST(KeyCodecNumber, RandomizedSortedVectors) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> digit_count(1, 38), digit(0, 9), exponent(-129, 126),
      coin(0, 2);
  for (int round = 0; round < 20; ++round) {
    std::vector<Decimal> numbers;
    for (int i = 0; i < 200; ++i) {
      std::string text = coin(rng) == 0 ? "-0." : "0.";
      const int n = digit_count(rng);
      for (int k = 0; k < n; ++k) text.push_back(static_cast<char>('0' + digit(rng)));
      // Mostly nearby exponents so that equal exponents with different digits show up.
      const int e = coin(rng) == 0 ? exponent(rng) : digit(rng) - 5;
      text += "E" + std::to_string(e);
      Decimal d;
      // Digits may start with zeros (then the exponent shifts), out-of-range values are
      // simply skipped.
      if (Decimal::parse(text, &d) == Decimal::ParseError::kNone) numbers.push_back(d);
    }
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    std::vector<std::string> encoded;
    for (const auto& d : numbers) encoded.push_back(enc(AttributeValue::number(d)));
    EXPECT_TRUE(std::is_sorted(encoded.begin(), encoded.end()));
    EXPECT_EQ(std::adjacent_find(encoded.begin(), encoded.end()), encoded.end());
    for (std::size_t i = 0; i < encoded.size(); ++i) {
      AttributeValue back;
      ASSERT_TRUE(decode_all(encoded[i], ScalarType::N, &back));
      EXPECT_EQ(back.as_number(), numbers[i]);
    }
  }
}

TEST(KeyCodecString, OrderMatchesUtf8ByteOrder) {
  std::vector<AttributeValue> values = {
      S(""),
      S(std::string("\x00", 1)),
      S(std::string("\x00\x00", 2)),
      S(std::string("\x00\x01", 2)),
      S("\x01"),
      S("A"),
      S("Z"),
      S("a"),
      S(std::string("a\x00", 2)),
      S(std::string("a\x00z", 3)),
      S("a\x01"),
      S("aa"),
      S("ab"),
      S("abc"),
      S("b"),
      S("z"),
      S("\x7F"),
      S("\xC3\xA9"),          // é
      S("\xE2\x82\xAC"),      // €
      S("\xEF\xBF\xBF"),      // U+FFFF
      S("\xF0\x9F\x98\x80"),  // 😀 sorts after U+FFFF in UTF-8 byte order
  };
  expect_order_preserved(values);
}

TEST(KeyCodecString, LongStrings) {
  const std::string base(1500, 'x');
  std::vector<AttributeValue> values = {S(base), S(base + std::string(1, '\0')), S(base + "a"),
                                        S(base + "y"), S(std::string(1500, 'y'))};
  expect_order_preserved(values);
  std::string with_zeros(2048, '\0');
  AttributeValue back;
  ASSERT_TRUE(decode_all(enc(S(with_zeros)), ScalarType::S, &back));
  EXPECT_EQ(back.as_string(), with_zeros);
}

TEST(KeyCodecBinary, OrderMatchesUnsignedByteOrder) {
  auto b = [](std::initializer_list<unsigned char> bytes) {
    return B(std::string(bytes.begin(), bytes.end()));
  };
  std::vector<AttributeValue> values = {
      b({}),           b({0x00}),       b({0x00, 0x00}), b({0x00, 0x01}), b({0x00, 0xFF}),
      b({0x01}),       b({0x01, 0x00}), b({0x01, 0xFF}), b({0x7F}),       b({0x80}),
      b({0xFE, 0xFF}), b({0xFF}),       b({0xFF, 0x00}), b({0xFF, 0xFF}), b({0xFF, 0xFF, 0xFF}),
  };
  expect_order_preserved(values);
}

TEST(KeyCodecBinary, RandomizedSortedVectors) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> len(0, 6), byte(0, 3);
  // A tiny alphabet that includes the escape byte and 0xFF, so prefixes and escapes collide
  // often.
  const unsigned char alphabet[] = {0x00, 0x01, 0xFE, 0xFF};
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> raw;
    for (int i = 0; i < 300; ++i) {
      std::string s;
      for (int k = len(rng); k > 0; --k) s.push_back(static_cast<char>(alphabet[byte(rng)]));
      raw.push_back(s);
    }
    // std::string compares as unsigned bytes (char_traits<char>::lt is unsigned).
    std::sort(raw.begin(), raw.end());
    raw.erase(std::unique(raw.begin(), raw.end()), raw.end());
    std::vector<AttributeValue> values;
    for (const auto& s : raw) values.push_back(B(s));
    expect_order_preserved(values);
  }
}

TEST(KeyCodec, TupleSortsByFirstThenSecondComponent) {
  const std::vector<AttributeValue> pks = {
      S(""), S(std::string(1, '\0')), S("a"), S("a\x01"), S("ab"), S("b")};
  const std::vector<AttributeValue> sks = {N("-5"), N("0"), N("0.5"), N("1"), N("10"), N("1e100")};
  std::vector<std::string> encoded;
  for (const auto& pk : pks) {
    for (const auto& sk : sks) encoded.push_back(enc(pk) + enc(sk));
  }
  EXPECT_TRUE(std::is_sorted(encoded.begin(), encoded.end()));
  EXPECT_EQ(std::adjacent_find(encoded.begin(), encoded.end()), encoded.end());

  // String sort keys under the same partition key, including prefixes.
  std::vector<std::string> by_string;
  for (const auto& sk : {S(""), S("x"), S(std::string("x\0", 2)), S("xa"), S("y")}) {
    by_string.push_back(enc(B("k")) + enc(sk));
  }
  EXPECT_TRUE(std::is_sorted(by_string.begin(), by_string.end()));

  // Reading the concatenation back yields both components and consumes all bytes.
  std::string tuple = enc(S("pk")) + enc(N("-3.25")) + enc(B(std::string("\x00\xFF", 2)));
  std::string_view in = tuple;
  AttributeValue a, b, c;
  ASSERT_TRUE(read_key_value(&in, ScalarType::S, &a));
  ASSERT_TRUE(read_key_value(&in, ScalarType::N, &b));
  ASSERT_TRUE(read_key_value(&in, ScalarType::B, &c));
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(a, S("pk"));
  EXPECT_EQ(b, N("-3.25"));
  EXPECT_EQ(c, B(std::string("\x00\xFF", 2)));
}

TEST(KeyCodec, RejectsMalformedInput) {
  AttributeValue out;
  auto rejects = [&](std::string bytes, ScalarType type) {
    std::string_view in = bytes;
    const std::string_view before = in;
    EXPECT_FALSE(read_key_value(&in, type, &out)) << testing::PrintToString(bytes);
    EXPECT_EQ(in, before);
  };
  // Strings/binary: missing terminator, dangling escape, bad escape.
  rejects("", ScalarType::S);
  rejects("abc", ScalarType::S);
  rejects(std::string("abc\x00", 4), ScalarType::S);
  rejects(std::string("a\x00\x02", 3), ScalarType::B);
  rejects(std::string("a\x00\xFF", 3), ScalarType::B);
  // Numbers: empty, unknown marker, truncated, bad digit byte, non-canonical digits.
  rejects("", ScalarType::N);
  rejects(std::string(1, '\0'), ScalarType::N);
  rejects("\x04", ScalarType::N);
  rejects("\x03", ScalarType::N);
  rejects("\x03\x81", ScalarType::N);
  rejects("\x03\x81\x11", ScalarType::N);
  rejects(std::string("\x03\x81\x00", 3), ScalarType::N);          // no digits
  rejects(std::string("\x03\x81\x1A\x00", 4), ScalarType::N);      // digit byte out of range
  rejects(std::string("\x03\x81\x10\x11\x00", 5), ScalarType::N);  // leading zero digit
  rejects(std::string("\x03\x81\x11\x10\x00", 5), ScalarType::N);  // trailing zero digit
  rejects(std::string("\x01\x7E\xEE", 3), ScalarType::N);          // negative, truncated
  // More than 38 digits.
  std::string long_digits("\x03\x81", 2);
  long_digits.append(39, '\x11');
  long_digits.push_back('\0');
  rejects(long_digits, ScalarType::N);

  // Every strict prefix of a valid encoding is rejected (self-delimiting, no overread).
  for (const auto& v :
       {S(std::string("hello\0world", 11)), B(std::string("\x00\x00\xFF", 3)), N("-123.456"),
        N("9.9999999999999999999999999999999999999E+125"), N("1e-130")}) {
    const std::string full = enc(v);
    for (std::size_t len = 0; len < full.size(); ++len) {
      rejects(full.substr(0, len), scalar(v));
    }
  }
}

TEST(KeyCodec, RandomBytesNeverCrash) {
  std::mt19937_64 rng(1234);
  std::uniform_int_distribution<int> len(0, 40), byte(0, 255);
  for (int i = 0; i < 20000; ++i) {
    std::string bytes;
    for (int k = len(rng); k > 0; --k) bytes.push_back(static_cast<char>(byte(rng)));
    for (ScalarType type : {ScalarType::S, ScalarType::N, ScalarType::B}) {
      std::string_view in = bytes;
      AttributeValue out;
      if (read_key_value(&in, type, &out)) {
        // Whatever decodes re-encodes to exactly the bytes consumed.
        EXPECT_EQ(enc(out), bytes.substr(0, bytes.size() - in.size()));
      }
    }
  }
}

TEST(KeyCodec, BigEndianIntegers) {
  std::string out;
  append_u32(&out, 0x01020304u);
  append_u64(&out, 0x05060708090A0B0Cull);
  EXPECT_EQ(out, std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0A\x0B\x0C"));
  EXPECT_EQ(read_u64(std::string_view(out).substr(4)), 0x05060708090A0B0Cull);
  std::string max;
  append_u64(&max, ~0ull);
  EXPECT_EQ(read_u64(max), ~0ull);
  // Big-endian order is numeric order.
  std::string a, b;
  append_u64(&a, 255);
  append_u64(&b, 256);
  EXPECT_LT(a, b);
}

TEST(KeyCodec, Prefixes) {
  EXPECT_EQ(table_prefix(0x00000102u), std::string("\x00\x00\x01\x02", 4));
  EXPECT_EQ(space_prefix(7, Space::kItems), std::string("\x00\x00\x00\x07\x01", 5));
  EXPECT_EQ(space_prefix(7, Space::kTtl), std::string("\x00\x00\x00\x07\x04", 5));
  EXPECT_LT(table_prefix(1), table_prefix(2));
  EXPECT_LT(space_prefix(1, Space::kTtl), table_prefix(2));
}

TEST(KeyCodec, PrefixEnd) {
  EXPECT_EQ(prefix_end("abc"), "abd");
  EXPECT_EQ(prefix_end(std::string("a\xFF", 2)), "b");
  EXPECT_EQ(prefix_end(std::string("a\xFE\xFF\xFF", 4)), std::string("a\xFF", 2));
  EXPECT_EQ(prefix_end(std::string("\xFF\xFF", 2)), "");
  EXPECT_EQ(prefix_end(""), "");
  EXPECT_EQ(prefix_end(table_prefix(1)), table_prefix(2));
  EXPECT_EQ(prefix_end(table_prefix(0xFFFFFFFFu)), "");

  // Every key with the prefix sorts below prefix_end, and prefix_end is the smallest such
  // bound: anything between would have to start with the prefix.
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<int> len(0, 4), byte(0, 3);
  const unsigned char alphabet[] = {0x00, 0x01, 0xFE, 0xFF};
  for (int i = 0; i < 500; ++i) {
    std::string prefix;
    for (int k = len(rng) + 1; k > 0; --k) prefix.push_back(static_cast<char>(alphabet[byte(rng)]));
    const std::string end = prefix_end(prefix);
    std::string key = prefix;
    for (int k = len(rng); k > 0; --k) key.push_back(static_cast<char>(alphabet[byte(rng)]));
    if (end.empty()) {
      EXPECT_EQ(prefix.find_first_not_of('\xFF'), std::string::npos);
      continue;
    }
    EXPECT_LT(key, end);
    EXPECT_LT(prefix, end);
    EXPECT_FALSE(end.starts_with(prefix));
  }
}

TEST(KeyCodec, ItemKeyLayout) {
  const AttributeValue pk = S("user#1");
  const AttributeValue sk = N("42");
  const std::string key = item_key(9, pk, &sk);
  const std::string epk = enc(pk);
  std::string expected = space_prefix(9, Space::kItems);
  append_u64(&expected, token(epk));
  expected += epk;
  expected += enc(sk);
  EXPECT_EQ(key, expected);
  EXPECT_EQ(read_u64(std::string_view(key).substr(5)), token(epk));

  const std::string hash_only = item_key(9, pk, nullptr);
  EXPECT_EQ(hash_only, key.substr(0, key.size() - enc(sk).size()));
  EXPECT_TRUE(key.starts_with(hash_only));

  // The token depends only on the encoded partition key, and equal numbers share it.
  EXPECT_EQ(token(enc(N("1.0"))), token(enc(N("1"))));
  EXPECT_NE(token(enc(S("a"))), token(enc(S("b"))));
  EXPECT_EQ(item_key(9, N("1e3"), nullptr), item_key(9, N("1000"), nullptr));

  // Items of one partition are contiguous and sorted by sort key.
  const AttributeValue s1 = N("-1"), s2 = N("0"), s3 = N("2.5");
  EXPECT_LT(item_key(9, pk, &s1), item_key(9, pk, &s2));
  EXPECT_LT(item_key(9, pk, &s2), item_key(9, pk, &s3));
  EXPECT_TRUE(item_key(9, pk, &s3).starts_with(hash_only));
}

}  // namespace
}  // namespace kumo::codec
