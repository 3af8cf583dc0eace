#!/usr/bin/env bash
# What metering and throttling cost: GetItem and PutItem in memory under
# `kumo serve --capacity off`, `report` and `enforce`, server CPU time per request
# (kumo-bench's server µs/op), in rounds of a fresh server per mode; each mode keeps its
# median (a short run: its fastest round, below). Fails when report costs more than $report_bound times off, or enforce more than
# $enforce_bound times off (the targets are 1.05 and 1.10). The table is created with a
# WarmThroughput of a million units per second and the per-table quota raised, so that
# enforce throttles nothing and only the checks are measured.
# Usage: bench/capacity-check.sh [--short] [BUILD_DIR]   (default: build)
#   --short: two rounds of 1 s per workload and bounds of 1.20 and 1.30, for the tests (a
#   workload that fails is measured again with three more rounds, see below), each mode
#   judged by its fastest round: two servers of the same mode differ by up to 8% here, so
#   the short run catches a regression of the request path, not a few percent.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=6
duration=3s
report_bound=1.05
enforce_bound=1.10
short=0
statistic=median
if [[ ${1:-} == --short ]]; then
  # A busy neighbour on a shared machine only ever slows a round down, for a minute at a
  # time: the fastest round of each mode is the one it spared, where a real regression of
  # the request path still shows.
  short=1 rounds=2 duration=1s report_bound=1.20 enforce_bound=1.30 statistic=min
  shift
fi
build=${1:-$root/build}
kumo=$build/kumo
bench=$build/bench/kumo-bench
bound=$report_bound

for file in "$kumo" "$bench"; do
  [[ -x "$file" ]] || { echo "capacity-check: no $file" >&2; exit 1; }
done

check_name=capacity-check
# shellcheck source=bench/check-lib.sh
source "$root/bench/check-lib.sh"

modes=(off report enforce)
# summary VALUES...: their median, or their minimum (statistic=min).
summary() {
  /usr/bin/python3 -c 'import statistics, sys
values = [float(v) for v in sys.argv[2:]]
print(min(values) if sys.argv[1] == "min" else statistics.median(values))' "$statistic" "$@"
}
# Every round starts a fresh server per mode: two servers of the same mode differ by a few
# percent (memory layout), as much as the costs measured, and fresh ones average it out.
declare -A costs
# measure ROUNDS WORKLOADS...: ROUNDS rounds of every mode, adding each run's cost to
# costs[WORKLOAD-MODE].
measure() {
  local rounds=$1 round i mode workload
  shift
  for round in $(seq "$rounds"); do
    # Each round starts with the next mode, so that no mode always runs first.
    for i in "${!modes[@]}"; do
      mode=${modes[$(((i + round) % ${#modes[@]}))]}
      start_server --in-memory --capacity "$mode" --table-quota 2000000:2000000 \
        --account-quota 4000000:4000000
      bench --workload getitem --items 10000 --warm-throughput 1000000 --duration 0
      for workload in "$@"; do
        bench --workload "$workload" --items 10000 --no-preload --warmup 0.5s --duration "$duration"
        costs[$workload-$mode]="${costs[$workload-$mode]:-} $(cost)"
      done
      stop_server
    done
  done
}
# verdicts WORKLOADS...: judges each mode of each workload against off, on the summaries.
verdicts() {
  local workload mode off
  for workload in "$@"; do
    # shellcheck disable=SC2086
    off=$(summary ${costs[$workload-off]})
    for mode in report enforce; do
      bound=$report_bound
      [[ $mode == report ]] || bound=$enforce_bound
      # shellcheck disable=SC2086
      judge "$workload, capacity $mode" "off" "$off" "$mode" "$(summary ${costs[$workload-$mode]})"
    done
  done
}

measure "$rounds" getitem putitem
verdicts getitem putitem
# A short run has two rounds only, and a busy neighbour may have slowed every round of one
# mode. A workload that fails is measured again with three more rounds, and judged on all
# five: a real regression of the request path fails again, a noisy minute is outlasted.
if [[ $short == 1 && ${#failed[@]} -gt 0 ]]; then
  again=()
  for workload in getitem putitem; do
    [[ " ${failed[*]} " != *" $workload, "* ]] || again+=("$workload")
  done
  echo "$check_name: measuring ${again[*]} again with 3 more rounds"
  failed=()
  measure 3 "${again[@]}"
  verdicts "${again[@]}"
fi
finish 4
