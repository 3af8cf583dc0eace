// The compact binary form of an item (attribute map) stored as a value: varint counts and
// lengths, a type byte per value, numbers as canonical text. Not JSON.
#pragma once

#include <string>
#include <string_view>

#include "model/attribute_value.h"
#include "model/value_visitor.h"

namespace kumo::codec {

// Appends the binary form of `item` to *out.
void encode_item(const Item& item, std::string* out);
std::string encode_item(const Item& item);

// Decodes a value written by encode_item. Returns false on malformed input (never reads
// past `in`).
bool decode_item(std::string_view in, Item* out);

// Reads a value written by encode_item without building it: makes the calls visit_item
// makes for the decoded item (numbers as stored, in canonical text). Returns false on
// malformed input, which the visitor may have seen a part of.
bool walk_item(std::string_view in, ValueVisitor& visitor);
// The same, measuring: the walk every item read takes, with the counter's calls bound at
// compile time.
bool walk_item(std::string_view in, SizeCounter& counter);

// The same format for one value, used for catalog records and nested data.
void encode_value(const AttributeValue& value, std::string* out);
bool decode_value(std::string_view* in, AttributeValue* out);

}  // namespace kumo::codec
