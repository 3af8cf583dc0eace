#!/usr/bin/env bash
# Checks that three costs which once grew with the data still do not. Each check measures
# the server's CPU time per request (kumo-bench's server µs/op, from /proc of the server:
# not the wall-clock time of anything, so a busy machine slows it without failing it) in
# two runs, small and large, and fails when large costs more than $bound times small:
#   1. GetItem on disk, on a table of 200,000 items against one of 10,000 (each loaded,
#      then read by a server restarted on it, so that RocksDB reads its files);
#   2. TransactWriteItems with a new ClientRequestToken each, with 20,000 tokens live
#      against the first ~2,000 transactions of a fresh server;
#   3. DescribeTable on disk after 100,000 writes to the table against after 100 (with no
#      restart between: the memtable still holds the writes' counter updates).
# The regressions these guard against cost 10 to 100 times more; the bound leaves room for
# the noise of a busy machine. Prints one line per check; exits non-zero if any failed.
# Usage: bench/scaling-check.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
kumo=$build/kumo
bench=$build/bench/kumo-bench
bound=2

for file in "$kumo" "$bench"; do
  [[ -x "$file" ]] || { echo "scaling-check: no $file" >&2; exit 1; }
done

# The server on core 0 and kumo-bench on core 1, as the benchmarks run them, when there are
# two cores: their CPU times then do not depend on how the scheduler mixes them.
client_pin=()
server_pin=()
if [[ $(nproc) -ge 2 ]] && command -v taskset >/dev/null; then
  client_pin=(taskset -c 1)
  server_pin=(--cpu 0)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kumo-scaling-check.XXXXXX")
# The server that start_server started last, which bench measures.
pid=""
port=""
running=()  # every server started and not yet stopped
# stop_server [PID]: stops the server (default: $pid) and waits until it has exited.
stop_server() {
  local which=${1:-$pid} i
  if [[ -n "$which" ]] && kill -0 "$which" 2>/dev/null; then
    kill "$which" 2>/dev/null || true
    for _ in $(seq 600); do kill -0 "$which" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$which" 2>/dev/null || true
  fi
  for i in "${!running[@]}"; do
    [[ ${running[$i]} != "$which" ]] || unset 'running[i]'
  done
  [[ $which != "$pid" ]] || pid=""
}
stop_all() {
  local server
  for server in "${running[@]}"; do stop_server "$server"; done
}
trap 'stop_all; rm -rf "$work"' EXIT

# start_server ARGS...: `kumo serve --threads 1 ARGS` on a free port; returns once it
# answers a ListTables, with pid and port set to it.
start_server() {
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  if ! "${client_pin[@]}" "$bench" launch --endpoint "127.0.0.1:$port" --settle 0s \
      "${server_pin[@]}" --pid-file "$work/pid" --log "$work/server.log" \
      -- "$kumo" serve --port "$port" --threads 1 "$@" >"$work/launch.out"; then
    echo "scaling-check: the server did not start:" >&2
    cat "$work/server.log" >&2
    exit 1
  fi
  pid=$(cat "$work/pid")
  running+=("$pid")
}

# bench ARGS...: kumo-bench against the server, as one JSON line in $work/last.json; any
# wrong or missing answer fails the script.
bench() {
  if ! "${client_pin[@]}" "$bench" --json --endpoint "127.0.0.1:$port" --server-pid "$pid" \
      --connections 32 "$@" >"$work/last.json" 2>"$work/bench.err"; then
    echo "scaling-check: kumo-bench $* failed:" >&2
    cat "$work/bench.err" "$work/last.json" >&2
    exit 1
  fi
}

# The server's CPU time per request of the last run, in µs.
cost() {
  /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["server_cpu_us_per_op"])' \
    "$work/last.json"
}

