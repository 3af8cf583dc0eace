#!/usr/bin/env bash
# Starts and stops a local cluster of Kumo front ends: N `kumo serve --rados` processes on
# one pool and one RADOS namespace (so they serve the same tables), with HAProxy in front
# balancing requests round-robin over them. No systemd: every process is a background child
# with a pid file, and the state file says what `down` must stop.
#
#   scripts/kumo-cluster.sh up [N] [--first-port P] [--lb-port P] [-- KUMO_SERVE_ARGS...]
#                                     start N front ends (default 3) on ports P, P+1, ...
#                                     (default 8001) and the balancer on port 8000
#   scripts/kumo-cluster.sh status    what runs, and whether it answers
#   scripts/kumo-cluster.sh down      stop everything `up` started
#
# Environment:
#   CEPH_CONF             an existing Ceph cluster's ceph.conf; unset, `up` starts a loopback
#                         cluster (scripts/ceph-cluster.sh) and `down` stops it
#   KUMO_BIN              the kumo binary (default build-release/kumo, built when missing);
#                         kumo-rados.so must be beside it
#   KUMO_CLUSTER_DIR      state, pid files, logs and haproxy.cfg (default ./kumo-cluster)
#   KUMO_RADOS_POOL       the pool (default kumo, the pool ceph-cluster.sh creates)
#   KUMO_RADOS_NAMESPACE  the namespace every front end shares (default kumo-cluster-);
#                         on an existing cluster, the next `up` with the same one finds the
#                         same tables
#   KUMO_FIRST_PORT, KUMO_LB_PORT   the ports, as --first-port and --lb-port
#   KUMO_WAIT_SECS        how long to wait for each process to answer (default 60)
#   CEPH_PORT_BASE, ...   go on to scripts/ceph-cluster.sh when `up` starts the cluster
#
# Everything listens on 127.0.0.1 only.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${KUMO_CLUSTER_DIR:-./kumo-cluster}
# Absolute, as the command lines that `ours` checks name it.
if [ -d "$dir" ]; then dir=$(cd "$dir" && pwd); fi
state=$dir/state

die() {
  echo "kumo-cluster: $*" >&2
  exit 1
}

# True while `pid` is a live process whose command line contains `pattern` (so a pid file
# left from an earlier run never makes us signal a process that reused the number; a zombie
# has an empty command line and counts as gone).
ours() { # pid pattern
  [ -n "$1" ] && [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -qF -- "$2"
}

# True when an HTTP GET / on 127.0.0.1:port is answered 200 (Kumo answers it; through
# HAProxy only once a front end does). Plain bash, so no curl is needed.
answers() { # port
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" &&
      printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 &&
      IFS= read -r -t 5 line <&3 && [[ $line == HTTP/1.?" 200"* ]]
  ) 2>/dev/null
}

