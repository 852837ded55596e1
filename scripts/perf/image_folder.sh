#!/usr/bin/env bash
# Image loader throughput, the engine against PyTorch's DataLoader + torchvision ImageFolder with
# the same transforms (RandomResizedCrop(224), horizontal flip, to float, normalize), batch 64,
# on a generated folder of 256x256 JPEGs. Alternates the two ROUNDS times per worker count and
# prints each round's images/s and engine/PyTorch ratio, then the median ratio (this machine's
# speed drifts between rounds, so only ratios within a round are compared).
# Run from the repo root after a build:
#   scripts/perf/image_folder.sh [ROUNDS] [FOLDER]
set -euo pipefail
rounds=${1:-5}
folder=${2:-/tmp/engine-image-folder}
bin=${BUILD_DIR:-build}/bin
[ -d "$folder" ] || /usr/bin/python3 scripts/perf/make_image_folder.py "$folder" 10 100 256
rate() { grep -oE '"images_per_second": [0-9.]+' | grep -oE '[0-9.]+$'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for workers in 1 2; do
  ratios=()
  for ((r = 0; r < rounds; r++)); do
    e=$("$bin/engine" run scripts/perf/image_folder.lua "$folder" "$workers" | rate)
    p=$(/usr/bin/python3 scripts/perf/image_folder.py "$folder" "$workers" | rate)
    ratio=$(awk -v e="$e" -v p="$p" 'BEGIN { printf "%.2f", e / p }')
    ratios+=("$ratio")
    echo "workers $workers round $((r + 1)): engine $e images/s, PyTorch $p images/s, ratio $ratio"
  done
  echo "workers $workers: median ratio $(median "${ratios[@]}") (target >= 2)"
done
