// ApiError: every failure a client can cause, as DynamoDB reports it (type with its
// namespace, HTTP status, message). Thrown from api/ and engine/, turned into the error
// body by net/. Message texts live at the named constructors' call sites and in
// messages.h. The body is compact JSON: {"__type":"<namespace>#<Name>"} plus the message.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/attribute_value.h"

namespace kumo {

// How DynamoDB's ValidationException messages about a parameter's value begin.
inline constexpr std::string_view kInvalidParameters =
    "One or more parameter values were invalid: ";

// Why one action of a cancelled transaction failed: one reason per action, in request
// order, in TransactionCanceledException's CancellationReasons.
struct CancellationReason {
  std::string code;                    // "None", "ConditionalCheckFailed", "ValidationError", ...
  std::optional<std::string> message;  // absent for "None"
  std::optional<Item> item;            // ConditionalCheckFailed with ALL_OLD
};

// One entry of a throttling exception's ThrottlingReasons: why the request was throttled
// ("TableWriteKeyRangeThroughputExceeded", ...) and the ARN of the table or index that
// throttled it.
struct ThrottlingReason {
  std::string reason;
  std::string resource;
};

class ApiError : public std::exception {
 public:
  // What went wrong, for code that decides on an error; type() and message() are what the
  // client is told.
  enum class Code : std::uint8_t {
    kValidation,
    kSerialization,
    kUnknownOperation,
    kMissingAuthenticationToken,
    kIncompleteSignature,
    kInvalidSignature,
    kUnrecognizedClient,
    kAccessDenied,
    kResourceNotFound,
    kResourceInUse,
    kLimitExceeded,
    kConditionalCheckFailed,
    kInternal,
    kTransactionCanceled,
    kIdempotentParameterMismatch,
    kItemCollectionSizeLimitExceeded,
    kTransactionInProgress,
    kTransactionConflict,
    kExpiredIterator,
    kTrimmedDataAccess,
    kTableNotFound,
    kDuplicateItem,
    kProvisionedThroughputExceeded,
    kThrottling,
    kRequestLimitExceeded,
    kBackupNotFound,
    kBackupInUse,
    kTableAlreadyExists,
    kTableInUse,
    kPointInTimeRecoveryUnavailable,
    kInvalidRestoreTime,
    kInvalidExportTime,
    kExportConflict,
    kExportNotFound,
    kImportConflict,
    kImportNotFound,
    kContinuousBackupsUnavailable,
  };

