#include "model/attribute_value.h"

#include <algorithm>

namespace kumo {

std::string_view type_name(AttrType type) {
  switch (type) {
    case AttrType::S:
      return "S";
    case AttrType::N:
      return "N";
    case AttrType::B:
      return "B";
    case AttrType::BOOL:
      return "BOOL";
    case AttrType::NUL:
      return "NULL";
    case AttrType::M:
      return "M";
    case AttrType::L:
      return "L";
    case AttrType::SS:
      return "SS";
    case AttrType::NS:
      return "NS";
    case AttrType::BS:
      return "BS";
  }
  return "";
}

namespace {
template <typename T>
bool same_members(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  std::vector<T> sa(a), sb(b);
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb;
}
}  // namespace

bool AttributeValue::operator==(const AttributeValue& other) const {
  if (type_ != other.type_) return false;
  switch (type_) {
    case AttrType::SS:
    case AttrType::BS:
      return same_members(as_string_set(), other.as_string_set());
    case AttrType::NS:
      return same_members(as_number_set(), other.as_number_set());
    default:
      return payload_ == other.payload_;
  }
}

std::size_t value_size(const AttributeValue& value) {
  switch (value.type()) {
    case AttrType::S:
    case AttrType::B:
      return value.as_string().size();
    case AttrType::N:
      return value.as_number().size_bytes();
    case AttrType::BOOL:
    case AttrType::NUL:
      return 1;
    case AttrType::SS:
    case AttrType::BS: {
      std::size_t n = 0;
      for (const auto& s : value.as_string_set()) n += s.size();
      return n;
    }
    case AttrType::NS: {
      std::size_t n = 0;
      for (const auto& d : value.as_number_set()) n += d.size_bytes();
      return n;
    }
    case AttrType::L: {
      std::size_t n = kContainerBytes;
      for (const auto& v : value.as_list()) n += kMemberBytes + value_size(v);
      return n;
    }
    case AttrType::M: {
      std::size_t n = kContainerBytes;
      for (const auto& [k, v] : value.as_map()) n += kMemberBytes + k.size() + value_size(v);
      return n;
    }
  }
  return 0;
}

std::size_t item_size(const Item& item) {
  std::size_t n = 0;
  for (const auto& [name, value] : item) n += name.size() + value_size(value);
  return n;
}

}  // namespace kumo
