#!/usr/bin/env bash
# The allocator choice (docs/performance.md, "Memory"): the engine's mnist_cnn and mlp training
# steps (engine bench) and a fashion_mnist run of STEPS steps under each allocator, alternating,
# ROUNDS times: the engine's default (caching), --allocator system (glibc's and libtorch's
# defaults), and system with jemalloc or tcmalloc preloaded (Debian's libjemalloc2,
# libtcmalloc-minimal4). Prints p50 step times, page faults, kernel time and peak memory.
#   scripts/perf/allocators.sh [ROUNDS] [STEPS]
set -euo pipefail
rounds=${1:-3}
steps=${2:-300}
engine=${BUILD_DIR:-build}/bin/engine
lib=/usr/lib/x86_64-linux-gnu
declare -A preload=([caching]="" [system]="" [jemalloc]="$lib/libjemalloc.so.2"
                    [tcmalloc]="$lib/libtcmalloc_minimal.so.4")
for name in jemalloc tcmalloc; do
  [ -e "${preload[$name]}" ] || { echo "missing ${preload[$name]} (apt-get install libjemalloc2 libtcmalloc-minimal4)"; exit 2; }
done
measure() {  # allocator, then the command; prints "p50_or_seconds faults sys_seconds peak_MiB"
  local name=$1; shift
  local flag=caching; [ "$name" = caching ] || flag=system
  local out
  out=$( { LD_PRELOAD="${preload[$name]}" /usr/bin/time -f 'TIME %e %S %M' \
           perf stat -x, -e page-faults "$@" --allocator "$flag"; } 2>&1 )
  local p50 faults
  p50=$(grep -oE '"p50_ms": [0-9.]+' <<<"$out" | grep -oE '[0-9.]+$' || true)
  faults=$(grep -E ',page-faults' <<<"$out" | cut -d, -f1)
  read -r _ wall sys peak < <(grep '^TIME' <<<"$out")
  printf '%s %s %s %.0f\n' "${p50:-$wall}" "$faults" "$sys" "$(bc -l <<<"$peak / 1024")"
}
for ((r = 1; r <= rounds; r++)); do
  for name in caching system jemalloc tcmalloc; do
    for model in mnist_cnn mlp; do
      echo "round $r $name $model-step $(measure "$name" "$engine" bench --model "$model" \
        --batch_size 64 --num_batches 100 --num_warmup_batches 10 --threads 2 --json)"
    done
    echo "round $r $name fashion_mnist-${steps}-steps $(measure "$name" "$engine" train \
      scripts/fashion_mnist.lua --set max_steps="$steps" --threads 2 --out /tmp/engine-allocators -q)"
  done
done
