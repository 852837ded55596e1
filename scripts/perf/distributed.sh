#!/usr/bin/env bash
# Data parallelism on this machine: for mlp and mnist_cnn at a global batch of 64, training
# throughput of 1 process x 2 threads against 2 processes x 1 thread (--nproc 2, 32 samples
# each), and of 1 process x 1 thread at 32 (what one rank computes, with nothing to
# communicate); then the time of a bare all-reduce of each model's gradients (perf_allreduce,
# 2 processes). Alternates the three runs ROUNDS times and prints medians. From the repo root
# after a build:   scripts/perf/distributed.sh [ROUNDS] [STEPS]
set -euo pipefail
rounds=${1:-3}
steps=${2:-300}
engine=${ENGINE:-build/bin/engine}
allreduce=${PERF_ALLREDUCE:-build/bin/perf_allreduce}
# the micro-benchmarks are outside the default build
[ -x "$allreduce" ] || cmake --build build -j2 --target perf_allreduce
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sps() { h5dump -y -d /metrics/data/samples_per_second "$1" | sed -n '/DATA {/,/}/p' | grep -oE '[0-9][0-9.e+]*' | tail -1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
train() {  # name flags...: samples per second of one run
  local dir=$out/$1; shift
  rm -rf "$dir"
  "$engine" train scripts/perf/dist_step.lua --set steps="$steps" --out "$dir" -q "$@" >/dev/null
  sps "$(ls "$dir"/dist_step/*.h5)"
}
declare -A floats=([mlp]=269322 [mnist_cnn]=1199882)
for model in mlp mnist_cnn; do
  a=(); b=(); c=()
  for ((r = 0; r < rounds; r++)); do
    a+=("$(train one "--set" model=$model --set batch_size=64 --threads 2)")
    b+=("$(train two "--set" model=$model --set batch_size=64 --threads 2 --nproc 2)")
    c+=("$(train half "--set" model=$model --set batch_size=32 --threads 1)")
  done
  ma=$(median "${a[@]}"); mb=$(median "${b[@]}"); mc=$(median "${c[@]}")
  port=$((20000 + RANDOM % 20000))
  ar=$(for r in 0 1; do RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
         "$allreduce" "${floats[$model]}" 200 & done; wait)
  ar_ms=$(printf '%s' "$ar" | sed -nE 's/.*p50 ([0-9.]+) ms.*/\1/p' | head -1)
  awk -v m="$model" -v a="$ma" -v b="$mb" -v c="$mc" -v ar="$ar_ms" 'BEGIN {
    step1 = 64 / a * 1000; step2 = 64 / b * 1000; local = 32 / c * 1000
    exposed = step2 - local; hidden = ar - exposed
    printf "%s, global batch 64: 1 process x 2 threads %.0f samples/s (%.2f ms/step); 2 processes x 1 thread %.0f samples/s (%.2f ms/step, %.2fx); one rank alone (32 samples, 1 thread) %.2f ms/step\n", m, a, step1, b, step2, b / a, local
    printf "  all-reduce of the gradients alone: %.2f ms; time the distributed step adds over one rank alone: %.2f ms; hidden by overlap: %.2f ms (%.0f%%)\n", ar, exposed, hidden, (ar > 0 ? 100 * hidden / ar : 0) }'
  echo "  runs (samples/s): one ${a[*]} | two ${b[*]} | half ${c[*]}"
done
