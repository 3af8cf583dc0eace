#!/usr/bin/env bash
# Measures how Kumo's cost grows with the data: for each table size, Kumo on disk (cold,
# right after a restart on the data, then warm) and in memory, GetItem, Query of 10 items,
# Scan of 10 items and PutItem on one data set, with the server on one core and kumo-bench
# on the other. Writes the raw JSON lines, a Markdown report (also printed) and a log of
# the run to one directory. See bench/README.md.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_dir="$root/bench"

sizes=10000,1000000,10000000
modes=disk,memory
duration=10s
warmup=2s
cold_warmup=0s
open_duration=30s
connections=64
item_bytes=70
preload_batch=25
kumo_bin=""
server_args=""
bench_bin=""
server_cpu=0
client_cpu=1
data_root=""
keep=0
out=""

# The four workloads, all on kumo-bench's `groups` data set (pk "g<i/10>", sk i%10), in the
# order they run: the writes last, and on disk only warm, so that every read sees only the
# load.
workloads=(group-get group-query group-scan group-put)

usage() {
  cat <<EOF
Usage: bench/run-scaling.sh [options]

  --sizes LIST          table sizes in items, comma-separated (default $sizes)
  --modes LIST          disk, memory or both (default $modes)
  --duration T          measured time per workload (default $duration)
  --warmup T            unmeasured time before each warm run and each run in memory
                        (default $warmup)
  --cold-warmup T       unmeasured time before each cold run (default $cold_warmup: the
                        window starts with the first request, the block cache empty)
  --open-duration T     the open loop at the largest size on disk (default $open_duration)
  --connections N       keep-alive connections (default $connections)
  --item-bytes N        item size as DynamoDB counts it (default $item_bytes)
  --preload-batch N     items per BatchWriteItem of the load (default $preload_batch)
  --kumo PATH           the kumo binary, kumo-rocksdb.so beside it (default build-scale/kumo,
                        else build-bench/kumo)
  --server-args "ARGS"  more arguments for every \`kumo serve\`, e.g. "--block-cache-mb 128"
                        (the report's RSS budget follows --block-cache-mb and
                        --write-buffer-mb)
  --bench PATH          the kumo-bench binary (default: the one built beside --kumo, else
                        build-bench/bench/kumo-bench)
  --server-cpu N        core for the server (default $server_cpu)
  --client-cpu N        core for kumo-bench (default $client_cpu)
  --data-root DIR       where the data directories go (default: a temporary directory)
  --keep                keep the data directories at the end
  --out DIR             where results.jsonl, results.md and run.log go
                        (default bench/results/<UTC date-time>-scaling/)
EOF
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --cold-warmup) cold_warmup=$2; shift 2 ;;
    --open-duration) open_duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --item-bytes) item_bytes=$2; shift 2 ;;
    --preload-batch) preload_batch=$2; shift 2 ;;
    --kumo) kumo_bin=$2; shift 2 ;;
    --server-args) server_args=$2; shift 2 ;;
    --bench) bench_bin=$2; shift 2 ;;
    --server-cpu) server_cpu=$2; shift 2 ;;
    --client-cpu) client_cpu=$2; shift 2 ;;
    --data-root) data_root=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-scaling.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

for tool in taskset python3 df; do
  command -v "$tool" >/dev/null || { echo "run-scaling.sh: $tool is required" >&2; exit 1; }
done

IFS=, read -ra size_list <<<"$sizes"
IFS=, read -ra mode_list <<<"$modes"
for size in "${size_list[@]}"; do
  [[ $size =~ ^[1-9][0-9]*$ ]] ||
    { echo "run-scaling.sh: --sizes: '$size' is not a number of items" >&2; exit 2; }
done
for mode in "${mode_list[@]}"; do
  [[ $mode == disk || $mode == memory ]] ||
    { echo "run-scaling.sh: --modes: '$mode' is neither disk nor memory" >&2; exit 2; }
done
largest=$(printf '%s\n' "${size_list[@]}" | sort -n | tail -n 1)

if [[ -z "$kumo_bin" ]]; then
  kumo_bin="$root/build-scale/kumo"
  [[ -x "$kumo_bin" ]] || kumo_bin="$root/build-bench/kumo"
fi
if [[ ! -x "$kumo_bin" ]]; then
  echo "run-scaling.sh: no kumo binary at $kumo_bin; build one:" >&2
  echo "  cmake -S . -B build-scale -DCMAKE_BUILD_TYPE=Release -DKUMO_TESTS=OFF &&" \
    "cmake --build build-scale -j2" >&2
  exit 1
fi
kumo_bin=$(cd "$(dirname "$kumo_bin")" && pwd)/$(basename "$kumo_bin")
if [[ -z "$bench_bin" ]]; then
  bench_bin="$(dirname "$kumo_bin")/bench/kumo-bench"
  [[ -x "$bench_bin" ]] || bench_bin="$root/build-bench/bench/kumo-bench"
fi
if [[ ! -x "$bench_bin" ]]; then
  echo "run-scaling.sh: no kumo-bench at $bench_bin (--bench PATH)" >&2
  exit 1
fi

[[ -n "$out" ]] || out="$bench_dir/results/$(date -u +%Y%m%dT%H%M%SZ)-scaling"
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
results="$out/results.jsonl"
report="$out/results.md"
log="$out/run.log"
: >"$results"
: >"$log"
# Scratch space (the last kumo-bench's stderr, pid files), removed at the end.
work=$(mktemp -d "${TMPDIR:-/tmp}/kumo-scaling.XXXXXX")
if [[ -z "$data_root" ]]; then
  # Apart from the scratch space, so that --keep can keep it.
  data_root=$(mktemp -d "${TMPDIR:-/tmp}/kumo-scaling-data.XXXXXX")
fi
mkdir -p "$data_root"
data_root=$(cd "$data_root" && pwd)
server_pid=""

# Stops the server and waits for it to exit: on disk Kumo flushes its memtables first,
# which after a large load takes seconds.
stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1200); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$server_pid" 2>/dev/null; then
      warn "the server (pid $server_pid) did not stop within 120 s; killing it"
      kill -9 "$server_pid" 2>/dev/null || true
    fi
  fi
  server_pid=""
}

cleanup() {
  stop_server
  if [[ $keep -eq 0 ]]; then
    rm -rf "$data_root"/disk-*
    rmdir "$data_root" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Progress notes go to stderr and to run.log, with the seconds since the start.
note() { printf '== [%4ds] %s\n' "$SECONDS" "$*" | tee -a "$log" >&2; }
warn() { printf '!! [%4ds] %s\n' "$SECONDS" "$*" | tee -a "$log" >&2; }

# record_failed LABEL WORKLOAD REASON...: a run that could not be made, and why.
record_failed() {
  python3 -c 'import json, sys
label, workload, reason = sys.argv[1:4]
print(json.dumps({"kind": "failed", "label": label, "workload": workload, "reason": reason},
                 separators=(",", ":")))' "$1" "$2" "${*:3}" >>"$results"
}

# A port nothing listens on, below Linux's ephemeral range (32768 and up) so that no
# client socket holds it either (kumo-bench launch checks again before starting a server).
free_port() {
  local port
  for _ in $(seq 50); do
    port=$((12000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  echo "run-scaling.sh: no free port found" >&2
  return 1
}

# start LABEL PORT STORAGE: starts Kumo on core $server_cpu (kumo-bench launch pins it),
# `--in-memory` when STORAGE is "in-memory", else on the data directory STORAGE; records
# its start-up time and idle RSS and sets server_pid.
start() {
  local label=$1 port=$2 storage=$3
  local command=("$kumo_bin" serve --port "$port" --threads 1) extra=()
  if [[ $storage == in-memory ]]; then command+=(--in-memory); else command+=(--data-dir "$storage"); fi
  read -ra extra <<<"$server_args"
  command+=("${extra[@]}")
  if ! taskset -c "$client_cpu" "$bench_bin" launch --json --label "$label" \
      --endpoint "127.0.0.1:$port" --cpu "$server_cpu" --pid-file "$work/server.pid" \
      --log "$out/logs/$label.log" -- "${command[@]}" >>"$results" 2>"$work/launch.err"; then
    cat "$work/launch.err" >>"$log"
    record_failed "$label" start "$(sed 's/^kumo-bench: //' "$work/launch.err" | tr '\n' ' ')"
    warn "$label: Kumo did not start: $(head -c 300 "$work/launch.err")"
    return 1
  fi
  server_pid=$(cat "$work/server.pid")
  note "$label started: $(tail -n 1 "$results" | python3 -c 'import json, sys
s = json.load(sys.stdin)
print("first right answer after {:.1f} ms, idle RSS {:.1f} MiB".format(
    s["startup_ms"], s["idle_rss_kib"] / 1024))')"
}

# The server's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat).
server_ticks() {
  local stat
  stat=$(cat "/proc/$server_pid/stat" 2>/dev/null) || { echo 0; return; }
  # The fields after the command name, which is in parentheses: utime and stime are
  # the 12th and 13th of them.
  read -ra fields <<<"${stat##*) }"
  echo $((fields[11] + fields[12]))
}

# Waits until the server has been idle (under 2% of a core) for two seconds in a row, at
# most 10 minutes: RocksDB's flushes and compactions after a load would otherwise run on
# the server's core during the next measurement.
settle() {
  local what=$1 before after calm=0 began=$SECONDS
  before=$(server_ticks)
  while [[ $calm -lt 2 && $((SECONDS - began)) -lt 600 ]]; do
    sleep 1
    after=$(server_ticks)
    if [[ $((after - before)) -le 2 ]]; then calm=$((calm + 1)); else calm=0; fi
    before=$after
  done
  note "$what: the server was idle after $((SECONDS - began)) s"
}

# load LABEL SIZE: loads the `groups` data set, SIZE items of about $item_bytes bytes, in
# BatchWriteItems of $preload_batch, and records the time it took and the server's RSS.
load() {
  local label=$1 size=$2
  note "$label: loading $size items ($preload_batch per BatchWriteItem)"
  if ! taskset -c "$client_cpu" "$bench_bin" --json --label "$label" \
      --endpoint "127.0.0.1:$port" --workload group-get --connections "$connections" \
      --items "$size" --item-bytes "$item_bytes" --preload-batch "$preload_batch" \
      --duration 0 --server-pid "$server_pid" >>"$results" 2>"$work/bench.err"; then
    cat "$work/bench.err" >>"$log"
    record_failed "$label" load "$(sed 's/^kumo-bench: //' "$work/bench.err" | tr '\n' ' ')"
    warn "$label: the load failed: $(head -c 300 "$work/bench.err")"
    return 1
  fi
  note "$label: loaded: $(tail -n 1 "$results" | python3 -c 'import json, sys
r = json.load(sys.stdin)
print("{:.1f} s, {:,.0f} items/s, RSS {:.1f} MiB".format(
    r["seconds"], r["items_per_s"], r["server_rss_kib"] / 1024))')"
}

# measure LABEL SIZE WORKLOAD WARMUP DURATION [kumo-bench options...]: one run on the
# loaded data; kumo-bench's JSON line is appended to the results (also when some answers
# were wrong: the report lists errors).
measure() {
  local label=$1 size=$2 workload=$3 run_warmup=$4 run_duration=$5
  shift 5
  note "$label: $workload $*"
  local status=0
  taskset -c "$client_cpu" "$bench_bin" --json --label "$label" --endpoint "127.0.0.1:$port" \
    --workload "$workload" --connections "$connections" --items "$size" \
    --item-bytes "$item_bytes" --no-preload --warmup "$run_warmup" --duration "$run_duration" \
    --server-pid "$server_pid" "$@" >>"$results" 2>"$work/bench.err" || status=$?
  cat "$work/bench.err" >>"$log"
  case $status in
    0) ;;
    1)
      record_failed "$label" "$workload" "$(sed 's/^kumo-bench: //' "$work/bench.err" | tr '\n' ' ')"
      warn "$label: $workload could not run: $(head -c 300 "$work/bench.err")"
      return 1
      ;;
    *) warn "$label: $workload: some requests failed or went unanswered (exit $status)" ;;
  esac
  note "$label: $workload: $(tail -n 1 "$results" | python3 -c 'import json, sys
r = json.load(sys.stdin)
print("{:,.0f} ops/s, p99 {:.2f} ms, {:.1f} us/op on the server, RSS {:.1f} MiB".format(
    r["ops_per_s"], r["latency_ms"]["p99"], r.get("server_cpu_us_per_op", 0),
    r.get("server_rss_kib", 0) / 1024))')"
}

# The last ops/s recorded for LABEL and WORKLOAD (0 if none).
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

# Whether the file system of the data directories has room for SIZE items on disk: the
# data, its write-ahead log and the space compactions need while they rewrite files,
# about 500 bytes an item of 70 (RocksDB compresses the values; the keys and the log
# dominate), plus 1 GiB.
check_space() {
  local size=$1 need_kib avail_kib
  need_kib=$((size * (item_bytes + 430) / 1024 + 1048576))
  avail_kib=$(df -Pk "$data_root" | awk 'NR == 2 { print $4 }')
  if [[ $avail_kib -lt $need_kib ]]; then
    warn "not enough disk for $size items: $((avail_kib / 1024)) MiB free in $data_root," \
      "$((need_kib / 1024)) MiB wanted"
    record_failed "disk@$size" start "not enough disk: $((avail_kib / 1024)) MiB free in" \
      "$data_root, $((need_kib / 1024)) MiB wanted"
    return 1
  fi
  note "disk: $((avail_kib / 1024)) MiB free in $data_root, about $((need_kib / 1024)) MiB needed"
}

# run_disk SIZE: a fresh data directory, loaded; then for each workload a restart on the
# data (start-up and idle RSS) and the workload on the cold server (RocksDB's block cache
# empty, the files in the OS page cache); then each workload again on the same, warm
# server; at the largest size, GetItem in an open loop at half the warm peak.
run_disk() {
  local size=$1
  local dir="$data_root/disk-$size" workload first=1
  check_space "$size" || return 0
  rm -rf "$dir"
  port=$(free_port)
  start "disk-empty@$size" "$port" "$dir" || return 0
  if ! load "disk@$size" "$size"; then
    stop_server
    return 0
  fi
  settle "disk@$size"
  note "disk@$size: stopping (Kumo flushes its memtables)"
  stop_server
  for workload in "${workloads[@]}"; do
    # Writes run only warm, last: a run of overwrites leaves the memtable full of old
    # versions that the reads after it would step over until the next flush.
    [[ $workload != group-put ]] || continue
    # Each cold run has a server of its own, started on the data just before.
    [[ $first -eq 1 ]] || stop_server
    first=0
    start "disk-cold@$size" "$port" "$dir" || return 0
    settle "disk-cold@$size"
    measure "disk-cold@$size" "$size" "$workload" "$cold_warmup" "$duration" || true
  done
  for workload in "${workloads[@]}"; do
    measure "disk-warm@$size" "$size" "$workload" "$warmup" "$duration" || true
  done
  if [[ $size -eq $largest ]]; then
    local peak
    peak=$(last_rate "disk-warm@$size" group-get)
    if [[ $peak -gt 1 ]]; then
      measure "disk-open@$size" "$size" group-get "$warmup" "$open_duration" \
        --rate $((peak / 2)) || true
    else
      record_failed "disk-open@$size" group-get "no GetItem peak to take half of"
    fi
  fi
  stop_server
  [[ $keep -eq 1 ]] || rm -rf "$dir"
}

# run_memory SIZE: an empty in-memory server (start-up and idle RSS), loaded (RSS), then
# each workload.
run_memory() {
  local size=$1 workload
  port=$(free_port)
  start "memory@$size" "$port" in-memory || return 0
  if load "memory@$size" "$size"; then
    for workload in "${workloads[@]}"; do
      measure "memory@$size" "$size" "$workload" "$warmup" "$duration" || true
    done
  fi
  stop_server
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

python3 - "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(nproc)" "$(loadavg)" "$sizes" "$modes" \
  "$duration" "$warmup" "$cold_warmup" "$open_duration" "$connections" "$item_bytes" \
  "$preload_batch" "$kumo_bin" "$server_args" "$server_cpu" "$client_cpu" >>"$results" <<'EOF'
import json, sys
keys = ["date", "cores", "loadavg_start", "sizes", "modes", "duration", "warmup",
        "cold_warmup", "open_duration", "connections", "item_bytes", "preload_batch", "kumo",
        "server_args", "server_cpu", "client_cpu"]
config = dict(zip(keys, sys.argv[1:]))
for key in ("cores", "connections", "item_bytes", "preload_batch", "server_cpu", "client_cpu"):
    config[key] = int(config[key])
config["sizes"] = [int(s) for s in config["sizes"].split(",")]
config["modes"] = config["modes"].split(",")
print(json.dumps({"kind": "config", **config}, separators=(",", ":")))
EOF

note "machine: $(nproc) cores, load average $(loadavg); Kumo ($kumo_bin) on core $server_cpu," \
  "kumo-bench on core $client_cpu; output in $out"
port=""
for size in "${size_list[@]}"; do
  for mode in "${mode_list[@]}"; do
    case $mode in
      disk) run_disk "$size" ;;
      memory) run_memory "$size" ;;
    esac
  done
done
note "load average at the end: $(loadavg)"
printf '{"kind":"config","loadavg_end":"%s","elapsed_s":%d}\n' "$(loadavg)" "$SECONDS" >>"$results"

python3 "$bench_dir/scaling_table.py" "$results" >"$report"
cat "$report"
note "report: $report; raw results: $results; log: $log"
[[ $keep -eq 0 ]] || note "data directories kept in $data_root"
