#!/usr/bin/env bash
# Kumo over RADOS against the ceiling librados itself gives, in one run on one cluster:
# GetItem and PutItem of kumo-bench against `kumo serve --rados` (one I/O thread per
# connection: each waits on the cluster for its request), beside kumo-rados-ceiling doing
# the same RADOS work at the same concurrency (one omap_get_vals_by_keys per GetItem, one
# guarded omap_set per PutItem), and beside Kumo on its local back ends (memory and
# RocksDB) at that concurrency. Prints one table; nothing is asserted.
#
#   bench/rados-vs-ceiling.sh [BUILD_DIR]     (default: build)
#
# Starts its own loopback cluster (scripts/ceph-cluster.sh), or uses the one whose
# ceph.conf $CEPH_CONF names. CONCURRENCY (default "2 4 8 16") and DURATION (default 6)
# change the runs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
kumo=$build/kumo
bench=$build/bench/kumo-bench
ceiling=$build/bench/kumo-rados-ceiling
concurrency=${CONCURRENCY:-2 4 8 16}
duration=${DURATION:-6}
for file in "$kumo" "$bench" "$ceiling"; do
  [[ -x "$file" ]] || { echo "rados-vs-ceiling: no $file" >&2; exit 1; }
done

source "$root/bench/ceph-lib.sh"
server=""
data=$(mktemp -d /tmp/kumo-rados-bench.XXXXXX)
trap stop_bench EXIT
use_ceph_cluster

port=$((20000 + RANDOM % 20000))
# kumo_rate WORKLOAD CONNECTIONS ARGS...: sets `ops` to kumo-bench's ops/s against a fresh
# server started with ARGS... (run in this shell, not in $(...): the trap then sees the
# server's pid, and a failed run stops the script).
kumo_rate() {
  local workload=$1 connections=$2
  shift 2
  start_bench_server "$kumo" "$data/server.log" --threads "$connections" "$@"
  "$bench" --endpoint "127.0.0.1:$port" --workload "$workload" --connections "$connections" \
    --threads 1 --duration "${duration}s" --warmup 1s --items 10000 --preload-batch 25 \
    --server-pid "$server" >"$data/bench.out" 2>&1
  stop_bench_server
  ops=$(sed -n 's/^ *throughput *\([0-9]*\) ops\/s.*/\1/p' "$data/bench.out")
}

printf '%-8s %5s %10s %10s %7s %10s %10s\n' workload conc ceiling rados ratio memory rocksdb
run=0
for workload in getitem putitem; do
  for c in $concurrency; do
    run=$((run + 1))
    ceil=$("$ceiling" --ceph-conf "$CEPH_CONF" --workload "$workload" --concurrency "$c" \
      --duration "$duration" --warmup 1 | sed -n 's/.*: \([0-9]*\) ops\/s.*/\1/p')
    kumo_rate "$workload" "$c" --rados kumo --ceph-conf "$CEPH_CONF" \
      --rados-namespace "bench-$$-$run-"
    rados=$ops
    kumo_rate "$workload" "$c" --in-memory
    memory=$ops
    rm -rf "$data/rocksdb"
    kumo_rate "$workload" "$c" --data-dir "$data/rocksdb"
    rocksdb=$ops
    printf '%-8s %5s %10s %10s %7s %10s %10s\n' "$workload" "$c" "$ceil" "$rados" \
      "$(/usr/bin/python3 -c "print(f'{$rados / $ceil:.2f}')")" "$memory" "$rocksdb"
  done
done
