#!/usr/bin/env bash
# Data-parallel scaling of the engine against torchrun + DistributedDataParallel (Debian's
# python3-torch, the same libtorch, Gloo) on this machine: 1, 2 and 4 processes of one thread
# each, 32 samples per process (weak scaling: the global batch grows with the processes), the
# same model and optimizer (scripts/perf/dist_step.lua, scripts/perf/ddp_step.py). One process
# runs on one core (taskset -c 0), the core each of N ranks has: unpinned, the engine's one
# process would also use a second core for its data loading and start 1.3x higher. DDP runs
# twice: as users start it (glibc's malloc as it comes, whose step time changes by 2-3x
# from run to run with where its heap top lies, docs/performance.md) and with the heap kept
# (MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_, what the engine sets with mallopt), whose
# one-process figure is steady enough for an efficiency to mean something. Each of ROUNDS
# rounds runs the engine at every size, then each DDP at every size; prints the medians of the
# world's samples per second and of each program's scaling efficiency, throughput(N) /
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
ddp_run() {  # N [kept]: samples/s of torchrun + DDP on N processes of one thread
  local heap=env
  [ "${2:-}" = kept ] && heap="env MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=2147483647"
  $heap OMP_NUM_THREADS=1 $(pin "$1") "$python" -m torch.distributed.run --standalone --nproc_per_node "$1" \
    --redirects 1 --tee 1 --log_dir "$out/torchrun" scripts/perf/ddp_step.py --model "$model" --batch $per_rank --steps "$steps" --threads 1 2>/dev/null |
    sed -nE 's/.*"samples_per_second": ([0-9.e+]+).*/\1/p'
}
programs="engine ddp ddp_kept"
declare -A label=([engine]="engine" [ddp]="torchrun + DDP" [ddp_kept]="DDP, heap kept")
one_run() {  # PROGRAM N
  case $1 in engine) engine_run "$2" ;; ddp) ddp_run "$2" ;; ddp_kept) ddp_run "$2" kept ;; esac
}
# a round's efficiencies are taken against its own one-process runs (the host's speed drifts by
# 5-25% within minutes), and the medians printed; keys are PROGRAM:N
declare -A sps eff
for ((r = 0; r < rounds; r++)); do
  for p in $programs; do
    # each program's sizes back to back, so that its efficiency compares runs seconds apart
    declare -A got=()
    for n in $sizes; do got[$n]=$(one_run "$p" "$n"); done
    for n in $sizes; do
      sps[$p:$n]+=" ${got[$n]}"
      eff[$p:$n]+=" $(awk -v a=${got[$n]} -v b=${got[1]} -v n=$n 'BEGIN { print a / (n * b) }')"
    done
  done
done
echo "$model, $per_rank samples per process, 1 thread each, $steps steps, median of $rounds rounds"
for n in $sizes; do
  echo "  $n process$([ $n = 1 ] || echo es):"
  for p in $programs; do
    awk -v name="${label[$p]}" -v s="$(median ${sps[$p:$n]})" -v ee="$(median ${eff[$p:$n]})" \
      -v e="$(median ${sps[engine:$n]})" -v runs="${sps[$p:$n]}" 'BEGIN {
      printf "    %-15s %6.0f samples/s, scaling efficiency %3.0f%%, engine / it %.2fx; runs:%s\n",
        name, s, 100 * ee, e / s, runs }'
  done
  [ "$n" = 1 ] && continue
  for p in ddp ddp_kept; do
    awk -v name="${label[$p]}" -v ee="${eff[engine:$n]}" -v de="${eff[$p:$n]}" 'BEGIN {
      k = split(ee, a, " "); split(de, b, " "); ahead = 0; line = ""
      for (i = 1; i <= k; i++) {
        line = line sprintf(" %.0f/%.0f", 100 * a[i], 100 * b[i]); if (a[i] >= b[i]) ahead++ }
      printf "    efficiency per round, engine / %s (%%):%s (engine at or above in %d of %d)\n",
        name, line, ahead, k }'
  done
done
