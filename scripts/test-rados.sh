#!/usr/bin/env bash
# Runs the end-to-end suite against Kumo's RADOS back end: starts a loopback Ceph cluster
# (scripts/ceph-cluster.sh: 1 monitor, 1 manager, 3 OSDs, pool size 3), runs the tests
# with every server on `--rados kumo` (each in RADOS namespaces of its own), then stops the
# cluster.
#
#   scripts/test-rados.sh [--all] [--front-ends N] [BUILD_DIR]
#
# By default a bounded part of the suite (the files below: items, conditions, queries,
# scans, indexes, transactions, streams, restarts, 4 kill -9 loops (20 with --all), an OSD
# killed, partition splits and a split stopped at each of its steps, several front ends on
# one pool with transactions across them, 5 fault loops over three front ends, one of each
# fault, an OSD kill among them (50 with --all: KUMO_FAULT_LOOPS), the local cluster
# script); --all
# runs every file (about 5 minutes on two cores). With CEPH_CONF set, uses that running cluster's pool $KUMO_RADOS_POOL (default
# kumo) instead of starting one (and runs the OSD fault tests only with KUMO_CEPH_DIR set
# to the directory of a cluster made by scripts/ceph-cluster.sh).
#
# --front-ends N (or KUMO_FRONT_ENDS=N): every server the tests start is N `kumo serve`
# processes on one RADOS namespace behind HAProxy, round-robin per request (kumo_testlib's
# KumoGroup; docs/scale-out.md section 3a, Tests), e.g.
#   CEPH_CONF=DIR/ceph.conf scripts/test-rados.sh --front-ends 3 build
#   scripts/test-rados.sh --all --front-ends 3 build
# It needs HAProxy (scripts/install-deps.sh --test) and skips the layout unit test (no
# front end takes part in it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
all=0
front_ends=${KUMO_FRONT_ENDS:-}
while [ $# -gt 0 ]; do
  case $1 in
    --all) all=1; shift ;;
    --front-ends) front_ends=${2:?--front-ends N}; shift 2 ;;
    --front-ends=*) front_ends=${1#*=}; shift ;;
    *) break ;;
  esac
done
build=${1:-$root/build}
if [ -n "$front_ends" ]; then
  [[ $front_ends =~ ^[1-9][0-9]*$ ]] || { echo "test-rados.sh: --front-ends N: a number, not '$front_ends'" >&2; exit 2; }
  export KUMO_FRONT_ENDS=$front_ends
  if [ ! -x /usr/sbin/haproxy ] && ! command -v haproxy >/dev/null; then
    "$root/scripts/install-deps.sh" --test
  fi
fi

files=(tests/e2e)
if [ "$all" = 0 ]; then
  files=(
    tests/e2e/test_items.py tests/e2e/test_conditions.py tests/e2e/test_query.py
    tests/e2e/test_scan.py tests/e2e/test_index_writes.py tests/e2e/test_index_queries.py
    tests/e2e/test_transactions.py tests/e2e/test_transact_get.py
    tests/e2e/test_streams_records.py tests/e2e/test_tables_manage.py
    tests/e2e/test_persistence.py tests/e2e/test_crash_loops.py tests/e2e/test_rados_faults.py
    tests/e2e/test_rados_splits.py tests/e2e/test_rados_ttl.py
    tests/e2e/test_rados_streams.py tests/e2e/test_rados_front_ends.py
    tests/e2e/test_rados_fencing.py tests/e2e/test_rados_jobs.py
    tests/e2e/test_rados_transactions.py tests/e2e/test_rados_fault_loops.py
    tests/e2e/test_rados_item_versions.py
    tests/e2e/test_kumo_cluster.py
  )
  if [ -n "$front_ends" ]; then files+=(tests/e2e/test_front_end_groups.py); fi
fi

cluster=""
stop_cluster() {
  if [ -n "$cluster" ]; then "$root/scripts/ceph-cluster.sh" down "$cluster" || true; fi
}
trap stop_cluster EXIT
if [ -z "${CEPH_CONF:-}" ]; then
  cluster=$("$root/scripts/ceph-cluster.sh" up)
  CEPH_CONF=$cluster/ceph.conf
  # The fault tests (test_rados_faults.py) kill and restart its OSDs.
  export KUMO_CEPH_DIR=$cluster
fi

cd "$root"
if [ -z "$front_ends" ]; then
  KUMO_CEPH_CONF=$CEPH_CONF KUMO_RADOS_POOL=${KUMO_RADOS_POOL:-kumo} "$build/kumo_storage_tests" --gtest_filter='*RadosLayout*'
fi
if [ "$all" = 0 ]; then
  export KUMO_CRASH_LOOPS=${KUMO_CRASH_LOOPS:-4} KUMO_FAULT_LOOPS=${KUMO_FAULT_LOOPS:-5}
fi
limit=1800
# Each server is N processes and HAProxy: starts take N times as long.
if [ -n "$front_ends" ]; then limit=5400; fi
KUMO_BIN="$build/kumo" KUMO_RADOS_POOL=${KUMO_RADOS_POOL:-kumo} KUMO_CEPH_CONF=$CEPH_CONF \
  timeout --kill-after=30 $limit /usr/bin/python3 -m pytest -p no:cacheprovider -q -ra --durations=10 "${files[@]}"
