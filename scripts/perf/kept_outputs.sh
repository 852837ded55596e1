#!/usr/bin/env bash
# The mlp forward pass at batch 64 in C++ keeping its last KEEP outputs alive (KEEP = 0, 200,
# 400, 800, 1500), alternating, ROUNDS times; prints each KEEP's p50 per round and the median
# over rounds of its ratio to KEEP = 0 in the same round. 1,500 outputs of 2.5 KiB are what a
# collection every 4 MiB left alive (docs/performance.md). MODE collect keeps them until KEEP
# have piled up and then drops them all, as a collector does (perf_kept_outputs).
#   scripts/perf/kept_outputs.sh [ROUNDS] [STEPS] [ring|collect]
set -euo pipefail
rounds=${1:-8}
steps=${2:-2000}
mode=${3:-ring}
bin=${BUILD_DIR:-build}/bin/perf_kept_outputs
# the micro-benchmarks are outside the default build
[ -x "$bin" ] || cmake --build "${BUILD_DIR:-build}" -j2 --target perf_kept_outputs
keeps=(0 200 400 800 1500)
declare -A ratios p50s
for ((r = 0; r < rounds; r++)); do
  base=
  for k in "${keeps[@]}"; do
    p=$("$bin" "$k" "$steps" "$mode" | grep -oE '"p50_ms": [0-9.]+' | grep -oE '[0-9.]+$')
    [ -n "$base" ] || base=$p
    p50s[$k]+="$p "
    ratios[$k]+="$(awk -v a="$p" -v b="$base" 'BEGIN { printf "%.3f", a / b }') "
  done
done
median() { printf '%s\n' $1 | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for k in "${keeps[@]}"; do
  printf 'keep %-5s p50 ms: %s  median ratio to keep 0: %s\n' "$k" "${p50s[$k]}" \
    "$(median "${ratios[$k]}")"
done
