#!/usr/bin/env bash
# A few-second run of every Kumo workload against a fresh in-memory server: checks that the
# load generator works end to end and that every answer is right. Not a measurement.
# Usage: bench/smoke.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
kumo=$build/kumo
bench=$build/bench/kumo-bench

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
"$kumo" serve --in-memory --port "$port" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do
  if /usr/bin/python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null; then
    break
  fi
  sleep 0.05
done

for workload in getitem putitem mixed partiql-get partiql-update query gsi-query scan group-get group-put group-query \
  group-scan transact-put describe-table; do
  echo "== $workload"
  "$bench" --endpoint "127.0.0.1:$port" --workload "$workload" --items 1000 \
    --connections 8 --warmup 0.5s --duration 1s --server-pid "$pid"
done
echo "== start-up of kumo-bench-floor"
floor_port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
floor_pid_file=$(mktemp)
"$bench" launch --endpoint "127.0.0.1:$floor_port" --settle 0s --pid-file "$floor_pid_file" \
  -- "$build/bench/kumo-bench-floor" "$floor_port"
kill "$(cat "$floor_pid_file")"
rm -f "$floor_pid_file"
echo "bench smoke: all workloads answered correctly"
