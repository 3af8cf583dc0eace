#include "api/data_lines.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "api/attribute_json.h"
#include "model/api_error.h"

namespace kumo::api {
namespace {

// ---- Ion text, written ----

bool ion_identifier(std::string_view name) {
  if (name.empty() || name == "true" || name == "false" || name == "null" || name == "nan") {
    return false;
  }
  // A leading '$' could read as a symbol id or a system symbol: quoted.
  const char first = name.front();
  if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '_')) {
    return false;
  }
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '$')) {
      return false;
    }
  }
  return true;
}

// Text between `quote`s with Ion's escapes (the text is UTF-8 and stays so).
void append_ion_quoted(std::string_view text, char quote, std::string* out) {
  out->push_back(quote);
  for (unsigned char c : text) {
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c < 0x20 || c == 0x7f) {
      out->append(fmt::format("\\x{:02x}", c));
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back(quote);
}

void append_field_name(std::string_view name, std::string* out) {
  if (ion_identifier(name)) {
    out->append(name);
  } else {
    append_ion_quoted(name, '\'', out);
  }
}

void append_blob(std::string_view bytes, std::string* out) {
  out->append("{{");
  out->append(base64_encode(bytes));
  out->append("}}");
}

void append_ion_value(const AttributeValue& v, std::string* out) {
  switch (v.type()) {
    case AttrType::S:
      append_ion_quoted(v.as_string(), '"', out);
      return;
    case AttrType::N:
      out->append(ion_decimal(v.as_number()));
      return;
    case AttrType::B:
      append_blob(v.as_string(), out);
      return;
    case AttrType::BOOL:
      out->append(v.as_bool() ? "true" : "false");
      return;
    case AttrType::NUL:
      out->append("null");
      return;
    case AttrType::L: {
      out->push_back('[');
      bool first = true;
      for (const AttributeValue& e : v.as_list()) {
        if (!first) out->push_back(',');
        first = false;
        append_ion_value(e, out);
      }
      out->push_back(']');
      return;
    }
    case AttrType::M: {
      out->push_back('{');
      bool first = true;
      for (const auto& [name, e] : v.as_map()) {
        if (!first) out->push_back(',');
        first = false;
        append_field_name(name, out);
        out->push_back(':');
        append_ion_value(e, out);
      }
      out->push_back('}');
      return;
    }
    case AttrType::SS:
    case AttrType::BS: {
      out->append(v.type() == AttrType::SS ? "$dynamodb_SS::[" : "$dynamodb_BS::[");
      bool first = true;
      for (const std::string& e : v.as_string_set()) {
        if (!first) out->push_back(',');
        first = false;
        if (v.type() == AttrType::SS) {
          append_ion_quoted(e, '"', out);
        } else {
          append_blob(e, out);
        }
      }
      out->push_back(']');
      return;
    }
    case AttrType::NS: {
      out->append("$dynamodb_NS::[");
      bool first = true;
      for (const Decimal& e : v.as_number_set()) {
        if (!first) out->push_back(',');
        first = false;
        out->append(ion_decimal(e));
      }
      out->push_back(']');
      return;
    }
  }
}

// ---- Ion text, read ----

class IonReader {
 public:
  explicit IonReader(std::string_view text) : text_(text) {}

  // Skips blanks and comments; false at the end.
  bool more() {
    skip();
    return pos_ < text_.size();
  }
  std::size_t position() const { return pos_; }
  // Skips to the line after the current position (after an error).
  void skip_line() {
    const std::size_t nl = text_.find('\n', pos_);
    pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
  }

  // One top-level value: its annotations in *annotations. Throws std::runtime_error.
  AttributeValue value(std::vector<std::string>* annotations) {
    skip();
    annotations->clear();
    for (;;) {
      const std::size_t save = pos_;
      std::optional<std::string> symbol = try_symbol();
      skip();
      if (symbol && text_.substr(pos_, 2) == "::") {
        pos_ += 2;
        annotations->push_back(*symbol);
        skip();
        continue;
      }
      pos_ = save;
      break;
    }
    return bare_value(*annotations);
  }

  // A top-level symbol such as $ion_1_0, if one is next (consumed).
  bool version_marker() {
    skip();
    if (text_.substr(pos_, 8) == "$ion_1_0") {
      const std::size_t after = pos_ + 8;
      if (after == text_.size() || !symbol_char(text_[after])) {
        pos_ = after;
        return true;
      }
    }
    return false;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw std::runtime_error(fmt::format("Ion: {} at offset {}", what, pos_));
  }

  static bool symbol_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$';
  }

  void skip() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (text_.substr(pos_, 2) == "//") {
        skip_line();
      } else if (text_.substr(pos_, 2) == "/*") {
        const std::size_t end = text_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? text_.size() : end + 2;
      } else {
        break;
      }
    }
  }

  std::optional<std::string> try_symbol() {
    if (pos_ >= text_.size()) return std::nullopt;
    if (text_[pos_] == '\'' && text_.substr(pos_, 3) != "'''") return quoted('\'');
    const char c = text_[pos_];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$')) {
      return std::nullopt;
    }
    const std::size_t start = pos_;
    while (pos_ < text_.size() && symbol_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  void append_utf8(std::uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  std::uint32_t hex_digits(int n) {
    if (pos_ + static_cast<std::size_t>(n) > text_.size()) fail("bad escape");
    std::uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      const char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        fail("bad escape");
      }
    }
    return v;
  }

  // A string between `quote`s (the opening one at pos_).
  std::string quoted(char quote) {
    ++pos_;
    std::string out;
    for (;;) {
      if (pos_ >= text_.size()) fail("unterminated string");
      const char c = text_[pos_++];
      if (c == quote) return out;
      if (c == '\n') fail("newline in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated string");
      const char e = text_[pos_++];
      switch (e) {
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case '0':
          out.push_back('\0');
          break;
        case 'a':
          out.push_back('\a');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'v':
          out.push_back('\v');
          break;
        case 'x':
          append_utf8(hex_digits(2), &out);
          break;
        case 'u':
          append_utf8(hex_digits(4), &out);
          break;
        case 'U':
          append_utf8(hex_digits(8), &out);
          break;
        case '\n':
          break;
        default:
          out.push_back(e);
      }
    }
  }

  // '''long''' strings, adjacent ones concatenated.
  std::string long_string() {
    std::string out;
    while (text_.substr(pos_, 3) == "'''") {
      pos_ += 3;
      const std::size_t end = text_.find("'''", pos_);
      if (end == std::string_view::npos) fail("unterminated long string");
      out.append(text_.substr(pos_, end - pos_));
      pos_ = end + 3;
      skip();
    }
    return out;
  }

  AttributeValue number_text(std::string_view token) {
    // Ion decimals (1.5, 103., 6d2), ints (103, 0x1F not supported) and floats (1e0).
    std::string text(token);
    for (char& c : text) {
      if (c == 'd' || c == 'D') c = 'e';
    }
    text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
    if (const std::size_t dot = text.find('.');
        dot != std::string::npos && (dot + 1 == text.size() || text[dot + 1] == 'e')) {
      text.erase(dot, 1);
    }
    Decimal n;
    if (Decimal::parse(text, &n) != Decimal::ParseError::kNone) fail("bad number");
    return AttributeValue::number(n);
  }

  AttributeValue list_of(char close, std::vector<AttributeValue>* elements) {
    ++pos_;
    for (;;) {
      skip();
      if (pos_ >= text_.size()) fail("unterminated list");
      if (text_[pos_] == close) {
        ++pos_;
        break;
      }
      std::vector<std::string> annotations;
      elements->push_back(value(&annotations));
      skip();
      if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
    }
    return AttributeValue::list(*elements);
  }

  AttributeValue bare_value(const std::vector<std::string>& annotations) {
    if (pos_ >= text_.size()) fail("value expected");
    const char c = text_[pos_];
    if (c == '"') return AttributeValue::string(quoted('"'));
    if (text_.substr(pos_, 3) == "'''") return AttributeValue::string(long_string());
    if (text_.substr(pos_, 2) == "{{") {
      pos_ += 2;
      const std::size_t end = text_.find("}}", pos_);
      if (end == std::string_view::npos) fail("unterminated blob");
      std::string b64;
      for (char ch : text_.substr(pos_, end - pos_)) {
        if (ch != ' ' && ch != '\n' && ch != '\t' && ch != '\r') b64.push_back(ch);
      }
      pos_ = end + 2;
      try {
        return AttributeValue::binary(base64_decode(b64));
      } catch (const ApiError&) {
        fail("bad blob");
      }
    }
    if (c == '{') {
      ++pos_;
      AttributeMap map;
      for (;;) {
        skip();
        if (pos_ >= text_.size()) fail("unterminated struct");
        if (text_[pos_] == '}') {
          ++pos_;
          break;
        }
        std::optional<std::string> name;
        if (text_[pos_] == '"') {
          name = quoted('"');
        } else {
          name = try_symbol();
        }
        if (!name) fail("field name expected");
        skip();
        if (pos_ >= text_.size() || text_[pos_] != ':') fail("':' expected");
        ++pos_;
        std::vector<std::string> inner;
        map.insert_or_assign(*name, value(&inner));
        skip();
        if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
      }
      return AttributeValue::map(std::move(map));
    }
    if (c == '[' || c == '(') {
      std::vector<AttributeValue> elements;
      list_of(c == '[' ? ']' : ')', &elements);
      for (const std::string& a : annotations) {
        if (a == "$dynamodb_SS" || a == "$dynamodb_BS") {
          std::vector<std::string> members;
          const AttrType want = a == "$dynamodb_SS" ? AttrType::S : AttrType::B;
          for (const AttributeValue& e : elements) {
            if (e.type() != want) fail("bad set member");
            members.push_back(e.as_string());
          }
          return want == AttrType::S ? AttributeValue::string_set(std::move(members))
                                     : AttributeValue::binary_set(std::move(members));
        }
        if (a == "$dynamodb_NS") {
          std::vector<Decimal> members;
          for (const AttributeValue& e : elements) {
            if (e.type() != AttrType::N) fail("bad set member");
            members.push_back(e.as_number());
          }
          return AttributeValue::number_set(std::move(members));
        }
      }
      return AttributeValue::list(std::move(elements));
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() &&
             std::string_view("0123456789.-+eEdD_").find(text_[pos_]) != std::string_view::npos) {
        ++pos_;
      }
      return number_text(text_.substr(start, pos_ - start));
    }
    std::optional<std::string> symbol = try_symbol();
    if (!symbol) fail("value expected");
    if (*symbol == "true") return AttributeValue::boolean(true);
    if (*symbol == "false") return AttributeValue::boolean(false);
    if (*symbol == "null") {
      // null.<type>
      if (pos_ < text_.size() && text_[pos_] == '.') {
        ++pos_;
        try_symbol();
      }
      return AttributeValue::null();
    }
    // A symbol value reads as a string.
    return AttributeValue::string(*symbol);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

