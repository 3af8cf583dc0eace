#include "model/api_error.h"

namespace kumo {
namespace {
constexpr const char* kCoralService = "com.amazon.coral.service#";
constexpr const char* kDynamo = "com.amazonaws.dynamodb.v20120810#";
}  // namespace

ApiError::ApiError(Code code, int status, std::string type, std::optional<std::string> message,
                   bool capital)
    : code_(code),
      http_status_(status),
      type_(std::move(type)),
      message_(std::move(message)),
      capital_message_(capital) {}

const char* ApiError::what() const noexcept {
  return message_ ? message_->c_str() : type_.c_str();
}

ApiError ApiError::validation(std::string message) {
  return ApiError(Code::kValidation, 400, "com.amazon.coral.validate#ValidationException",
                  std::move(message));
}
ApiError ApiError::coral_validation(std::string message) {
  ApiError e = validation(std::move(message));
  e.coral_ = true;
  return e;
}
ApiError ApiError::serialization() {
  return ApiError(Code::kSerialization, 400, std::string(kCoralService) + "SerializationException",
                  std::nullopt);
}
ApiError ApiError::serialization(std::string message) {
  return ApiError(Code::kSerialization, 400, std::string(kCoralService) + "SerializationException",
                  std::move(message), true);
}
ApiError ApiError::unknown_operation() {
  return ApiError(Code::kUnknownOperation, 400,
                  std::string(kCoralService) + "UnknownOperationException", std::nullopt);
}
ApiError ApiError::missing_authentication_token() {
  return ApiError(Code::kMissingAuthenticationToken, 400,
                  std::string(kCoralService) + "MissingAuthenticationTokenException",
                  "Request is missing Authentication Token");
}
ApiError ApiError::incomplete_signature(std::string message) {
  return ApiError(Code::kIncompleteSignature, 400,
                  std::string(kCoralService) + "IncompleteSignatureException", std::move(message));
}
ApiError ApiError::invalid_signature(std::string message) {
  return ApiError(Code::kInvalidSignature, 400,
                  std::string(kCoralService) + "InvalidSignatureException", std::move(message));
}
ApiError ApiError::unrecognized_client() {
  return ApiError(Code::kUnrecognizedClient, 400,
                  std::string(kCoralService) + "UnrecognizedClientException",
                  "The security token included in the request is invalid.");
}
ApiError ApiError::access_denied() {
  return ApiError(Code::kAccessDenied, 400, std::string(kCoralService) + "AccessDeniedException",
                  "Access denied.");
}
ApiError ApiError::access_denied(std::string message) {
  return ApiError(Code::kAccessDenied, 400, std::string(kCoralService) + "AccessDeniedException",
                  std::move(message));
}
ApiError ApiError::resource_not_found(std::string message) {
  return ApiError(Code::kResourceNotFound, 400, std::string(kDynamo) + "ResourceNotFoundException",
                  std::move(message));
}
ApiError ApiError::resource_in_use(std::string message) {
  return ApiError(Code::kResourceInUse, 400, std::string(kDynamo) + "ResourceInUseException",
                  std::move(message));
}
ApiError ApiError::limit_exceeded(std::string message) {
  return ApiError(Code::kLimitExceeded, 400, std::string(kDynamo) + "LimitExceededException",
                  std::move(message));
}
ApiError ApiError::table_not_found(std::string_view table_name) {
  return ApiError(Code::kTableNotFound, 400, std::string(kDynamo) + "TableNotFoundException",
                  "Table not found: " + std::string(table_name));
}
ApiError ApiError::table_not_found_text(std::string message) {
  return ApiError(Code::kTableNotFound, 400, std::string(kDynamo) + "TableNotFoundException",
                  std::move(message));
}
ApiError ApiError::point_in_time_recovery_unavailable(std::string message) {
  return ApiError(Code::kPointInTimeRecoveryUnavailable, 400,
                  std::string(kDynamo) + "PointInTimeRecoveryUnavailableException",
                  std::move(message));
}
ApiError ApiError::invalid_restore_time(std::string message) {
  return ApiError(Code::kInvalidRestoreTime, 400,
                  std::string(kDynamo) + "InvalidRestoreTimeException", std::move(message));
}
ApiError ApiError::continuous_backups_unavailable(std::string_view table_name) {
  return ApiError(Code::kContinuousBackupsUnavailable, 400,
                  std::string(kDynamo) + "ContinuousBackupsUnavailableException",
                  "Backups are being enabled for the table: " + std::string(table_name) +
                      ". Please retry later");
}
ApiError ApiError::backup_not_found(std::string_view backup_arn) {
  return ApiError(Code::kBackupNotFound, 400, std::string(kDynamo) + "BackupNotFoundException",
                  "Backup not found: " + std::string(backup_arn));
}
ApiError ApiError::invalid_export_time(std::string message) {
  return ApiError(Code::kInvalidExportTime, 400,
                  std::string(kDynamo) + "InvalidExportTimeException", std::move(message));
}
ApiError ApiError::export_conflict(std::string message) {
  return ApiError(Code::kExportConflict, 400, std::string(kDynamo) + "ExportConflictException",
                  std::move(message));
}
ApiError ApiError::export_not_found(std::string message) {
  return ApiError(Code::kExportNotFound, 400, std::string(kDynamo) + "ExportNotFoundException",
                  std::move(message));
}
ApiError ApiError::import_conflict(std::string message) {
  return ApiError(Code::kImportConflict, 400, std::string(kDynamo) + "ImportConflictException",
                  std::move(message));
}
ApiError ApiError::import_not_found(std::string message) {
  return ApiError(Code::kImportNotFound, 400, std::string(kDynamo) + "ImportNotFoundException",
                  std::move(message));
}
ApiError ApiError::backup_in_use(std::string message) {
  return ApiError(Code::kBackupInUse, 400, std::string(kDynamo) + "BackupInUseException",
                  std::move(message));
}
ApiError ApiError::table_already_exists(std::string_view table_name) {
  return ApiError(Code::kTableAlreadyExists, 400,
                  std::string(kDynamo) + "TableAlreadyExistsException",
                  "Table already exists: " + std::string(table_name));
}
ApiError ApiError::table_in_use(std::string message) {
  return ApiError(Code::kTableInUse, 400, std::string(kDynamo) + "TableInUseException",
                  std::move(message));
}
ApiError ApiError::conditional_check_failed(std::optional<Item> item) {
  ApiError e(Code::kConditionalCheckFailed, 400,
             std::string(kDynamo) + "ConditionalCheckFailedException",
             "The conditional request failed");
  e.item_ = std::move(item);
  return e;
}
ApiError ApiError::internal(std::string message) {
  return ApiError(Code::kInternal, 500, std::string(kDynamo) + "InternalServerError",
                  std::move(message));
}
ApiError ApiError::internal_failure() {
  return ApiError(Code::kInternal, 500, std::string(kCoralService) + "InternalFailure",
                  std::nullopt);
}

ApiError ApiError::transaction_canceled(std::vector<CancellationReason> reasons) {
  std::string codes;
  for (const auto& r : reasons) codes += (codes.empty() ? "" : ", ") + r.code;
  ApiError e(Code::kTransactionCanceled, 400, std::string(kDynamo) + "TransactionCanceledException",
             "Transaction cancelled, please refer cancellation reasons for specific reasons [" +
                 codes + "]",
             true);
  e.reasons_ = std::move(reasons);
  return e;
}

ApiError ApiError::idempotent_parameter_mismatch() {
  return ApiError(Code::kIdempotentParameterMismatch, 400,
                  std::string(kDynamo) + "IdempotentParameterMismatchException",
                  "Request parameters do not match the parameters of a previous request with the "
                  "same client request token",
                  true);
}

ApiError ApiError::duplicate_item() {
  return ApiError(Code::kDuplicateItem, 400, std::string(kDynamo) + "DuplicateItemException",
                  "Duplicate primary key exists in table");
}

ApiError ApiError::item_collection_size_limit_exceeded() {
  return ApiError(Code::kItemCollectionSizeLimitExceeded, 400,
                  std::string(kDynamo) + "ItemCollectionSizeLimitExceededException",
                  "Collection size exceeded.");
}

ApiError ApiError::transaction_in_progress() {
  return ApiError(Code::kTransactionInProgress, 400,
                  std::string(kDynamo) + "TransactionInProgressException",
                  "Transaction from previous request is still in progress", true);
}

ApiError ApiError::transaction_conflict() {
  return ApiError(Code::kTransactionConflict, 400,
                  std::string(kDynamo) + "TransactionConflictException",
                  "Transaction is ongoing for the item");
}

ApiError ApiError::expired_iterator() {
  return ApiError(Code::kExpiredIterator, 400, std::string(kDynamo) + "ExpiredIteratorException",
                  "The provided iterator exceeds the maximum age allowed.");
}

ApiError ApiError::trimmed_data_access() {
  return ApiError(Code::kTrimmedDataAccess, 400,
                  std::string(kDynamo) + "TrimmedDataAccessException",
                  "The data you are trying to access has been trimmed.");
}

ApiError ApiError::provisioned_throughput_exceeded(std::string message, ThrottlingReason reason,
                                                   std::string cancellation_message) {
  ApiError e(Code::kProvisionedThroughputExceeded, 400,
             std::string(kDynamo) + "ProvisionedThroughputExceededException", std::move(message));
  e.throttling_.push_back(std::move(reason));
  e.cancellation_message_ = std::move(cancellation_message);
  return e;
}

ApiError ApiError::throttling(std::string message, ThrottlingReason reason,
                              std::string cancellation_message) {
  ApiError e(Code::kThrottling, 400, std::string(kDynamo) + "ThrottlingException",
             std::move(message));
  e.throttling_.push_back(std::move(reason));
  e.cancellation_message_ = std::move(cancellation_message);
  return e;
}

ApiError ApiError::request_limit_exceeded(std::string message, ThrottlingReason reason) {
  ApiError e(Code::kRequestLimitExceeded, 400, std::string(kDynamo) + "RequestLimitExceeded",
             std::move(message));
  e.cancellation_message_ = *e.message_;
  e.throttling_.push_back(std::move(reason));
  return e;
}

}  // namespace kumo
