// ValueVisitor: an item or value seen piece by piece, in order, without building it. A
// stored item can be read this way straight from its binary form (codec::walk_item), and
// a built one replayed (visit_item), so one visitor renders or measures both.
#pragma once

#include <cstddef>
#include <string_view>

#include "model/attribute_value.h"

namespace kumo {

class ValueVisitor {
 public:
  virtual ~ValueVisitor() = default;
  // A map member's name (an item's attribute name at the top), just before its value.
  virtual void key(std::string_view name) = 0;
  // An S (UTF-8 text), B (raw bytes, not base64) or N (canonical text) value.
  virtual void scalar(AttrType type, std::string_view text) = 0;
  virtual void boolean(bool value) = 0;
  virtual void null() = 0;
  // An M, L, SS, NS or BS value with `count` members: maps give key + value per member,
  // lists a value per element, sets a member() per member; then end(type).
  virtual void begin(AttrType type, std::size_t count) = 0;
  // A set member (S, N or B text per the set's type).
  virtual void member(std::string_view text) = 0;
  virtual void end(AttrType type) = 0;
};

// Replays a value: the calls codec::walk_value makes for its encoding.
void visit_value(const AttributeValue& value, ValueVisitor& visitor);
// Replays an item: key + value per attribute, in name order, with no begin/end around it.
void visit_item(const Item& item, ValueVisitor& visitor);

// Adds up the size DynamoDB counts (item_size) of what it visits. `valid()` is false
// after a number that does not parse.
class SizeCounter final : public ValueVisitor {
 public:
  std::size_t size() const { return size_; }
  bool valid() const { return valid_; }

  void key(std::string_view name) override { size_ += name.size(); }
  void scalar(AttrType type, std::string_view text) override;
  void boolean(bool) override { size_ += 1; }
  void null() override { size_ += 1; }
  void begin(AttrType type, std::size_t count) override;
  void member(std::string_view text) override { scalar(set_member_type_, text); }
  void end(AttrType) override {}

 private:
  std::size_t size_ = 0;
  bool valid_ = true;
  AttrType set_member_type_ = AttrType::S;
};

}  // namespace kumo