  // com.amazon.coral.validate#ValidationException, HTTP 400.
  static ApiError validation(std::string message);
  // A ValidationException whose message lists constraint violations in DynamoDB's request
  // validation form, "N validation error(s) detected: ..." (coral() is true).
  static ApiError coral_validation(std::string message);
  // com.amazon.coral.service#SerializationException; without a message the body has only
  // __type (bad JSON, empty body), with one it carries "Message".
  static ApiError serialization();
  static ApiError serialization(std::string message);
  // com.amazon.coral.service#UnknownOperationException, no message.
  static ApiError unknown_operation();
  static ApiError missing_authentication_token();
  static ApiError incomplete_signature(std::string message);
  static ApiError invalid_signature(std::string message);
  static ApiError unrecognized_client();
  static ApiError access_denied();
  // The same with DynamoDB's text for the call (a backup ARN of another account: "Access is
  // denied").
  static ApiError access_denied(std::string message);
  // com.amazonaws.dynamodb.v20120810# service exceptions.
  static ApiError resource_not_found(std::string message = "Requested resource not found");
  static ApiError resource_in_use(std::string message);
  static ApiError limit_exceeded(std::string message);
  // What the backup operations answer for a missing table: "Table not found: <name>".
  static ApiError table_not_found(std::string_view table_name);
  // The same with another text (bare "Table not found" for a restore's SourceTableArn).
  static ApiError table_not_found_text(std::string message);
  // Point-in-time recovery: a restore from a table without it, and a restore time outside
  // the table's window.
  static ApiError point_in_time_recovery_unavailable(std::string message);
  static ApiError invalid_restore_time(std::string message);
  // CreateBackup and UpdateContinuousBackups of a table that ImportTable is still creating:
  // "Backups are being enabled for the table: <name>. Please retry later".
  static ApiError continuous_backups_unavailable(std::string_view table_name);
  // The backup operations' own errors: "Backup not found: <arn>"; a backup feeding a
  // restore; the target of a restore that exists ("Table already exists: <name>") or is
  // itself being restored.
  static ApiError backup_not_found(std::string_view backup_arn);
  static ApiError backup_in_use(std::string message);
  static ApiError table_already_exists(std::string_view table_name);
  static ApiError table_in_use(std::string message);
  // Exports and imports: com.amazonaws.dynamodb.v20120810#<Name>Exception, HTTP 400.
  static ApiError invalid_export_time(std::string message);
  static ApiError export_conflict(std::string message);
  static ApiError export_not_found(std::string message);
  static ApiError import_conflict(std::string message);
  static ApiError import_not_found(std::string message);
  // `item` is the current item when ReturnValuesOnConditionCheckFailure is ALL_OLD.
  static ApiError conditional_check_failed(std::optional<Item> item = std::nullopt);
  static ApiError internal(std::string message = "Internal server error");
  // com.amazon.coral.service#InternalFailure, HTTP 500, no message: what DynamoDB answers
  // for some requests it fails to handle (an empty WarmThroughput on UpdateTable).
  static ApiError internal_failure();
  // TransactionCanceledException: one reason per action, in request order.
  static ApiError transaction_canceled(std::vector<CancellationReason> reasons);
  static ApiError idempotent_parameter_mismatch();
  static ApiError item_collection_size_limit_exceeded();
  static ApiError transaction_in_progress();
  // A write of an item that a transaction in progress holds (another front end's, on a
  // storage several share): TransactionConflictException, and the cancellation reason
  // TransactionConflict of a transaction that meets one.
  static ApiError transaction_conflict();
  // A PartiQL INSERT of a key that already exists.
  static ApiError duplicate_item();
  // DynamoDB Streams (same namespace): an iterator older than its 15 minutes, and a
  // position older than the stream's retention.
  static ApiError expired_iterator();
  static ApiError trimmed_data_access();
  // The three throttling exceptions, each with its ThrottlingReasons entry.
  // `cancellation_message` is the text a transaction's cancellation reason carries when
  // this throttle cancels it.
  static ApiError provisioned_throughput_exceeded(std::string message, ThrottlingReason reason,
                                                  std::string cancellation_message);
  static ApiError throttling(std::string message, ThrottlingReason reason,
                             std::string cancellation_message);
  static ApiError request_limit_exceeded(std::string message, ThrottlingReason reason);

  Code code() const { return code_; }
  // A ValidationException already in the "N validation error(s) detected" form.
  bool coral() const { return coral_; }
  int http_status() const { return http_status_; }
  // Full type with namespace, e.g. "com.amazon.coral.validate#ValidationException".
  const std::string& type() const { return type_; }
  const std::optional<std::string>& message() const { return message_; }
  // "message" for most errors, "Message" where DynamoDB's model says so.
  const char* message_member() const { return capital_message_ ? "Message" : "message"; }
  const std::optional<Item>& item() const { return item_; }
  const std::vector<CancellationReason>& cancellation_reasons() const { return reasons_; }
  const std::vector<ThrottlingReason>& throttling_reasons() const { return throttling_; }
  const std::string& cancellation_message() const { return cancellation_message_; }
  // A throttle: ProvisionedThroughputExceeded, Throttling or RequestLimitExceeded.
  bool throttle() const {
    return code_ == Code::kProvisionedThroughputExceeded || code_ == Code::kThrottling ||
           code_ == Code::kRequestLimitExceeded;
  }
  const char* what() const noexcept override;

 private:
  ApiError(Code code, int status, std::string type, std::optional<std::string> message,
           bool capital = false);

  Code code_;
  bool coral_ = false;
  int http_status_;
  std::string type_;
  std::optional<std::string> message_;
  bool capital_message_;
  std::optional<Item> item_;
  std::vector<CancellationReason> reasons_;
  std::vector<ThrottlingReason> throttling_;
  std::string cancellation_message_;
};

}  // namespace kumo
