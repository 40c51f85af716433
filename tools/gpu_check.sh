#!/usr/bin/env bash
# make gpu-check: one command for the GPU machine (no package index there). Builds and installs
# cupric with the machine's python3, runs the tests marked gpu or nvrtc (pyproject.toml's markers:
# the CPU-only tests run in CI), then the benchmarks, and prints a short table last. Logs go to
# $OUT (or ./.out) for fetching.
# Knobs: GPU_TESTS_M (the marker expression, default "gpu or nvrtc"; "" runs every test),
# GPU_TESTS (test paths, space-separated; default tests/python tests/integration) or
# GPU_TEST_GROUPS (';'-separated groups of paths run in parallel), GPU_TESTS_K (pytest -k),
# RUN_DEMO=0, RUN_SANITIZER=0, DEMO_BUDGET, TESTS_BUDGET / BENCH_BUDGET / SANITIZER_BUDGET
# (seconds), GPU_BENCHES (scripts). Narrow GPU_TESTS_M or GPU_TESTS when the lease is short.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/.out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1 CUPRIC_CACHE_DIR="${CUPRIC_CACHE_DIR:-/tmp/cupric-cache}"
ROOT=$PWD
summary() { echo "$1" | tee -a "$OUT/summary.txt"; }
abs_paths() { for t in $1; do printf '%s\n' "$ROOT/$t"; done; }
: > "$OUT/summary.txt"

# The machine's default CXX (/opt/gcc) links libstdc++ statically into the module; beside
# NumPy's shared libstdc++ that breaks C++ exceptions (a segfault at the first throw). Use the
# system compiler, whose libstdc++ is the one every other extension there shares.
if [ -x /usr/bin/g++ ]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
t0=$(date +%s)
if [ "${SKIP_BUILD:-0}" = 1 ]; then :
elif ! "$PY" -m pip install -q --no-build-isolation --no-deps \
      --config-settings=cmake.define.CUPRIC_WERROR=OFF --config-settings=build-dir=build/gpu-sys . >"$OUT/build.log" 2>&1; then
  tail -50 "$OUT/build.log"; summary "build: FAILED"; exit 1
fi
summary "build: ok ($(( $(date +%s) - t0 )) s)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' | tee -a "$OUT/summary.txt"

# Kernels under compute-sanitizer, through `python -m cupric.sanitize` (which finds the tool in a
# toolkit or the nvidia-cuda-sanitizer-api wheel, gives every array its own exact-size allocation
# (CUPRIC_POOL=direct) so that accesses past an array's end are seen, and names the findings'
# kernels as cupric ops / tile kernels). memcheck: streams dropped with work pending, then the
# CUDA backend's and the tile language's GPU tests; racecheck: the tile kernels (shared memory).
# The summary gets each run's count of findings (goal: zero). Knobs: SANITIZE_TESTS,
# SANITIZE_RACE_TESTS (pytest paths), RUN_SANITIZER=0, PARALLEL_SANITIZER=1.
sanitize() {  # name, tool, target (script or -m module) and its arguments...
  local name=$1 tool=$2; shift 2
  local log="$OUT/sanitizer_$name.log"
  ( cd /tmp && timeout "${SANITIZER_BUDGET:-300}" "$PY" -m cupric.sanitize --tool "$tool" \
        --log "$OUT/sanitizer_$name.report" "$@" >"$log" 2>&1 )
  local rc=$?
  local found tests
  found=$(grep -m1 '^cupric.sanitize:' "$log" | sed 's/^cupric.sanitize: //; s/ (full report.*//')
  tests=$(grep -E '(passed|failed|error).* in [0-9.]+s|^ok' "$log" | tail -1)
  summary "$tool, $name: ${found:-no report (exit $rc, see sanitizer_$name.log)}${tests:+; $tests}"
  grep -E '^  [0-9]+\. |^     in ' "$log" | head -12 | tee -a "$OUT/summary.txt"
}
run_sanitizers() {
  sanitize dropped_streams memcheck "$ROOT/tools/check_dropped_streams.py"
  mapfile -t mem_paths < <(abs_paths "${SANITIZE_TESTS:-tests/python/backend/test_cuda_backend.py tests/python/tile/test_gpu.py}")
  # -k: the tests that fault or trap on purpose (to check the report that names the kernel)
  sanitize gpu_tests memcheck -m pytest -q -p no:cacheprovider -m gpu -k "not fault and not trap" "${mem_paths[@]}"
  mapfile -t race_paths < <(abs_paths "${SANITIZE_RACE_TESTS:-tests/python/tile/test_gpu.py}")
  sanitize tile_race racecheck -m pytest -q -p no:cacheprovider -x -m gpu "${race_paths[@]}"
}
# SOAK_OPS=N: the soak test (tests/soak/soak.py: mixed ops over every device, host RSS and the
# GPU pool must stay flat) beside the tests, bounded by SOAK_BUDGET seconds
if [ -n "${SOAK_OPS:-}" ]; then
  ( cd /tmp && timeout "${SOAK_BUDGET:-240}" "$PY" "$ROOT/tests/soak/soak.py" --ops "$SOAK_OPS" >"$OUT/soak.log" 2>&1;
    echo "exit $?" >>"$OUT/soak.log" ) &
