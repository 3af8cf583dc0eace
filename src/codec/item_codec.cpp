#include "codec/item_codec.h"

#include <cstdint>

namespace kumo::codec {
namespace {

// Deeper than DynamoDB's 32 levels allows, so every valid item decodes, yet shallow enough
// that corrupt input cannot exhaust the stack.
constexpr int kMaxDepth = 64;

void append_varint(std::string* out, std::uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void append_bytes(std::string* out, std::string_view bytes) {
  append_varint(out, bytes.size());
  out->append(bytes);
}

void append_type(std::string* out, AttrType type) {
  out->push_back(static_cast<char>(static_cast<std::uint8_t>(type)));
}

// Reads a LEB128 value of at most 64 bits; rejects truncated and over-long encodings.
bool read_varint(std::string_view* in, std::uint64_t* out) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < in->size() && i < 10; ++i) {
    const auto b = static_cast<std::uint8_t>((*in)[i]);
    if (i == 9 && b > 1) return false;
    v |= static_cast<std::uint64_t>(b & 0x7F) << (7 * i);
    if ((b & 0x80) == 0) {
      in->remove_prefix(i + 1);
      *out = v;
      return true;
    }
  }
  return false;
}

bool read_bytes(std::string_view* in, std::string_view* out) {
  std::uint64_t len = 0;
  if (!read_varint(in, &len) || len > in->size()) return false;
  *out = in->substr(0, len);
  in->remove_prefix(len);
  return true;
}

bool read_string(std::string_view* in, std::string* out) {
  std::string_view bytes;
  if (!read_bytes(in, &bytes)) return false;
  out->assign(bytes);
  return true;
}

bool read_bool(std::string_view* in, bool* out) {
  if (in->empty() || (in->front() != 0 && in->front() != 1)) return false;
  *out = in->front() == 1;
  in->remove_prefix(1);
  return true;
}

bool read_number(std::string_view* in, Decimal* out) {
  std::string_view text;
  return read_bytes(in, &text) && Decimal::parse(text, out) == Decimal::ParseError::kNone;
}

// Reads a member count. Every member takes at least one byte, so a count larger than what
// is left is malformed. Containers still grow member by member rather than reserving
// `count`: nested corrupt counts could otherwise each reserve the whole input's worth.
bool read_count(std::string_view* in, std::uint64_t* out) {
  return read_varint(in, out) && *out <= in->size();
}

void encode(const AttributeValue& value, std::string* out) {
  append_type(out, value.type());
  switch (value.type()) {
    case AttrType::S:
    case AttrType::B:
      append_bytes(out, value.as_string());
      return;
    case AttrType::N:
      append_bytes(out, value.as_number().to_string());
      return;
    case AttrType::BOOL:
      out->push_back(value.as_bool() ? 1 : 0);
      return;
    case AttrType::NUL:
      return;
    case AttrType::L:
      append_varint(out, value.as_list().size());
      for (const auto& element : value.as_list()) encode(element, out);
      return;
    case AttrType::M:
      append_varint(out, value.as_map().size());
      for (const auto& [name, element] : value.as_map()) {
        append_bytes(out, name);
        encode(element, out);
      }
      return;
    case AttrType::SS:
    case AttrType::BS:
      append_varint(out, value.as_string_set().size());
      for (const auto& member : value.as_string_set()) append_bytes(out, member);
      return;
    case AttrType::NS:
      append_varint(out, value.as_number_set().size());
      for (const auto& member : value.as_number_set()) append_bytes(out, member.to_string());
      return;
  }
}

bool decode(std::string_view* in, AttributeValue* out, int depth);

bool decode_map(std::string_view* in, AttributeMap* out, int depth) {
  std::uint64_t count = 0;
  if (!read_count(in, &count)) return false;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string name;
    AttributeValue element;
    if (!read_string(in, &name) || !decode(in, &element, depth + 1)) return false;
    // encode never writes a name twice; a repeat means corrupt input.
    if (!out->emplace(std::move(name), std::move(element)).second) return false;
  }
  return true;
}

bool decode(std::string_view* in, AttributeValue* out, int depth) {
  if (depth > kMaxDepth || in->empty()) return false;
  const auto type = static_cast<std::uint8_t>(in->front());
  in->remove_prefix(1);
  switch (static_cast<AttrType>(type)) {
    case AttrType::S:
    case AttrType::B: {
      std::string bytes;
      if (!read_string(in, &bytes)) return false;
      *out = static_cast<AttrType>(type) == AttrType::S ? AttributeValue::string(std::move(bytes))
                                                        : AttributeValue::binary(std::move(bytes));
      return true;
    }
    case AttrType::N: {
      Decimal d;
      if (!read_number(in, &d)) return false;
      *out = AttributeValue::number(std::move(d));
      return true;
    }
    case AttrType::BOOL: {
      bool b = false;
      if (!read_bool(in, &b)) return false;
      *out = AttributeValue::boolean(b);
      return true;
    }
    case AttrType::NUL:
      *out = AttributeValue::null();
      return true;
    case AttrType::L: {
      std::uint64_t count = 0;
      if (!read_count(in, &count)) return false;
      AttributeList list;
      for (std::uint64_t i = 0; i < count; ++i) {
        list.emplace_back();
        if (!decode(in, &list.back(), depth + 1)) return false;
      }
      *out = AttributeValue::list(std::move(list));
      return true;
    }
    case AttrType::M: {
      AttributeMap map;
      if (!decode_map(in, &map, depth)) return false;
      *out = AttributeValue::map(std::move(map));
      return true;
    }
    case AttrType::SS:
    case AttrType::BS: {
      std::uint64_t count = 0;
      if (!read_count(in, &count)) return false;
      std::vector<std::string> members;
      for (std::uint64_t i = 0; i < count; ++i) {
        if (!read_string(in, &members.emplace_back())) return false;
      }
      *out = static_cast<AttrType>(type) == AttrType::SS
                 ? AttributeValue::string_set(std::move(members))
                 : AttributeValue::binary_set(std::move(members));
      return true;
    }
    case AttrType::NS: {
      std::uint64_t count = 0;
      if (!read_count(in, &count)) return false;
      std::vector<Decimal> members;
      for (std::uint64_t i = 0; i < count; ++i) {
        if (!read_number(in, &members.emplace_back())) return false;
      }
      *out = AttributeValue::number_set(std::move(members));
      return true;
    }
  }
  return false;
}

