// AttributeValue: one DynamoDB value of any of the ten types (S N B BOOL NULL SS NS BS L M),
// already validated. Item: an attribute map, the unit PutItem stores and GetItem returns.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/decimal.h"

namespace kumo {

enum class AttrType : std::uint8_t { S, N, B, BOOL, NUL, M, L, SS, NS, BS };

// DynamoDB's name of a type: "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS".
std::string_view type_name(AttrType type);

class AttributeValue;
using AttributeMap = std::map<std::string, AttributeValue, std::less<>>;
using AttributeList = std::vector<AttributeValue>;
using Item = AttributeMap;

class AttributeValue {
 public:
  AttributeValue() : type_(AttrType::NUL), payload_(std::monostate{}) {}

  static AttributeValue string(std::string s) { return {AttrType::S, std::move(s)}; }
  static AttributeValue number(Decimal n) { return {AttrType::N, std::move(n)}; }
  // `bytes` are the decoded bytes, not base64.
  static AttributeValue binary(std::string bytes) { return {AttrType::B, std::move(bytes)}; }
  static AttributeValue boolean(bool b) { return {AttrType::BOOL, b}; }
  static AttributeValue null() { return {}; }
  static AttributeValue map(AttributeMap m) { return {AttrType::M, std::move(m)}; }
  static AttributeValue list(AttributeList l) { return {AttrType::L, std::move(l)}; }
  // Sets must be non-empty and duplicate-free; callers validate first.
  static AttributeValue string_set(std::vector<std::string> ss) {
    return {AttrType::SS, std::move(ss)};
  }
  static AttributeValue number_set(std::vector<Decimal> ns) {
    return {AttrType::NS, std::move(ns)};
  }
  static AttributeValue binary_set(std::vector<std::string> bs) {
    return {AttrType::BS, std::move(bs)};
  }

  AttrType type() const { return type_; }
  // S text or B bytes.
  const std::string& as_string() const { return std::get<std::string>(payload_); }
  const Decimal& as_number() const { return std::get<Decimal>(payload_); }
  bool as_bool() const { return std::get<bool>(payload_); }
  const AttributeMap& as_map() const { return std::get<AttributeMap>(payload_); }
  AttributeMap& mutable_map() { return std::get<AttributeMap>(payload_); }
  const AttributeList& as_list() const { return std::get<AttributeList>(payload_); }
  AttributeList& mutable_list() { return std::get<AttributeList>(payload_); }
  // SS or BS members.
  const std::vector<std::string>& as_string_set() const {
    return std::get<std::vector<std::string>>(payload_);
  }
  const std::vector<Decimal>& as_number_set() const {
    return std::get<std::vector<Decimal>>(payload_);
  }

  // DynamoDB equality: same type and value; numbers compare numerically; sets compare
  // as sets (order does not matter).
  bool operator==(const AttributeValue& other) const;

 private:
  using Payload = std::variant<std::monostate, std::string, Decimal, bool, AttributeMap,
                               AttributeList, std::vector<std::string>, std::vector<Decimal>>;
  template <typename T>
  AttributeValue(AttrType type, T&& value) : type_(type), payload_(std::forward<T>(value)) {}

  AttrType type_;
  Payload payload_;
};

// Size DynamoDB counts for a value: S UTF-8 bytes, B bytes, N per Decimal, BOOL and
// NULL 1, sets the sum of members, L 3 + Σ(1 + element), M 3 + Σ(1 + key + element).
constexpr std::size_t kContainerBytes = 3;  // an L or M
constexpr std::size_t kMemberBytes = 1;     // each element of an L or member of an M
std::size_t value_size(const AttributeValue& value);
// Item size: Σ over top-level attributes of name bytes + value size. Limit 409,600.
std::size_t item_size(const Item& item);
constexpr std::size_t kMaxItemSize = 409600;

}  // namespace kumo
