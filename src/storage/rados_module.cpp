// open_rados: loads the RADOS back end, the module kumo-rados.so beside the executable,
// built when librados's development files are installed.
#include <spdlog/spdlog.h>

#include "storage/backends.h"
#include "storage/module_loader.h"
#include "storage/rados/module.h"

namespace kumo::storage {

namespace {
void log_info(const char* message) {
  spdlog::info("{}", message);
}
}  // namespace

std::unique_ptr<Storage> open_rados(const std::string& pool, const std::string& ceph_conf,
                                    const std::string& prefix, std::uint64_t partition_keys,
                                    unsigned lease_seconds) {
  using OpenFunction = decltype(&kumo_open_rados);
  static const auto open = reinterpret_cast<OpenFunction>(
      load_module_symbol("kumo-rados.so", "kumo_open_rados", "RADOS"));
  const KumoRadosSettings settings{partition_keys, lease_seconds};
  return std::unique_ptr<Storage>(open(pool.c_str(), ceph_conf.c_str(), prefix.c_str(), &settings,
                                       throw_storage_error, throw_write_conflict, throw_table_gone,
                                       throw_transaction_conflict, throw_definition_changed,
                                       log_info));
}

}  // namespace kumo::storage