fi
SANITIZE=0
if [ "${RUN_SANITIZER:-1}" = 1 ]; then
  if ( cd /tmp && "$PY" -c "import sys, cupric.sanitize as s; sys.exit(s.find_compute_sanitizer() is None)" ); then
    SANITIZE=1
  else
    summary "sanitizer: skipped ($(cd /tmp && "$PY" -c "import cupric.sanitize as s; print(s.MISSING)"))"
  fi
fi
# PARALLEL_SANITIZER=1: the sanitizer runs beside the tests (the machine has cores to spare)
if [ $SANITIZE = 1 ] && [ "${PARALLEL_SANITIZER:-0}" = 1 ]; then run_sanitizers & SANITIZE=0; fi

# run the tests from outside the source tree so that the installed package is imported;
# a per-test time limit where pytest-timeout exists, and a bound on the whole run
TIMEOUT_ARG=""
"$PY" -c "import pytest_timeout" 2>/dev/null && TIMEOUT_ARG="--timeout=${TEST_TIMEOUT:-90}"
MARKS="${GPU_TESTS_M-gpu or nvrtc}"
run_pytest() {  # log, -k expression, paths... (the tests of $MARKS among them)
  local log=$1 k=$2; shift 2
  ( cd /tmp && timeout "${TESTS_BUDGET:-400}" "$PY" -m pytest -rfE --durations=5 -p no:cacheprovider $TIMEOUT_ARG \
      ${MARKS:+-m "$MARKS"} ${k:+-k "$k"} "$@" >"$log" 2>&1 )
}
if [ -n "${GPU_TEST_GROUPS:-}" ]; then
  # groups (';'-separated lists of paths) run at the same time, each in its own process (NVRTC
  # compiles dominate, and the machine has cores to spare); the tests that fill the GPU's memory
  # run afterwards, alone
  HEAVY="until_out_of_memory or released_before_giving_up"
  IFS=';' read -ra GROUP_LIST <<< "$GPU_TEST_GROUPS"
  all=()
  i=0
  for g in "${GROUP_LIST[@]}"; do
    mapfile -t paths < <(abs_paths "$g")
    all+=("${paths[@]}")
    run_pytest "$OUT/tests_$i.log" "${GPU_TESTS_K:+($GPU_TESTS_K) and }not ($HEAVY)" "${paths[@]}" &
    i=$((i + 1))
  done
  wait
  run_pytest "$OUT/tests_heavy.log" "$HEAVY" "${all[@]}"
  for log in "$OUT"/tests_*.log; do
    summary "tests $(basename "$log" .log): $(grep -E "(passed|failed|skipped|deselected|error).* in [0-9.]+s" "$log" | tail -1)"
    grep -E "^(FAILED|ERROR)" "$log" | head -20 | tee -a "$OUT/summary.txt"
  done
else
  mapfile -t paths < <(abs_paths "${GPU_TESTS:-tests/python tests/integration}")
  run_pytest "$OUT/tests.log" "${GPU_TESTS_K:-}" "${paths[@]}"
  summary "tests: $(grep -E "(passed|failed|skipped|deselected|error).* in [0-9.]+s" "$OUT/tests.log" | tail -1)"
  grep -E "^(FAILED|ERROR)" "$OUT/tests.log" | head -30 | tee -a "$OUT/summary.txt"
fi


if [ $SANITIZE = 1 ]; then run_sanitizers; fi
wait  # a sanitizer run started beside the tests

# the founding demo (make demo) on the GPU, beside NumPy and the installed peers
if [ "${RUN_DEMO:-1}" = 1 ]; then
  ( cd /tmp && timeout "${DEMO_BUDGET:-150}" "$PY" "$OLDPWD/examples/demo.py" >"$OUT/demo.log" 2>&1 ) || summary "demo: exit $?"
  summary "--- demo"
  tail -30 "$OUT/demo.log" | tee -a "$OUT/summary.txt" >/dev/null
fi
for bench in ${GPU_BENCHES:-benchmarks/runtime.py benchmarks/arrays_gpu.py benchmarks/tile.py}; do
  [ -f "$bench" ] || continue
  name=$(basename "$bench" .py)
  ( cd /tmp && timeout "${BENCH_BUDGET:-90}" "$PY" "$OLDPWD/$bench" >"$OUT/bench_$name.log" 2>&1 ) || summary "bench $name: exit $?"
  summary "--- $name"
  tail -25 "$OUT/bench_$name.log" | tee -a "$OUT/summary.txt" >/dev/null
done
if [ -n "${SOAK_OPS:-}" ]; then wait; summary "--- soak"; tail -6 "$OUT/soak.log" | tee -a "$OUT/summary.txt" >/dev/null; fi
echo "=================== summary ==================="
cat "$OUT/summary.txt"
