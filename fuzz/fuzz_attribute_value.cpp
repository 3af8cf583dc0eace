// Fuzzes AttributeValue JSON decoding and validation: the
// input is JSON, decoded both as one AttributeValue and as an item. A value or item that
// decodes without a validation failure must survive, unchanged, a round trip through JSON
// (write_value/write_item, whose output must decode to an equal value and re-encode to the
// same text) and through the binary item format of codec/.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "api/attribute_json.h"
#include "codec/item_codec.h"
#include "model/api_error.h"
#include "model/attribute_value.h"

namespace {

using namespace kumo;

// Larger than any request body needs to be to reach every path of the decoder.
constexpr std::size_t kMaxInput = 64 << 10;

[[noreturn]] void fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz_attribute_value: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

std::string to_json(const AttributeValue& value) {
  api::JsonOut out;
  api::JsonWriter w(out);
  api::write_value(w, value);
  return api::json_text(out);
}

std::string to_json(const Item& item) {
  api::JsonOut out;
  api::JsonWriter w(out);
  api::write_item(w, item);
  return api::json_text(out);
}

const api::JsonValue& parse_own_output(api::JsonDocument& document, const std::string& json) {
  if (!document.parse(json)) fail("own JSON output does not parse", json);
  return document.root();
}

void check_value(const AttributeValue& value) {
  value_size(value);
  const std::string json = to_json(value);
  api::JsonDocument document;
  api::Validation validation;
  AttributeValue again;
  try {
    again = api::decode_value(parse_own_output(document, json), validation);
  } catch (const ApiError&) {
    fail("own JSON output is refused", json);
  }
  if (validation.failed()) fail("own JSON output fails validation", *validation.message());
  if (!(again == value)) fail("JSON round trip changed the value", json);
  if (to_json(again) != json) fail("JSON encoding is not canonical", json);

  std::string binary;
  codec::encode_value(value, &binary);
  std::string_view in = binary;
  AttributeValue decoded;
  if (!codec::decode_value(&in, &decoded)) fail("binary value does not decode", json);
  if (!in.empty()) fail("binary value decode left bytes", json);
  if (!(decoded == value)) fail("binary round trip changed the value", json);
}

void check_item(const Item& item) {
  item_size(item);
  const std::string json = to_json(item);
  api::JsonDocument document;
  api::Validation validation;
  Item again;
  try {
    again = api::decode_item(parse_own_output(document, json), validation);
  } catch (const ApiError&) {
    fail("own JSON output is refused", json);
  }
  if (validation.failed()) fail("own JSON output fails validation", *validation.message());
  if (again != item) fail("JSON round trip changed the item", json);
  if (to_json(again) != json) fail("JSON encoding is not canonical", json);

  const std::string binary = codec::encode_item(item);
  Item decoded;
  if (!codec::decode_item(binary, &decoded)) fail("binary item does not decode", json);
  if (decoded != item) fail("binary round trip changed the item", json);

  // A response written straight from the stored form is the same JSON, and the stored
  // form measures the same size.
  api::JsonOut stored_json;
  api::JsonWriter w(stored_json);
  api::JsonValueWriter writer(w);
  w.StartObject();
  if (!codec::walk_item(binary, writer)) fail("binary item does not walk", json);
  w.EndObject();
  if (api::json_text(stored_json) != json) fail("JSON from the stored form differs", json);
  SizeCounter size;
  if (!codec::walk_item(binary, size) || size.size() != item_size(item)) {
    fail("size from the stored form differs", json);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInput) return 0;
  // A parser per run: nothing an earlier input left in its buffers can matter.
  api::JsonDocument document;
  if (!document.parse({reinterpret_cast<const char*>(data), size})) return 0;
  const api::JsonValue& root = document.root();
  // Decoding may refuse the input with an ApiError; the round trips run outside those
  // handlers, so that an ApiError from them is a finding too.
  std::optional<AttributeValue> value;
  try {
    api::Validation validation;
    AttributeValue decoded = api::decode_value(root, validation);
    if (!validation.failed()) value = std::move(decoded);
  } catch (const ApiError&) {
  }
  if (value) check_value(*value);

  std::optional<Item> item;
  try {
    api::Validation validation;
    Item decoded = api::decode_item(root, validation);
    if (!validation.failed()) item = std::move(decoded);
  } catch (const ApiError&) {
  }
  if (item) check_item(*item);
  return 0;
}
