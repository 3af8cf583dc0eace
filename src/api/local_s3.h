// S3 as a local directory, for ExportTableToPointInTime (which writes objects) and
// ImportTable (which reads them): a bucket is the directory <root>/<bucket>, an object key a
// path below it with '/' as the separator. docs/data-movement.md describes the mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kumo::api {

// An S3 failure as DynamoDB reports it in an export's or import's FailureCode and
// FailureMessage (S3's own error text).
class S3Error : public std::runtime_error {
 public:
  S3Error(std::string code, std::string message)
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// The bucket's directory is missing: S3NoSuchBucket, "The specified bucket does not exist
// (...)". A file that cannot be written or read: S3AccessDenied, "Access Denied (...)".
[[noreturn]] void throw_no_such_bucket();
[[noreturn]] void throw_access_denied(const std::string& detail);

// Whether `bucket` matches the S3 bucket name pattern of DynamoDB's model,
// ^[a-z0-9A-Z]+[\.\-\w]*[a-z0-9A-Z]+$, and is at most 255 characters. (Such a name is
// one path segment, never "." or "..".)
bool valid_bucket_name(std::string_view bucket);
// Whether `key` (an object key or a key prefix) stays inside its bucket: no NUL, not
// absolute, no ".." path segment. An empty key is valid (the bucket's root).
bool valid_object_key(std::string_view key);

// Compression of an object's bytes.
enum class Compression : std::uint8_t { kNone, kGzip, kZstd };

// The MD5 digest of `bytes`, as base64 (24 characters) and as lowercase hex (an S3 ETag of a
// single-part upload).
std::string md5_base64(std::string_view bytes);
std::string md5_hex(std::string_view bytes);

// Decompresses a whole object. A gzip object may hold several members, one after the
// other. Throws std::runtime_error when the bytes are not of that compression.
std::string decompress(std::string_view bytes, Compression compression);

class LocalS3 {
 public:
  explicit LocalS3(std::string root) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }

  // Whether the bucket's directory exists.
  bool bucket_exists(const std::string& bucket) const;
  // The file of an object.
  std::string path(const std::string& bucket, std::string_view key) const;
  // Writes an object whole: to a temporary name in its directory (made as needed), fsynced,
  // then renamed to its key. Throws S3Error.
  void put(const std::string& bucket, std::string_view key, std::string_view bytes) const;
  // An object's size in bytes (0 when it cannot be read).
  std::uint64_t size(const std::string& bucket, std::string_view key) const;
  // An object's bytes. Throws S3Error.
  std::string get(const std::string& bucket, std::string_view key) const;
  // The keys of the bucket's objects (regular files) that start with `prefix` (a raw key
  // prefix, as S3 matches it: "data" matches "data2/x" too), in key order; temporary files
  // of writes in progress are left out. Throws S3Error (S3NoSuchBucket when the bucket is
  // missing).
  std::vector<std::string> list(const std::string& bucket, std::string_view prefix) const;

  // An object written as a gzip stream while the items are read, so that an export never
  // holds a whole data file in memory. Closed by finish(): the file is fsynced and renamed
  // to its key; a writer destroyed unfinished removes its temporary file.
  class GzipWriter {
   public:
    ~GzipWriter();
    void write(std::string_view bytes);
    // Completes the object. Returns the compressed size.
    std::uint64_t finish();
    // MD5 of the compressed bytes (valid after finish).
    std::string md5_base64() const;
    std::string md5_hex() const;

   private:
    friend class LocalS3;
    struct State;
    GzipWriter() = default;
    std::unique_ptr<State> state_;
  };
  std::unique_ptr<GzipWriter> gzip_writer(const std::string& bucket, std::string_view key) const;

 private:
  std::string root_;
};

}  // namespace kumo::api
