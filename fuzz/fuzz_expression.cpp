// Fuzzes the five expression kinds: the first byte picks the kind,
// the rest is the expression text, compiled against fixed ExpressionAttributeNames and
// ExpressionAttributeValues and, when it compiles, evaluated or applied on a fixed item.
// ApiError is the expected way to refuse an expression; any other exception, a crash, a
// sanitizer report or a broken invariant is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "expr/cache.h"
#include "expr/condition.h"
#include "expr/key_condition.h"
#include "expr/placeholders.h"
#include "expr/projection.h"
#include "expr/update.h"
#include "model/api_error.h"
#include "model/attribute_value.h"

namespace {

using namespace kumo;
using namespace kumo::expr;

// DynamoDB refuses expressions over 4 KiB before parsing; twice that still reaches the check.
constexpr std::size_t kMaxText = 8192;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_expression: %s\n", what);
  std::abort();
}

Decimal number(std::string_view text) {
  Decimal d;
  if (Decimal::parse(text, &d) != Decimal::ParseError::kNone) fail("bad fixture number");
  return d;
}
AttributeValue S(std::string s) {
  return AttributeValue::string(std::move(s));
}
AttributeValue N(std::string_view text) {
  return AttributeValue::number(number(text));
}
AttributeValue B(std::string bytes) {
  return AttributeValue::binary(std::move(bytes));
}
AttributeValue M(AttributeMap members) {
  return AttributeValue::map(std::move(members));
}
AttributeValue L(AttributeList values) {
  return AttributeValue::list(std::move(values));
}
AttributeValue NS(std::initializer_list<std::string_view> members) {
  std::vector<Decimal> numbers;
  for (std::string_view m : members) numbers.push_back(number(m));
  return AttributeValue::number_set(std::move(numbers));
}

const AttributeNames& names() {
  static const AttributeNames names{
      {"#pk", "pk"}, {"#sk", "sk"}, {"#s", "s"},   {"#n", "n"},     {"#b", "b"},
      {"#t", "t"},   {"#z", "z"},   {"#m", "m"},   {"#l", "l"},     {"#ss", "ss"},
      {"#ns", "ns"}, {"#bs", "bs"}, {"#e", "e"},   {"#dot", "a.b"}, {"#x", "missing"},
      {"#g1", "g1"}, {"#g2", "g2"}, {"#r1", "r1"}, {"#r2", "r2"},   {"#0", "0"}};
  return names;
}

const AttributeValues& values() {
  static const AttributeValues values{
      {":s", S("hello")},
      {":t", S("h")},
      {":e", S("")},
      {":ty", S("N")},
      {":n", N("1")},
      {":m", N("-2.5")},
      {":z", N("0")},
      {":big", N("9.9999999999999999999999999999999999999E+125")},
      {":tiny", N("1E-130")},
      {":b", B(std::string("\x01\x00", 2))},
      {":bool", AttributeValue::boolean(false)},
      {":null", AttributeValue::null()},
      {":map", M({{"a", S("x")}, {"n", N("1")}})},
      {":list", L({S("a"), N("1")})},
      {":el", L({})},
      {":ss", AttributeValue::string_set({"a", "c"})},
      {":ns", NS({"1", "3"})},
      {":bs", AttributeValue::binary_set({"\x01", "\x03"})},
  };
  return values;
}

// One attribute of every type, nested documents, key attributes of the schemas below, an
// attribute whose name holds a dot and an empty string.
const Item& item() {
  static const Item item{
      {"pk", S("p1")},
      {"sk", N("10")},
      {"g1", S("g")},
      {"g2", N("2")},
      {"r1", B("r")},
      {"r2", S("r2")},
      {"s", S("hello")},
      {"n", N("-3.25")},
      {"b", B(std::string("\x00\x01\x02", 3))},
      {"t", AttributeValue::boolean(true)},
      {"z", AttributeValue::null()},
      {"m", M({{"a", S("x")}, {"n", N("1")}, {"m", M({{"deep", L({N("1")})}})}})},
      {"l", L({S("a"), N("2"), M({{"k", S("v")}}), L({})})},
      {"ss", AttributeValue::string_set({"a", "b"})},
      {"ns", NS({"1", "2.5"})},
      {"bs", AttributeValue::binary_set({"\x01", "\x02"})},
      {"a.b", S("dotted")},
      {"e", S("")},
  };
  return item;
}

const Item& empty_item() {
  static const Item empty;
  return empty;
}

// AttributeValue's invariants that an update must keep: sets are non-empty and hold no
// duplicates.
void check_value(const AttributeValue& value) {
  switch (value.type()) {
    case AttrType::M:
      for (const auto& [name, member] : value.as_map()) check_value(member);
      break;
    case AttrType::L:
      for (const auto& element : value.as_list()) check_value(element);
      break;
    case AttrType::SS:
    case AttrType::BS: {
      const auto& members = value.as_string_set();
      if (members.empty()) fail("update left an empty string or binary set");
      for (std::size_t i = 0; i < members.size(); ++i)
        for (std::size_t j = i + 1; j < members.size(); ++j)
          if (members[i] == members[j]) fail("update left a duplicate set member");
      break;
    }
    case AttrType::NS: {
      const auto& members = value.as_number_set();
      if (members.empty()) fail("update left an empty number set");
      for (std::size_t i = 0; i < members.size(); ++i)
        for (std::size_t j = i + 1; j < members.size(); ++j)
          if (members[i] == members[j]) fail("update left a duplicate number set member");
      break;
    }
    default:
      break;
  }
}

