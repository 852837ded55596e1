#!/usr/bin/env bash
# Runs the three tensor_add variants back to back, ROUNDS times, and prints the median ns per
# call of each and the median over rounds of the ratio (Lua - C++) / (Python - C++). The ratio
# is taken within each round because this machine's speed drifts between rounds by up to 2x.
# Run from the repo root after a build:
#   scripts/perf/tensor_add.sh [ROUNDS] [CALLS]
set -euo pipefail
rounds=${1:-21}
calls=${2:-300000}
bin=${BUILD_DIR:-build}/bin
# the micro-benchmarks are outside the default build
[ -x "$bin/perf_tensor_add" ] || cmake --build "${BUILD_DIR:-build}" -j2 --target perf_tensor_add
ns() { grep -oE '"ns_per_call": [0-9.]+' | grep -oE '[0-9.]+$'; }
declare -a cpp lua py ratio
for ((r = 0; r < rounds; r++)); do
  c=$("$bin/perf_tensor_add" "$calls" | ns)
  l=$("$bin/engine" run --threads 1 scripts/perf/tensor_add.lua "$calls" | ns)
  p=$(/usr/bin/python3 scripts/perf/tensor_add.py "$calls" | ns)
  cpp+=("$c"); lua+=("$l"); py+=("$p")
  ratio+=("$(awk -v c="$c" -v l="$l" -v p="$p" 'BEGIN { printf "%.2f", (l - c) / (p - c) }')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "C++    median $(median "${cpp[@]}") ns  (${cpp[*]})"
echo "Lua    median $(median "${lua[@]}") ns  (${lua[*]})"
echo "Python median $(median "${py[@]}") ns  (${py[*]})"
echo "(Lua - C++) / (Python - C++) per round: ${ratio[*]}"
echo "median ratio $(median "${ratio[@]}") (target <= 0.33)"