# True when something accepts TCP connections on 127.0.0.1:port.
listening() { # port
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

find_haproxy() {
  # Debian puts it in /usr/sbin, which is not on a normal user's PATH.
  command -v haproxy 2>/dev/null || { [ -x /usr/sbin/haproxy ] && echo /usr/sbin/haproxy; }
}

# The state file is `key=value` lines, read back without evaluating them.
declare -A st
read_state() {
  local k v
  [ -f "$state" ] || return 1
  while IFS='=' read -r k v; do [ -n "$k" ] && st[$k]=$v; done <"$state"
}
save_state() {
  local k
  : >"$state.tmp"
  for k in "${!st[@]}"; do printf '%s=%s\n' "$k" "${st[$k]}" >>"$state.tmp"; done
  mv "$state.tmp" "$state"
}

# TERM, up to 15 s to exit, then KILL.
stop_pids() { # "pid|pattern"...
  local entry pid pattern left=()
  for entry in "$@"; do
    pid=${entry%%|*} pattern=${entry#*|}
    if ours "$pid" "$pattern"; then kill -TERM "$pid" 2>/dev/null && left+=("$entry"); fi
  done
  for entry in "${left[@]}"; do
    pid=${entry%%|*} pattern=${entry#*|}
    for _ in $(seq 1 150); do ours "$pid" "$pattern" || break; sleep 0.1; done
    if ours "$pid" "$pattern"; then
      echo "kumo-cluster: pid $pid did not stop on TERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

kumo_pattern() { # port: what the command line of the front end on `port` contains
  echo "--rados-namespace ${st[namespace]} --port $1 "
}

down() {
  read_state || {
    echo "kumo-cluster: nothing to stop (no $state)"
    return 0
  }
  local port entries=()
  # The balancer first, so no request goes to a front end that is stopping.
  if [ -f "$dir/pids/haproxy.pid" ]; then
    stop_pids "$(cat "$dir/pids/haproxy.pid")|$dir/haproxy.cfg"
  fi
  for port in ${st[ports]:-}; do
    if [ -f "$dir/pids/kumo-$port.pid" ]; then
      entries+=("$(cat "$dir/pids/kumo-$port.pid")|$(kumo_pattern "$port")")
    fi
  done
  [ ${#entries[@]} -eq 0 ] || stop_pids "${entries[@]}"
  # The Ceph cluster only if `up` started it; an existing one (CEPH_CONF) is left running.
  if [ -n "${st[ceph_dir]:-}" ] && [ -d "${st[ceph_dir]}" ]; then
    "$root/scripts/ceph-cluster.sh" down "${st[ceph_dir]}"
  fi
  rm -rf "$dir/pids" "$dir/haproxy.cfg" "$state"
  echo "kumo-cluster: stopped; logs kept in $dir/log"
}

status() {
  read_state || {
    echo "kumo-cluster: not up (no $state)"
    return 3
  }
  local ok=0 port pid what
  # One line per process: role, address, pid, running or not, answering or not.
  line() { # role port pid pattern log
    local run="stopped" ans=""
    if ours "$3" "$4"; then
      run="running"
      if answers "$2"; then ans=", answers"; else ans=", does not answer" ok=1; fi
    else
      ok=1
    fi
    printf '  %-10s http://127.0.0.1:%-6s pid %-8s %s%s   log %s\n' "$1" "$2" "${3:--}" "$run" "$ans" "$5"
  }
  echo "kumo-cluster in $dir: ${st[count]} front ends, pool ${st[pool]}, namespace ${st[namespace]}"
  pid=$(cat "$dir/pids/haproxy.pid" 2>/dev/null || true)
  line balancer "${st[lb_port]}" "$pid" "$dir/haproxy.cfg" "$dir/log/haproxy.log"
  for port in ${st[ports]}; do
    pid=$(cat "$dir/pids/kumo-$port.pid" 2>/dev/null || true)
    line "front end" "$port" "$pid" "$(kumo_pattern "$port")" "$dir/log/kumo-$port.log"
  done
  if [ -n "${st[ceph_dir]:-}" ]; then
    what="started by up, in ${st[ceph_dir]} (stopped by down)"
    pid=$(cat "${st[ceph_dir]}/pids/mon.a.pid" 2>/dev/null || true)
    if ! ours "$pid" "${st[ceph_dir]}/ceph.conf"; then what="$what: its monitor is not running" ok=1; fi
  else
    what="existing, ${st[ceph_conf]} (left running by down)"
  fi
  echo "  ceph       $what"
  return $ok
}

failed_up() {
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "kumo-cluster: start failed; stopping what was started" >&2
    down >&2 || true
  fi
}

up() {
  local count=3 first=${KUMO_FIRST_PORT:-8001} lb=${KUMO_LB_PORT:-8000} extra=()
  if [[ ${1:-} =~ ^[0-9]+$ ]]; then
    count=$1
    shift
  fi
  while [ $# -gt 0 ]; do
    case $1 in
      --first-port) first=${2:?--first-port P}; shift 2 ;;
      --lb-port) lb=${2:?--lb-port P}; shift 2 ;;
      --) shift; extra=("$@"); break ;;
      *) die "unknown option $1 (usage: up [N] [--first-port P] [--lb-port P] [-- KUMO_SERVE_ARGS...])" ;;
    esac
  done
  [ "$count" -ge 1 ] || die "N must be at least 1"
  local pool=${KUMO_RADOS_POOL:-kumo} ns=${KUMO_RADOS_NAMESPACE:-kumo-cluster-}
  local wait=${KUMO_WAIT_SECS:-60} ports=() port i

  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  state=$dir/state
  if [ -f "$state" ]; then
    die "$state exists: the cluster is up (scripts/kumo-cluster.sh status), or was not stopped; run scripts/kumo-cluster.sh down first"
  fi

  for ((i = 0; i < count; i++)); do ports+=($((first + i))); done
  for port in "$lb" "${ports[@]}"; do
    if listening "$port"; then die "port $port is in use (choose others with --first-port and --lb-port)"; fi
  done

  # What this needs: HAProxy, and Ceph's daemons when we start the cluster. Installed like
  # scripts/serve.sh installs the build's packages.
  if [ -z "$(find_haproxy)" ] || { [ -z "${CEPH_CONF:-}" ] && ! command -v ceph-mon >/dev/null; }; then
    "$root/scripts/install-deps.sh" --cluster
  fi
  local haproxy
  haproxy=$(find_haproxy) || die "haproxy is missing (sudo apt-get install haproxy)"

  # The binary: KUMO_BIN as given, or the Release build of scripts/serve.sh, built (with the
  # RADOS module) when missing.
  local bin=${KUMO_BIN:-}
  if [ -z "$bin" ]; then
    bin=$root/build-release/kumo
    if [ ! -x "$bin" ] || [ ! -e "$root/build-release/kumo-rados.so" ]; then
      "$root/scripts/install-deps.sh"
      cmake -S "$root" -B "$root/build-release" \
        -DCMAKE_BUILD_TYPE=Release -DKUMO_SANITIZE=OFF -DKUMO_TESTS=OFF >&2
      cmake --build "$root/build-release" -j"$(nproc)" --target kumo >&2
    fi
  fi
  [ -x "$bin" ] || die "no kumo binary at $bin (set KUMO_BIN)"
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  [ -e "$(dirname "$bin")/kumo-rados.so" ] ||
    die "no kumo-rados.so beside $bin (built when libradospp-dev is installed: target kumo_rados)"

  mkdir -p "$dir/pids" "$dir/log"
  st=([count]=$count [pool]=$pool [namespace]=$ns [lb_port]=$lb [ports]="${ports[*]}"
      [kumo_bin]=$bin [ceph_dir]="" [ceph_conf]="")
  save_state
  # From here on, a failure stops whatever was started.
  trap failed_up EXIT

  # The Ceph cluster: the one CEPH_CONF describes, or a loopback one of our own.
  local conf
  if [ -n "${CEPH_CONF:-}" ]; then
    [ -r "$CEPH_CONF" ] || die "CEPH_CONF=$CEPH_CONF is not readable"
    conf=$(cd "$(dirname "$CEPH_CONF")" && pwd)/$(basename "$CEPH_CONF")
  else
    echo "kumo-cluster: starting a loopback Ceph cluster (about 15 s)" >&2
    st[ceph_dir]=$(CEPH_POOL=$pool "$root/scripts/ceph-cluster.sh" up)
    save_state
    conf=${st[ceph_dir]}/ceph.conf
  fi
  st[ceph_conf]=$conf
  save_state

  # The front ends, one at a time: each waits for the cluster and opens the shared catalog
  # before the next starts. The order of the arguments is what kumo_pattern looks for.
  local pid deadline
  for port in "${ports[@]}"; do
    nohup "$bin" serve --rados "$pool" --ceph-conf "$conf" --rados-namespace "$ns" \
      --port "$port" --bind 127.0.0.1 "${extra[@]}" \
      >"$dir/log/kumo-$port.log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$dir/pids/kumo-$port.pid"
    deadline=$(($(date +%s) + wait))
    until answers "$port"; do
      if ! kill -0 "$pid" 2>/dev/null; then
        tail -n 20 "$dir/log/kumo-$port.log" >&2
        die "the front end on port $port exited (log $dir/log/kumo-$port.log)"
      fi
      [ "$(date +%s)" -lt "$deadline" ] ||
        die "the front end on port $port did not answer within ${wait}s (log $dir/log/kumo-$port.log)"
      sleep 0.2
    done
  done

  # The balancer: HTTP mode, so that each request (not each connection: clients keep theirs
  # open) goes to the next front end; a TCP connect every second checks each front end, and
  # a connection a dead one refuses is sent to another.
  {
    echo "# Written by scripts/kumo-cluster.sh; removed by its down."
    echo "defaults"
    echo "    mode http"
    echo "    option redispatch"
    echo "    retries 3"
    echo "    timeout connect 5s"
    echo "    timeout client 120s"
    echo "    timeout server 120s"
    echo "    timeout http-request 30s"
    echo "frontend dynamodb"
    echo "    bind 127.0.0.1:$lb"
    echo "    default_backend kumo"
    echo "backend kumo"
    echo "    balance roundrobin"
    echo "    default-server check inter 1s fall 2 rise 1"
    for port in "${ports[@]}"; do echo "    server kumo-$port 127.0.0.1:$port"; done
  } >"$dir/haproxy.cfg"
  "$haproxy" -c -q -f "$dir/haproxy.cfg" || die "haproxy rejects $dir/haproxy.cfg"
  # In the foreground (-db) as a background child: its messages (a front end found down or
  # up again) go to a log file of ours.
  nohup "$haproxy" -db -f "$dir/haproxy.cfg" >"$dir/log/haproxy.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$dir/pids/haproxy.pid"
  deadline=$(($(date +%s) + wait))
  until answers "$lb"; do
    kill -0 "$pid" 2>/dev/null || die "haproxy exited (log $dir/log/haproxy.log)"
    [ "$(date +%s)" -lt "$deadline" ] || die "the balancer on port $lb did not answer within ${wait}s"
    sleep 0.2
  done
  trap - EXIT

  status || true
  cat <<EOF

Endpoint: http://127.0.0.1:$lb (any access key is accepted), e.g.
  export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_DEFAULT_REGION=us-east-1
  aws dynamodb list-tables --endpoint-url http://127.0.0.1:$lb
State: $state.  Stop everything with: scripts/kumo-cluster.sh down
EOF
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  status) status ;;
  *)
    echo "usage: kumo-cluster.sh up [N] [--first-port P] [--lb-port P] [-- KUMO_SERVE_ARGS...] | status | down" >&2
    exit 2
    ;;
esac
