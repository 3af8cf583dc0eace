#include "api/local_s3.h"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "api/attribute_json.h"
#include "model/random_seed.h"

namespace kumo::api {
namespace {

// A temporary file's name holds this; list() leaves such files out.
constexpr std::string_view kTemporaryMark = ".kumo-tmp-";

std::string temporary_name(const std::string& path) {
  thread_local std::mt19937_64 random{random_seed()};
  return fmt::format("{}{}{:016x}", path, kTemporaryMark, random());
}

// mkdir -p of the directory that holds `path`.
void make_parents(const std::string& path) {
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      throw_access_denied(fmt::format("cannot make {}: {}", dir, std::strerror(errno)));
    }
  }
}

void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_access_denied(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// fsync, close, rename to `path`, and fsync the directory so that the name is durable.
void commit_file(int fd, const std::string& temporary, const std::string& path) {
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temporary.c_str());
    throw_access_denied(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    throw_access_denied(fmt::format("cannot rename to {}: {}", path, std::strerror(errno)));
  }
  const std::string dir = path.substr(0, path.rfind('/'));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::string digest_md5(std::string_view bytes) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), out, &size, EVP_md5(), nullptr);
  return std::string(reinterpret_cast<const char*>(out), size);
}

std::string hex(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

void walk(const std::string& dir, const std::string& key_prefix, std::string_view wanted,
          std::vector<std::string>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string key = key_prefix + name;
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      // Only directories whose keys can still match the prefix.
      const std::string sub = key + "/";
      const std::size_t common = std::min(sub.size(), wanted.size());
      if (sub.compare(0, common, wanted.substr(0, common)) == 0) walk(path, sub, wanted, out);
    } else if (S_ISREG(st.st_mode) && key.starts_with(wanted) &&
               key.find(kTemporaryMark) == std::string::npos) {
      out->push_back(key);
    }
  }
  ::closedir(d);
}

}  // namespace

void throw_no_such_bucket() {
  throw S3Error("S3NoSuchBucket",
                "The specified bucket does not exist (Service: Amazon S3; Status Code: 404; "
                "Error Code: NoSuchBucket; Request ID: null; S3 Extended Request ID: null; "
                "Proxy: null)");
}

void throw_access_denied(const std::string& detail) {
  throw S3Error("S3AccessDenied",
                fmt::format("Access Denied (Service: Amazon S3; Status Code: 403; Error Code: "
                            "AccessDenied; Request ID: null; S3 Extended Request ID: null; "
                            "Proxy: null): {}",
                            detail));
}

bool valid_bucket_name(std::string_view bucket) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (bucket.size() < 2 || bucket.size() > 255) return false;
  if (!alnum(bucket.front()) || !alnum(bucket.back())) return false;
  return std::all_of(bucket.begin(), bucket.end(),
                     [&](char c) { return alnum(c) || c == '.' || c == '-' || c == '_'; });
}

bool valid_object_key(std::string_view key) {
  if (key.find('\0') != std::string_view::npos) return false;
  if (!key.empty() && key.front() == '/') return false;
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = key.find('/', start);
    const std::string_view segment =
        key.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (segment == "..") return false;
    if (slash == std::string_view::npos) return true;
    start = slash + 1;
  }
}

std::string md5_base64(std::string_view bytes) {
  return base64_encode(digest_md5(bytes));
}

std::string md5_hex(std::string_view bytes) {
  return hex(digest_md5(bytes));
}

std::string decompress(std::string_view bytes, Compression compression) {
  if (compression == Compression::kNone || bytes.empty()) return std::string(bytes);
  std::string out;
  char buffer[65536];
  if (compression == Compression::kGzip) {
    // Member after member, as gunzip reads a concatenation.
    while (!bytes.empty()) {
      z_stream z{};
      if (inflateInit2(&z, 15 + 16) != Z_OK) throw std::runtime_error("zlib: out of memory");
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
      z.avail_in = static_cast<uInt>(bytes.size());
      int rc = Z_OK;
      while (rc != Z_STREAM_END) {
        z.next_out = reinterpret_cast<Bytef*>(buffer);
        z.avail_out = sizeof buffer;
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) {
          inflateEnd(&z);
          throw std::runtime_error("not a gzip stream");
        }
        out.append(buffer, sizeof buffer - z.avail_out);
        if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
          inflateEnd(&z);
          throw std::runtime_error("truncated gzip stream");
        }
      }
      bytes.remove_prefix(bytes.size() - z.avail_in);
      inflateEnd(&z);
    }
    return out;
  }
  ZSTD_DStream* z = ZSTD_createDStream();
  ZSTD_initDStream(z);
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  std::size_t rc = 0;
  for (;;) {
    ZSTD_outBuffer o{buffer, sizeof buffer, 0};
    rc = ZSTD_decompressStream(z, &o, &in);
    if (ZSTD_isError(rc)) {
      ZSTD_freeDStream(z);
      throw std::runtime_error("not a zstd stream");
    }
    out.append(buffer, o.pos);
    if (in.pos == in.size && o.pos < o.size) break;
  }
  ZSTD_freeDStream(z);
  if (rc != 0) throw std::runtime_error("truncated zstd stream");
  return out;
}

