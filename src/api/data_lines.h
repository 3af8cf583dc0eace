// The lines of export data files and import sources: DynamoDB JSON ({"Item":{...}}), Ion
// text ($ion_1_0 {Item:{...}}) and CSV. Writing for ExportTableToPointInTime, reading for
// ImportTable; docs/data-movement.md lists the mappings.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/attribute_value.h"
#include "model/table.h"

namespace kumo::api {

// {"Item":{"pk":{"S":"a"},...}} and a newline.
void append_json_line(const Item& item, std::string* out);
// $ion_1_0 {Item:{pk:"a",...}} and a newline: S string, N decimal, B blob, BOOL bool, NULL
// null, L list, M struct, SS/NS/BS lists annotated $dynamodb_SS:: / $dynamodb_NS:: /
// $dynamodb_BS::.
void append_ion_line(const Item& item, std::string* out);
// A number as an Ion decimal: 103 → "103.", 600 → "6d2", 1.5 → "1.5".
std::string ion_decimal(const Decimal& number);
// One line of an incremental export: the last write's time (epoch microseconds), the key,
// and the images the view asks for (null: left out).
void append_json_change_line(std::int64_t time_us, const Item& keys, const Item* new_image,
                             const Item* old_image, std::string* out);
void append_ion_change_line(std::int64_t time_us, const Item& keys, const Item* new_image,
                            const Item* old_image, std::string* out);

// What reading one source object yields: each item in order, or an error. An error that
// `abandons` the object (a line that cannot be parsed as an item at all) ends its reading.
struct LineOutcome {
  std::optional<Item> item;
  std::string error;  // when no item
  bool abandons = false;
};
using LineSink = std::function<void(LineOutcome)>;

// Reads DynamoDB JSON lines: one {"Item": {...}} per line (several on one line are read
// too); blank lines are skipped. A line that is not JSON, or JSON without an Item, abandons
// the object; an Item whose values are invalid is an error of that item alone.
void read_json_lines(std::string_view text, const LineSink& sink);
// Reads Ion text: values {Item: {...}} one after the other, $ion_1_0 markers skipped (a
// list of such structs is read as its elements).
void read_ion_lines(std::string_view text, const LineSink& sink);

// CSV: the first line is the header unless `header` is given; `delimiter` separates the
// columns; double quotes quote a value ("" inside is a quote). Columns named by
// `types` (the table's and its GSIs' key attributes) take that type (N as a number, B as
// base64), every other column is a string; empty columns are left out.
struct CsvOptions {
  char delimiter = ',';
  std::optional<std::vector<std::string>> header;
  std::vector<std::pair<std::string, ScalarType>> types;
};
void read_csv(std::string_view text, const CsvOptions& options, const LineSink& sink);

}  // namespace kumo::api
