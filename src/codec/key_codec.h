// Order-preserving, self-delimiting encoding of key values, and the storage keys built
// from them (docs/storage.md). Byte order of encodings equals DynamoDB's order: S by UTF-8
// bytes, B by unsigned bytes, N numerically (1, 1.0 and 1E0 encode identically because
// Decimal is canonical).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/attribute_value.h"
#include "model/table.h"

namespace kumo::codec {

// Appends enc(value) for an S, N or B value. S and B: bytes with 0x00 escaped as
// 0x00 0xFF, then the terminator 0x00 0x01. N: a sign/zero marker, then the exponent and
// digits, complemented for negatives, so that byte order is numeric order.
void append_key_value(std::string* out, const AttributeValue& value);

// Decodes one value of `type` from the front of *in and advances *in past it. Returns
// false (leaving *out unspecified) when the bytes are not a valid encoding.
bool read_key_value(std::string_view* in, ScalarType type, AttributeValue* out);

// 64-bit hash of an encoded partition key; items are stored in token order (Scan order,
// parallel-scan segments are token ranges).
std::uint64_t token(std::string_view encoded_partition_key);

void append_u32(std::string* out, std::uint32_t v);  // big-endian
void append_u64(std::string* out, std::uint64_t v);  // big-endian
std::uint64_t read_u64(std::string_view in);         // big-endian, in.size() >= 8

// Spaces inside a table's key range: [table id][space]...
enum class Space : std::uint8_t { kItems = 1, kIndexes = 2, kStream = 3, kTtl = 4 };

// [table id][space]: every key of that space of that table starts with this.
std::string space_prefix(std::uint32_t table_id, Space space);
// [table id]: every key of the table starts with this.
std::string table_prefix(std::uint32_t table_id);
// Smallest key greater than every key starting with `prefix` (for iterator bounds).
std::string prefix_end(std::string_view prefix);

// [table id][kItems][token(enc(pk))][enc(pk)][enc(sk)]; `sort` may be null.
std::string item_key(std::uint32_t table_id, const AttributeValue& partition,
                     const AttributeValue* sort);

}  // namespace kumo::codec
