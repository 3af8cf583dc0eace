// The boundary between kumo and its RADOS back end, the module kumo-rados.so
// (rados_storage.cpp), which storage::open_rados loads (rados_module.cpp). Like the
// RocksDB module, it reports every failure through `fail` rather than throwing
// (storage/module_loader.h).
#pragma once

#include "storage/storage.h"

extern "C" {

using kumo_rados_fail_function = void (*)(const char* message);
// Reports what the back end did on its own (a partition split), for the server's log.
using kumo_rados_log_function = void (*)(const char* message);

// How the back end is tuned.
struct KumoRadosSettings {
  // A partition whose object holds more keys (items and index entries) than this splits
  // in two; 0: never. Ceph warns past 200,000 keys in one object.
  unsigned long long partition_keys;
  // Seconds this front end's lease lasts unless renewed (it renews it every quarter of
  // that); once it lapses, the other front ends sharing the pool finish what it left.
  unsigned lease_seconds;
};

// Connects to the cluster that `ceph_conf` describes (Ceph's default search when empty),
// opens `pool`, and finishes whatever a process that stopped mid-write left (see
// docs/scale-out.md). Every object goes to a RADOS namespace that starts with `prefix`, so
// deployments with different prefixes share a pool without seeing each other. The caller
// owns the result.
// `conflict` reports a write whose expectation failed (storage::WriteConflict); `gone`, a
// write to a table that another front end dropped (storage::TableGone); `held`, a write or
// a read that met items a transaction in progress holds (storage::TransactionConflict; the
// message is each item's key in hexadecimal, separated by spaces); `stale`, a write made
// with an older definition of its table than its partition holds
// (storage::DefinitionChanged).
kumo::storage::Storage* kumo_open_rados(
    const char* pool, const char* ceph_conf, const char* prefix, const KumoRadosSettings* settings,
    kumo_rados_fail_function fail, kumo_rados_fail_function conflict, kumo_rados_fail_function gone,
    kumo_rados_fail_function held, kumo_rados_fail_function stale, kumo_rados_log_function log);
}
