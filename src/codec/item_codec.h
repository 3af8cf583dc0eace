// The compact binary form of an item (attribute map) stored as a value: varint counts and
// lengths, a type byte per value, numbers as canonical text. Not JSON.
#pragma once

#include <optional>
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

// An item as the engine stores it (table items and index entries): a 0x00 byte, the item's
// size as DynamoDB counts it (varint), then encode_item's form. A read then knows the size
// without walking the item. Items written before the size was kept are encode_item's form
// alone, which never begins with 0x00: a stored item has at least its key attributes, and
// a nonzero varint count begins with a nonzero byte.
void encode_stored_item(const Item& item, std::size_t size, std::string* out);
std::string encode_stored_item(const Item& item, std::size_t size);
struct StoredForm {
  std::string_view item;            // encode_item's form
  std::optional<std::size_t> size;  // absent in items written before it was kept
};
// Splits stored bytes; nullopt if the size is malformed (the item is not checked).
std::optional<StoredForm> split_stored_item(std::string_view bytes);
// The same stored item in other bytes, which split_stored_item reads alike: the size's
// varint in its other length (its shortest form, or that form with one redundant zero group
// added). A write guarded on the item's bytes as it read them then fails, although the
// item did not change: how an index backfill on shared storage orders itself with other
// front ends' writes of the item. nullopt for an item stored before sizes were kept, or
// malformed.
std::optional<std::string> restamp_stored_item(std::string_view bytes);

// The same format for one value, used for catalog records and nested data.
void encode_value(const AttributeValue& value, std::string* out);
bool decode_value(std::string_view* in, AttributeValue* out);

}  // namespace kumo::codec
