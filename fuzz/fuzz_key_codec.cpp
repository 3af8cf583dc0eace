// Fuzzes codec/ decoders on arbitrary bytes, which must refuse what they cannot read and
// never read past their input. The first byte picks the key type (S, N or B); the rest is
// read as a run of key values and, separately, as a binary item and a binary value.
// Properties checked on what decodes:
//   - key values: enc(read(bytes)) is exactly the bytes read (only canonical encodings are
//     accepted), and byte order of encodings equals DynamoDB's order of the values;
//   - items and values: encode then decode gives back an equal item or value.
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/item_codec.h"
#include "codec/key_codec.h"
#include "model/attribute_value.h"
#include "model/table.h"

namespace {

using namespace kumo;

// Keys are at most a few KiB (2048-byte partition key, 1024-byte sort key); items 400 KiB.
constexpr std::size_t kMaxInput = 64 << 10;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_key_codec: %s\n", what);
  std::abort();
}

int sign(std::strong_ordering order) {
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

// DynamoDB's order of two key values of the same type: S and B by unsigned bytes, N
// numerically.
int compare_values(const AttributeValue& a, const AttributeValue& b) {
  if (a.type() == AttrType::N) return sign(a.as_number() <=> b.as_number());
  const std::string& x = a.as_string();
  const std::string& y = b.as_string();
  const int c = std::string_view(x).compare(y);  // char_traits<char> compares as unsigned
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

int compare_bytes(std::string_view a, std::string_view b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

void fuzz_key_values(ScalarType type, std::string_view bytes) {
  std::vector<AttributeValue> values;
  std::vector<std::string> encodings;
  std::string_view in = bytes;
  while (!in.empty()) {
    const std::string_view before = in;
    AttributeValue value;
    if (!codec::read_key_value(&in, type, &value)) break;
    if (in.size() >= before.size()) fail("read_key_value consumed nothing");
    if (value.type() != to_attr_type(type)) fail("read_key_value returned another type");
    const std::string_view read = before.substr(0, before.size() - in.size());
    std::string encoded;
    codec::append_key_value(&encoded, value);
    if (encoded != read) fail("enc(read(bytes)) differs from the bytes read");
    std::string_view again = encoded;
    AttributeValue decoded;
    if (!codec::read_key_value(&again, type, &decoded) || !again.empty() || !(decoded == value)) {
      fail("key value does not round-trip");
    }
    values.push_back(std::move(value));
    encodings.push_back(std::move(encoded));
  }
  // Every pair among the first values read (bounded, so a long run stays linear).
  const std::size_t compared = std::min<std::size_t>(values.size(), 32);
  for (std::size_t i = 0; i + 1 < compared; ++i) {
    for (std::size_t j = i + 1; j < compared; ++j) {
      if (compare_values(values[i], values[j]) != compare_bytes(encodings[i], encodings[j])) {
        fail("byte order of encodings differs from the order of values");
      }
    }
  }
  if (values.size() >= 2) {
    // A composite item key: the partition token and both encodings, in that order.
    codec::item_key(1, values[0], &values[1]);
  }
  codec::token(bytes);
}

void fuzz_item(std::string_view bytes) {
  if (const std::optional<codec::StoredForm> form = codec::split_stored_item(bytes)) {
    if (form->item.size() > bytes.size()) fail("a stored item's body outgrows its bytes");
  }
  SizeCounter size;
  const bool walks = codec::walk_item(bytes, size);
  Item item;
  if (!codec::decode_item(bytes, &item)) return;
  if (!walks || !size.valid() || size.size() != item_size(item)) {
    fail("a decodable item does not walk to its size");
  }
  const std::string encoded = codec::encode_item(item);
  Item again;
  if (!codec::decode_item(encoded, &again)) fail("encoded item does not decode");
  if (again != item) fail("item does not round-trip");
  const std::string stored_bytes = codec::encode_stored_item(item, size.size());
  const std::optional<codec::StoredForm> stored = codec::split_stored_item(stored_bytes);
  if (!stored || stored->size != size.size() || stored->item != encoded) {
    fail("a stored item does not split into its size and form");
  }
}

void fuzz_value(std::string_view bytes) {
  std::string_view in = bytes;
  AttributeValue value;
  if (!codec::decode_value(&in, &value)) {
    if (in.size() != bytes.size()) fail("failed decode_value advanced its input");
    return;
  }
  value_size(value);
  std::string encoded;
  codec::encode_value(value, &encoded);
  std::string_view rest = encoded;
  AttributeValue again;
  if (!codec::decode_value(&rest, &again) || !rest.empty()) fail("encoded value does not decode");
  if (!(again == value)) fail("value does not round-trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > kMaxInput) return 0;
  static constexpr ScalarType kTypes[] = {ScalarType::S, ScalarType::N, ScalarType::B};
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzz_key_values(kTypes[data[0] % 3], bytes);
  fuzz_item(bytes);
  fuzz_value(bytes);
  return 0;
}
