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

check_name=scaling-check
# shellcheck source=bench/check-lib.sh
source "$root/bench/check-lib.sh"

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
# 20,000 tokens are live (a token lives ten minutes). Each side is measured in two runs of
# 1,000 and keeps its lower figure, as GetItem's sizes do: one run of this kind varies by
# up to twice its figure on a busy machine.
# transact_cost: sets `us` to the lower cost of two runs of 1,000 transactions.
transact_cost() {
  bench --workload transact-put --items 1000 --no-preload --warmup 0 --requests 1000
  local first
  first=$(cost)
  bench --workload transact-put --items 1000 --no-preload --warmup 0 --requests 1000
  us=$(lower "$first" "$(cost)")
}
start_server --in-memory
bench --workload group-get --items 1000 --preload-batch 25 --duration 0
bench --workload transact-put --items 1000 --no-preload --warmup 0 --requests 200
transact_cost
fresh=$us
bench --workload transact-put --items 1000 --no-preload --warmup 0 --requests 17800
transact_cost
live=$us
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

finish 3