// The item of a top-level {Item: {...}} value, or an error.
LineOutcome item_of(const AttributeValue& top) {
  LineOutcome outcome;
  if (top.type() != AttrType::M) {
    outcome.error = "Invalid item: expected a struct with an Item";
    outcome.abandons = true;
    return outcome;
  }
  auto it = top.as_map().find("Item");
  if (it == top.as_map().end() || it->second.type() != AttrType::M) {
    outcome.error = "Invalid item: missing Item";
    outcome.abandons = true;
    return outcome;
  }
  outcome.item = it->second.as_map();
  return outcome;
}

// ---- CSV ----

// The fields of one record starting at *pos (which moves past it); false at the end.
bool csv_record(std::string_view text, std::size_t* pos, char delimiter,
                std::vector<std::string>* fields, bool* bad) {
  fields->clear();
  *bad = false;
  if (*pos >= text.size()) return false;
  std::string field;
  bool quoted = false, was_quoted = false;
  std::size_t i = *pos;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      if (!field.empty() || was_quoted) *bad = true;
      quoted = was_quoted = true;
    } else if (c == delimiter) {
      fields->push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\n' || c == '\r') {
      break;
    } else {
      if (was_quoted) *bad = true;
      field.push_back(c);
    }
  }
  if (quoted) *bad = true;
  fields->push_back(std::move(field));
  if (i < text.size() && text[i] == '\r') ++i;
  if (i < text.size() && text[i] == '\n') ++i;
  *pos = i;
  return true;
}

}  // namespace

