#!/usr/bin/env bash
# Smoke test with the AWS SDK for JavaScript v3: installs the pinned SDK (npm ci, only when
# tests/smoke/js/node_modules is missing or stale), starts `kumo serve --in-memory` on a
# free port and runs tests/smoke/js/smoke.mjs against it. Exits non-zero on any mismatch.
#   KUMO_BIN  server binary (default: build/kumo)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
js_dir="$root/tests/smoke/js"
bin=${KUMO_BIN:-$root/build/kumo}
python=/usr/bin/python3

fail() {
  echo "js smoke: FAIL: $*" >&2
  exit 1
}

[ -x "$bin" ] || fail "no server binary at $bin"
command -v node >/dev/null || fail "node is not installed"
command -v npm >/dev/null || fail "npm is not installed"

# node_modules is current when it was installed from this exact package.json and lock.
stamp="$js_dir/node_modules/.kumo-installed-from"
want=$(cat "$js_dir/package.json" "$js_dir/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "js smoke: npm ci"
  (cd "$js_dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi

work=$(mktemp -d)
server_pid=""

stop_server() {
  local pid=$server_pid rc=0
  server_pid=""
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" || rc=$?
  # 0 after a graceful shutdown, 143 if SIGTERM ended it; anything else is a crash or a
  # sanitizer report.
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 143 ]; then
    echo "js smoke: server exited with status $rc" >&2
    return 1
  fi
}

cleanup() {
  local rc=$?
  stop_server || rc=1
  if [ "$rc" -ne 0 ] && [ -s "$work/server.log" ]; then
    echo "---- server log ----" >&2
    tail -n 100 "$work/server.log" >&2
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
endpoint="http://127.0.0.1:$port"

"$bin" serve --in-memory --port "$port" >"$work/server.log" 2>&1 &
server_pid=$!

# Any HTTP answer to GET / means the server is up.
up=0
for _ in $(seq 300); do
  kill -0 "$server_pid" 2>/dev/null || fail "server exited during startup"
  if "$python" - "$endpoint/" <<'PY' 2>/dev/null; then
import sys, urllib.error, urllib.request
try:
    urllib.request.urlopen(sys.argv[1], timeout=1).read()
except urllib.error.HTTPError:
    pass
PY
    up=1
    break
  fi
  sleep 0.1
done
[ "$up" -eq 1 ] || fail "server did not answer GET / on $endpoint within 30s"

# The SDK must see only the credentials and region smoke.mjs gives it.
env -u AWS_PROFILE -u AWS_DEFAULT_PROFILE -u AWS_ENDPOINT_URL -u AWS_ENDPOINT_URL_DYNAMODB \
  AWS_CONFIG_FILE="$work/aws-config" AWS_SHARED_CREDENTIALS_FILE="$work/aws-credentials" \
  node "$js_dir/smoke.mjs" "$endpoint"

stop_server
echo "js smoke: passed"
