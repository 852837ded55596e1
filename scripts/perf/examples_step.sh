#!/usr/bin/env bash
# The training step of each ported pytorch/examples program: engine bench of the script in
# scripts/examples/ beside the original's own step in PyTorch (scripts/perf/examples_step.py),
# one after the other, both with 2 threads, on the sizes below. A benchmark, run by hand:
#   scripts/perf/examples_step.sh EXAMPLES_DIR [BUILD_DIR]
# EXAMPLES_DIR: a copy of pytorch/examples. Prints a Markdown table: each step's mean time and
# the engine's over PyTorch's (below 1: the engine is faster). Data: Fashion-MNIST from Debian's
# dataset-fashion-mnist for the MNIST programs, a random corpus of 10000 words for the language
# models (its words drawn by Python's generator, seed 0), random photographs for
# super_resolution, the same sine waves on both sides for time_sequence_prediction (the number of
# LBFGS evaluations in a step depends on them).
set -eu
EXAMPLES=$1
BUILD=${2:-build}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ENGINE=$BUILD/bin/engine
MNIST=/usr/share/datasets/fashion-mnist
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

/usr/bin/python3 - "$WORK/corpus" <<'PY'
import os, random, sys
rng = random.Random(0)
os.makedirs(sys.argv[1])
words = [f'w{i}' for i in range(9999)]
for split, lines in (('train', 4000), ('valid', 100), ('test', 100)):
    with open(os.path.join(sys.argv[1], split + '.txt'), 'w') as f:
        if split == 'train':
            f.write(' '.join(words) + '\n')  # every word once: 9999 words and <eos>
        for _ in range(lines):
            f.write(' '.join(rng.choice(words) for _ in range(12)) + '\n')
PY

WARMUP=5
# the waves of time_sequence_prediction, the same for both: 97 of 200 values
/usr/bin/python3 - "$WORK/waves.h5" <<'PY'
import sys, h5py, numpy as np
x = np.sin(np.arange(100 * 200, dtype=np.float64).reshape(100, 200) / 20.0 + np.arange(100)[:, None])
with h5py.File(sys.argv[1], 'w') as f:
    f['input'], f['target'] = x[3:, :-1], x[3:, 1:]
    f['test_input'], f['test_target'] = x[:3, :-1], x[:3, 1:]
PY

# photographs for super_resolution: 16 of 264 x 270 in train/ and test/
/usr/bin/python3 - "$WORK/photos" <<'PY'
import os, sys, numpy as np
from PIL import Image
rng = np.random.default_rng(0)
for split in ('train', 'test'):
    os.makedirs(os.path.join(sys.argv[1], split))
    for i in range(16):
        pixels = rng.integers(0, 256, size=(264, 270, 3), dtype=np.uint8)
        Image.fromarray(pixels, 'RGB').save(os.path.join(sys.argv[1], split, f'{i:02d}.png'))
PY

engine_ms() {  # SCRIPT BATCHES ARGS...: the mean of engine bench's timed steps
  local script=$1 batches=$2; shift 2
  "$ENGINE" bench "$REPO/scripts/examples/$script.lua" --threads 2 --num_batches "$batches" \
    --num_warmup_batches "$WARMUP" "$@" 2>&1 | grep -oE 'mean [0-9.]+ ms' | head -1 |
    grep -oE '[0-9.]+'
}
torch_ms() {  # NAME STEPS KEY=VALUE...: the mean of PyTorch's timed steps
  local name=$1 steps=$2; shift 2
  /usr/bin/python3 -W ignore "$REPO/scripts/perf/examples_step.py" "$EXAMPLES" "$name" \
    threads=2 warmup="$WARMUP" steps="$steps" "$@" | awk '{print $2}'
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# LABEL ENGINE_ARGS TORCH_ARGS: ROUNDS rounds of the engine's step then PyTorch's (this host's
# speed drifts by minutes: the two sides alternate), the median of each side's means
ROUNDS=${ROUNDS:-3}
row() {
  local label=$1 e=() t=() i
  read -r -a engine_args <<< "$2"
  read -r -a torch_args <<< "$3"
  for ((i = 0; i < ROUNDS; i++)); do
    e+=("$(engine_ms "${engine_args[@]}")")
    t+=("$(torch_ms "${torch_args[@]}")")
  done
  awk -v l="$label" -v e="$(median "${e[@]}")" -v t="$(median "${t[@]}")" -v n="$ROUNDS" \
    'BEGIN { printf "| %s | %.2f | %.2f | %.2f |\n", l, e, t, e / t }'
}

echo "| step | engine ms | PyTorch ms | engine / PyTorch |"
echo "|---|---|---|---|"
for model in LSTM Transformer; do
  row "word_language_model $model (batch 20 x 35 words, 10000-word vocabulary)" \
    "word_language_model 30 --set data=$WORK/corpus --set model=$model" \
    "word_language_model 30 model=$model ntokens=10000 batch_size=20 bptt=35"
done
row "vae (batch 128)" "vae 50 --set data=$MNIST" "vae 50 batch_size=128"
row "mnist_rnn (batch 64)" "mnist_rnn 50 --set data=$MNIST" "mnist_rnn 50 batch_size=64"
row "mnist_forward_forward (first layer, 5000 digits)" \
  "mnist_forward_forward 20 --set data=$MNIST --set train_size=5000" \
  "mnist_forward_forward 20 train_size=5000"
row "dcgan (batch 16, 64 x 64)" "dcgan 10 --set batch_size=16 --set fake_images=16" \
  "dcgan 10 batch_size=16 nz=100 ngf=64 ndf=64"
row "super_resolution (factor 3, batch 16 of 85 x 85)" \
  "super_resolution 10 --set data=$WORK/photos --set batch_size=16" \
  "super_resolution 10 upscale_factor=3 batch_size=16"
WARMUP=1 row "time_sequence_prediction (one LBFGS step, 97 waves of 199 values)" \
  "time_sequence_prediction 2 --set data=$WORK/waves.h5" \
  "time_sequence_prediction 2 data=$WORK/waves.h5"
