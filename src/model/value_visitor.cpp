#include "model/value_visitor.h"

namespace kumo {

void visit_value(const AttributeValue& value, ValueVisitor& visitor) {
  switch (value.type()) {
    case AttrType::S:
    case AttrType::B:
      visitor.scalar(value.type(), value.as_string());
      return;
    case AttrType::N:
      visitor.scalar(AttrType::N, value.as_number().to_string());
      return;
    case AttrType::BOOL:
      visitor.boolean(value.as_bool());
      return;
    case AttrType::NUL:
      visitor.null();
      return;
    case AttrType::M:
      visitor.begin(AttrType::M, value.as_map().size());
      visit_item(value.as_map(), visitor);
      break;
    case AttrType::L:
      visitor.begin(AttrType::L, value.as_list().size());
      for (const auto& element : value.as_list()) visit_value(element, visitor);
      break;
    case AttrType::SS:
    case AttrType::BS:
      visitor.begin(value.type(), value.as_string_set().size());
      for (const auto& s : value.as_string_set()) visitor.member(s);
      break;
    case AttrType::NS:
      visitor.begin(AttrType::NS, value.as_number_set().size());
      for (const auto& d : value.as_number_set()) visitor.member(d.to_string());
      break;
  }
  visitor.end(value.type());
}

void visit_item(const Item& item, ValueVisitor& visitor) {
  for (const auto& [name, value] : item) {
    visitor.key(name);
    visit_value(value, visitor);
  }
}

void SizeCounter::scalar(AttrType type, std::string_view text) {
  if (type != AttrType::N) {
    size_ += text.size();
    return;
  }
  if (const auto size = Decimal::canonical_size_bytes(text)) {
    size_ += *size;
    return;
  }
  Decimal number;
  if (Decimal::parse(text, &number) != Decimal::ParseError::kNone) {
    valid_ = false;
    return;
  }
  size_ += number.size_bytes();
}

void SizeCounter::begin(AttrType type, std::size_t count) {
  switch (type) {
    case AttrType::M:
    case AttrType::L:
      // value_size: 3 for the container and 1 per member (plus a map member's name, which
      // key() adds).
      size_ += kContainerBytes + count * kMemberBytes;
      break;
    case AttrType::SS:
      set_member_type_ = AttrType::S;
      break;
    case AttrType::NS:
      set_member_type_ = AttrType::N;
      break;
    case AttrType::BS:
      set_member_type_ = AttrType::B;
      break;
    default:
      break;
  }
}

}  // namespace kumo
