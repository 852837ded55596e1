#!/usr/bin/env bash
# Command-line behaviour of the engine binary: exit codes, messages, run files.
#   cli_test.sh ENGINE CASE     (CTest runs one CASE per test; see tests/CMakeLists.txt)
set -u
ENGINE=$1
CASE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/fixtures
REPO=$(cd "$HERE/../.." && pwd)
WORK=${ENGINE_TEST_TMP:-/tmp}/cli-$CASE
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1

fail() { echo "FAIL [$CASE]: $*"; exit 1; }

# expect RC PATTERN... -- COMMAND...: runs COMMAND, checks its exit code and that its output
# (stdout and stderr) contains every PATTERN (fixed strings).
expect() {
  local rc=$1; shift
  local patterns=()
  while [ "$1" != "--" ]; do patterns+=("$1"); shift; done
  shift
  local out got
  out=$("$@" 2>&1); got=$?
  [ "$got" = "$rc" ] || fail "exit code $got, expected $rc, from: $*
$out"
  for p in "${patterns[@]}"; do
    printf '%s' "$out" | grep -qF -- "$p" || fail "output lacks '$p', from: $*
$out"
  done
  case "$out" in *"C++ exception"*|*"Segmentation"*|*"terminate called"*) fail "crash-like output: $out";; esac
}

tiny() { "$ENGINE" run "$FIX/make_tiny_mnist.lua" "$WORK/tiny" >/dev/null || fail "cannot make the tiny dataset"; }

# The metric series of a run file, as text, for comparing runs.
series() { h5dump -d /metrics/train/loss -d /metrics/validation/accuracy -d /metrics/train/step "$1" | grep -v '^HDF5 '; }

case "$CASE" in
  help)
    expect 0 "train SCRIPT.lua" "run FILE.lua" "info" -- "$ENGINE" --help
    expect 0 "--set" "--threads" "--device" "--seed" "--out" -- "$ENGINE" train --help
    expect 0 "libtorch 1.13" "LuaJIT" "HDF5" "threads" "BLAS" "devices  cpu" -- "$ENGINE" info
    expect 2 "unknown command 'frob'" -- "$ENGINE" frob
    expect 2 "bogus" -- "$ENGINE" train --bogus x.lua
    ;;
  missing_script)
    expect 2 "script not found: nowhere.lua" -- "$ENGINE" train nowhere.lua
    expect 2 "script not found" -- "$ENGINE" run nowhere.lua
    ;;
  syntax_error)
    expect 3 "syntax_error.lua:4:" -- "$ENGINE" train "$FIX/syntax_error.lua"
    ;;
  forward_error)
    tiny
    expect 3 "broken_forward.lua:6:" "Tensor or number expected" "stack traceback" -- \
      "$ENGINE" train "$FIX/broken_forward.lua" --set root="$WORK/tiny" --out "$WORK/runs"
    ;;
  shape_mismatch)
    tiny
    expect 3 "layer '3' Linear(in_features=32, out_features=10" "[16, 64]" "16x64 and 32x10" -- \
      "$ENGINE" train "$FIX/shape_mismatch.lua" --set root="$WORK/tiny" --out "$WORK/runs"
    ;;
  models)
    expect 0 "mnist_cnn" "1x28x28" "1,199,882" "modules/mnist_cnn.lua" "mlp" "269,322" -- \
      "$ENGINE" models mnist_cnn mlp
    expect 2 "unknown model 'resnet9000'" "alexnet, alexnet_owt" -- "$ENGINE" models resnet9000
    ;;
  unknown_set)
    expect 2 "unknown hyperparameter 'learning_rate'" "batch_size, epochs, lr, model, root" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set learning_rate=1
    expect 2 "'epochs' is a number" -- "$ENGINE" train "$FIX/tiny_train.lua" --set epochs=many
    expect 2 "expected key=value" -- "$ENGINE" train "$FIX/tiny_train.lua" --set epochs
    ;;
  bad_idx)
    tiny
    cp -r tiny truncated && head -c 5000 tiny/train-images-idx3-ubyte > truncated/train-images-idx3-ubyte
    expect 4 "truncated/train-images-idx3-ubyte: truncated IDX file" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/truncated" --out "$WORK/runs"
    cp -r tiny magic && printf 'PK' | dd of=magic/train-labels-idx1-ubyte bs=1 conv=notrunc 2>/dev/null
    expect 4 "magic/train-labels-idx1-ubyte: not an IDX file (wrong magic number" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/magic" --out "$WORK/runs"
    cp -r tiny count && cp tiny/t10k-labels-idx1-ubyte count/train-labels-idx1-ubyte
    expect 4 "count/train-labels-idx1-ubyte: holds 50 labels" "holds 200 images" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/count" --out "$WORK/runs"
    [ ! -d "$WORK/runs" ] || [ -z "$(ls -A "$WORK/runs")" ] || fail "a run file was left for a script that never started"
    ;;
  mnist_missing)
    mkdir -p home && ln -s "$REPO/modules" home/modules
    ENGINE_HOME="$WORK/home" ENGINE_DATASETS= expect 4 "dataset 'mnist' not found; looked in:" \
      "$WORK/home/datasets/mnist" "/usr/share/datasets/mnist" "datasets/fetch mnist" -- \
      "$ENGINE" train "$REPO/scripts/mnist.lua"
    ;;
  train_tiny)
    tiny
    expect 0 "epoch 2 done" "validation accuracy" "run file: $WORK/runs/tiny/" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/runs" --threads 1
    file=$(ls "$WORK"/runs/tiny/*.h5 | head -1)
    h5dump -a /status "$file" | grep -q '"completed"' || fail "status is not completed"
    h5dump -a /hparams/lr "$file" | grep -q '0.05' || fail "hparams not recorded"
    h5dump -d /script "$file" | grep -qF "optim.SGD(params" || fail "script text not recorded"
    acc=$(h5dump -y -d /metrics/validation/accuracy "$file" | sed -n '/DATA {/,/}/p' | grep -oE '[0-9][0-9.e+-]*' | tail -1)
    awk -v a="$acc" 'BEGIN { exit !(a >= 0.9) }' || fail "tiny model did not learn (validation accuracy $acc)"
    ;;
  deterministic)
    tiny
    for i in 1 2; do
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/runs$i" --threads 2 -q >/dev/null ||
        fail "run $i failed"
    done
    a=$(series "$WORK"/runs1/tiny/*.h5); b=$(series "$WORK"/runs2/tiny/*.h5)
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "two runs with the same seed differ"
    "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/runs3" --seed 99 -q >/dev/null
    c=$(series "$WORK"/runs3/tiny/*.h5)
    [ "$a" != "$c" ] || fail "a different seed gave the same series"
    ;;
  fashion_mnist_smoke)
    [ -d /usr/share/datasets/fashion-mnist ] || fail "Debian's dataset-fashion-mnist is not installed"
    expect 0 "epoch 1 done" "validation accuracy" "run file:" -- \
      "$ENGINE" train "$REPO/scripts/fashion_mnist.lua" --set max_steps=40 --out "$WORK/runs"
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "ok [$CASE]"
