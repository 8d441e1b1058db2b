#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, runs every test
# in the Release build (build/), then the libraries' suites again in a Debug
# build with AddressSanitizer and UndefinedBehaviorSanitizer
# (build-sanitize/; set DFMPC_SANITIZE_TESTS=0 to skip it): the dfmpc tool,
# its CLI tests and the Python module's tests run in the Release tree only
# (they drive library code those suites cover, at half the sanitizer pass's
# compile and test time). Last, the AsyncPlanner's tests (the
# only code with threads of its own) run under ThreadSanitizer (build-tsan/;
# DFMPC_TSAN_TESTS=0 skips it).
#
# Extra arguments go to both ctest runs: `-R PATTERN` selects tests by name
# (a GoogleTest suite, a case of the suites registered per case, or a CLI
# test; `ctest -N` lists them), `-L BINARY` the suites of one test binary.
# One case alone: build/tests/DIR/BINARY --gtest_filter=Suite.Case.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${DFMPC_BUILD_DIR:-$root/build}
sanitize_dir=${DFMPC_SANITIZE_BUILD_DIR:-$root/build-sanitize}
tsan_dir=${DFMPC_TSAN_BUILD_DIR:-$root/build-tsan}

# The GoogleTest cases that passed and were skipped in the last ctest run of
# build tree $1 (ctest's entries are suites; this counts their cases).
report_cases() {
  local log=$1/Testing/Temporary/LastTest.log
  local passed skipped
  passed=$({ grep -ho '\[  PASSED  \] [0-9]* test' "$log" || true; } | awk '{s += $4} END {print s + 0}')
  skipped=$({ grep -ho '\[  SKIPPED \] [0-9]* test' "$log" || true; } |
            awk '{s += $4} END {print s + 0}')
  echo "test: $passed GoogleTest cases passed, $skipped skipped"
}

run_ctest() {  # build tree, then ctest arguments
  local dir=$1
  shift
  local start=$SECONDS
  (cd "$dir" && ctest --output-on-failure -j"$(nproc)" "$@")
  report_cases "$dir"
  echo "test: ctest took $((SECONDS - start)) s"
}

bash "$root/scripts/build.sh"
echo "test: Release build ($build_dir)"
run_ctest "$build_dir" "$@"

if [ "${DFMPC_SANITIZE_TESTS:-1}" != 0 ]; then
  DFMPC_BUILD_DIR=$sanitize_dir DFMPC_BUILD_TYPE=Debug \
    DFMPC_CMAKE_ARGS="-DDFMPC_SANITIZE=address,undefined -DDFMPC_BUILD_TOOL=OFF -DCMAKE_CXX_FLAGS_DEBUG=-g1\ -O1" \
    bash "$root/scripts/build.sh"
  echo "test: Debug build with AddressSanitizer and UndefinedBehaviorSanitizer ($sanitize_dir)"
  # Leak checking stays on (suppressed only for a leak inside HDF5 itself,
  # tests/sanitizer/lsan_suppressions.txt); UBSan findings abort the test
  # with a stack trace.
  # intercept_tls_get_addr=0: LSan's tracking of dynamic TLS blocks reads a
  # garbage block left by the dlopen'ed Mesa driver of the rendering tests,
  # and its stop-the-world tracer dies at exit ("Tracer caught signal 11",
  # google/sanitizers#1353 and kin). Leak checking stays on; pointers held
  # only in dynamic TLS are not scanned.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:intercept_tls_get_addr=0}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/sanitizer/lsan_suppressions.txt}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  run_ctest "$sanitize_dir" "$@"
fi

if [ "${DFMPC_TSAN_TESTS:-1}" != 0 ]; then
  # Only the libraries and the one test binary: the rest has no threads of
  # its own. LibTorch is not instrumented; its intra-op threads stay at one
  # (the tests' OMP_NUM_THREADS), so every thread TSan cannot see is idle.
  DFMPC_BUILD_DIR=$tsan_dir DFMPC_BUILD_TYPE=Debug DFMPC_BUILD_TARGETS=async_planner_test \
    DFMPC_CMAKE_ARGS="-DDFMPC_SANITIZE=thread -DCMAKE_CXX_FLAGS_DEBUG=-g1\ -O1" \
    bash "$root/scripts/build.sh"
  echo "test: the AsyncPlanner under ThreadSanitizer ($tsan_dir)"
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
  run_ctest "$tsan_dir" -L '^async_planner_test$'
fi
