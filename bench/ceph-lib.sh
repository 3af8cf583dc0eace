# Sourced by the RADOS benchmarks: the loopback Ceph cluster they run on, and the server of
# one run (start_bench_server, stop_bench_server, stop_bench: below). use_ceph_cluster
# keeps the running cluster whose ceph.conf $CEPH_CONF names, or starts one
# (scripts/ceph-cluster.sh) and exports CEPH_CONF; stop_ceph_cluster stops only a cluster
# it started.
ceph_cluster_started=""

use_ceph_cluster() {
  if [[ -z "${CEPH_CONF:-}" ]]; then
    ceph_cluster_started=$("$root/scripts/ceph-cluster.sh" up)
    export CEPH_CONF=$ceph_cluster_started/ceph.conf
  fi
}

stop_ceph_cluster() {
  if [[ -n "$ceph_cluster_started" ]]; then
    "$root/scripts/ceph-cluster.sh" down "$ceph_cluster_started" || true
    ceph_cluster_started=""
  fi
}

# One `kumo serve` at a time and a scratch directory: a script that sets server="" and
# data (a directory of its own) traps EXIT with stop_bench, which stops the server if one
# runs and the cluster if use_ceph_cluster started it, and removes $data.
stop_bench() {
  if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  stop_ceph_cluster
  rm -rf "$data"
}

# start_bench_server KUMO LOG ARGS...: `KUMO serve --port $port ARGS...` in the background,
# its output to LOG and its pid in $server; returns once it accepts connections (or after
# 10 s). stop_bench_server stops it.
start_bench_server() {
  local kumo=$1 log=$2
  shift 2
  "$kumo" serve --port "$port" "$@" >"$log" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
}

stop_bench_server() {
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
}