bool LocalS3::bucket_exists(const std::string& bucket) const {
  struct stat st {};
  return ::stat((root_ + "/" + bucket).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string LocalS3::path(const std::string& bucket, std::string_view key) const {
  return root_ + "/" + bucket + "/" + std::string(key);
}

void LocalS3::put(const std::string& bucket, std::string_view key, std::string_view bytes) const {
  if (!bucket_exists(bucket)) throw_no_such_bucket();
  const std::string target = path(bucket, key);
  make_parents(target);
  const std::string temporary = temporary_name(target);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_access_denied(fmt::format("cannot write {}: {}", target, std::strerror(errno)));
  try {
    write_all(fd, bytes, target);
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  commit_file(fd, temporary, target);
}

std::uint64_t LocalS3::size(const std::string& bucket, std::string_view key) const {
  struct stat st {};
  if (::stat(path(bucket, key).c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_size);
}

std::string LocalS3::get(const std::string& bucket, std::string_view key) const {
  const std::string file = path(bucket, key);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_access_denied(fmt::format("cannot read {}: {}", file, std::strerror(errno)));
  std::string out;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      throw_access_denied(fmt::format("cannot read {}: {}", file, std::strerror(errno)));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::vector<std::string> LocalS3::list(const std::string& bucket, std::string_view prefix) const {
  if (!bucket_exists(bucket)) throw_no_such_bucket();
  std::vector<std::string> keys;
  walk(root_ + "/" + bucket, "", prefix, &keys);
  std::sort(keys.begin(), keys.end());
  return keys;
}

struct LocalS3::GzipWriter::State {
  std::string path, temporary;
  int fd = -1;
  z_stream z{};
  EVP_MD_CTX* md5 = nullptr;
  std::uint64_t size = 0;
  std::string digest;
  bool finished = false;

  void emit(int flush) {
    char buffer[65536];
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer);
      z.avail_out = sizeof buffer;
      deflate(&z, flush);
      const std::size_t n = sizeof buffer - z.avail_out;
      write_all(fd, std::string_view(buffer, n), path);
      EVP_DigestUpdate(md5, buffer, n);
      size += n;
    } while (z.avail_out == 0);
  }
};

std::unique_ptr<LocalS3::GzipWriter> LocalS3::gzip_writer(const std::string& bucket,
                                                          std::string_view key) const {
  if (!bucket_exists(bucket)) throw_no_such_bucket();
  std::unique_ptr<GzipWriter> writer(new GzipWriter());
  auto state = std::make_unique<GzipWriter::State>();
  state->path = path(bucket, key);
  make_parents(state->path);
  state->temporary = temporary_name(state->path);
  state->fd = ::open(state->temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (state->fd < 0) {
    throw_access_denied(fmt::format("cannot write {}: {}", state->path, std::strerror(errno)));
  }
  deflateInit2(&state->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  state->md5 = EVP_MD_CTX_new();
  EVP_DigestInit_ex(state->md5, EVP_md5(), nullptr);
  writer->state_ = std::move(state);
  return writer;
}

LocalS3::GzipWriter::~GzipWriter() {
  if (!state_) return;
  if (!state_->finished) {
    ::close(state_->fd);
    ::unlink(state_->temporary.c_str());
  }
  deflateEnd(&state_->z);
  EVP_MD_CTX_free(state_->md5);
}

void LocalS3::GzipWriter::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t n = std::min<std::size_t>(bytes.size(), 1 << 20);
    state_->z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    state_->z.avail_in = static_cast<uInt>(n);
    state_->emit(Z_NO_FLUSH);
    bytes.remove_prefix(n);
  }
}

std::uint64_t LocalS3::GzipWriter::finish() {
  state_->z.next_in = nullptr;
  state_->z.avail_in = 0;
  state_->emit(Z_FINISH);
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(state_->md5, out, &size);
  state_->digest.assign(reinterpret_cast<const char*>(out), size);
  state_->finished = true;
  commit_file(state_->fd, state_->temporary, state_->path);
  return state_->size;
}

std::string LocalS3::GzipWriter::md5_base64() const {
  return base64_encode(state_->digest);
}

std::string LocalS3::GzipWriter::md5_hex() const {
  return hex(state_->digest);
}

}  // namespace kumo::api
