#!/usr/bin/env bash
# Throughput of 1, 2 and 3 Kumo front ends sharing one RADOS pool and namespace, in one run
# on one cluster: GetItem and PutItem of kumo-bench, one load generator per front end (as a
# load balancer would spread them), the connections split evenly. For each count it prints
# the total throughput, its scaling against one front end, and each front end's CPU per
# operation, which does not depend on how many cores the machine has. Nothing is asserted.
#
#   bench/front-ends.sh [BUILD_DIR]     (default: build)
#
# Starts its own loopback cluster (scripts/ceph-cluster.sh), or uses the one whose
# ceph.conf $CEPH_CONF names. FRONT_ENDS (default "1 2 3"), CONNECTIONS (total, default 12),
# DURATION (seconds, default 6) and WORKLOADS (default "getitem putitem putitem-stream":
# PutItem to a table whose stream is enabled, whose records each partition numbers;
# "putitem-unguarded": front ends whose writes do not compare their table's definition
# version, to measure what that compare costs) change the runs.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
kumo=$build/kumo
bench=$build/bench/kumo-bench
front_ends=${FRONT_ENDS:-1 2 3}
connections=${CONNECTIONS:-12}
duration=${DURATION:-6}
for file in "$kumo" "$bench"; do
  [[ -x "$file" ]] || { echo "front-ends: no $file" >&2; exit 1; }
done

source "$root/bench/ceph-lib.sh"
servers=()
data=$(mktemp -d /tmp/kumo-front-ends.XXXXXX)
stop_servers() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
  servers=()
}
cleanup() {
  stop_servers
  stop_ceph_cluster
  rm -rf "$data"
}
trap cleanup EXIT
use_ceph_cluster

base=$((20000 + RANDOM % 20000))
field() {  # field NAME FILE: a number of kumo-bench's JSON line
  /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[2]))[sys.argv[1]])" "$1" "$2"
}

printf '%-14s %3s %11s %8s %s\n' workload fes 'ops/s' scaling 'server CPU µs/op, each front end'
for name in ${WORKLOADS:-getitem putitem putitem-stream}; do
  workload=${name%-stream}
  workload=${workload%-unguarded}
  stream=()
  [[ $name == *-stream ]] && stream=(--stream NEW_AND_OLD_IMAGES)
  fault=()
  [[ $name == *-unguarded ]] && fault=(KUMO_RADOS_FAULT=no-definition-guard)
  single=""
  for n in $front_ends; do
    namespace="bench-fe-$$-$name-$n-"
    per=$((connections / n))
    [[ $per -ge 1 ]] || per=1
    for i in $(seq 1 "$n"); do
      port=$((base + i))
      env "${fault[@]}" "$kumo" serve --port "$port" --threads "$per" --rados kumo --ceph-conf "$CEPH_CONF" \
        --rados-namespace "$namespace" >"$data/server-$i.log" 2>&1 &
      servers+=($!)
      for _ in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
      done
    done
    # The table and its items, once, through the first front end.
    "$bench" --endpoint "127.0.0.1:$((base + 1))" --workload "$workload" --connections 8 \
      --duration 0 --items 10000 --preload-batch 25 "${stream[@]}" >"$data/preload.out" 2>&1
    pids=()
    for i in $(seq 1 "$n"); do
      "$bench" --endpoint "127.0.0.1:$((base + i))" --workload "$workload" --connections "$per" \
        --threads 1 --duration "${duration}s" --warmup 1s --items 10000 --no-preload \
        --seed "$i" --server-pid "${servers[$((i - 1))]}" --json >"$data/bench-$i.json" 2>&1 &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    total=0
    cpu=""
    for i in $(seq 1 "$n"); do
      total=$(/usr/bin/python3 -c "print($total + $(field ops_per_s "$data/bench-$i.json"))")
      cpu="$cpu $(/usr/bin/python3 -c "print(f'{$(field server_cpu_us_per_op "$data/bench-$i.json"):.0f}')")"
    done
    [[ -n "$single" ]] || single=$total
    printf '%-14s %3s %11.0f %8s %s\n' "$name" "$n" "$total" \
      "$(/usr/bin/python3 -c "print(f'{$total / $single:.2f}')")" "$cpu"
    stop_servers
    base=$((base + 10))
  done
done
