// open_rados: loads the RADOS back end, the module kumo-rados.so beside the executable,
// built when librados's development files are installed.
#include "storage/backends.h"
#include "storage/module_loader.h"
#include "storage/rados/module.h"

namespace kumo::storage {

std::unique_ptr<Storage> open_rados(const std::string& pool, const std::string& ceph_conf,
                                    const std::string& prefix) {
  using OpenFunction = decltype(&kumo_open_rados);
  static const auto open = reinterpret_cast<OpenFunction>(
      load_module_symbol("kumo-rados.so", "kumo_open_rados", "RADOS"));
  return std::unique_ptr<Storage>(
      open(pool.c_str(), ceph_conf.c_str(), prefix.c_str(), throw_storage_error));
}

}  // namespace kumo::storage
