#!/usr/bin/env bash
# Data-parallel scaling of the engine against torchrun + DistributedDataParallel (Debian's
# python3-torch, the same libtorch, Gloo) on this machine: 1, 2 and 4 processes of one thread
# each, 32 samples per process (weak scaling: the global batch grows with the processes), the
# same model and optimizer (scripts/perf/dist_step.lua, scripts/perf/ddp_step.py). One process
# runs on one core (taskset -c 0), the core each of N ranks has: unpinned, the engine's one
# process would also use a second core for its data loading and start 1.3x higher. Each of
# ROUNDS rounds runs the engine at every size, then DDP at every size; prints the medians of
# the world's samples per second and of each program's scaling efficiency, throughput(N) /
# (N x throughput(1)), and every round's efficiencies. From the repo root after a build:
#   scripts/perf/ddp_scaling.sh [ROUNDS] [STEPS] [MODEL]   (SIZES="1 2" for fewer sizes)
set -euo pipefail
rounds=${1:-3}
steps=${2:-200}
model=${3:-mnist_cnn}
engine=${ENGINE:-build/bin/engine}
python=${PYTHON:-/usr/bin/python3}
per_rank=32
sizes=${SIZES:-1 2 4}
"$python" -c 'import torch.distributed.run' 2>/dev/null ||
  { echo "needs Debian's python3-torch (torchrun) at $python" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sps() { h5dump -y -d /metrics/data/samples_per_second "$1" | sed -n '/DATA {/,/}/p' | grep -oE '[0-9][0-9.e+]*' | tail -1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
pin() { if [ "$1" = 1 ]; then echo "taskset -c 0"; else echo env; fi; }
engine_run() {  # N: samples/s of the engine on N processes of one thread
  local dir=$out/engine$1
  rm -rf "$dir"
  $(pin "$1") "$engine" train scripts/perf/dist_step.lua --set model="$model" --set steps="$steps" \
    --set batch_size=$((per_rank * $1)) --nproc "$1" --threads "$1" --out "$dir" -q >/dev/null
  sps "$(ls "$dir"/dist_step/*.h5)"
}
# torchrun 1.13 on Python 3.11 fails with its default --redirects 0 / --tee 0 (Std.NONE is not
# among an IntFlag's members there); tee'ing stdout to its log folder works
ddp_run() {  # N: samples/s of torchrun + DDP on N processes of one thread
  OMP_NUM_THREADS=1 $(pin "$1") "$python" -m torch.distributed.run --standalone --nproc_per_node "$1" \
    --redirects 1 --tee 1 --log_dir "$out/torchrun" scripts/perf/ddp_step.py --model "$model" --batch $per_rank --steps "$steps" --threads 1 2>/dev/null |
    sed -nE 's/.*"samples_per_second": ([0-9.e+]+).*/\1/p'
}
# a round's efficiencies are taken against its own one-process runs (the host's speed drifts by 5-25% within minutes), and the medians printed
declare -A engine_sps ddp_sps engine_eff ddp_eff
for ((r = 0; r < rounds; r++)); do
  declare -A e=() d=()
  # each program's sizes back to back, so that its efficiency compares runs a few seconds apart
  for n in $sizes; do e[$n]=$(engine_run $n); done
  for n in $sizes; do d[$n]=$(ddp_run $n); done
  for n in $sizes; do
    engine_sps[$n]+=" ${e[$n]}"
    ddp_sps[$n]+=" ${d[$n]}"
  done
  for n in $sizes; do
    engine_eff[$n]+=" $(awk -v a=${e[$n]} -v b=${e[1]} -v n=$n 'BEGIN { print a / (n * b) }')"
    ddp_eff[$n]+=" $(awk -v a=${d[$n]} -v b=${d[1]} -v n=$n 'BEGIN { print a / (n * b) }')"
  done
done
echo "$model, $per_rank samples per process, 1 thread each, $steps steps, median of $rounds rounds"
for n in $sizes; do
  e=$(median ${engine_sps[$n]}); d=$(median ${ddp_sps[$n]})
  ee=$(median ${engine_eff[$n]}); de=$(median ${ddp_eff[$n]})
  awk -v n=$n -v e=$e -v d=$d -v ee=$ee -v de=$de -v er="${engine_sps[$n]}" -v dr="${ddp_sps[$n]}" 'BEGIN {
    printf "  %d process%s: engine %.0f samples/s (scaling efficiency %.0f%%), torchrun + DDP %.0f (%.0f%%), engine / DDP %.2fx\n",
      n, (n == 1 ? "" : "es"), e, 100 * ee, d, 100 * de, e / d
    printf "    runs: engine%s | DDP%s\n", er, dr }'
  [ "$n" = 1 ] && continue
  awk -v ee="${engine_eff[$n]}" -v de="${ddp_eff[$n]}" 'BEGIN {
    k = split(ee, a, " "); split(de, b, " "); ahead = 0; line = ""
    for (i = 1; i <= k; i++) {
      line = line sprintf(" %.0f/%.0f", 100 * a[i], 100 * b[i]); if (a[i] >= b[i]) ahead++ }
    printf "    efficiency per round, engine/DDP %%:%s (engine at or above DDP in %d of %d)\n", line, ahead, k }'
done
