// The base of the engine tests' storage doubles: every call goes to another storage
// (`inner`), so that a double overrides only what it watches or changes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/storage.h"

namespace kumo::engine {

class ForwardingStorage : public storage::Storage {
 public:
  explicit ForwardingStorage(std::shared_ptr<storage::Storage> inner) : inner_(std::move(inner)) {}

  std::optional<std::string> get(std::string_view key, const storage::Snapshot* snapshot) override {
    return inner_->get(key, snapshot);
  }
  void write(const storage::WriteBatch& batch) override { inner_->write(batch); }
  std::unique_ptr<storage::Snapshot> snapshot() override { return inner_->snapshot(); }
  std::unique_ptr<storage::Iterator> iterator(std::string lower, std::string upper,
                                              const storage::Snapshot* snapshot) override {
    return inner_->iterator(std::move(lower), std::move(upper), snapshot);
  }
  void erase_range(const std::string& lower, const std::string& upper) override {
    inner_->erase_range(lower, upper);
  }
  bool shared() const override { return inner_->shared(); }
  void set_definition(std::uint32_t table, std::uint64_t version, bool dropped) override {
    inner_->set_definition(table, version, dropped);
  }
  std::vector<StreamPartition> stream_partitions(std::uint32_t table) override {
    return inner_->stream_partitions(table);
  }
  std::uint64_t stream_horizon(std::uint32_t table, std::uint64_t first_token,
                               std::optional<std::uint64_t> end_token) override {
    return inner_->stream_horizon(table, first_token, end_token);
  }
  std::vector<UnnotedSplit> unnoted_splits() override { return inner_->unnoted_splits(); }
  void split_noted(std::uint32_t table, std::uint64_t token) override {
    inner_->split_noted(table, token);
  }
  void announce_catalog() override { inner_->announce_catalog(); }
  std::unique_ptr<storage::Iterator> stream_records(std::uint32_t table, std::uint64_t first_token,
                                                    std::string lower, std::string upper) override {
    return inner_->stream_records(table, first_token, std::move(lower), std::move(upper));
  }
  void erase_stream_records(std::uint32_t table, std::uint64_t first_token,
                            const std::string& lower, const std::string& upper) override {
    inner_->erase_stream_records(table, first_token, lower, upper);
  }

 protected:
  storage::Storage& inner() { return *inner_; }

 private:
  std::shared_ptr<storage::Storage> inner_;
};

}  // namespace kumo::engine
