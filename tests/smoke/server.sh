# Sourced by the smoke tests: starts `$bin serve --in-memory` on a free port, waits until
# it answers GET /, and stops it on exit, failing the test if the server crashed (any exit
# status but 0 or 143). Expects $bin, $python, $smoke (the test's name) and fail().
# Sets $work (a scratch directory removed on exit) and $endpoint. Defines start_server and
# stop_server, to start it again with other flags.

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
    echo "$smoke: server exited with status $rc" >&2
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

free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server [FLAG...]: starts the server with these extra `kumo serve` flags on a new free
# port and waits until it answers; sets $endpoint.
start_server() {
  port=$(free_port)
  endpoint="http://127.0.0.1:$port"

  "$bin" serve --in-memory --port "$port" "$@" >"$work/server.log" 2>&1 &
  server_pid=$!

  # Any HTTP answer to GET / means the server is up.
  local up=0
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
}

start_server
