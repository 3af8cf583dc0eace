#include "model/decimal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>
#include "values.h"

namespace kumo {
namespace {

using namespace kumo::test;

using PE = Decimal::ParseError;

PE parse_error(std::string_view text) {
  Decimal d;
  return Decimal::parse(text, &d);
}

TEST(DecimalParse, AcceptsDynamoDbSyntax) {
  EXPECT_EQ(num("42").to_string(), "42");
  EXPECT_EQ(num("+1.23").to_string(), "1.23");
  EXPECT_EQ(num(".123").to_string(), "0.123");
  EXPECT_EQ(num("0001.23").to_string(), "1.23");
  EXPECT_EQ(num("1e-003").to_string(), "0.001");
  EXPECT_EQ(num("+1E6").to_string(), "1000000");
  EXPECT_EQ(num("-17.4E37").to_string(), "-174" + std::string(36, '0'));
  EXPECT_EQ(num("0.0").to_string(), "0");
  EXPECT_EQ(num("-0.0").to_string(), "0");
  EXPECT_EQ(num("5.").to_string(), "5");
  EXPECT_EQ(num("0000000000000000000000000000000000000000.42").to_string(), "0.42");
}

TEST(DecimalParse, ThirtyEightSignificantDigits) {
  const std::string digits38 = "12345678901234567890123456789012345678";
  EXPECT_EQ(num(digits38).to_string(), digits38);
  EXPECT_EQ(num(digits38).digits().size(), 38u);
  // Trailing zeros of the integer part and of the fraction do not count.
  EXPECT_EQ(num(digits38 + "000000").to_string(), digits38 + "000000");
  EXPECT_EQ(num("1.2345678901234567890123456789012345678000000").digits().size(), 38u);
  // Leading zeros of the fraction do not count either.
  EXPECT_EQ(num("0.000" + digits38).digits().size(), 38u);
  EXPECT_EQ(parse_error(digits38 + "9"), PE::kTooManyDigits);
  EXPECT_EQ(parse_error("1." + digits38), PE::kTooManyDigits);
}

TEST(DecimalParse, RejectsNonNumbers) {
  for (std::string_view text :
       {"NaN", "Infinity", "inf", "-inf", "0x10", " 1", "1 ", "1e", "e5", ".", "+", "-", "1.2.3",
        "\"1\"", "1e+", "1e5.5", "--1", "1,5", "１"}) {
    EXPECT_EQ(parse_error(text), PE::kNotANumber) << text;
  }
  EXPECT_EQ(parse_error(""), PE::kEmpty);
}

TEST(DecimalParse, Range) {
  EXPECT_EQ(parse_error("1e126"), PE::kOverflow);
  EXPECT_EQ(parse_error("-1e126"), PE::kOverflow);
  EXPECT_EQ(parse_error("1e99999999999999999999"), PE::kOverflow);
  EXPECT_EQ(num("9.9999999999999999999999999999999999999E+125").digits(), std::string(38, '9'));
  EXPECT_EQ(num("-9.9999999999999999999999999999999999999E+125").exponent(), 126);
  EXPECT_EQ(num("1e-130").to_string(), "0." + std::string(129, '0') + "1");
  EXPECT_EQ(num("-1e-130").exponent(), -129);
  EXPECT_EQ(parse_error("1e-131"), PE::kUnderflow);
  EXPECT_EQ(parse_error("-1e-131"), PE::kUnderflow);
  EXPECT_EQ(parse_error("1e-99999999999999999999"), PE::kUnderflow);
  // A zero's range is judged by the exponent it is written with, its last digit counting
  // as significant; small exponents are fine.
  EXPECT_EQ(parse_error("0e126"), PE::kOverflow);
  EXPECT_EQ(parse_error("-00e126"), PE::kOverflow);
  EXPECT_EQ(parse_error("0e999"), PE::kOverflow);
  EXPECT_EQ(parse_error("0.00e128"), PE::kOverflow);
  EXPECT_TRUE(num("0e125").is_zero());
  EXPECT_TRUE(num("0.0e126").is_zero());
  EXPECT_TRUE(num("0.00e127").is_zero());
  EXPECT_TRUE(num("0e-999").is_zero());
}

TEST(DecimalToString, Canonical) {
  EXPECT_EQ(num("0042.1200").to_string(), "42.12");
  EXPECT_EQ(num("1E125").to_string(), "1" + std::string(125, '0'));
  EXPECT_EQ(num("1e3").to_string(), "1000");
  EXPECT_EQ(num("1000.0").to_string(), "1000");
  EXPECT_EQ(num("+1000").to_string(), "1000");
  EXPECT_EQ(num("1e3"), num("1000.0"));
  EXPECT_EQ(num("1e3"), num("+1000"));
  EXPECT_EQ(num("1.5e-3").to_string(), "0.0015");
  EXPECT_EQ(num("-0").to_string(), "0");
  EXPECT_FALSE(num("-0").negative());
  EXPECT_EQ(num("-0"), Decimal());
  EXPECT_EQ(num("-12.50").to_string(), "-12.5");
  EXPECT_EQ(num("123.456").to_string(), "123.456");
  EXPECT_EQ(Decimal::from_int(-9876).to_string(), "-9876");
  EXPECT_EQ(Decimal::from_int(0).to_string(), "0");
}

TEST(DecimalErrorMessage, MatchesDynamoDb) {
  EXPECT_EQ(Decimal::error_message(PE::kNotANumber, "abc"),
            "The parameter cannot be converted to a numeric value: abc");
  EXPECT_EQ(Decimal::error_message(PE::kEmpty, ""),
            "The parameter cannot be converted to a numeric value");
  EXPECT_EQ(Decimal::error_message(PE::kTooManyDigits, "x"),
            "Attempting to store more than 38 significant digits in a Number");
  EXPECT_EQ(Decimal::error_message(PE::kOverflow, "1e126"),
            "Number overflow. Attempting to store a number with magnitude larger than "
            "supported range");
  EXPECT_EQ(Decimal::error_message(PE::kUnderflow, "1e-131"),
            "Number underflow. Attempting to store a number with magnitude smaller than "
            "supported range");
  EXPECT_EQ(Decimal::error_message(PE::kNone, "1"), "");
}

TEST(DecimalOrder, Numeric) {
  const std::vector<std::string> sorted = {
      "-1e125",  "-1000",
      "-999.9",  "-10",
      "-2",      "-1.5",
      "-1",      "-0.5",
      "-0.123",  "-0.12",
      "-1e-130", "0",
      "1e-130",  "0.001",
      "0.0011",  "0.12",
      "0.123",   "1",
      "1.0001",  "2",
      "9.99",    "10",
      "11",      "100",
      "1e20",    "9.9999999999999999999999999999999999999E+125"};
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    for (std::size_t j = 0; j < sorted.size(); ++j) {
      EXPECT_EQ(num(sorted[i]) <=> num(sorted[j]), i <=> j) << sorted[i] << " vs " << sorted[j];
    }
  }
  EXPECT_EQ(num("1") <=> num("1.000"), std::strong_ordering::equal);
  EXPECT_EQ(num("-0") <=> num("0"), std::strong_ordering::equal);
}

TEST(DecimalArithmetic, Exact) {
  Decimal out;
  ASSERT_EQ(Decimal::add(num("0.1"), num("0.2"), &out), PE::kNone);
  EXPECT_EQ(out.to_string(), "0.3");
  ASSERT_EQ(Decimal::subtract(num("1"), num("0.0001"), &out), PE::kNone);
  EXPECT_EQ(out.to_string(), "0.9999");
  ASSERT_EQ(Decimal::add(num("-5"), num("5"), &out), PE::kNone);
  EXPECT_TRUE(out.is_zero());
  EXPECT_EQ(out, Decimal());
  ASSERT_EQ(Decimal::subtract(num("3"), num("10"), &out), PE::kNone);
  EXPECT_EQ(out.to_string(), "-7");
  ASSERT_EQ(Decimal::add(Decimal(), num("-1.5"), &out), PE::kNone);
  EXPECT_EQ(out.to_string(), "-1.5");
  ASSERT_EQ(Decimal::subtract(Decimal(), num("-1.5"), &out), PE::kNone);
  EXPECT_EQ(out.to_string(), "1.5");
  ASSERT_EQ(Decimal::add(num("1e100"), num("1e100"), &out), PE::kNone);
  EXPECT_EQ(out, num("2e100"));
  // 37 nines + 1 still fits in 38 digits (1 followed by zeros).
  ASSERT_EQ(Decimal::add(num(std::string(37, '9')), num("1"), &out), PE::kNone);
  EXPECT_EQ(out, num("1e37"));
  ASSERT_EQ(Decimal::add(num(std::string(38, '9')), num("1"), &out), PE::kNone);
  EXPECT_EQ(out, num("1e38"));
}

TEST(DecimalArithmetic, OverflowReportedAsOverflow) {
  Decimal out;
  // The exact sum needs 39 significant digits.
  EXPECT_EQ(Decimal::add(num(std::string(38, '9')), num("0.1"), &out), PE::kOverflow);
  EXPECT_EQ(Decimal::add(num("1e20"), num("1e-20"), &out), PE::kOverflow);
  // Leaves the range.
  const Decimal max = num("9.9999999999999999999999999999999999999E+125");
  EXPECT_EQ(Decimal::add(max, num("1e88"), &out), PE::kOverflow);
  EXPECT_EQ(Decimal::subtract(Decimal(), max, &out), PE::kNone);
  EXPECT_EQ(Decimal::subtract(out, num("1e88"), &out), PE::kOverflow);
  // Too small a difference is reported as overflow as well (DynamoDB's arithmetic text).
  EXPECT_EQ(Decimal::subtract(num("2e-130"), num("1.5e-130"), &out), PE::kOverflow);
}

TEST(DecimalSize, MatchesDynamoDbExamples) {
  EXPECT_EQ(num("0").size_bytes(), 1u);
  EXPECT_EQ(num("1").size_bytes(), 2u);
  EXPECT_EQ(num("27").size_bytes(), 2u);
  EXPECT_EQ(num("1000").size_bytes(), 2u);
  EXPECT_EQ(num("1E125").size_bytes(), 2u);
  EXPECT_EQ(num("-27").size_bytes(), 3u);
  EXPECT_EQ(num("123").size_bytes(), 3u);
  EXPECT_EQ(num("123456").size_bytes(), 4u);
  EXPECT_EQ(num("42.12").size_bytes(), 3u);
  EXPECT_EQ(num("3.14159").size_bytes(), 5u);
  EXPECT_EQ(num("12345678901234567890123456789012345678").size_bytes(), 20u);
  EXPECT_EQ(num("110").size_bytes(), 3u);
  EXPECT_EQ(num("0.5").size_bytes(), 2u);
  EXPECT_EQ(num("0.05").size_bytes(), 2u);
  EXPECT_EQ(num("-0.001").size_bytes(), 3u);
}

// Stored numbers are measured on their canonical text; the count must be the one the
// built number gives, for every number in range.
TEST(DecimalSize, CanonicalTextCountsAsTheNumber) {
  std::vector<std::string> texts = {"0",
                                    "1",
                                    "-1",
                                    "27",
                                    "1000",
                                    "1E125",
                                    "9.9999E125",
                                    "-9.99E125",
                                    "1E-130",
                                    "-1E-130",
                                    "1.5E-129",
                                    "110",
                                    "0.5",
                                    "0.05",
                                    "-0.001",
                                    "42.12",
                                    "3.14159",
                                    "100.01",
                                    "12345678901234567890123456789012345678",
                                    "1E-1",
                                    "1E1",
                                    "10.1",
                                    "1.01",
                                    "0.101",
                                    "0.0101"};
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string text = (rng() % 2) ? "-" : "";
    const int digits = 1 + static_cast<int>(rng() % 38);
    for (int d = 0; d < digits; ++d) {
      // Runs of zeros inside, at the front and at the end are the interesting part.
      text.push_back(rng() % 3 == 0 ? '0' : static_cast<char>('1' + rng() % 9));
    }
    text += "E" + std::to_string(static_cast<int>(rng() % 240) - 140);
    texts.push_back(text);
  }
  std::size_t checked = 0;
  for (const auto& text : texts) {
    Decimal number;
    if (Decimal::parse(text, &number) != PE::kNone) continue;
    const std::string canonical = number.to_string();
    ASSERT_EQ(Decimal::canonical_size_bytes(canonical), number.size_bytes())
        << text << " as " << canonical;
    ++checked;
  }
  EXPECT_GT(checked, 10000u);
}

TEST(DecimalSize, OtherTextIsLeftToParse) {
  for (const char* text : {"", "-", "-0", "+1", "01", "00", "1.", ".5", "1.50", "0.0", "1E5", "1e5",
                           "1.2.3", "12a", " 1", "0.", "--1", "-01.5"}) {
    EXPECT_EQ(Decimal::canonical_size_bytes(text), std::nullopt) << text;
  }
  // In canonical form but out of range: 39 significant digits, 1E126, 1E-131.
  EXPECT_EQ(Decimal::canonical_size_bytes("123456789012345678901234567890123456789"), std::nullopt);
  EXPECT_EQ(Decimal::canonical_size_bytes("1" + std::string(126, '0')), std::nullopt);
  EXPECT_EQ(Decimal::canonical_size_bytes("0." + std::string(130, '0') + "1"), std::nullopt);
  EXPECT_EQ(Decimal::canonical_size_bytes("0." + std::string(129, '0') + "1"), 2u);
}

}  // namespace
}  // namespace kumo
