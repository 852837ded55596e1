#!/usr/bin/env bash
# The mlp training step three ways, alternating, ROUNDS times per batch size: the C++ loop of
# ../shared/bench/cpp_loop, the engine with the built-in mlp, and the engine with the same mlp
# written as a Lua module. Prints the median p50 of each and the ratios to the C++ loop.
# Run from the repo root after a build:
#   scripts/perf/mlp_step.sh [ROUNDS]
set -euo pipefail
rounds=${1:-5}
bench=${SHARED_BENCH:-../shared/bench}
cpp=${CPP_LOOP:-/tmp/cpp_loop/cpp_loop}
if [ ! -x "$cpp" ]; then
  cmake -S "$bench/cpp_loop" -B "$(dirname "$cpp")" >/dev/null && cmake --build "$(dirname "$cpp")" >/dev/null
fi
p50() { grep -oE "\"impl\": \"$1\".*\"p50_ms\": [0-9.]+" | grep -oE '[0-9.]+$'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for batch in 16 64; do
  c=(); b=(); l=()
  for ((r = 0; r < rounds; r++)); do
    c+=("$("$cpp" --model mlp --batch_size "$batch" --threads 2 --num_batches 500 --num_warmup_batches 50 | p50 libtorch-cpp)")
    out=$(build/bin/engine run --threads 2 scripts/perf/mlp_step.lua "$batch" 500)
    b+=("$(printf '%s' "$out" | p50 engine-builtin)")
    l+=("$(printf '%s' "$out" | p50 engine-lua_module)")
  done
  mc=$(median "${c[@]}"); mb=$(median "${b[@]}"); ml=$(median "${l[@]}")
  awk -v n="$batch" -v c="$mc" -v b="$mb" -v l="$ml" 'BEGIN {
    printf "batch %d: C++ %.4f ms, built-in %.4f ms (%.3f x C++), Lua module %.4f ms (%.3f x C++)\n",
      n, c, b, b / c, l, l / c }'
  echo "  C++ ${c[*]} | built-in ${b[*]} | Lua ${l[*]}"
done
