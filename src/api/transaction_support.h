// What TransactWriteItems shares with ExecuteTransaction: ClientRequestToken idempotency
// and the limits of one transaction.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/item_writes.h"
#include "api/json_reader.h"
#include "api/operations.h"
#include "model/api_error.h"

namespace kumo::api {

// The items of one transaction, written or read, total at most 4 MB.
inline constexpr std::size_t kMaxTransactionBytes = 4u << 20;
inline constexpr const char* kMultipleOperations =
    "Transaction request cannot include multiple operations on one item";
inline constexpr const char* kTransactionTooLarge =
    "Transaction request cannot be larger than 4 MB";

// A transaction cancelled by a validation error of action `failed` (of `actions`): its
// reason is ValidationError with `message`, every other action's None, as DynamoDB stops at
// the first invalid action without evaluating the rest.
ApiError validation_cancellation(std::size_t actions, std::size_t failed, std::string message);

// The code DynamoDB names a failed action by in a cancellation reason, and a failed statement
// by in BatchExecuteStatement's Error.Code: "ConditionalCheckFailed", "DuplicateItem",
// "ResourceNotFound", "ItemCollectionSizeLimitExceeded", "ValidationError", ...; a
// throttle is "ProvisionedThroughputExceeded" or "ThrottlingError".
std::string_view error_code(const ApiError& e);

// The cancellation reason of an action that failed with `failure` (null: "None"). A
// throttle's reason carries the throttle's cancellation message.
CancellationReason cancellation_reason(const std::exception_ptr& failure);

// Applies every write or none, each item locked and checked (condition, then mutation) on
// its current state (Engine::transact_write). Returns the results in order; when any write
// fails, throws TransactionCanceledException with one reason per write. The writes' keys
// are read before anything runs.
// `seal`: Engine::transact_write's.
std::vector<engine::WriteResult> apply_item_writes(const Context& ctx,
                                                   const std::vector<ItemWrite*>& writes,
                                                   const engine::Metering& metering,
                                                   const engine::TransactionSeal& seal = {});

// Reads the items of a transaction (Engine::transact_get) within kMaxTransactionBytes; when
// a throttle refuses any read, nothing is read and the transaction is cancelled with one
// reason per read.
std::vector<std::optional<Item>> transact_read(const Context& ctx,
                                               const std::vector<engine::TransactGet>& reads,
                                               const engine::Metering& metering);

// What a transaction under a ClientRequestToken writes with its own batch: given the replay
// (what a repeat answers), the token's completed entry (TransactionTokens::seal). Empty when
// the tokens keep nothing with the transaction.
using TokenSeal = std::function<void(std::string replay, storage::WriteBatch* batch)>;

// Runs a transaction once per ClientRequestToken: `apply` returns the response and sets
// *replay to what a repeat of the request answers; it hands `seal` (when not empty) the
// replay as known before the commit, from the engine's TransactionSeal. Without a token it
// just runs. A repeat of a completed request (same canonical JSON) gets the replay; the same
// token with another request is IdempotentParameterMismatchException, and while the first
// is still running, TransactionInProgressException.
std::string idempotent_transaction(
    const Context& ctx, const JsonObject& request, std::optional<std::string_view> token,
    const std::function<std::string(std::string* replay, const TokenSeal& seal)>& apply);

}  // namespace kumo::api
