#!/usr/bin/env bash
# In-memory loader speed: one shuffled, normalised epoch of Fashion-MNIST in batches of 64, the
# engine against PyTorch's DataLoader over a TensorDataset of the same tensors. Alternates the
# two ROUNDS times and prints each round's epoch times and PyTorch/engine ratio, then the median
# ratio (ratios within a round only: this machine's speed drifts between rounds).
# Run from the repo root after a build:
#   scripts/perf/mnist_loader.sh [ROUNDS] [BATCH]
set -euo pipefail
rounds=${1:-5}
batch=${2:-64}
bin=${BUILD_DIR:-build}/bin
secs() { grep -oE '"epoch_seconds": [0-9.e-]+' | grep -oE '[0-9.e-]+$'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
ratios=()
for ((r = 0; r < rounds; r++)); do
  e=$("$bin/engine" run scripts/perf/mnist_loader.lua "$batch" | secs)
  p=$(/usr/bin/python3 scripts/perf/mnist_loader.py "$batch" | secs)
  ratio=$(awk -v e="$e" -v p="$p" 'BEGIN { printf "%.1f", p / e }')
  ratios+=("$ratio")
  echo "round $((r + 1)): engine $e s/epoch, PyTorch $p s/epoch, PyTorch/engine $ratio"
done
echo "median PyTorch/engine $(median "${ratios[@]}") (target >= 3)"
