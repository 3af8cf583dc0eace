# What the bench checks share: a pinned server started by kumo-bench, kumo-bench runs as
# JSON, the server CPU time per request, and a verdict on the ratio of two such costs.
# Sourced by scaling-check.sh and capacity-check.sh, which set `check_name`, `kumo`,
# `bench` and `bound` first. Checks measure the server's CPU time per request (from /proc of
# the server), never wall-clock time.

# The server on core 0 and kumo-bench on core 1, as the benchmarks run them, when there are
# two cores: their CPU times then do not depend on how the scheduler mixes them.
client_pin=()
server_pin=()
if [[ $(nproc) -ge 2 ]] && command -v taskset >/dev/null; then
  client_pin=(taskset -c 1)
  server_pin=(--cpu 0)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kumo-$check_name.XXXXXX")
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
    echo "$check_name: the server did not start:" >&2
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
    echo "$check_name: kumo-bench $* failed:" >&2
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
  echo "$check_name: $verdict"
  [[ $verdict == ok* ]] || failed+=("$1")
}

lower() { /usr/bin/python3 -c 'import sys; print(min(float(v) for v in sys.argv[1:]))' "$@"; }

# finish N: fails the script when a check failed, else says that all N passed.
finish() {
  if [[ ${#failed[@]} -gt 0 ]]; then
    local list
    list=$(printf '%s; ' "${failed[@]}")
    echo "$check_name: FAILED: ${list%; }" >&2
    exit 1
  fi
  echo "$check_name: all $1 checks passed"
}
