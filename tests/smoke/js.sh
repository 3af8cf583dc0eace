#!/usr/bin/env bash
# Smoke test with the AWS SDK for JavaScript v3: installs the pinned SDK (npm ci, only when
# tests/smoke/js/node_modules is missing or stale), starts `kumo serve --in-memory` on a
# free port and runs tests/smoke/js/smoke.mjs against it, then restarts it with
# `--capacity enforce --clock manual --admin-port N` and runs throttle_retry.mjs (the SDK's
# retries of throttled requests). Exits non-zero on any mismatch.
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

smoke="js smoke"
# shellcheck source=tests/smoke/server.sh
source "$(dirname "${BASH_SOURCE[0]}")/server.sh"

# The SDK must see only the credentials and region the scripts give it.
run_node() {
  env -u AWS_PROFILE -u AWS_DEFAULT_PROFILE -u AWS_ENDPOINT_URL -u AWS_ENDPOINT_URL_DYNAMODB \
    -u AWS_MAX_ATTEMPTS -u AWS_RETRY_MODE \
    AWS_CONFIG_FILE="$work/aws-config" AWS_SHARED_CREDENTIALS_FILE="$work/aws-credentials" \
    node "$@"
}

run_node "$js_dir/smoke.mjs" "$endpoint"
stop_server || fail "the server did not stop cleanly"

admin_port=$(free_port)
start_server --capacity enforce --clock manual --admin-port "$admin_port"
run_node "$js_dir/throttle_retry.mjs" "$endpoint" "http://127.0.0.1:$admin_port"

stop_server
echo "js smoke: passed"
