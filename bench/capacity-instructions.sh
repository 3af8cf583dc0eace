#!/usr/bin/env bash
# What metering and throttling cost, counted in instructions: the server runs under
# callgrind (valgrind) with `--capacity off`, `report` and `enforce`, and each mode's
# instructions per GetItem and per PutItem (every server thread, after the preload) are
# compared with off's. Instruction counts do not depend on what else the machine runs, so
# this verdict is stable where bench/capacity-check.sh's CPU times are not: on a shared
# virtual machine two servers of the same mode differ by up to 15% in CPU time per request.
# Fails when report costs more than 1.05 times off, or enforce more than 1.10 times off.
# The capacity thread's once-a-second tick is counted too, and overstated: under callgrind
# a second holds some 1,500 requests instead of 50,000, so each carries far more of it.
# Takes about two minutes.
# Usage: bench/capacity-instructions.sh [BUILD_DIR]   (default: build; needs valgrind)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
kumo=$build/kumo
bench=$build/bench/kumo-bench
requests=${KUMO_CG_REQUESTS:-20000}

for tool in valgrind callgrind_control; do
  command -v "$tool" >/dev/null || { echo "capacity-instructions: needs $tool (apt install valgrind)" >&2; exit 2; }
done
for file in "$kumo" "$bench"; do
  [[ -x "$file" ]] || { echo "capacity-instructions: no $file" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/kumo-capacity-instructions.XXXXXX")
server=""
cleanup() {
  [[ -z "$server" ]] || kill "$server" 2>/dev/null || true
  [[ -z "$server" ]] || wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# instructions DUMP: the instructions a callgrind dump counted, all threads together.
instructions() {
  awk '/^(summary|totals):/ { print $2; exit }' "$1"
}

declare -A per_request
for mode in off report enforce; do
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  valgrind --tool=callgrind --separate-threads=no --callgrind-out-file="$work/$mode.out" \
    "$kumo" serve --port "$port" --threads 1 --in-memory --capacity "$mode" \
    --table-quota 2000000:2000000 --account-quota 4000000:4000000 >"$work/$mode.log" 2>&1 &
  server=$!
  for _ in $(seq 600); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && break
    kill -0 "$server" 2>/dev/null || { cat "$work/$mode.log" >&2; exit 1; }
    sleep 0.1
  done
  # The table with a WarmThroughput of a million units per second, so that enforce
  # throttles nothing and only its checks are counted.
  "$bench" --endpoint "127.0.0.1:$port" --workload getitem --items 2000 \
    --warm-throughput 1000000 --duration 0 --connections 8 >/dev/null
  for workload in getitem putitem; do
    callgrind_control -z "$server" >/dev/null 2>&1
    "$bench" --endpoint "127.0.0.1:$port" --workload "$workload" --items 2000 --no-preload \
      --warmup 0s --requests "$requests" --connections 8 >"$work/bench.out" ||
      { cat "$work/bench.out" >&2; exit 1; }
    rm -f "$work/$mode.out".*
    callgrind_control -d "$server" >/dev/null 2>&1
    dump=$(ls "$work/$mode.out".* | head -1)
    per_request[$workload-$mode]=$(($(instructions "$dump") / requests))
  done
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
done

failed=()
for workload in getitem putitem; do
  off=${per_request[$workload-off]}
  for mode in report enforce; do
    bound=1.05
    [[ $mode == report ]] || bound=1.10
    n=${per_request[$workload-$mode]}
    verdict=$(/usr/bin/python3 -c 'import sys; off, n, b = map(float, sys.argv[1:]); print(f"{n / off:.3f}", "ok" if n / off <= b else "FAILED")' "$off" "$n" "$bound")
    echo "capacity-instructions: ${verdict#* } $workload, capacity $mode: off $off, $mode $n instructions per request: ratio ${verdict%% *} (bound $bound)"
    [[ $verdict == *ok ]] || failed+=("$workload, capacity $mode")
  done
done
if ((${#failed[@]})); then
  echo "capacity-instructions: FAILED: ${failed[*]}"
  exit 1
fi
echo "capacity-instructions: ok"
