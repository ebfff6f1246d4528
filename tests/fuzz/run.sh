#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, in build-fuzz unless FUZZ_BUILD says
# otherwise) and runs each for SECONDS_PER_TARGET (default 60) over its committed corpus
# tests/fuzz/corpus/<target>/ (crash regressions included). New inputs go to
# build-fuzz/fuzz-corpus/<target>/, never into the tree; crashes to build-fuzz/fuzz-crashes/.
#
#   tests/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Prints one line per target with its executions; writes `TARGET passed|failed EXECS` lines to
# build-fuzz/fuzz-results.txt (tests/run_all.sh counts them). Exits non-zero on any crash,
# leak, timeout or sanitizer report. To keep a found input as a regression, copy it from
# fuzz-crashes/ into tests/fuzz/corpus/<target>/ once the loader is fixed.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_frame fuzz_yaml fuzz_urdf fuzz_request fuzz_input_frame fuzz_dispatch fuzz_mcap fuzz_viewer_json)
build=${FUZZ_BUILD:-$root/build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
  CC=${FUZZ_CC:-clang} meson setup "$build" -Dfuzz=true --buildtype=debugoptimized \
    >"$build.setup.log" 2>&1 || { cat "$build.setup.log"; exit 2; }
fi
ninja -C "$build" "${targets[@]/#/tests/fuzz/}" >"$build/fuzz-build.log" 2>&1 ||
  { tail -40 "$build/fuzz-build.log"; exit 2; }
export OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
results="$build/fuzz-results.txt"
: >"$results"
status=0
for t in "${targets[@]}"; do
  work="$build/fuzz-corpus/$t"
  crashes="$build/fuzz-crashes"
  mkdir -p "$work" "$crashes"
  log="$build/fuzz-$t.log"
  "$build/tests/fuzz/$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$crashes/$t-" "$work" "$root/tests/fuzz/corpus/$t" \
    >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  execs=${execs:-0}
  if [ $rc -eq 0 ]; then
    printf '%-18s %12s executions in %ss: ok\n' "$t" "$execs" "$secs"
    echo "$t passed $execs" >>"$results"
  else
    status=1
    printf '%-18s %12s executions: FAILED (exit %d), log %s\n' "$t" "$execs" "$rc" "$log"
    grep -E "ERROR:|runtime error|SUMMARY|Test unit written" "$log" | head -8
    echo "$t failed $execs" >>"$results"
  fi
done
exit $status