void check_placeholders_of(const ParsedExpression& parsed) {
  try {
    check_placeholders({&parsed}, names(), values());
  } catch (const ApiError&) {
  }
}

void fuzz_condition(ExpressionKind kind, std::string_view text) {
  std::optional<ConditionExpression> condition;
  try {
    condition.emplace(ConditionExpression::compile(kind, text, names(), values()));
  } catch (const ApiError&) {
    return;
  }
  check_placeholders_of(condition->parsed());
  // DynamoDB's conditions are two-valued (a comparison with a missing attribute or of
  // mismatched types is false), so NOT (c) must hold exactly where c does not. The wrapped
  // text may fail to compile (one operator or nesting level more than allowed).
  std::optional<ConditionExpression> negated;
  const std::string negated_text = "NOT (" + std::string(text) + ")";
  try {
    negated.emplace(ConditionExpression::compile(kind, negated_text, names(), values()));
  } catch (const ApiError&) {
  }
  // matches() never throws: an exception from here is a finding.
  for (const Item* candidate : {&item(), &empty_item(), &item().at("m").as_map()}) {
    const bool matched = condition->matches(*candidate);
    if (negated && negated->matches(*candidate) == matched) fail("NOT (c) agrees with c");
  }
  condition->attribute_names();
  const std::vector<std::string> keys{"pk", "sk"};
  try {
    condition->check_no_key_attributes(keys);
  } catch (const ApiError&) {
  }
}

void fuzz_key_condition(std::string_view text) {
  std::optional<KeyConditionExpression> key_condition;
  try {
    key_condition.emplace(KeyConditionExpression::compile(text, names(), values()));
  } catch (const ApiError&) {
    return;
  }
  check_placeholders_of(key_condition->parsed());
  const KeySchema table{{"pk", ScalarType::S}, AttributeDefinition{"sk", ScalarType::N}};
  const KeySchema hash_only{{"pk", ScalarType::S}, std::nullopt};
  // A multi-attribute GSI key: two HASH and two RANGE components.
  const std::vector<AttributeDefinition> gsi_hash{{"g1", ScalarType::S}, {"g2", ScalarType::N}};
  const std::vector<AttributeDefinition> gsi_range{{"r1", ScalarType::B}, {"r2", ScalarType::S}};
  auto check = [](const KeyCondition& resolved) {
    for (const auto* terms : {&resolved.hash, &resolved.range}) {
      for (const KeyTerm& term : *terms) {
        auto it = item().find(term.attribute);
        if (it != item().end()) term.matches(it->second);
        term.matches(term.value);
      }
    }
  };
  for (const KeySchema* key : {&table, &hash_only}) {
    try {
      check(key_condition->resolve(*key));
    } catch (const ApiError&) {
    }
  }
  try {
    check(key_condition->resolve(gsi_hash, gsi_range));
  } catch (const ApiError&) {
  }
}

void fuzz_projection(std::string_view text) {
  std::optional<ProjectionExpression> projection;
  try {
    projection.emplace(ProjectionExpression::compile(text, names()));
  } catch (const ApiError&) {
    return;
  }
  check_placeholders_of(projection->parsed());
  projection->attribute_names();
  const Item projected = projection->apply(item());
  for (const auto& [name, value] : projected) {
    if (!item().contains(name)) fail("projection invented a top-level attribute");
  }
  projection->apply(Item{});
}

void fuzz_update(std::string_view text) {
  std::optional<UpdateExpression> update;
  try {
    update.emplace(UpdateExpression::compile(text, names(), values()));
  } catch (const ApiError&) {
    return;
  }
  check_placeholders_of(update->parsed());
  update->attribute_names();
  const std::vector<std::string> table_keys{"pk", "sk"};
  const std::vector<std::string> index_keys{"g1", "g2", "r1", "r2"};
  try {
    update->check_key_attributes(table_keys, index_keys);
  } catch (const ApiError&) {
  }
  for (const Item* start : {&item(), &item().at("m").as_map()}) {
    Item updated = *start;
    try {
      update->apply(updated);
    } catch (const ApiError&) {
      continue;
    }
    for (const auto& [name, value] : updated) check_value(value);
    item_size(updated);
    update->updated_attributes(*start);
    update->updated_attributes(updated);
  }
  Item created;
  try {
    update->apply(created);
  } catch (const ApiError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 1 + kMaxText) return 0;
  // Each run starts from an empty shared cache. The per-thread slots in front of it may
  // still hold an earlier input's parse, which is equal to a fresh one (a pure function of
  // kind and text).
  expression_cache().clear();
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 5) {
    case 0:
      fuzz_condition(ExpressionKind::kCondition, text);
      break;
    case 1:
      fuzz_condition(ExpressionKind::kFilter, text);
      break;
    case 2:
      fuzz_key_condition(text);
      break;
    case 3:
      fuzz_projection(text);
      break;
    case 4:
      fuzz_update(text);
      break;
  }
  return 0;
}
