#!/usr/bin/env bash
# Installs what is missing, then builds and runs every test:
#   1. RelWithDebInfo build in build/ (line tables only, -g1: backtraces need no more, and
#      full debug information makes GCC's compile a third slower): unit tests (ctest), e2e suite, AWS CLI and JS SDK
#      smoke tests, the benchmark smoke run, the scaling checks and the capacity check,
#      and part of the e2e suite again on the RADOS back end (a loopback Ceph cluster);
#   2. clang ASan+UBSan build in build-asan/ (built in the background while the RADOS step
#      runs): unit tests and the e2e suite again, where any sanitizer report fails the run,
#      and the libFuzzer targets, 10 s each.
# Every build treats warnings as errors.
# Exits non-zero on the first failure and prints a summary of the steps either way.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

python=/usr/bin/python3
jobs=$(nproc)
sanitizer_logs="$root/build-asan/sanitizer-logs"

steps_done=()
current=""
background_build=""
step_started=$SECONDS
run_started=$SECONDS

begin() {
  current=$1
  step_started=$SECONDS
  printf '\n==> %s\n' "$current"
}

end() {
  steps_done+=("ok      $current ($((SECONDS - step_started))s)")
  current=""
}

show_sanitizer_logs() {
  local f
  for f in "$sanitizer_logs"/*; do
    [ -f "$f" ] || continue
    printf '\n---- %s ----\n' "$f"
    cat "$f"
  done
}

summary() {
  local rc=$? s
  trap - EXIT
  if [ -n "$background_build" ]; then
    kill -- "-$background_build" 2>/dev/null || kill "$background_build" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -d "$sanitizer_logs" ]; then
    show_sanitizer_logs
  fi
  printf '\n==== test.sh summary (%ss) ====\n' "$((SECONDS - run_started))"
  for s in "${steps_done[@]}"; do
    printf '%s\n' "$s"
  done
  if [ "$rc" -eq 0 ]; then
    printf 'test.sh: all %d steps passed\n' "${#steps_done[@]}"
  else
    printf 'FAILED  %s (exit status %d)\n' "${current:-unknown step}" "$rc"
    printf 'test.sh: FAILED\n'
  fi
  exit "$rc"
}
trap summary EXIT
rm -rf "$sanitizer_logs"

# pytest exits 5 when it collects no test; that is a failure here, as is anything non-zero.
# The files run in $jobs pytest-xdist workers, each file whole in one worker (its module
# servers started once): most of the suite's time is spent waiting on servers, not computing.
run_e2e() {
  local bin=$1 rc=0
  KUMO_BIN="$bin" timeout --kill-after=30 1200 \
    "$python" -m pytest -p no:cacheprovider -ra -n "$jobs" --dist loadfile tests/e2e || rc=$?
  if [ "$rc" -eq 5 ]; then
    echo "e2e: pytest collected no tests in tests/e2e" >&2
  elif [ "$rc" -eq 124 ]; then
    echo "e2e: timed out" >&2
  fi
  return "$rc"
}

run_ctest() {
  timeout --kill-after=30 1200 \
    ctest --test-dir "$1" --output-on-failure --no-tests=error --timeout 300 -j"$jobs"
}

begin "install dependencies"
"$root/scripts/install-deps.sh" --test
end

begin "build (RelWithDebInfo, build/)"
cmake -S "$root" -B "$root/build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DKUMO_SANITIZE=OFF -DKUMO_TESTS=ON -DKUMO_WERROR=ON
cmake --build "$root/build" -j"$jobs"
end

begin "unit tests (build/)"
run_ctest "$root/build"
end

begin "e2e tests (build/kumo)"
run_e2e "$root/build/kumo"
end

begin "smoke test: AWS CLI (build/kumo)"
KUMO_BIN="$root/build/kumo" timeout --kill-after=30 300 "$root/tests/smoke/cli.sh"
end

begin "smoke test: AWS SDK for JavaScript v3 (build/kumo)"
KUMO_BIN="$root/build/kumo" timeout --kill-after=30 600 "$root/tests/smoke/js.sh"
end

begin "benchmark smoke run (build/bench/kumo-bench against build/kumo)"
timeout --kill-after=30 300 "$root/bench/smoke.sh" "$root/build"
end

begin "scaling checks (server CPU per request that must not grow with the data)"
timeout --kill-after=30 600 "$root/bench/scaling-check.sh" "$root/build"
end

begin "capacity check (server CPU of metering and throttling against --capacity off)"
timeout --kill-after=30 300 "$root/bench/capacity-check.sh" --short "$root/build"
end

# One clang build serves the sanitizer tests and the fuzz targets: Kumo at -O1 with its
# assert()s on, ASan and UBSan everywhere, and libFuzzer's coverage in the layers (a no-op
# outside the fuzz targets). Line tables are all a sanitizer report's stack needs (file and
# line of each frame); full debug information made this build the run's longest step.
# It runs in the background at the lowest CPU priority while the RADOS step below runs: that
# step mostly waits on the cluster's disks and network round trips, and the build takes the
# cores it leaves idle (the step itself keeps them whenever it wants them). Started after the
# CPU measurements above, so that it never weighs on them.
asan_log="$root/build-asan/build-output.log"
begin "configure (clang, ASan+UBSan and fuzz targets, build-asan/)"
cmake -S "$root" -B "$root/build-asan" -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DKUMO_SANITIZE=ON -DKUMO_FUZZ=ON -DKUMO_TESTS=ON -DKUMO_BENCH=OFF -DKUMO_WERROR=ON
set -m
nice -n 19 cmake --build "$root/build-asan" -j"$jobs" --target all kumo_fuzz >"$asan_log" 2>&1 &
background_build=$!
set +m
end

# The RADOS back end on a loopback Ceph cluster (1 monitor, 1 manager, 3 OSDs), which the
# install step installs: a bounded part of the e2e suite. scripts/test-rados.sh --all runs
# all of it (docs/scale-out.md).
begin "RADOS: e2e subset against a loopback Ceph cluster (build/kumo --rados)"
timeout --kill-after=60 900 "$root/scripts/test-rados.sh" "$root/build"
end

# The time of this step is what the build took beyond the RADOS step.
begin "build (clang, ASan+UBSan and fuzz targets, build-asan/, begun with the RADOS step)"
build_rc=0
wait "$background_build" || build_rc=$?
background_build=""
cat "$asan_log"
[ "$build_rc" -eq 0 ]
end

# A UBSan finding ends the process (-fno-sanitize-recover), and so does an ASan error.
# ASan and LeakSanitizer reports also go to files, so that a leak found when the server
# shuts down, after the test that caused it has passed, still fails the run.
mkdir -p "$sanitizer_logs"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$sanitizer_logs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

check_sanitizer_logs() {
  if compgen -G "$sanitizer_logs/*" >/dev/null; then
    echo "sanitizer reports found in $sanitizer_logs" >&2
    return 1
  fi
}

begin "unit tests (build-asan/)"
run_ctest "$root/build-asan"
check_sanitizer_logs
end

begin "e2e tests (build-asan/kumo)"
run_e2e "$root/build-asan/kumo"
check_sanitizer_logs
end

begin "fuzz (libFuzzer, 10s per target)"
KUMO_FUZZ_BUILD="$root/build-asan" timeout --kill-after=30 1200 "$root/fuzz/run.sh" 10
end