std::string ion_decimal(const Decimal& number) {
  if (number.is_zero()) return "0.";
  const std::string& digits = number.digits();
  const int n = static_cast<int>(digits.size());
  const int e = number.exponent();  // value = 0.<digits> × 10^e
  std::string out = number.negative() ? "-" : "";
  const int k = e - n;
  if (k == 0) return out + digits + ".";
  if (k < 0 && e > 0) return out + digits.substr(0, e) + "." + digits.substr(e);
  if (k < 0 && e <= 0) return out + "0." + std::string(static_cast<std::size_t>(-e), '0') + digits;
  return fmt::format("{}{}d{}", out, digits, k);
}

void append_json_line(const Item& item, std::string* out) {
  JsonOut buffer;
  JsonWriter w(buffer);
  w.StartObject();
  write_key(w, "Item");
  write_item(w, item);
  w.EndObject();
  out->append(buffer.GetString(), buffer.GetSize());
  out->push_back('\n');
}

void append_ion_line(const Item& item, std::string* out) {
  out->append("$ion_1_0 {Item:");
  append_ion_value(AttributeValue::map(item), out);
  out->append("}\n");
}

void append_json_change_line(std::int64_t time_us, const Item& keys, const Item* new_image,
                             const Item* old_image, std::string* out) {
  JsonOut buffer;
  JsonWriter w(buffer);
  w.StartObject();
  write_key(w, "Metadata");
  w.StartObject();
  write_key(w, "WriteTimestampMicros");
  w.StartObject();
  write_key(w, "N");
  write_string(w, std::to_string(time_us));
  w.EndObject();
  w.EndObject();
  write_key(w, "Keys");
  write_item(w, keys);
  if (new_image) {
    write_key(w, "NewImage");
    write_item(w, *new_image);
  }
  if (old_image) {
    write_key(w, "OldImage");
    write_item(w, *old_image);
  }
  w.EndObject();
  out->append(buffer.GetString(), buffer.GetSize());
  out->push_back('\n');
}

