// The single-item write path: what PutItem, UpdateItem and DeleteItem do, and what each
// request of BatchWriteItem and each action of TransactWriteItems does to its item. A write
// is decoded once into an ItemWrite, checked against its table in DynamoDB's order, and
// turned by one builder into the engine's mutation (condition, update, index keys, item
// size) and, once applied, into what ReturnValues asks for.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "api/attribute_json.h"
#include "api/capacity.h"
#include "api/expressions.h"
#include "api/json_reader.h"
#include "api/operations.h"
#include "engine/engine.h"
#include "expr/update.h"
#include "model/table.h"
#include "partiql/ast.h"

namespace kumo::api {

enum class WriteKind : std::uint8_t { kPut, kUpdate, kDelete, kConditionCheck };

// What a write's ReturnValues asks to see of the item.
enum class ReturnValues : std::uint8_t { kNone, kAllOld, kUpdatedOld, kAllNew, kUpdatedNew };

struct ItemWrite {
  WriteKind kind = WriteKind::kPut;
  // The JSON object that states the write: the request of a single-item operation, a
  // PutRequest or DeleteRequest, a transaction action. Its members are read as needed.
  JsonObject spec;
  std::string table_name;  // as the request named it: a name or an ARN
  engine::TablePtr table;  // once bound (bind_write)
  Item item;               // kPut: the item to store; otherwise the Key parameter
  // Condition and update (compiled by compile_write). Kept at one address: expressions
  // point into their own name and value maps.
  std::unique_ptr<RequestExpressions> expressions = std::make_unique<RequestExpressions>();
  ReturnValues return_values = ReturnValues::kNone;
  // ReturnValuesOnConditionCheckFailure is ALL_OLD: a failed condition reports the item.
  bool all_old_on_condition_failure = false;
  // A PartiQL write: its WHERE (kNoNode for an INSERT) over the stored item, with the
  // statement's parameters. Both outlive the write.
  struct Statement {
    const partiql::Statement* statement = nullptr;
    partiql::NodeId where = partiql::kNoNode;
    std::span<const AttributeValue> parameters;
  };
  std::optional<Statement> statement;

  // The table's key attributes of the item (once bound).
  Item key() const;
};

// Reads the write's item (the `Item` member for kPut, `Key` otherwise) and its expression
// maps; value errors go to `validation`, to be reported after every JSON type error.
// Returns whether the member was there.
bool read_write(const JsonObject& spec, WriteKind kind, ItemWrite& w, Validation& validation);

// Compiles the condition (and for kUpdate the update) in DynamoDB's order, and reads
// ReturnValuesOnConditionCheckFailure. Throws ValidationException. `single_item`: the
// write is a PutItem or DeleteItem request, whose ExpressionAttributeValues given without
// an expression are refused without naming the missing ConditionExpression.
void compile_write(ItemWrite& w, bool single_item = false);

// PutItem and DeleteItem return NONE or ALL_OLD; UpdateItem any of the five.
ReturnValues read_return_values(const JsonObject& request, WriteKind kind);

// How a Put whose item lacks a key attribute, or has one of the wrong type, is worded:
// as PutItem and TransactWriteItems word it ("Missing the key ...", "Type mismatch ..."),
// or as BatchWriteItem does ("The provided key element does not match the schema").
enum class KeyWording : std::uint8_t { kItem, kSchema };

// A Put's item must be within DynamoDB's item size limit.
void check_put_size(const Item& item);

// Binds the write to `table` and checks it against the table: a Put's item carries the
// table's key and valid index keys; any other write's Key is exactly the table's key; an
// update writes no key attribute and goes through no key attribute of the table or of an
// index. Throws ValidationException.
void bind_write(ItemWrite& w, engine::TablePtr table, KeyWording wording = KeyWording::kItem);

// Throws ConditionalCheckFailedException (with the item when asked for) unless the write's
// condition holds on `current`, the item as stored (nullopt: absent). A PartiQL write adds
// its existence rule: INSERT needs the item absent (DuplicateItemException), UPDATE and an
// EXISTS check need it present; a DELETE of an absent item does nothing and checks nothing.
void check_write_condition(const ItemWrite& w, const std::optional<Item>& current);

// What the write stores, given the current item: the item to store, or nullopt to delete
// (or, when absent, to leave absent). An update starts from the current item (or the key
// when absent), applies its actions and must leave valid index keys within the item size
// limit. A Put's item is moved out of `w`: apply once. Not for kConditionCheck.
std::optional<Item> apply_write(ItemWrite& w, const std::optional<Item>& current);

// The attributes the write's ReturnValues asks for, from its outcome; nullopt when none.
std::optional<Item> returned_attributes(const ItemWrite& w, const engine::WriteResult& result);

// The capacity a write consumed: the larger of the old and new item's write units, plus
// the index writes, times `factor` (2 in a transaction).
ConsumedCapacity write_capacity(std::string table_name, const engine::WriteResult& result,
                                double factor = 1);

// On PutItem, UpdateItem and DeleteItem DynamoDB wraps a request-validation error not
// already in the "N validation error(s) detected" form in "1 validation error detected: ".
// Runs `decode` and rethrows its ValidationException so wrapped.
template <typename F>
auto with_write_envelope(F&& decode) {
  try {
    return decode();
  } catch (const ApiError& e) {
    if (e.code() == ApiError::Code::kValidation && !e.coral() && e.message()) {
      throw ApiError::coral_validation("1 validation error detected: " + *e.message());
    }
    throw;
  }
}

}  // namespace kumo::api
