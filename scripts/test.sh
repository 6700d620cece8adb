#!/usr/bin/env bash
# Runs every test layer: Catch2, lit/FileCheck and the layering test (all through bazel test),
# then pytest, then the wheels (scripts/build-wheels.sh) installed into a fresh environment,
# then every testdata program against paddle/torch eager in the reference
# environment (scripts/reference-env.sh: paddle, torch, torchvision); with --full also every
# library model (not only those under 4.5M parameters) and the runtime's tests under
# AddressSanitizer and UBSan (--config=asan) and its concurrency tests under ThreadSanitizer
# (--config=tsan). Installs what is missing first. Ends with one line "N passed, N failed"
# over all layers; exits non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")/.."
# --full also runs the slow layers of the Python suites (every library model, not only the
# small ones): tests/framework/test_library_models.py reads SOTC_TEST_FULL.
# The model suites' sample (tests/framework/test_model_suites.py): one model a suite in CI, ten
# with --full; `python bench/suites.py` sweeps the whole libraries (hours).
if [ "${1:-}" = "--full" ]; then export SOTC_TEST_FULL=1 SOTC_SUITE_SAMPLE=10; fi
bash scripts/setup.sh || exit 1
mkdir -p build
log=build/test-bazel.log

echo "== bazel build //..."
if ! bazel build //... >"$log" 2>&1; then
  tail -40 "$log"
  echo "0 passed, 1 failed"
  exit 1
fi

passed=0
failed=0
count() { passed=$((passed + $1)); failed=$((failed + $2)); }

echo "== bazel test //... (Catch2, lit/FileCheck, layering)"
bazel test //... >>"$log" 2>&1
bazel_status=$?
catch_pass=0; catch_fail=0; other_pass=0; other_fail=0
# Only the logs of today's test targets (a removed target's old log may linger).
for label in $(bazel query 'tests(//...)' 2>>"$log" | sort); do
  f="bazel-testlogs/$(echo "${label#//}" | tr ':' '/')/test.log"
  # Catch2 v2 closes with "All tests passed (A assertions in N test cases)" or
  # "test cases: N | P passed | F failed"; a lit file or the layering test counts as one.
  line=$(grep -E "^All tests passed|^test cases:" "$f" 2>/dev/null | tail -1)
  if [[ "$line" =~ in\ ([0-9]+)\ test\ case ]]; then
    catch_pass=$((catch_pass + BASH_REMATCH[1]))
  elif [[ "$line" =~ ([0-9]+)\ passed\ \|\ ([0-9]+)\ failed ]]; then
    catch_pass=$((catch_pass + BASH_REMATCH[1])); catch_fail=$((catch_fail + BASH_REMATCH[2]))
  elif grep -q 'failures="0" errors="0"' "${f%test.log}test.xml" 2>/dev/null; then
    other_pass=$((other_pass + 1))
  else
    other_fail=$((other_fail + 1)); echo "FAILED: $label ($f)"
  fi
done
if [ $bazel_status -ne 0 ] && [ $((catch_fail + other_fail)) -eq 0 ]; then catch_fail=1; fi
[ $catch_fail -eq 0 ] || grep -E "FAILED|failed" "$log" | tail -20
echo "Catch2: $catch_pass passed, $catch_fail failed"
echo "lit and layering: $other_pass passed, $other_fail failed"
count $catch_pass $catch_fail
count $other_pass $other_fail

# pytest LABEL PYTHON DIR [ARGS...]: runs one pytest suite and counts its summary line.
run_pytest() {
  local out status pass fail
  out=$("$2" -m pytest -q -p no:cacheprovider -W ignore::UserWarning "$3" "${@:4}" 2>&1)
  status=$?
  echo "$out" | tail -15
  pass=$(echo "$out" | tail -1 | sed -nE 's/.* ([0-9]+) passed.*/\1/p; s/^([0-9]+) passed.*/\1/p' | head -1)
  fail=$(echo "$out" | tail -1 | sed -nE 's/.* ([0-9]+) failed.*/\1/p; s/^([0-9]+) failed.*/\1/p' | head -1)
  pass=${pass:-0}; fail=${fail:-0}
  if [ $status -ne 0 ] && [ "$fail" -eq 0 ]; then fail=1; fi
  echo "$1: $pass passed, $fail failed"
  count "$pass" "$fail"
}

echo "== pytest"
run_pytest pytest python3 tools/python/tests
# The tracer and the binding under the other supported CPythons (pyenv's, set up by setup.sh).
for version in 3.12 3.13; do
  echo "== pytest under CPython $version"
  if py=$(bash scripts/find-python.sh "$version"); then
    run_pytest "pytest (CPython $version)" "$py" tools/python/tests
  else
    echo "pytest (CPython $version): no interpreter found (pyenv install $version)"; count 0 1
  fi
done

echo "== the wheels, installed with pip into a fresh environment (tests/wheels)"
run_pytest wheels python3 tests/wheels -s

echo "== every testdata program vs paddle/torch eager (tests/framework)"
if reference_python=$(bash scripts/reference-env.sh); then
  # Its files on both cores (a file's tests on one worker: module fixtures computed once).
  run_pytest "vs framework" "$reference_python" tests/framework -n 2 --dist loadfile
else
  echo "vs framework: the reference environment did not install"; count 0 1
fi

if [ "${1:-}" = "--full" ]; then
  # sanitized CONFIG TARGETS...: runs them under bazel's --config=CONFIG and counts each that
  # passes with no sanitizer report in its log.
  sanitized() {
    local config=$1 pass=0 fail=0 label f
    shift
    bazel test --config="$config" "$@" >>"$log" 2>&1
    for label in "$@"; do
      f="bazel-testlogs/$(echo "${label#//}" | tr ':' '/')/test"
      if grep -q 'failures="0" errors="0"' "$f.xml" 2>/dev/null &&
          ! grep -qE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer" "$f.log"; then
        pass=$((pass + 1))
      else
        fail=$((fail + 1)); echo "FAILED under $config: $label"
      fi
    done
    echo "$config: $pass passed, $fail failed"
    count $pass $fail
  }
  echo "== bazel test --config=asan (the runtime under AddressSanitizer and UBSan)"
  sanitized asan $(bazel query 'tests(//runtime/... + //tests/runtime/...)' 2>>"$log" | sort)
  echo "== bazel test --config=asan_openmp (the GEMM tests on oneDNN's OpenMP threads, no leak check)"
  sanitized asan_openmp //runtime:gemm_test //tests/runtime:concurrency_test //tests/runtime:runtime_test
  echo "== bazel test --config=tsan (one artifact called from many threads, the emulator's blocks on host threads, under ThreadSanitizer)"
  sanitized tsan //tests/runtime:concurrency_test //runtime:thread_pool_test //runtime:emulator_test
  # The sanitizer builds share bazel-bin with the plain one: put the plain one back.
  bazel build //... >>"$log" 2>&1
fi

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
