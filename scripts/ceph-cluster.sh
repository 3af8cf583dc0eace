#!/usr/bin/env bash
# Starts and stops a throw-away Ceph cluster on 127.0.0.1 for Kumo's RADOS back end: one
# monitor, one manager and three OSDs (memstore: data in RAM), no authentication, no
# systemd, every daemon a child process recorded in DIR/pids.
#
#   scripts/ceph-cluster.sh up [DIR]    start; prints DIR and writes DIR/ceph.conf
#   scripts/ceph-cluster.sh down DIR    stop the daemons and remove DIR
#   scripts/ceph-cluster.sh kill-osd DIR ID     kill -9 one OSD
#   scripts/ceph-cluster.sh start-osd DIR ID    start it again
#
# Environment: CEPH_OSDS (default 3: pool size 3, min_size 2), CEPH_POOL (default kumo),
# CEPH_PORT_BASE (the monitor; daemons bind BASE+10 .. BASE+99; by default the first of
# 10300, 11300, ... 19300 whose ports are all free: below the kernel's ephemeral range, where
# no outgoing connection or server on port 0 can be holding one),
# CEPH_OBJECTSTORE (memstore or bluestore, default memstore), CEPH_WAIT_SECS (default 180).
# Needs Debian's ceph-mon ceph-osd ceph-mgr ceph-common uuid-runtime.
set -euo pipefail

command=${1:?usage: ceph-cluster.sh up [DIR] | down DIR | kill-osd DIR ID | start-osd DIR ID}
shift

start_daemon() { # dir name command...
  local dir=$1 name=$2
  shift 2
  nohup "$@" >"$dir/log/$name.out" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name.pid"
}

