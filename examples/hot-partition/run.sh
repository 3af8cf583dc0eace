#!/usr/bin/env bash
# Runs both designs of examples/hot-partition against a fresh `kumo serve --in-memory
# --capacity enforce --clock manual` each, then `kumo report` (text and HTML) into out/.
#   KUMO        the kumo binary (default: build/kumo of this repository)
#   PORT        DynamoDB port (8000); ADMIN_PORT the admin listener's (8001)
# Extra arguments go to orders.py (e.g. --seconds 30).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kumo=${KUMO:-$here/../../build/kumo}
port=${PORT:-8000}
admin_port=${ADMIN_PORT:-8001}
out=$here/out
python=${PYTHON:-python3}
mkdir -p "$out"

server_pid=""
stop() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop EXIT

for design in status customer-status; do
  echo "== design $design"
  "$kumo" serve --in-memory --port "$port" --capacity enforce --clock manual \
    --admin-port "$admin_port" >"$out/$design-server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$admin_port/health" >/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$out/$design-server.log"; exit 1; }
    sleep 0.1
  done
  "$python" "$here/orders.py" --design "$design" --endpoint "http://127.0.0.1:$port" \
    --admin "http://127.0.0.1:$admin_port" "$@"
  "$kumo" report --admin "127.0.0.1:$admin_port" --html "$out/$design.html" \
    | tee "$out/$design.txt"
  stop
done
echo "reports in $out"