// Templates on the visitor, so that a final one (SizeCounter) has its calls bound at
// compile time.
template <class Visitor>
bool walk(std::string_view* in, Visitor& visitor, int depth);

template <class Visitor>
bool walk_members(std::string_view* in, Visitor& visitor, int depth) {
  std::uint64_t count = 0;
  if (!read_count(in, &count)) return false;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::string_view name;
    if (!read_bytes(in, &name)) return false;
    visitor.key(name);
    if (!walk(in, visitor, depth + 1)) return false;
  }
  return true;
}

template <class Visitor>
bool walk(std::string_view* in, Visitor& visitor, int depth) {
  if (depth > kMaxDepth || in->empty()) return false;
  const auto type = static_cast<AttrType>(in->front());
  in->remove_prefix(1);
  std::string_view bytes;
  std::uint64_t count = 0;
  switch (type) {
    case AttrType::S:
    case AttrType::B:
    case AttrType::N:
      if (!read_bytes(in, &bytes)) return false;
      visitor.scalar(type, bytes);
      return true;
    case AttrType::BOOL: {
      bool b = false;
      if (!read_bool(in, &b)) return false;
      visitor.boolean(b);
      return true;
    }
    case AttrType::NUL:
      visitor.null();
      return true;
    case AttrType::M: {
      std::string_view rest = *in;
      if (!read_count(&rest, &count)) return false;
      visitor.begin(type, count);
      if (!walk_members(in, visitor, depth)) return false;
      break;
    }
    case AttrType::L:
      if (!read_count(in, &count)) return false;
      visitor.begin(type, count);
      for (std::uint64_t i = 0; i < count; ++i) {
        if (!walk(in, visitor, depth + 1)) return false;
      }
      break;
    case AttrType::SS:
    case AttrType::NS:
    case AttrType::BS:
      if (!read_count(in, &count)) return false;
      visitor.begin(type, count);
      for (std::uint64_t i = 0; i < count; ++i) {
        if (!read_bytes(in, &bytes)) return false;
        visitor.member(bytes);
      }
      break;
    default:
      return false;
  }
  visitor.end(type);
  return true;
}

}  // namespace

bool walk_item(std::string_view in, ValueVisitor& visitor) {
  return walk_members(&in, visitor, 0) && in.empty();
}

bool walk_item(std::string_view in, SizeCounter& counter) {
  return walk_members(&in, counter, 0) && in.empty();
}

void encode_item(const Item& item, std::string* out) {
  append_varint(out, item.size());
  for (const auto& [name, value] : item) {
    append_bytes(out, name);
    encode(value, out);
  }
}

std::string encode_item(const Item& item) {
  std::string out;
  encode_item(item, &out);
  return out;
}

void encode_stored_item(const Item& item, std::size_t size, std::string* out) {
  out->push_back('\0');
  append_varint(out, size);
  encode_item(item, out);
}

std::string encode_stored_item(const Item& item, std::size_t size) {
  std::string out;
  encode_stored_item(item, size, &out);
  return out;
}

std::optional<StoredForm> split_stored_item(std::string_view bytes) {
  if (bytes.empty() || bytes.front() != '\0') return StoredForm{bytes, std::nullopt};
  bytes.remove_prefix(1);
  std::uint64_t size = 0;
  if (!read_varint(&bytes, &size)) return std::nullopt;
  return StoredForm{bytes, static_cast<std::size_t>(size)};
}

std::optional<std::string> restamp_stored_item(std::string_view bytes) {
  if (bytes.empty() || bytes.front() != '\0') return std::nullopt;
  std::string_view rest = bytes.substr(1);
  std::uint64_t size = 0;
  if (!read_varint(&rest, &size)) return std::nullopt;
  const std::size_t length = bytes.size() - 1 - rest.size();
  std::string out(1, '\0');
  append_varint(&out, size);
  if (out.size() - 1 == length) {
    // Shortest: its last group gets a continuation bit and one zero group follows.
    if (length >= 9) return std::nullopt;  // (no such size: they fit in 8 groups)
    out.back() = static_cast<char>(static_cast<std::uint8_t>(out.back()) | 0x80);
    out.push_back('\0');
  }
  // (Otherwise longer than its shortest form: back to the shortest.)
  out.append(rest);
  return out;
}

bool decode_item(std::string_view in, Item* out) {
  Item item;
  if (!decode_map(&in, &item, 0) || !in.empty()) return false;
  *out = std::move(item);
  return true;
}

void encode_value(const AttributeValue& value, std::string* out) {
  encode(value, out);
}

bool decode_value(std::string_view* in, AttributeValue* out) {
  std::string_view rest = *in;
  AttributeValue value;
  if (!decode(&rest, &value, 0)) return false;
  *out = std::move(value);
  *in = rest;
  return true;
}

}  // namespace kumo::codec