# True while `pid` is still a daemon of the cluster in `dir`.
ours() { # pid dir
  [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -- "$2/ceph.conf"
}

down() {
  local dir=$1 pids=() f pid
  [ -d "$dir/pids" ] || { echo "ceph-cluster: $dir is not a cluster directory" >&2; return 1; }
  # OSDs first, then the manager, then the monitor.
  for f in "$dir"/pids/osd.*.pid "$dir"/pids/mgr.*.pid "$dir"/pids/mon.*.pid; do
    [ -e "$f" ] || continue
    pid=$(cat "$f")
    if ours "$pid" "$dir"; then kill -TERM "$pid" 2>/dev/null && pids+=("$pid"); fi
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do ours "$pid" "$dir" || break; sleep 0.1; done
    ours "$pid" "$dir" && kill -KILL "$pid" 2>/dev/null
  done
  rm -rf "$dir"
}

# True when 127.0.0.1:BASE and BASE+10 .. BASE+99 can all be bound.
ports_free() { # base
  python3 - "$1" <<'PY'
import socket, sys
base = int(sys.argv[1])
socks = []
try:
    for port in [base] + list(range(base + 10, base + 100)):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        socks.append(s)
        s.bind(("127.0.0.1", port))
except OSError:
    sys.exit(1)
finally:
    for s in socks:
        s.close()
PY
}

up() {
  local dir=${1:-$(mktemp -d /tmp/kumo-ceph.XXXXXX)}
  local osds=${CEPH_OSDS:-3} pool=${CEPH_POOL:-kumo} port=${CEPH_PORT_BASE:-}
  if [ -z "$port" ]; then
    for port in $(seq 10300 1000 19300) ""; do
      [ -n "$port" ] && ports_free "$port" && break
    done
    [ -n "$port" ] || { echo "ceph-cluster: no free port range for the cluster" >&2; exit 1; }
  fi
  local store=${CEPH_OBJECTSTORE:-memstore} wait=${CEPH_WAIT_SECS:-180}
  for b in ceph ceph-mon ceph-osd ceph-mgr monmaptool uuidgen; do
    command -v "$b" >/dev/null || {
      echo "ceph-cluster: $b is missing (apt-get install ceph-mon ceph-osd ceph-mgr ceph-common uuid-runtime)" >&2
      exit 2
    }
  done
  mkdir -p "$dir"/{mon,mgr,osd,run,log,pids,crash}
  dir=$(cd "$dir" && pwd)
  local conf=$dir/ceph.conf fsid size=1 min_size=1
  fsid=$(uuidgen)
  if [ "$osds" -ge 3 ]; then size=3 min_size=2; fi
  cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$port
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
ms bind ipv6 = false
ms bind port min = $((port + 10))
ms bind port max = $((port + 99))
auth cluster required = none
auth service required = none
auth client required = none
auth supported = none
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
crash dir = $dir/crash
chdir = $dir
log to stderr = false
err to stderr = false
osd pool default size = $size
osd pool default min size = $min_size
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
mon warn on pool no app = false
mon data avail warn = 2
mon data avail crit = 1
mon osd reporter subtree level = osd
mon osd min down reporters = 1
osd heartbeat interval = 2
osd heartbeat grace = 8
mon warn on osd down out interval zero = false
mon osd down out interval = 0
osd objectstore = $store
mon data = $dir/mon/\$name
mgr data = $dir/mgr/\$name
osd data = $dir/osd/\$id

[osd]
osd class load list = *
osd class default list = *
osd memory target = 939524096
memstore device bytes = 2147483648
bluestore block create = true
bluestore block size = 4294967296
bluestore fsck on mount = false
osd op num shards = 2
osd op num threads per shard = 1
# Recovery at full speed: an OSD restarted (with memstore, empty) is whole again in
# seconds rather than minutes. (A sleep of 0 means "the default for the device type", which
# is 0.1 s per op for a disk, so each type's is set.)
osd recovery sleep = 0
osd recovery sleep hdd = 0
osd recovery sleep ssd = 0
osd recovery sleep hybrid = 0
osd max backfills = 4
osd recovery max active = 8

[client]
admin socket = $dir/run/\$name.\$pid.asok
EOF
  export CEPH_CONF=$conf
  starting=$dir
  trap 'rc=$?; if [ $rc -ne 0 ]; then echo "ceph-cluster: start failed, logs in $starting/log" >&2; down "$starting" || true; fi' EXIT

  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" "$dir/monmap" >/dev/null
  ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" >"$dir/log/mon.a.mkfs" 2>&1
  start_daemon "$dir" mon.a ceph-mon -c "$conf" -f -i a
  local mon_up=0
  for _ in $(seq 1 60); do
    if ceph -c "$conf" --connect-timeout 5 mon stat >/dev/null 2>&1; then mon_up=1; break; fi
    ours "$(cat "$dir/pids/mon.a.pid")" "$dir" || break  # it gave up (its port taken)
    sleep 0.5
  done
  if [ "$mon_up" = 0 ]; then
    echo "ceph-cluster: the monitor does not answer on 127.0.0.1:$port" >&2
    tail -3 "$dir/log/mon.a.log" >&2 || true
    exit 1
  fi
  mkdir -p "$dir/mgr/mgr.x"
  start_daemon "$dir" mgr.x ceph-mgr -c "$conf" -f -i x
  local n uuid id
  for n in $(seq 1 "$osds"); do
    uuid=$(uuidgen)
    id=$(ceph -c "$conf" osd new "$uuid")
    mkdir -p "$dir/osd/$id"
    ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$uuid" >"$dir/log/osd.$id.mkfs" 2>&1
    start_daemon "$dir" "osd.$id" ceph-osd -c "$conf" -f -i "$id"
  done
  ceph -c "$conf" osd pool create "$pool" 8 8 >/dev/null 2>&1
  ceph -c "$conf" osd pool application enable "$pool" rados >/dev/null 2>&1 || true

  # Usable means: every OSD up, every placement group active+clean, and a write to the
  # pool answered.
  local deadline=$(($(date +%s) + wait)) up
  while :; do
    up=$(ceph -c "$conf" osd stat -f json 2>/dev/null |
      python3 -c 'import json,sys; print(json.load(sys.stdin).get("num_up_osds",0))' 2>/dev/null || echo 0)
    if [ "$up" = "$osds" ] && ceph -c "$conf" pg stat -f json 2>/dev/null | python3 -c '
import json,sys
d=json.load(sys.stdin); s=d.get("pg_summary",d)
n=s.get("num_pgs",0); c=sum(x["num"] for x in s.get("num_pg_by_state",[]) if x["name"]=="active+clean")
sys.exit(0 if n>0 and n==c else 1)' &&
      timeout 20 rados -c "$conf" -p "$pool" put kumo.probe "$conf" 2>/dev/null &&
      rados -c "$conf" -p "$pool" rm kumo.probe 2>/dev/null; then
      break
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "ceph-cluster: not usable after ${wait}s ($up of $osds OSDs up)" >&2
      ceph -c "$conf" -s >&2 || true
      exit 1
    fi
    sleep 1
  done
  trap - EXIT
  echo "$dir"
}

case $command in
  up) up "${1:-}" ;;
  down) down "${1:?DIR}" ;;
  kill-osd)
    dir=${1:?DIR} id=${2:?ID}
    kill -KILL "$(cat "$dir/pids/osd.$id.pid")"
    ;;
  start-osd)
    dir=${1:?DIR} id=${2:?ID}
    start_daemon "$dir" "osd.$id" ceph-osd -c "$dir/ceph.conf" -f -i "$id"
    ;;
  *)
    echo "ceph-cluster: unknown command $command" >&2
    exit 2
    ;;
esac
