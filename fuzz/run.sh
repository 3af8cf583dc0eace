#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (a separate build of the whole tree, in
# build-fuzz/) and runs each of them: first over its regression inputs
# (fuzz/regressions/<target>/), then fuzzing for a bounded time from its seed corpus
# (fuzz/corpus/<target>/) into a temporary directory, so the repository's corpus never
# grows. Prints the executions each target did and exits non-zero if any target crashed,
# leaked, hung or broke one of its checks.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# SECONDS per target defaults to $KUMO_FUZZ_SECONDS, else 20; TARGETs default to all.
# KUMO_FUZZ_BUILD sets the build directory; KUMO_FUZZ_JOBS how many targets fuzz at once
# (default: the number of cores). Crash inputs are kept in <build>/fuzz-artifacts/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-${KUMO_FUZZ_SECONDS:-20}}
[ $# -gt 0 ] && shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_expression fuzz_partiql fuzz_attribute_value fuzz_request fuzz_sigv4 fuzz_key_codec fuzz_http fuzz_admin)
fi
build=${KUMO_FUZZ_BUILD:-$root/build-fuzz}
jobs=${KUMO_FUZZ_JOBS:-$(nproc)}
artifacts="$build/fuzz-artifacts"
started=$SECONDS

if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "fuzz/run.sh: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 2
fi
if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz/run.sh: clang++ not found (scripts/install-deps.sh --test installs it)" >&2
  exit 2
fi

# A separate configure: the rest of the tree is built with g++. Only the fuzz targets and
# the layers they link are built. -O1 keeps the build short and assert()s on. A build
# directory already configured with -DKUMO_FUZZ=ON (scripts/test.sh's build-asan/, which
# also holds the sanitizer tests) keeps its own configuration.
if ! grep -qs '^KUMO_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  generator=()
  if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
  fi
  cmake -S "$root" -B "$build" "${generator[@]}" \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DKUMO_FUZZ=ON -DKUMO_TESTS=OFF -DKUMO_BENCH=OFF -DKUMO_WERROR=ON >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target kumo_fuzz
built=$((SECONDS - started))

# Settings of their own, whatever the caller's (scripts/test.sh sends ASan reports to files).
export ASAN_OPTIONS="detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

rm -rf "$artifacts"
mkdir -p "$artifacts"
work=$(mktemp -d "${TMPDIR:-/tmp}/kumo-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

options=(-rss_limit_mb=2048 -timeout=10)

# Runs one target (regressions, then fuzzing); its output goes to $work/<target>.log and
# its exit status to $work/<target>.status.
run_target() {
  local target=$1 bin="$build/fuzz/$1" log="$work/$1.log" rc=0
  local regressions="$root/fuzz/regressions/$target" dict="$root/fuzz/dict/$target.dict"
  local inputs=() extra=()
  {
    if [ -d "$regressions" ]; then
      mapfile -t inputs < <(find "$regressions" -type f | sort)
    fi
    echo "${#inputs[@]}" >"$work/$target.regressions"
    if [ ${#inputs[@]} -gt 0 ]; then
      echo "-- $target: ${#inputs[@]} regression inputs"
      "$bin" "${options[@]}" "${inputs[@]}" || rc=$?
    fi
    if [ "$rc" -eq 0 ]; then
      echo "-- $target: fuzzing for ${seconds}s"
      mkdir -p "$work/$target.corpus" "$artifacts/$target"
      [ -f "$dict" ] && extra+=("-dict=$dict")
      timeout --kill-after=30 $((seconds + 300)) \
        "$bin" "${options[@]}" "${extra[@]}" -max_total_time="$seconds" -print_final_stats=1 \
        -artifact_prefix="$artifacts/$target/" \
        "$work/$target.corpus" "$root/fuzz/corpus/$target" || rc=$?
    fi
  } >"$log" 2>&1
  echo "$rc" >"$work/$target.status"
}

running=0
for target in "${targets[@]}"; do
  if [ ! -x "$build/fuzz/$target" ]; then
    echo "fuzz/run.sh: no target $target" >&2
    exit 2
  fi
  run_target "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

failed=()
printf '\n%-22s %11s %12s %10s %8s  %s\n' target regressions executions exec/s corpus result
for target in "${targets[@]}"; do
  log="$work/$target.log"
  rc=$(cat "$work/$target.status" 2>/dev/null || echo 1)
  # libFuzzer's last stats line: "#<runs> DONE cov: ... corp: <n>/<size> ... exec/s: <r> ..."
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)
  runs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$done_line")
  rate=$(sed -nE 's/.*exec\/s: ([0-9]+).*/\1/p' <<<"$done_line")
  corpus=$(sed -nE 's/.*corp: ([0-9]+)\/.*/\1/p' <<<"$done_line")
  result=ok
  if [ "$rc" -ne 0 ]; then
    result="FAILED (exit $rc)"
    failed+=("$target")
  fi
  regressions=$(cat "$work/$target.regressions" 2>/dev/null || echo -)
  printf '%-22s %11s %12s %10s %8s  %s\n' "$target" "$regressions" "${runs:--}" "${rate:--}" \
    "${corpus:--}" "$result"
done

for target in "${failed[@]}"; do
  printf '\n---- %s (last 60 lines of its log) ----\n' "$target"
  tail -n 60 "$work/$target.log"
  find "$artifacts/$target" -type f -printf 'crash input kept: %p\n' 2>/dev/null || true
done

printf '\nfuzz/run.sh: build %ds, total %ds, %d targets, %d failed\n' \
  "$built" "$((SECONDS - started))" "${#targets[@]}" "${#failed[@]}"
[ ${#failed[@]} -eq 0 ]
