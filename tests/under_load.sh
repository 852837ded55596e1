#!/usr/bin/env bash
# The whole suite on a loaded machine: stress-ng keeps every core busy (one CPU hog per core)
# while README's test command runs the suite, ROUNDS times in a row; every round must pass.
# It shows that no test depends on the machine's speed (docs/architecture.md, "Tests").
#   tests/under_load.sh [BUILD_DIR] [ROUNDS]     (Debian: apt-get install stress-ng)
set -u
build=${1:-build}
rounds=${2:-2}
command -v stress-ng >/dev/null ||
  { echo "under_load: stress-ng is not installed (Debian: apt-get install stress-ng)" >&2; exit 2; }
[ -f "$build/CTestTestfile.cmake" ] || { echo "under_load: no built suite in $build" >&2; exit 2; }
stress-ng --cpu "$(nproc)" --quiet &
load=$!
trap 'kill $load 2>/dev/null; wait $load 2>/dev/null' EXIT
failed=0
for round in $(seq "$rounds"); do
  start=$SECONDS
  if ctest --test-dir "$build" --output-on-failure -j2 >"$build/under-load-$round.log" 2>&1; then
    echo "round $round: passed in $((SECONDS - start)) s under load ($build/under-load-$round.log)"
  else
    echo "round $round: FAILED after $((SECONDS - start)) s ($build/under-load-$round.log):"
    grep -E '\*\*\*Failed|\(Failed\)|\(Timeout\)' "$build/under-load-$round.log"
    failed=$((failed + 1))
  fi
done
exit $((failed > 0))