void append_ion_change_line(std::int64_t time_us, const Item& keys, const Item* new_image,
                            const Item* old_image, std::string* out) {
  out->append("$ion_1_0 {Metadata:{WriteTimestampMicros:");
  out->append(std::to_string(time_us));
  out->append(".},Keys:");
  append_ion_value(AttributeValue::map(keys), out);
  if (new_image) {
    out->append(",NewImage:");
    append_ion_value(AttributeValue::map(*new_image), out);
  }
  if (old_image) {
    out->append(",OldImage:");
    append_ion_value(AttributeValue::map(*old_image), out);
  }
  out->append("}\n");
}

void read_json_lines(std::string_view text, const LineSink& sink) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    // Every value on the line, one after the other.
    std::size_t at = 0;
    for (;;) {
      while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
      if (at >= line.size()) break;
      rapidjson::Document doc;
      rapidjson::StringStream stream(line.c_str() + at);
      doc.ParseStream<rapidjson::kParseStopWhenDoneFlag>(stream);
      LineOutcome outcome;
      if (doc.HasParseError()) {
        outcome.error =
            fmt::format("Unexpected JSON: {}", rapidjson::GetParseError_En(doc.GetParseError()));
        outcome.abandons = true;
        sink(std::move(outcome));
        return;
      }
      at += stream.Tell();
      if (!doc.IsObject() || !doc.HasMember("Item") || !doc["Item"].IsObject()) {
        outcome.error = "Invalid item: missing Item";
        outcome.abandons = true;
        sink(std::move(outcome));
        return;
      }
      try {
        Validation validation;
        Item item = decode_item(doc["Item"], validation);
        if (validation.failed()) {
          outcome.error = *validation.message();
        } else {
          outcome.item = std::move(item);
        }
      } catch (const ApiError& e) {
        outcome.error = e.what();
      }
      sink(std::move(outcome));
    }
  }
}