failed=()
# judge NAME SMALL_LABEL SMALL_US LARGE_LABEL LARGE_US: one line with both figures and
# their ratio; a ratio above the bound fails the check.
judge() {
  local verdict
  verdict=$(/usr/bin/python3 - "$@" "$bound" <<'EOF'
import sys
name, small_label, small, large_label, large, bound = sys.argv[1:]
small, large, bound = float(small), float(large), float(bound)
ratio = large / small if small > 0 else float("inf")
ok = ratio <= bound
print(f"{'ok    ' if ok else 'FAILED'} {name}: {small_label} {small:.1f} µs/op, "
      f"{large_label} {large:.1f} µs/op: ratio {ratio:.2f} (bound {bound:g})")
EOF
)
  echo "scaling-check: $verdict"
  [[ $verdict == ok* ]] || failed+=("$1")
}

# 1. GetItem on disk: 10,000 against 200,000 items, each table loaded, then read by a
# server restarted on it. Both servers stay up and are measured in turn, twice, and each
# keeps its lower figure: a burst of other work on the machine then raises one of the two
# figures of a size, not the comparison.
# start_loaded ITEMS: loads ITEMS into a fresh data directory and restarts the server on it.
start_loaded() {
  local items=$1
  start_server --data-dir "$work/getitem-$items"
  bench --workload group-get --items "$items" --preload-batch 25 --duration 0
  stop_server
  start_server --data-dir "$work/getitem-$items"
}
# getitem_cost PID PORT ITEMS WARMUP: sets `us` to the cost of GetItem on that server.
getitem_cost() {
  pid=$1 port=$2
  bench --workload group-get --items "$3" --no-preload --warmup "$4" --duration 2s
  us=$(cost)
}
lower() { /usr/bin/python3 -c 'import sys; print(min(float(v) for v in sys.argv[1:]))' "$@"; }
start_loaded 10000
small_pid=$pid small_port=$port
start_loaded 200000
large_pid=$pid large_port=$port
getitem_cost "$small_pid" "$small_port" 10000 1s
small_first=$us
getitem_cost "$large_pid" "$large_port" 200000 1s
large_first=$us
getitem_cost "$small_pid" "$small_port" 10000 0.2s
small=$(lower "$small_first" "$us")
getitem_cost "$large_pid" "$large_port" 200000 0.2s
large=$(lower "$large_first" "$us")
stop_server "$small_pid"
stop_server "$large_pid"
judge "GetItem on disk" "10,000 items" "$small" "200,000 items" "$large"

# 2. TransactWriteItems, one Put and a new ClientRequestToken each, in memory: the first
# ~2,000 transactions of a fresh server (after 200 to warm up), then 2,000 more once
# 20,000 tokens are live (a token lives ten minutes).
start_server --in-memory
bench --workload group-get --items 1000 --preload-batch 25 --duration 0
bench --workload transact-put --items 1000 --no-preload --warmup 0 --requests 200
bench --workload transact-put --items 1000 --no-preload --warmup 0 --requests 2000
fresh=$(cost)
bench --workload transact-put --items 1000 --no-preload --warmup 0 --requests 17800
bench --workload transact-put --items 1000 --no-preload --warmup 0 --requests 2000
live=$(cost)
stop_server
judge "TransactWriteItems with a ClientRequestToken" "fresh server" "$fresh" \
  "20,000 live tokens" "$live"

# 3. DescribeTable on disk after 100 writes, then after 100,000 more, on the same server.
start_server --data-dir "$work/describe"
bench --workload describe-table --items 100 --warmup 1s --duration 2s
few=$(cost)
bench --workload describe-table --items 100000 --preload-batch 25 --warmup 1s --duration 2s
many=$(cost)
stop_server
judge "DescribeTable on disk" "after 100 writes" "$few" "after 100,100 writes" "$many"

if [[ ${#failed[@]} -gt 0 ]]; then
  list=$(printf '%s; ' "${failed[@]}")
  echo "scaling-check: FAILED: ${list%; }" >&2
  exit 1
fi
echo "scaling-check: all 3 checks passed"
