#!/usr/bin/env bash
# Two Kumo builds against one RADOS pool in one run: GetItem and PutItem of kumo-bench against
# `kumo serve --rados` of each build, the builds taking turns (ROUNDS rounds of each workload,
# each run with a fresh server and namespace), so that the machine's noise falls on both
# alike. Prints each run's ops/s and, per workload, the medians and their ratio (B / A).
# Nothing is asserted.
#
#   bench/builds-side-by-side.sh BUILD_A BUILD_B
#
# Starts its own loopback cluster (scripts/ceph-cluster.sh), or uses the one whose
# ceph.conf $CEPH_CONF names. ROUNDS (default 3), CONNECTIONS (default 8), DURATION
# (seconds, default 6) and WORKLOADS (default "getitem putitem") change the runs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -eq 2 ]] || { echo "usage: $0 BUILD_A BUILD_B" >&2; exit 2; }
builds=("$1" "$2")
bench=$2/bench/kumo-bench
[[ -x "$bench" ]] || bench=$1/bench/kumo-bench
rounds=${ROUNDS:-3}
connections=${CONNECTIONS:-8}
duration=${DURATION:-6}
for build in "${builds[@]}"; do
  [[ -x "$build/kumo" ]] || { echo "builds-side-by-side: no $build/kumo" >&2; exit 1; }
done
[[ -x "$bench" ]] || { echo "builds-side-by-side: no kumo-bench" >&2; exit 1; }

source "$root/bench/ceph-lib.sh"
server=""
data=$(mktemp -d /tmp/kumo-builds.XXXXXX)
trap stop_bench EXIT
use_ceph_cluster

port=$((20000 + RANDOM % 20000))
# rate BUILD WORKLOAD RUN: sets `ops` to the ops/s of a fresh server of BUILD, on a port of
# its own (run in this shell, not in $(...): the trap then sees the server's pid, and a
# failed run stops the script).
rate() {
  local build=$1 workload=$2 run=$3
  port=$((port + 1))
  start_bench_server "$build/kumo" "$data/server-$run.log" --threads "$connections" \
    --rados kumo --ceph-conf "$CEPH_CONF" --rados-namespace "bench-builds-$$-$run-"
  "$bench" --endpoint "127.0.0.1:$port" --workload "$workload" --connections "$connections" \
    --duration 0 --items 10000 --preload-batch 25 >"$data/preload-$run.out" 2>&1
  "$bench" --endpoint "127.0.0.1:$port" --workload "$workload" --connections "$connections" \
    --threads 1 --duration "${duration}s" --warmup 1s --items 10000 --no-preload --json \
    >"$data/bench-$run.json" 2>&1
  stop_bench_server
  ops=$(/usr/bin/python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['ops_per_s']))" \
    "$data/bench-$run.json")
}

run=0
for workload in ${WORKLOADS:-getitem putitem}; do
  a=() b=()
  for round in $(seq 1 "$rounds"); do
    run=$((run + 1))
    rate "${builds[0]}" "$workload" "$run-a"
    a+=("$ops")
    rate "${builds[1]}" "$workload" "$run-b"
    b+=("$ops")
    echo "$workload round $round: A ${a[-1]} ops/s, B ${b[-1]} ops/s"
  done
  /usr/bin/python3 - "$workload" "${a[*]}" "${b[*]}" <<'EOF'
import statistics, sys
name, a, b = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
ma, mb = statistics.median(a), statistics.median(b)
print(f"{name}: median A {ma:.0f} ops/s, B {mb:.0f} ops/s, B/A {mb / ma:.2f}")
EOF
done