void read_ion_lines(std::string_view text, const LineSink& sink) {
  IonReader reader(text);
  for (;;) {
    try {
      while (reader.version_marker()) {
      }
      if (!reader.more()) return;
      std::vector<std::string> annotations;
      const AttributeValue top = reader.value(&annotations);
      if (top.type() == AttrType::L) {
        for (const AttributeValue& e : top.as_list()) {
          LineOutcome outcome = item_of(e);
          const bool abandons = outcome.abandons;
          sink(std::move(outcome));
          if (abandons) return;
        }
        continue;
      }
      LineOutcome outcome = item_of(top);
      const bool abandons = outcome.abandons;
      sink(std::move(outcome));
      if (abandons) return;
    } catch (const std::runtime_error& e) {
      LineOutcome outcome;
      outcome.error = e.what();
      outcome.abandons = true;
      sink(std::move(outcome));
      return;
    }
  }
}

void read_csv(std::string_view text, const CsvOptions& options, const LineSink& sink) {
  std::size_t pos = 0;
  std::vector<std::string> header;
  std::vector<std::string> fields;
  bool bad = false;
  if (options.header) {
    header = *options.header;
  } else {
    // The first record that is not blank.
    while (csv_record(text, &pos, options.delimiter, &fields, &bad)) {
      if (fields.size() == 1 && fields[0].empty()) continue;
      header = fields;
      break;
    }
    if (header.empty()) return;
  }
  while (csv_record(text, &pos, options.delimiter, &fields, &bad)) {
    if (fields.size() == 1 && fields[0].empty()) continue;  // a blank line
    LineOutcome outcome;
    if (bad) {
      outcome.error = "Invalid CSV: a double quote inside a value must be doubled";
      sink(std::move(outcome));
      continue;
    }
    if (fields.size() != header.size()) {
      outcome.error = fmt::format("Invalid CSV: the record has {} columns and the header {}",
                                  fields.size(), header.size());
      sink(std::move(outcome));
      continue;
    }
    Item item;
    try {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].empty()) continue;
        ScalarType type = ScalarType::S;
        for (const auto& [name, t] : options.types) {
          if (name == header[i]) type = t;
        }
        if (type == ScalarType::N) {
          Decimal n;
          const Decimal::ParseError error = Decimal::parse(fields[i], &n);
          if (error != Decimal::ParseError::kNone) {
            throw ApiError::validation(Decimal::error_message(error, fields[i]));
          }
          item.insert_or_assign(header[i], AttributeValue::number(n));
        } else if (type == ScalarType::B) {
          item.insert_or_assign(header[i], AttributeValue::binary(base64_decode(fields[i])));
        } else {
          item.insert_or_assign(header[i], AttributeValue::string(fields[i]));
        }
      }
      outcome.item = std::move(item);
    } catch (const ApiError& e) {
      outcome.error = e.what();
    }
    sink(std::move(outcome));
  }
}

}  // namespace kumo::api
