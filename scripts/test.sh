#!/usr/bin/env bash
# Runs every test layer: Catch2 (bazel test), lit/FileCheck, pytest. Installs what is missing
# first. Ends with one line "N passed, N failed" over all layers; exits non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")/.."
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

echo "== Catch2 (bazel test)"
bazel test //... >>"$log" 2>&1
bazel_status=$?
catch_pass=0; catch_fail=0
# Only the logs of today's test targets (a removed target's old log may linger).
for label in $(bazel query 'tests(//...)' 2>>"$log" | sort); do
  f="bazel-testlogs/$(echo "${label#//}" | tr ':' '/')/test.log"
  # Catch2 v2 closes with "All tests passed (A assertions in N test cases)" or
  # "test cases: N | P passed | F failed".
  line=$(grep -E "^All tests passed|^test cases:" "$f" 2>/dev/null | tail -1)
  if [[ "$line" =~ in\ ([0-9]+)\ test\ case ]]; then
    catch_pass=$((catch_pass + BASH_REMATCH[1]))
  elif [[ "$line" =~ ([0-9]+)\ passed\ \|\ ([0-9]+)\ failed ]]; then
    catch_pass=$((catch_pass + BASH_REMATCH[1])); catch_fail=$((catch_fail + BASH_REMATCH[2]))
  else
    catch_fail=$((catch_fail + 1)); echo "no Catch2 summary in $f"
  fi
done
if [ $bazel_status -ne 0 ] && [ $catch_fail -eq 0 ]; then catch_fail=1; fi
[ $catch_fail -eq 0 ] || grep -E "FAILED|failed" "$log" | tail -20
echo "Catch2: $catch_pass passed, $catch_fail failed"
count $catch_pass $catch_fail

echo "== lit"
lit_dirs=$(find tools dialects compiler -type d -name test 2>/dev/null | sort)
lit_out=$(/usr/lib/llvm-22/bin/lit -s --no-progress-bar $lit_dirs 2>&1)
lit_status=$?
echo "$lit_out" | grep -vE "^\s*$" | tail -25
lit_pass=$(echo "$lit_out" | sed -nE 's/^ *Passed *: *([0-9]+).*/\1/p')
lit_fail=$(echo "$lit_out" | sed -nE 's/^ *Failed *: *([0-9]+).*/\1/p')
lit_pass=${lit_pass:-0}; lit_fail=${lit_fail:-0}
if [ $lit_status -ne 0 ] && [ "$lit_fail" -eq 0 ]; then lit_fail=1; fi
echo "lit: $lit_pass passed, $lit_fail failed"
count "$lit_pass" "$lit_fail"

echo "== pytest"
py_out=$(python3 -m pytest -q -p no:cacheprovider tools/python/tests 2>&1)
py_status=$?
echo "$py_out" | tail -15
py_pass=$(echo "$py_out" | tail -1 | sed -nE 's/.* ([0-9]+) passed.*/\1/p; s/^([0-9]+) passed.*/\1/p' | head -1)
py_fail=$(echo "$py_out" | tail -1 | sed -nE 's/.* ([0-9]+) failed.*/\1/p; s/^([0-9]+) failed.*/\1/p' | head -1)
py_pass=${py_pass:-0}; py_fail=${py_fail:-0}
if [ $py_status -ne 0 ] && [ "$py_fail" -eq 0 ]; then py_fail=1; fi
echo "pytest: $py_pass passed, $py_fail failed"
count "$py_pass" "$py_fail"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
