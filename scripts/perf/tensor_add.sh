#!/usr/bin/env bash
# Runs the three tensor_add variants in turn, ROUNDS times, and prints the median ns per call
# of each and the ratio (Lua - C++) / (Python - C++). Run from the repo root after a build.
#   scripts/perf/tensor_add.sh [ROUNDS] [CALLS]
set -euo pipefail
rounds=${1:-7}
calls=${2:-1000000}
bin=${BUILD_DIR:-build}/bin
declare -a cpp lua py
for ((r = 0; r < rounds; r++)); do
  cpp+=("$("$bin/perf_tensor_add" "$calls" | grep -oE '"ns_per_call": [0-9.]+' | grep -oE '[0-9.]+$')")
  lua+=("$("$bin/engine" run --threads 1 scripts/perf/tensor_add.lua "$calls" | grep -oE '"ns_per_call": [0-9.]+' | grep -oE '[0-9.]+$')")
  py+=("$(/usr/bin/python3 scripts/perf/tensor_add.py "$calls" | grep -oE '"ns_per_call": [0-9.]+' | grep -oE '[0-9.]+$')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
c=$(median "${cpp[@]}"); l=$(median "${lua[@]}"); p=$(median "${py[@]}")
echo "C++    ${cpp[*]} -> median $c ns"
echo "Lua    ${lua[*]} -> median $l ns"
echo "Python ${py[*]} -> median $p ns"
awk -v c="$c" -v l="$l" -v p="$p" 'BEGIN { printf "Lua adds %.0f ns, Python adds %.0f ns: ratio %.2f (target <= 0.33)\n", l - c, p - c, (l - c) / (p - c) }'
