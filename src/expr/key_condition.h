// KeyConditionExpression (Query): `=` on the partition key and at most one sort-key
// condition, or one condition per component of a multi-attribute GSI key. The expression is
// reduced to one term per key attribute; resolve() then checks the terms against the
// queried key schema and orders them as the engine seeks.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "expr/ast.h"
#include "expr/binding.h"
#include "model/table.h"

namespace kumo::expr {

enum class KeyOperator : std::uint8_t { kEq, kLt, kLe, kGt, kGe, kBetween, kBeginsWith };

// One condition on one key attribute: `attribute <op> value`, or for BETWEEN
// `attribute BETWEEN value AND upper`. `:v < k` is stored mirrored as `k > :v`.
struct KeyTerm {
  std::string attribute;
  KeyOperator op = KeyOperator::kEq;
  AttributeValue value;
  AttributeValue upper;  // BETWEEN only

  // True when a key value `v` satisfies the term (same type; S and B compare as unsigned
  // bytes, N numerically; begins_with on S or B only).
  bool matches(const AttributeValue& v) const;
};

// A key condition validated against a key schema, in schema order.
struct KeyCondition {
  std::vector<KeyTerm> hash;   // one kEq term per HASH attribute
  std::vector<KeyTerm> range;  // terms on a prefix of the RANGE attributes; all kEq but the last
};

class KeyConditionExpression {
 public:
  // Parses `text` (through the cache) and reduces it to terms. Throws ApiError::validation
  // with DynamoDB's "Invalid KeyConditionExpression: ..." messages (OR/NOT/IN/<> and the
  // non-key functions, size(), nested paths, two names or none in one condition, two
  // conditions on one attribute). `names` and `values` must outlive the result.
  static KeyConditionExpression compile(std::string_view text, const AttributeNames& names,
                                        const AttributeValues& values);

  // Checks the terms against the queried key: `hash` and `range` list the key attributes in
  // schema order (a table or LSI: one HASH and at most one RANGE; a multi-attribute GSI: up
  // to 4 and 4). Throws ApiError::validation with DynamoDB's unprefixed texts ("Query
  // condition missed key schema element: ...", "Condition parameter type does not match
  // schema type", the multi-attribute HASH/RANGE equality rules). More conditions than key
  // attributes: "The number of query conditions (n) exceeds ..." for a table or a key with
  // RANGE attributes, "Query key condition not supported" for an index without any.
  KeyCondition resolve(std::span<const AttributeDefinition> hash,
                       std::span<const AttributeDefinition> range) const;
  KeyCondition resolve(const KeySchema& key) const;

  // Terms in source order.
  const std::vector<KeyTerm>& terms() const { return terms_; }
  const ParsedExpression& parsed() const { return *parsed_; }

 private:
  KeyConditionExpression() = default;

  std::shared_ptr<const ParsedExpression> parsed_;
  Bindings bindings_;
  std::vector<KeyTerm> terms_;
};

}  // namespace kumo::expr
