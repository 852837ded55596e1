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

. "$HERE/helpers.sh"

case "$CASE" in
  help)
    expect 0 "train SCRIPT.lua" "run FILE.lua" "info" -- "$ENGINE" --help
    expect 0 "--set" "--threads" "--device" "--seed" "--out" -- "$ENGINE" train --help
    expect 0 "libtorch " "LuaJIT" "HDF5" "threads" "BLAS" "devices  cpu" -- "$ENGINE" info
    # the version of the libtorch it was built against (Debian's 1.13, or a 2.x)
    "$ENGINE" info | grep -qE '^libtorch +[0-9]+\.[0-9]+\.[0-9]+' || fail "no libtorch version in engine info"
    expect 2 "unknown command 'frob'" -- "$ENGINE" frob
    expect 2 "bogus" -- "$ENGINE" train --bogus x.lua
    # a misspelt flag: the nearest ones; a script's hyperparameter given as a flag: --set
    expect 2 "unknown flag --thread: did you mean --threads?" -- "$ENGINE" train x.lua --thread 2
    expect 2 "unknown flag --lr; a script's hyperparameter is set with --set lr=0.1" -- \
      "$ENGINE" train x.lua --lr 0.1
    expect 2 "unknown flag --num_batch: did you mean --num_batches" -- "$ENGINE" bench --model mlp --num_batch 3
    ;;
  missing_script)
    expect 2 "script not found: nowhere.lua" -- "$ENGINE" train nowhere.lua
    expect 2 "script not found" -- "$ENGINE" run nowhere.lua
    ;;
  syntax_error)
    expect 3 "syntax_error.lua:4:" -- "$ENGINE" train "$FIX/syntax_error.lua"
    # a mistyped require: the script's line first, then the folders searched (issue 59)
    printf "local nn = require 'nn'\nlocal net = require 'fmnett'\nreturn {}\n" > typo_require.lua
    expect 3 "typo_require.lua:2: module 'fmnett' not found: no fmnett.lua in " "/modules" -- \
      "$ENGINE" train typo_require.lua
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
    # a misspelt split would train without validation: an error with the script's line
    sed 's/      validation = data.mnist/      validaton = data.mnist/' "$FIX/tiny_train.lua" > typo.lua
    grep -q 'validaton =' typo.lua || fail "the fixture's data table changed"
    tiny
    expect 3 "typo.lua:13: unknown key 'validaton' in the table 'data' returns (accepted: train, validation, test)" -- \
      "$ENGINE" train typo.lua --set root="$WORK/tiny" --out "$WORK/typo"
    [ -e "$WORK/typo" ] && fail "a refused script created its output folder"
    # names that become paths: the run folder under --out, a metric's dataset
    sed "s/  name = 'tiny',/  name = '..\/escape',/" "$FIX/tiny_train.lua" > escape.lua
    grep -q "name = '../escape'" escape.lua || fail "the fixture's name line changed"
    expect 3 "escape.lua: the script's name '../escape' cannot name a file or an HDF5 dataset" -- \
      "$ENGINE" train escape.lua --set root="$WORK/tiny" --out "$WORK/inside/runs"
    [ -e "$WORK/inside" ] || [ -e "$WORK/escape" ] && fail "a refused name wrote something"
    sed "s|  metrics = {'accuracy'},|  metrics = {'accuracy', ['a/b'] = function(o, t) return 0 end},|" \
      "$FIX/tiny_train.lua" > slash.lua
    grep -q "'a/b'" slash.lua || fail "the fixture's metrics line changed"
    expect 3 "slash.lua: metrics: metric 'a/b' cannot name a file or an HDF5 dataset" -- \
      "$ENGINE" train slash.lua --set root="$WORK/tiny" --out "$WORK/slash"
    [ -e "$WORK/slash" ] && fail "a refused metric name created its output folder"
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
    expect 0 "epoch 2 done" "validation accuracy" "run file: $WORK/runs/tiny/" "peak memory" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/runs" --threads 1
    file=$(ls "$WORK"/runs/tiny/*.h5 | head -1)
    h5dump -a /status "$file" | grep -q '"completed"' || fail "status is not completed"
    h5dump -a /allocator "$file" | grep -q '"caching"' || fail "allocator not recorded"
    peak=$(h5dump -a /peak_resident_bytes "$file" | grep -oE '\(0\): [0-9]+' | grep -oE '[0-9]+$')
    [ "${peak:-0}" -gt 10000000 ] || fail "peak_resident_bytes not recorded (${peak:-none})"
    h5dump -d /metrics/data/peak_resident_bytes "$file" >/dev/null || fail "no /metrics/data/peak_resident_bytes"
    h5dump -a /hparams/lr "$file" | grep -q '0.05' || fail "hparams not recorded"
    h5dump -d /script "$file" | grep -qF "optim.SGD(params" || fail "script text not recorded"
    acc=$(h5dump -y -d /metrics/validation/accuracy "$file" | sed -n '/DATA {/,/}/p' | grep -oE '[0-9][0-9.e+-]*' | tail -1)
    awk -v a="$acc" 'BEGIN { exit !(a >= 0.9) }' || fail "tiny model did not learn (validation accuracy $acc)"
    # the length a run is given (--steps, --epochs: a search trial's rung) is hp.budget to its
    # schedules; no hyperparameter is added
    sed "s|  trainer = function(hp) return {epochs = hp.epochs, log_every = 4} end,|  trainer = function(hp) print('budget: ' .. tostring(hp.budget and (hp.budget.steps or hp.budget.epochs))); return {epochs = hp.epochs, log_every = 4} end,|" \
      "$FIX/tiny_train.lua" > budget.lua
    expect 0 "budget: 3" -- "$ENGINE" train budget.lua --set root="$WORK/tiny" --steps 3 --out "$WORK/budget" --threads 1
    expect 0 "budget: 1" -- "$ENGINE" train budget.lua --set root="$WORK/tiny" --epochs 1 --out "$WORK/budget" --threads 1
    expect 0 "budget: nil" -- "$ENGINE" train budget.lua --set root="$WORK/tiny" --set epochs=1 --out "$WORK/budget" --threads 1
    ! h5dump -g /hparams "$(ls "$WORK"/budget/tiny/*.h5 | head -1)" | grep -q 'ATTRIBUTE "budget' || fail "budget recorded as a hyperparameter"
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
    # the allocator changes where memory comes from, never a result
    "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/runs4" --threads 2 \
      --allocator system -q >/dev/null || fail "run with --allocator system failed"
    [ "$(series "$WORK"/runs4/tiny/*.h5)" = "$a" ] || fail "--allocator system changed the metric series"
    [ "$a" != "$c" ] || fail "a different seed gave the same series"
    ;;
  fashion_mnist_smoke)
    [ -d /usr/share/datasets/fashion-mnist ] || fail "Debian's dataset-fashion-mnist is not installed"
    expect 0 "finished 40 steps" "last valid." "run file:" -- \
      "$ENGINE" train "$REPO/scripts/fashion_mnist.lua" --set max_steps=40 --out "$WORK/runs"
    ;;
  resume_kill)
    # an uninterrupted run, and the same run killed with SIGKILL mid-epoch then resumed
    tiny
    "$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --out "$WORK/whole" \
      --threads 2 -q >/dev/null 2>&1 || fail "the uninterrupted run failed"
    "$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --set delay=0.02 \
      --out "$WORK/killed" --threads 2 -q >killed.txt 2>&1 &
    pid=$!
    # until its second checkpoint (step 4, in the middle of epoch 1)
    wait_for "$WORK/killed/resume/*/ckpt-4.h5" $pid killed.txt
    kill -9 $pid; wait $pid 2>/dev/null
    run=$(ls "$WORK"/killed/resume/*.h5)
    h5dump -a /status "$run" | grep -q '"running"' || fail "a killed run's status is not running"
    expect 0 "resuming 'resume' from" "finished 21 steps" -- \
      "$ENGINE" train "$FIX/resume_train.lua" --resume "$run" --set delay=0 --threads 2
    h5dump -a /status "$run" | grep -q '"completed"' || fail "the resumed run did not complete"
    h5dump -a /resumes "$run" | grep -q '(0): 1' || fail "the resume is not recorded"
    a=$(series "$WORK"/whole/resume/*.h5); b=$(series "$run")
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "the resumed series differs from the uninterrupted one
$a
---
$b"
    for t in 1.weight 1.bias 4.weight 4.bias; do
      x=$(h5dump -d "/model/$t" "$WORK"/whole/resume/*/ckpt-21.h5 | grep -v '^HDF5 ')
      y=$(h5dump -d "/model/$t" "$(dirname "$run")"/*/ckpt-21.h5 | grep -v '^HDF5 ')
      [ "$x" = "$y" ] || fail "weights $t differ after resuming"
    done
    for d in /metrics/train/draw /metrics/validation/draw; do  # math.random goes on as it would
      x=$(h5dump -d $d "$WORK"/whole/resume/*.h5 | grep -v '^HDF5 '); y=$(h5dump -d $d "$run" | grep -v '^HDF5 ')
      [ -n "$x" ] && [ "$x" = "$y" ] || fail "math.random's draws $d differ after resuming"
    done
    ;;
  resume_identity)
    # --resume continues the run the path given belongs to, found by location; it checks
    # everything before it changes anything; a live run is refused; the files of every other
    # run stay as they were (issue 40, items 1 and 2)
    tiny
    fingerprint() { (cd "$1" && find . -type f ! -name '*.lock' | sort | xargs md5sum); }
    expect 0 "epoch 2 done" -- "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" \
      --out "$WORK/orig" --threads 1
    run=$(ls "$WORK"/orig/tiny/*.h5); base=$(basename "$run" .h5)
    before=$(fingerprint "$WORK/orig")
    # a completed run resumed as it is: nothing to do, nothing changed
    expect 0 "already completed at step" "the run file is as it was" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --resume "$run"
    [ "$(fingerprint "$WORK/orig")" = "$before" ] || fail "resuming a completed run changed it"
    # a copy of the run's folder continues the copy; the original stays as it was
    cp -a "$WORK/orig" "$WORK/copy"
    copy=$WORK/copy/tiny/$base.h5
    expect 0 "resuming 'tiny'" "epoch 3 done" -- "$ENGINE" train "$FIX/tiny_train.lua" \
      --resume "$copy" --epochs 3 --threads 1
    [ "$(fingerprint "$WORK/orig")" = "$before" ] || fail "resuming a copy changed the original"
    h5dump -a /resumes "$copy" | grep -q '(0): 1' || fail "the copy does not record its resume"
    [ "$(numbers "$copy" /metrics/validation/step | wc -l)" -gt \
      "$(numbers "$run" /metrics/validation/step | wc -l)" ] || fail "the copy did not go on"
    # a moved folder goes on where it is now, in its own run file, with no new one anywhere
    mv "$WORK/copy" "$WORK/moved"
    moved=$WORK/moved/tiny/$base.h5
    # with another thread count: said, and each stretch's setting recorded
    expect 0 "resuming 'tiny'" "epoch 4 done" "this run trained with 1 threads until step" \
      "--threads 1 keeps them bit-identical" -- "$ENGINE" train "$FIX/tiny_train.lua" \
      --resume "$moved" --epochs 4 --threads 2
    h5dump -a /threads "$moved" | grep -q '(0): 1' || fail "the first stretch's threads"
    h5dump -a /resume_1_threads "$moved" | grep -q '(0): 1' || fail "the first resume's threads"
    h5dump -a /resume_2_threads "$moved" | grep -q '(0): 2' || fail "the second resume's threads"
    h5dump -a /resume_2_device "$moved" | grep -q '"cpu"' || fail "the second resume's device"
    [ ! -e "$WORK/copy" ] && [ ! -e "$WORK/runs" ] || fail "the moved run went on elsewhere"
    [ "$(ls "$WORK"/moved/tiny/*.h5 | wc -l)" = 1 ] || fail "a second run file beside the moved one"
    h5dump -a /resumes "$moved" | grep -q '(0): 2' || fail "the moved run does not record its resume"
    # a checkpoint given: the run file beside its folder
    ckpt=$(ls "$WORK"/moved/tiny/"$base"/ckpt-*.h5 | sort -V | tail -1)
    expect 0 "already completed at step" -- "$ENGINE" train "$FIX/tiny_train.lua" \
      --resume "$ckpt" --epochs 4
    # a resume that fails (the checkpoint does not fit the model) has changed no file
    before=$(fingerprint "$WORK/moved")
    expect 4 "--resume $moved" "--set changes hyperparameters of a resumed run (model)" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --resume "$moved" --epochs 5 --set model=mnist_cnn
    [ "$(fingerprint "$WORK/moved")" = "$before" ] || fail "a failed resume changed the run's files"
    # a reader holding HDF5's lock on the run file (as h5py does) does not send the run elsewhere
    expect 0 "epoch 5 done" -- flock -s "$moved" "$ENGINE" train "$FIX/tiny_train.lua" \
      --resume "$moved" --epochs 5 --threads 1
    [ "$(ls "$WORK"/moved/tiny/*.h5 | wc -l)" = 1 ] || fail "a reader made the run write elsewhere"
    # a run still training is refused, naming its process; its lock dies with it
    "$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --set delay=0.05 \
      --out "$WORK/live" --threads 1 > live.txt 2>&1 &
    pid=$!
    wait_for "$WORK/live/resume/*/ckpt-2.h5" $pid live.txt
    # frozen at once, so that it is still mid-run however long the check below takes on a
    # loaded machine (it finished its 21 steps first once, and the resume found it completed)
    kill -STOP $pid
    live=$(ls "$WORK"/live/resume/*.h5)
    expect 2 "the run is in use by process $pid on $(hostname)" -- \
      "$ENGINE" train "$FIX/resume_train.lua" --resume "$live"
    kill -KILL $pid; wait $pid 2>/dev/null
    expect 0 "resuming 'resume'" "finished 21 steps" -- "$ENGINE" train "$FIX/resume_train.lua" \
      --resume "$live" --set delay=0 --threads 1
    [ "$(ls "$WORK"/live/resume/*.h5 | wc -l)" = 1 ] || fail "the killed run went on in a new file"
    ;;
  named_optimizers)
    # several optimizers by name (a GAN), each with its own schedule, and the script's state
    # (ctx.state): checkpoints keep all of it, and a resumed run goes on bit for bit (issue 55,
    # items 4 and 5)
    exact() { h5dump -m '%.17g' -d "/metrics/train/$2" "$1" | sed -n '/DATA {/,/}/p'; }
    expect 0 "finished 3 epochs" -- "$ENGINE" train "$FIX/gan_train.lua" --out "$WORK/runs" \
      --threads 1
    run=$(ls "$WORK"/runs/gan/*.h5); base=$(basename "$run" .h5)
    h5dump -A "$WORK/runs/gan/$base/ckpt-12.h5" | grep -q '"discriminator' ||
      fail "the checkpoint does not name the optimizers"
    cp -a "$WORK/runs" "$WORK/copy"
    expect 0 "resuming 'gan'" -- "$ENGINE" train "$FIX/gan_train.lua" \
      --resume "$WORK/copy/gan/$base/ckpt-12.h5" --threads 1
    for metric in loss loss_g probe batches lr_generator lr_discriminator; do
      [ "$(exact "$run" $metric)" = "$(exact "$WORK/copy/gan/$base.h5" $metric)" ] ||
        fail "the resumed run's $metric differs from the straight run's"
    done
    [ "$(numbers "$run" /metrics/train/lr_generator | tail -1)" = 0.0025 ] ||
      fail "the generator's schedule did not halve its rate each epoch"
    # misuses, each named
    expect 2 "several optimizers (discriminator, generator): name the one to step" -- \
      "$ENGINE" train "$FIX/gan_train.lua" --out "$WORK/bad" --set mistake=unnamed
    expect 2 "ctx:step('critic'): no optimizer of that name (the script's: discriminator, generator)" -- \
      "$ENGINE" train "$FIX/gan_train.lua" --out "$WORK/bad" --set mistake=unknown
    expect 3 "ctx.state: cannot save a function (at 'callback')" -- \
      "$ENGINE" train "$FIX/gan_train.lua" --out "$WORK/bad" --set mistake=function
    ! compgen -G "$WORK/bad/gan/*/*.tmp" > /dev/null || fail "a checkpoint that failed left a file"
    ;;
  resume_auto)
    # --resume auto: one fixed command that a scheduler restarts (issue 40, item 3)
    tiny
    job=("$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --set delay=0.02
      --out "$WORK/runs" --threads 1 --resume auto)
    "${job[@]}" > first.txt 2>&1 &  # $! is the engine itself, not a subshell
    pid=$!
    wait_for "$WORK/runs/resume/*/ckpt-2.h5" $pid first.txt
    kill -KILL $pid; wait $pid 2>/dev/null
    grep -qF -- "--resume auto: no run of 'resume' under $WORK/runs to go on with; starting one" \
      first.txt || fail "the first start did not say it starts a run: $(cat first.txt)"
    run=$(ls "$WORK"/runs/resume/*.h5)
    # a kill between a checkpoint's rename into place and the run file's note of it: the newer
    # file on disk is the latest (a copy under a later step's name stands in for it)
    folder=${run%.h5}
    newest=$(ls "$folder"/ckpt-*.h5 | sed 's/.*ckpt-\([0-9]*\)\.h5/\1/' | sort -n | tail -n 1)
    cp "$folder/ckpt-$newest.h5" "$folder/ckpt-99.h5"
    expect 0 "--resume auto: going on with $run" "resuming 'resume' from $folder/ckpt-99.h5" \
      "finished 21 steps" -- "${job[@]}"
    [ "$(ls "$WORK"/runs/resume/*.h5 | wc -l)" = 1 ] || fail "a restart made a second run file"
    h5dump -a /status "$run" | grep -q '"completed"' || fail "the restarted run did not complete"
    # restarted once more after it completed: nothing to do, nothing changed
    before=$(md5sum < "$run")
    out=$("${job[@]}" 2>&1) || fail "the restart after the end failed: $out"
    printf '%s' "$out" | grep -qF "already completed at step 21" || fail "not said done: $out"
    # the same --set as the run began with is no change worth a warning
    printf '%s' "$out" | grep -qF -- "--set changes" && fail "a warning for the same --set: $out"
    [ "$(md5sum < "$run")" = "$before" ] || fail "the completed run was changed"
    # another job in the same --out (issue 61): other hyperparameters start a run of their own,
    # and the first job's command still finds its own run
    expect 0 "is another job's (its hyperparameters differ: delay), passed over" "starting one" -- \
      "$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --set delay=0.01 \
      --out "$WORK/runs" --threads 1 --resume auto
    [ "$(ls "$WORK"/runs/resume/*.h5 | wc -l)" = 2 ] || fail "the other job did not start its own run"
    expect 0 "already completed at step 21" -- "${job[@]}"
    # a parallel job of an array, the same command: the run another live process writes is
    # passed over, not refused as in use
    par=("$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --set delay=0.3
      --out "$WORK/array" --threads 1 --resume auto)
    "${par[@]}" > par1.txt 2>&1 &
    p1=$!
    wait_for "$WORK/array/resume/*/ckpt-2.h5" $p1 par1.txt
    kill -STOP $p1  # it holds its run, whatever the second one's pace
    expect 0 "is being written by process $p1" "starting one" -- "${par[@]}" --steps 2
    kill -KILL $p1; kill -CONT $p1 2>/dev/null; wait $p1 2>/dev/null
    [ "$(ls "$WORK"/array/resume/*.h5 | wc -l)" = 2 ] || fail "the parallel job did not start its own run"
    # --run_name (a scheduler's job id): the same command under another name is another job
    named=("$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --out "$WORK/named"
      --threads 1 --steps 2 --resume auto)
    expect 0 "starting one" -- "${named[@]}" --run_name 101
    h5dump -a /run_name "$(ls "$WORK"/named/resume/*.h5)" | grep -q '"101"' ||
      fail "the run file does not record --run_name 101"
    expect 0 "is another job's (its --run_name is 101), passed over" "starting one" -- \
      "${named[@]}" --run_name 102
    expect 0 "already completed at step 2" -- "${named[@]}" --run_name 101
    ;;
  interrupt)
    # SIGINT, and SIGHUP (the terminal closed, taken as SIGTERM): checkpoint, status
    # interrupted, exit 128 + the signal; then --resume finishes the run
    tiny
    # signalled SIGNAL CODE FOLDER: a run signalled after its second checkpoint; its run file
    signalled() {
      "$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --set delay=0.02 \
        --out "$WORK/$3" --threads 2 >"$3.txt" 2>&1 &
      local pid=$! rc
      wait_for "$WORK/$3/resume/*/ckpt-2.h5" $pid "$3.txt"
      kill -"$1" $pid; wait $pid; rc=$?
      [ "$rc" = "$2" ] || fail "exit code $rc after SIG$1, expected $2: $(cat "$3.txt")"
      local file; file=$(ls "$WORK/$3"/resume/*.h5)
      h5dump -a /status "$file" | grep -q '"interrupted"' || fail "SIG$1 left the run $(h5dump -a /status "$file")"
      h5dump -a /stop_reason "$file" | grep -q "interrupted by SIG$1 at step" || fail "no SIG$1 stop reason"
      echo "$file"
    }
    run=$(signalled INT 130 runs) || { echo "$run"; exit 1; }
    # the hint carries what exactness needs: the thread count (the checkpoint holds the rest)
    hint="engine train $FIX/resume_train.lua --resume $run --threads 2"
    grep -qxF "resume with: $hint" runs.txt || fail "the resume hint is not '$hint': $(cat runs.txt)"
    # the hint as printed, run as it is (the delay taken off)
    expect 0 "finished 21 steps" -- "$ENGINE" ${hint#engine } --set delay=0
    h5dump -a /resume_1_threads "$run" | grep -q '(0): 2' || fail "the resume's threads not recorded"
    out=$(signalled HUP 129 hup) || { echo "$out"; exit 1; }
    ;;
  hooks)
    tiny
    expect 0 "callback: epoch 1 starts" "callback: validated at step 13, accuracy" \
      "callback: epoch 1 ends, batch_size 15.68" "callback: checkpoint ckpt-13.h5" \
      "stopped by the script after epoch 2" "f1" "first_class" -- \
      "$ENGINE" train "$FIX/hooks_train.lua" --set root="$WORK/tiny" --set stop_after=2 --out "$WORK/runs"
    run=$(ls "$WORK"/runs/hooks/*.h5)
    h5dump -d /metrics/validation/f1 "$run" >/dev/null || fail "no validation f1 series"
    h5dump -a /stop_reason "$run" | grep -q 'stopped by the script after epoch 2' || fail "no stop reason"
    # a NaN loss: exit 6 naming the step, status failed; with on_nan = 'skip' the run goes on
    expect 6 "the loss is nan at step 3 (epoch 1, batch 3)" "on_nan = 'skip'" -- \
      "$ENGINE" train "$FIX/hooks_train.lua" --set root="$WORK/tiny" --set poison=true --out "$WORK/nan"
    h5dump -a /status "$(ls "$WORK"/nan/hooks/*.h5)" | grep -q '"failed"' || fail "a NaN run is not failed"
    expect 0 "batch skipped" "1 NaN batch skipped" -- \
      "$ENGINE" train "$FIX/hooks_train.lua" --set root="$WORK/tiny" --set poison=true \
      --set on_nan=skip --set epochs=1 --out "$WORK/skip"
    # loss scaling: an overflowing gradient skips its step, and the run file says so
    expect 0 "gradient overflow at step 3: step skipped, loss scale 65536 -> 32768" \
      "1 step skipped (gradient overflow)" -- \
      "$ENGINE" train "$FIX/hooks_train.lua" --set root="$WORK/tiny" --set inflate=true \
      --set epochs=1 --out "$WORK/scaled"
    run=$(ls "$WORK"/scaled/hooks/*.h5)
    h5dump -d /metrics/train/loss_scale "$run" | grep -q 32768 || fail "no loss_scale series"
    h5dump -d /metrics/data/overflow_skipped_steps "$run" | grep -q '(0): 1' ||
      fail "no overflow_skipped_steps row"
    # a script's own metric with a declared direction: its best is its largest value for the
    # trainer (keep_best) and for engine report alike, and the run file records the direction
    cat > rising.lua <<LUA
local spec = dofile('$FIX/hooks_train.lua')
local calls = 0
spec.metrics = {'accuracy', rising = {function(output, target) calls = calls + 1; return calls end, mode = 'max'}}
spec.trainer = function(hp) return {epochs = 3, log_every = 4, keep_best = 'validation.rising'} end
return spec
LUA
    expect 0 "run file:" -- "$ENGINE" train rising.lua --set root="$WORK/tiny" --out "$WORK/rising"
    run=$(ls "$WORK"/rising/hooks/*.h5)
    h5dump -a /maximized_metrics "$run" | grep -q '"rising"' || fail "no maximized_metrics"
    last=$(h5dump -d /metrics/validation/rising "$run" | grep -o '[0-9.]*' | tail -1)
    "$ENGINE" report "$run" --format csv | grep -q "^validation,rising,3,$last,[0-9]*,$last," ||
      fail "engine report's best of rising is not its largest value: $("$ENGINE" report "$run" --format csv | grep rising)"
    # keep_best keeps the best beside the last two: with 'max' that is the last, so the first
    # epoch's checkpoint goes (with 'min' it would stay)
    [ "$(ls "$WORK"/rising/hooks/*/)" = "$(printf 'ckpt-26.h5\nckpt-39.h5')" ] ||
      fail "keep_best kept $(ls "$WORK"/rising/hooks/*/ | tr '\n' ' ')"
    printf 'local s = dofile("%s")\ns.metrics = {odd = {function() return 1 end, mode = "up"}}\nreturn s\n' "$FIX/hooks_train.lua" > badmode.lua
    expect 3 "metrics.odd.mode must be 'min' or 'max' (got 'up')" -- "$ENGINE" train badmode.lua --set root="$WORK/tiny"
    ;;
  eval_predict)
    # the worked tabular example: train briefly, then evaluate and predict from its checkpoints
    expect 0 "finished" "checkpoint:" -- "$ENGINE" train "$REPO/scripts/loans_wide_deep.lua" \
      --set root="$WORK/loans" --set epochs=2 --out "$WORK/runs" --threads 2
    run=$(ls "$WORK"/runs/loans/*.h5)
    expect 0 "validation of" "accuracy" "f1" "run file: $WORK/runs/loans/eval/" -- \
      "$ENGINE" eval "$REPO/scripts/loans_wide_deep.lua" --checkpoint "$run" --out "$WORK/runs"
    expect 0 "20 predictions written to $WORK/p.csv" -- "$ENGINE" predict \
      "$REPO/scripts/loans_wide_deep.lua" --checkpoint "$run" --input "$WORK/loans/new_loans.csv" \
      --output "$WORK/p.csv" -q
    head -1 p.csv | grep -qx "row,prediction,probability,p_no,p_yes" || fail "header: $(head -1 p.csv)"
    [ "$(wc -l < p.csv)" = 21 ] || fail "expected 20 prediction rows: $(cat p.csv)"
    grep -qE '^1,(yes|no),0\.[0-9]+,' p.csv || fail "first row: $(sed -n 2p p.csv)"
    expect 0 '{"row":1,"prediction":"' '"probabilities":{"no":' -- "$ENGINE" predict \
      "$REPO/scripts/loans_wide_deep.lua" --checkpoint "$run" --input "$WORK/loans/new_loans.csv" -q \
      --format jsonl
    # the evaluate_batch of docs/training.md, exactly as written there, predicts too: its
    # ctx.loss(out, batch.target) gives nil for rows without a target, the same predictions
    cat > documented_hook.lua <<LUA
local spec = dofile('$REPO/scripts/loans_wide_deep.lua')
spec.evaluate_batch = function(ctx, batch, hp)
  local out = ctx.model(batch.categorical, batch.input)
  return {loss = ctx.loss(out, batch.target), output = out}
end
return spec
LUA
    expect 0 "20 predictions written to $WORK/hooked.csv" -- "$ENGINE" predict documented_hook.lua \
      --checkpoint "$run" --input "$WORK/loans/new_loans.csv" --output "$WORK/hooked.csv" -q
    cmp -s p.csv hooked.csv || fail "the documented evaluate_batch predicted otherwise: $(head -3 hooked.csv)"
    # the validation file, target column included, predicts too
    "$ENGINE" predict "$REPO/scripts/loans_wide_deep.lua" --checkpoint "$run" -q \
      --input "$WORK/loans/validation.csv" --output "$WORK/v.jsonl" 2>/dev/null || fail "predict on labelled rows"
    [ "$(wc -l < v.jsonl)" = 1000 ] || fail "expected 1000 JSON lines"
    # train and validation split from one source, a test split held out, evaluated on its own
    tiny
    sed -e "s|train = data.mnist{root = hp.root, split = 'train'}:map(norm):shuffle():batch(hp.batch_size),|train = train:shuffle():batch(hp.batch_size), validation = held:batch(25), test = test:batch(25),|" \
        -e "s|validation = data.mnist{root = hp.root, split = 'test'}:map(norm):batch(25),||" \
        -e "s|    local norm = data.normalize{mean = 0.5, std = 0.5}|    local norm = data.normalize{mean = 0.5, std = 0.5}\n    local train, held = data.mnist{root = hp.root, split = 'train'}:map(norm):split{0.8, 0.2}\n    local test = data.mnist{root = hp.root, split = 'test'}:map(norm)|" \
        "$FIX/tiny_train.lua" > split_train.lua
    grep -q ":split{0.8, 0.2}" split_train.lua || fail "split_train.lua was not made: $(cat split_train.lua)"
    expect 0 "finished" -- "$ENGINE" train split_train.lua --set root="$WORK/tiny" --set epochs=1 \
      --out "$WORK/split" --threads 2
    split_run=$(ls "$WORK"/split/tiny/*.h5)
    expect 0 "test of" "accuracy" -- "$ENGINE" eval split_train.lua --set root="$WORK/tiny" \
      --checkpoint "$split_run" --split test --out "$WORK/split"
    expect 2 "--split must be 'validation', 'test' or 'train', got 'tset'" -- "$ENGINE" eval split_train.lua \
      --set root="$WORK/tiny" --checkpoint "$split_run" --split tset
    expect 2 "the script's data function returns no 'test' pipeline" -- "$ENGINE" eval "$FIX/tiny_train.lua" \
      --set root="$WORK/tiny" --checkpoint "$split_run" --split test
    expect 2 "--checkpoint is required" -- "$ENGINE" eval "$REPO/scripts/loans_wide_deep.lua"
    expect 2 "--checkpoint nowhere.h5: no such file" -- "$ENGINE" eval "$REPO/scripts/loans_wide_deep.lua" \
      --checkpoint nowhere.h5
    expect 2 "--input nowhere.csv: no such file" -- "$ENGINE" predict \
      "$REPO/scripts/loans_wide_deep.lua" --checkpoint "$run" --input nowhere.csv
    # errors about a checkpoint name the flag it came from, not --set
    echo junk > bad.h5
    expect 5 "--checkpoint bad.h5: not an HDF5 file" -- "$ENGINE" eval \
      "$REPO/scripts/loans_wide_deep.lua" --checkpoint bad.h5
    expect 5 "--resume bad.h5: not an HDF5 file" -- "$ENGINE" train \
      "$REPO/scripts/loans_wide_deep.lua" --resume bad.h5
    printf 'return {hparams = {lr = 1, epochs = "two"}}\n' > fewer.lua
    expect 4 "--checkpoint $run (checkpoint " "the checkpoint was written by script 'loans', not by fewer.lua ('fewer'): its hyperparameters batch_size, root do not exist here; 'epochs' is a number there but a string here (fewer.lua declares: epochs, lr)" \
      -- "$ENGINE" eval fewer.lua --checkpoint "$run"
    printf 'return {hparams = {lr = 1, epochs = "two", batch_size = 1, model = "m", root = "r"}}\n' > typed.lua
    expect 4 "--checkpoint $run (checkpoint " "the checkpoint was written by script 'loans', not by typed.lua ('typed'): 'epochs' is a number there but a string here" \
      -- "$ENGINE" eval typed.lua --checkpoint "$run"
    tiny
    expect 4 "/model/" "different model" -- "$ENGINE" eval "$FIX/tiny_train.lua" --set root="$WORK/tiny" \
      --checkpoint "$run"
    # an MNIST-style script predicts for image files listed in a CSV
    expect 0 "finished" -- "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" \
      --set epochs=2 --out "$WORK/tinyruns"
    "$ENGINE" run "$FIX/tiny_images.lua" "$WORK/tiny" "$WORK/digits" || fail "cannot write the digits"
    tinyrun=$(ls "$WORK"/tinyruns/tiny/*.h5)
    "$ENGINE" predict "$FIX/tiny_train.lua" --set root="$WORK/tiny" --checkpoint "$tinyrun" -q \
      --input "$WORK/digits/images.csv" --output "$WORK/digits.csv" 2>/dev/null || fail "predict on images"
    [ "$(wc -l < digits.csv)" = 11 ] || fail "expected 10 predictions: $(cat digits.csv)"
    # each prediction names the image it is for
    head -1 digits.csv | grep -q '^row,path,prediction,probability,p_1,' || fail "header: $(head -1 digits.csv)"
    sed -n 2p digits.csv | grep -q "^1,$WORK/digits/digit1.png," || fail "no path column: $(sed -n 2p digits.csv)"
    right=$(paste -d' ' <(tail -n +2 digits/images.csv | cut -d, -f2) <(tail -n +2 digits.csv | cut -d, -f3) |
      awk '$1 == $2' | wc -l)
    [ "$right" -ge 8 ] || fail "only $right of 10 digits predicted right: $(cat digits.csv)"
    # JSON lines: an unnamed class is a number; the script's `classes` name them
    "$ENGINE" predict "$FIX/tiny_train.lua" --set root="$WORK/tiny" --checkpoint "$tinyrun" -q \
      --input "$WORK/digits/images.csv" --format jsonl 2>/dev/null | head -1 | \
      grep -q '^{"row":1,"path":"[^"]*digit1.png","prediction":[0-9]*,"probability":' ||
      fail "JSON lines: the class is not a number"
    sed "s|^  name = 'tiny',|  name = 'tiny', classes = {'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'},|" \
      "$FIX/tiny_train.lua" > named.lua
    "$ENGINE" predict named.lua --set root="$WORK/tiny" --checkpoint "$tinyrun" -q \
      --input "$WORK/digits/images.csv" --format jsonl 2>/dev/null | head -1 | \
      grep -q '"prediction":"[a-z]*","probability":.*"probabilities":{"zero":' ||
      fail "the script's class names are not used: $("$ENGINE" predict named.lua --set root="$WORK/tiny" --checkpoint "$tinyrun" -q --input "$WORK/digits/images.csv" --format jsonl 2>&1 | head -2)"
    echo "require('data').save_image(arg[1], require('torch').zeros(1, 32, 32))" > "$WORK/big.lua"
    "$ENGINE" run "$WORK/big.lua" "$WORK/big.png" || fail "cannot write big.png"
    printf 'path\nbig.png\n' > "$WORK/big.csv"
    expect 4 "big.png is 32x32 pixels; the model was trained on 28x28 images" "resize it first" -- \
      "$ENGINE" predict "$FIX/tiny_train.lua" --set root="$WORK/tiny" --checkpoint "$tinyrun" \
      --input "$WORK/big.csv"
    # checkpoints by name (issue 59): RUN.h5:best (marked by keep_best), :latest, :STEP
    expect 0 "finished 3 epochs" -- "$ENGINE" train "$FIX/best_checkpoint.lua" --set root="$WORK/tiny" \
      --out "$WORK/named" --threads 1
    named=$(ls "$WORK"/named/best/*.h5)
    best=$(h5dump -a /checkpoints/best "$named" | grep -oE 'ckpt-[0-9]+' | head -1 | cut -d- -f2)
    latest=$(h5dump -a /checkpoints/latest "$named" | grep -oE 'ckpt-[0-9]+' | head -1 | cut -d- -f2)
    [ -n "$best" ] && [ -n "$latest" ] && [ "$best" -lt "$latest" ] ||
      fail "keep_best marked no earlier best checkpoint: best '$best', latest '$latest'"
    evaluate() { "$ENGINE" eval "$FIX/best_checkpoint.lua" --set root="$WORK/tiny" --out "$WORK/named" "$@"; }
    expect 0 "ckpt-$best.h5 (step $best)" -- evaluate --checkpoint "$named:best"
    expect 0 "ckpt-$latest.h5 (step $latest)" -- evaluate --checkpoint "$named:latest"
    expect 0 "ckpt-$best.h5 (step $best)" -- evaluate --checkpoint "$named:$best"
    # the evaluations table names what each evaluated: the run, the checkpoint, its step
    out=$("$ENGINE" report "$WORK/named/best/eval" --format csv)
    printf '%s\n' "$out" | head -1 | grep -q '^run,name,status,evaluated run,checkpoint,checkpoint step,' ||
      fail "the evaluations table does not name what it evaluated: $(printf '%s\n' "$out" | head -1)"
    [ "$(printf '%s\n' "$out" | grep -c ",completed,$named,ckpt-$best.h5,$best,")" = 2 ] ||
      fail "the evaluations of $named:best and :$best are not named so: $out"
    "$ENGINE" report "$named" | grep -qE "ckpt-$best\.h5 +yes\$" ||
      fail "engine report does not mark ckpt-$best.h5 as the best: $("$ENGINE" report "$named" | grep -A4 '^checkpoints')"
    expect 2 "--checkpoint $named:7: the run keeps no checkpoint of step 7; its checkpoints: ckpt-$best.h5" -- \
      evaluate --checkpoint "$named:7"
    expect 2 ":best: the run marked no best checkpoint (its trainer has no keep_best)" -- \
      "$ENGINE" eval "$FIX/tiny_train.lua" --set root="$WORK/tiny" --checkpoint "$tinyrun:best"
    expect 2 "is a checkpoint itself; :best names one of a run file's" -- \
      evaluate --checkpoint "$WORK/named/best/$(basename "$named" .h5)/ckpt-$best.h5:best"
    ;;
  examples)
    # the worked examples run (briefly) as documented; bfloat16 runs at ~25 samples/s on a CPU
    # without bfloat16 instructions: small batches and a 200-image validation
    expect 0 "CIFAR-10 not found" "finished 2 steps" -- "$ENGINE" train "$REPO/scripts/cifar_resnet.lua" \
      --set synthetic=true --set synthetic_size=256 --set epochs=1 --out "$WORK/runs" --threads 2
    [ -d /usr/share/datasets/fashion-mnist ] || fail "Debian's dataset-fashion-mnist is not installed"
    expect 0 "reached 12 steps" "f1" -- "$ENGINE" train "$REPO/scripts/fashion_mnist_modern.lua" \
      --set max_steps=12 --set warmup_steps=4 --set batch_size=8 --set validation_samples=200 \
      --out "$WORK/runs" --threads 2
    run=$(ls "$WORK"/runs/fashion_mnist_modern/*.h5)
    h5dump -d /metrics/train/lr "$run" >/dev/null || fail "no lr series"
    # pytorch/examples' polynomial regression: under 1e-3, and the learned function is the true one
    out=$("$ENGINE" run "$REPO/scripts/regression.lua" 2>&1) || fail "regression.lua failed: $out"
    printf '%s' "$out" | grep -qE '^Loss: 0\.000[0-9]+ after [0-9]+ batches$' || fail "no loss under 1e-3: $out"
    learned=$(printf '%s' "$out" | sed -n 's/^==> Learned function:\t//p')
    actual=$(printf '%s' "$out" | sed -n 's/^==> Actual function:\t//p')
    [ -n "$learned" ] && [ -n "$actual" ] || fail "the functions are not printed: $out"
    awk -v a="$learned" -v b="$actual" 'BEGIN {
      n = split(a, x, " "); split(b, y, " ")
      for (i = 3; i <= n; i += 2) { d = x[i] - y[i]; if (d < -0.2 || d > 0.2) exit 1 }
    }' || fail "the learned function is far from the true one: $out"
    ;;
  fetch)
    # datasets/fetch: the published checksum, mirrors in order, --file for offline copies, unpacking;
    # on a small CIFAR-10 made here (the real one is 162 MB and there is no network)
    grep -qx 'c32a1d4ab5d03f1284b67883e8d87530  cifar-10-binary.tar.gz' "$REPO/datasets/cifar10.md5" ||
      fail "datasets/cifar10.md5 is not the published checksum"
    mkdir -p made/cifar-10-batches-bin mirror catalog
    record() { printf "\\x$(printf %02x "$1")"; head -c 3072 /dev/urandom; }
    for b in 1 2 3 4 5 test; do
      f=made/cifar-10-batches-bin/$([ $b = test ] && echo test_batch || echo data_batch_$b).bin
      for i in 0 1 2 3 4 5 6 7 8 9; do record $i; done > "$f"
    done
    tar -czf mirror/cifar-10-binary.tar.gz -C made cifar-10-batches-bin || fail "cannot make the archive"
    (cd mirror && md5sum cifar-10-binary.tar.gz) > catalog/cifar10.md5
    printf '%s\n' "$WORK/no-such-mirror" "file://$WORK/mirror" > catalog/cifar10.mirrors
    expect 0 "failed from $WORK/no-such-mirror/cifar-10-binary.tar.gz" "unpacking" "cifar10 is in $WORK/data/cifar10" -- \
      "$REPO/datasets/fetch" cifar10 --catalog catalog --into data/cifar10
    cmp -s made/cifar-10-batches-bin/test_batch.bin data/cifar10/cifar-10-batches-bin/test_batch.bin ||
      fail "the unpacked test batch is not the one packed"
    expect 0 "cifar-10-binary.tar.gz: present, checksum ok" -- "$REPO/datasets/fetch" cifar10 --catalog catalog --into data/cifar10
    # the script trains on it: 50 training images, batches of 10
    out=$(ENGINE_DATASETS=$WORK/data "$ENGINE" train "$REPO/scripts/cifar_resnet.lua" --set epochs=1 \
          --set batch_size=10 --set workers=1 --out runs --threads 2 2>&1) || fail "cifar_resnet.lua failed: $out"
    case $out in *"not found"*|*synthetic*) fail "cifar_resnet.lua did not read the fetched set: $out";; esac
    printf '%s' "$out" | grep -qF "finished 5 steps" || fail "not 5 steps of 10 images: $out"
    # a file whose checksum is not the published one is thrown away, never unpacked
    mkdir -p bad && cp catalog/cifar10.mirrors bad/ && echo "0123456789abcdef0123456789abcdef  cifar-10-binary.tar.gz" > bad/cifar10.md5
    expect 1 "no source gave a file with the published checksum" "datasets/fetch cifar10 --file PATH/cifar-10-binary.tar.gz" -- \
      "$REPO/datasets/fetch" cifar10 --catalog bad --into data2
    [ -z "$(ls -A data2)" ] || fail "a rejected download left files: $(ls -A data2)"
    # offline: a copy made elsewhere, checked like a download (the mirrors are not tried)
    printf '%s\n' "$WORK/no-such-mirror" > catalog/cifar10.mirrors
    expect 0 "from $WORK/mirror/cifar-10-binary.tar.gz" "unpacking" -- \
      "$REPO/datasets/fetch" --file mirror/cifar-10-binary.tar.gz cifar10 --catalog catalog --into data3
    [ -f data3/cifar-10-batches-bin/data_batch_5.bin ] || fail "--file did not unpack"
    head -c 1000 mirror/cifar-10-binary.tar.gz > cifar-10-binary.tar.gz
    expect 1 "failed from $WORK/cifar-10-binary.tar.gz" -- \
      "$REPO/datasets/fetch" cifar10 --catalog catalog --into data4 --file cifar-10-binary.tar.gz
    cp mirror/cifar-10-binary.tar.gz tiny.tar.gz
    expect 2 "cifar10 has no file called tiny.tar.gz" -- "$REPO/datasets/fetch" cifar10 --catalog catalog --file tiny.tar.gz
    expect 2 "no dataset 'imagenet'" "known: cifar10 cifar100 mnist" -- "$REPO/datasets/fetch" imagenet
    expect 2 "--file nothing-here: no such file" -- "$REPO/datasets/fetch" cifar10 --file nothing-here
    ;;
  multi_input)
    # batches of two inputs (an image and a text) train, evaluate, predict and bench without a hook
    expect 0 "finished 192 steps" -- "$ENGINE" train "$REPO/scripts/image_text.lua" --out runs --threads 2
    run=$(ls runs/image_text/*.h5)
    h5dump -a /description "$run" | grep -q "an image and a text" || fail "the script's description is not in the run file"
    expect 0 "description  two inputs: an image and a text" -- "$ENGINE" report "$run"
    acc=$(numbers "$run" /metrics/validation/accuracy | tail -n1)
    # one input alone tells 2 of the 4 classes apart (50%); both are needed above that
    awk -v a="$acc" 'BEGIN { exit !(a > 0.9) }' || fail "validation accuracy $acc: the model did not use both inputs"
    expect 0 "accuracy" -- "$ENGINE" eval "$REPO/scripts/image_text.lua" --checkpoint "$run" --out runs
    # new data for predict: one dataset per input, as torch.save writes a table of them
    printf '%s\n' "local torch = require 'torch'" \
      "local images = torch.zeros(4, 1, 16, 16); images:narrow(3, 9, 8):fill_(1)" \
      "local text = torch.ones(4, 12, {dtype = 'int64'}) * 7; text:select(2, 1):fill_(2)" \
      "torch.save(arg[1], {input = images, text = text})" > make_new.lua
    "$ENGINE" run make_new.lua new.h5 || fail "cannot write new.h5"
    "$ENGINE" predict "$REPO/scripts/image_text.lua" --checkpoint "$run" --input new.h5 --output p.csv -q ||
      fail "predict on new.h5 failed"
    [ "$(wc -l < p.csv)" = 5 ] || fail "predict wrote $(cat p.csv)"
    # bottom half bright and the token "blue": class 4 (2 * 1 + 1 + 1)
    [ "$(cut -d, -f2 p.csv | sed 1d | sort -u)" = 4 ] || fail "new samples are not class 4: $(cat p.csv)"
    printf '%s\n' "local torch = require 'torch'" \
      "torch.save(arg[1], {input = torch.zeros(2, 1, 16, 16), text = torch.ones(2, 11, {dtype = 'int64'})})" > make_bad.lua
    "$ENGINE" run make_bad.lua bad.h5 || fail "cannot write bad.h5"
    expect 4 "bad.h5:/text: samples of shape [11], but the script's input 'text' has [12]" -- \
      "$ENGINE" predict "$REPO/scripts/image_text.lua" --checkpoint "$run" --input bad.h5
    expect 0 "modules/image_text_net.lua, training, batch 8" "CrossEntropyLoss" -- \
      "$ENGINE" bench --model "$REPO/modules/image_text_net.lua" --batch_size 8 --num_batches 3 --threads 2
    expect 0 "inference, batch 8" -- \
      "$ENGINE" bench --model "$REPO/modules/image_text_net.lua" --batch_size 8 --num_batches 3 --forward_only
    expect 0 "wide_deep, training, batch 64" -- "$ENGINE" bench --model wide_deep --batch_size 64 --num_batches 3
    expect 0 "written to out/bench/" -- "$ENGINE" bench --model wide_deep --batch_size 4 --num_batches 2 --out out
    h5dump -A out/bench/wide_deep/*.h5 | grep -q "categorical \[8\], crossed \[4\], input \[5\]" ||
      fail "the point does not list wide_deep's inputs"
    expect 2 "--data real reads one input per sample" -- "$ENGINE" bench --model wide_deep --data real \
      --data_backend idx --data_dir . --num_batches 1
    # a model that takes one tensor, given batches of two inputs
    expect 3 "the batches hold several inputs (input, text) but the model (Sequential) takes one tensor" \
      "nn.Module:extend" -- "$ENGINE" train "$FIX/two_inputs_sequential.lua" --out runs
    ;;
  gpu)
    # label gpu: skipped (77) where no CUDA device exists
    "$ENGINE" info | grep -q '^devices .*cuda:0' || { echo "skipped: no CUDA device"; exit 77; }
    expect 0 "gpu_name" "cudnn" "nccl" -- "$ENGINE" info
    expect 0 "mlp, training, batch 8" "cuda:0" "peak memory" -- \
      "$ENGINE" bench --model mlp --device cuda --batch_size 8 --num_batches 3 --tf32 true
    expect 0 "mnist_cnn, inference, batch 8" -- "$ENGINE" bench --model mnist_cnn --device cuda \
      --phase inference --batch_size 8 --num_batches 3 --cudnn_benchmark false
    expect 0 "mlp, training, batch 8, float16_master" -- "$ENGINE" bench --model mlp \
      --device cuda --batch_size 8 --num_batches 3 --dtype float16_master
    expect 0 "mnist_cnn, training, batch 16" -- "$ENGINE" bench --model mnist_cnn --device cuda \
      --batch_size 16 --num_batches 5 --cuda_graphs --dtype bfloat16
    # DLBS's synthetic data in host memory: copied to the GPU for every batch, timed as data
    expect 0 "mlp, training, batch 8" "parts: data " -- "$ENGINE" bench --model mlp --device cuda \
      --batch_size 8 --num_batches 3 --data synthetic/pinned
    expect 0 "mlp, inference, batch 8" "parts: data " -- "$ENGINE" bench --model mlp --device cuda \
      --phase inference --batch_size 8 --num_batches 3 --data synthetic/pageable
    tiny
    sed 's/log_every = 4}/log_every = 4, cuda_graphs = true}/' "$FIX/tiny_train.lua" > graphs.lua
    expect 0 "epoch 2 done" -- "$ENGINE" train graphs.lua --set root="$WORK/tiny" \
      --out "$WORK/graphs" --device cuda
    expect 0 "epoch 1 done" -- "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" \
      --set epochs=1 --out "$WORK/runs" --device cuda
    file=$(ls "$WORK"/runs/tiny/*.h5 | head -1)
    # attribute names are plain text in HDF5's object headers (h5dump may not be installed here)
    for name in gpu_name gpu_driver cuda_runtime cudnn nccl tf32_matmul openmp_runtime; do
      grep -qa "$name" "$file" || fail "the run file lacks $name"
    done
    ;;
  device_settings)
    # engine info names the one OpenMP runtime; a second one would be a build fault
    expect 0 "OpenMP   libgomp" -- "$ENGINE" info
    "$ENGINE" info | grep -q "OpenMP runtimes in one process" && fail "two OpenMP runtimes loaded"
    tiny
    # the settings in force and the OpenMP runtime are recorded in the run file, defaults first
    expect 0 "epoch 1 done" -- "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" \
      --set epochs=1 --out "$WORK/defaults" --threads 1
    file=$(ls "$WORK"/defaults/tiny/*.h5 | head -1)
    h5dump -a /cudnn_benchmark "$file" | grep -q TRUE || fail "cudnn_benchmark not recorded as true"
    h5dump -a /tf32_matmul "$file" | grep -q FALSE || fail "tf32_matmul: PyTorch's default is off"
    h5dump -a /tf32_cudnn "$file" | grep -q TRUE || fail "tf32_cudnn: PyTorch's default is on"
    h5dump -a /openmp_runtime "$file" | grep -q 'libgomp' || fail "openmp_runtime not recorded"
    h5dump -a /gpu_name "$file" >/dev/null 2>&1 && fail "a CPU run records a GPU"
    expect 0 "epoch 1 done" -- "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" \
      --set epochs=1 --out "$WORK/off" --threads 1 --cudnn_benchmark false --tf32 false
    off=$(ls "$WORK"/off/tiny/*.h5 | head -1)
    h5dump -a /cudnn_benchmark "$off" | grep -q FALSE || fail "--cudnn_benchmark false not recorded"
    h5dump -a /tf32_cudnn "$off" | grep -q FALSE || fail "--tf32 false not recorded"
    # settings of the GPU backends leave CPU results as they were
    [ "$(series "$file")" = "$(series "$off")" ] || fail "the settings changed a CPU run's series"
    expect 2 "--tf32 takes true or false, got 'maybe'" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --tf32 maybe --out "$WORK/bad"
    [ -e "$WORK/bad" ] && fail "a refused command created its output folder"
    # bench: the same flags, n/a on the CPU, the settings in the point's details
    expect 0 "n/a here: tf32 (no TensorFloat-32 on cpu)" -- \
      "$ENGINE" bench --model mlp --batch_size 2 --num_batches 2 --tf32 false --out "$WORK/b"
    point=$(ls "$WORK"/b/bench/mlp/*.h5 | head -1)
    h5dump "$point" | grep -q 'ATTRIBUTE "tf32_matmul"' || fail "bench point lacks tf32_matmul"
    h5dump -a /machine/openmp_runtime "$point" >/dev/null 2>&1 ||
      h5dump "$point" | grep -q 'ATTRIBUTE "openmp_runtime"' || fail "bench machine lacks openmp_runtime"
    expect 2 "--cudnn_benchmark takes true or false, got 'maybe'" -- \
      "$ENGINE" bench --model mlp --cudnn_benchmark=maybe
    # channels last: bench and the trainer, recorded
    expect 0 "mnist_cnn, training, batch 4" -- "$ENGINE" bench --model mnist_cnn --batch_size 4 \
      --num_batches 2 --memory_format channels_last --threads 1
    expect 2 "precision 'float16_master' needs a CUDA device" -- \
      "$ENGINE" bench --model mlp --dtype float16_master
    expect 2 "--memory_format must be contiguous or channels_last, got 'nhwc'" -- \
      "$ENGINE" bench --model mlp --memory_format nhwc
    h5dump -a /memory_format "$file" | grep -q '"contiguous"' || fail "memory_format not recorded"
    h5dump -a /cuda_graphs "$file" | grep -q FALSE || fail "cuda_graphs not recorded"
    sed "s/log_every = 4}/log_every = 4, memory_format = 'nhwc'}/" "$FIX/tiny_train.lua" > nhwc.lua
    expect 3 "trainer memory_format must be 'contiguous' or 'channels_last', got 'nhwc'" -- \
      "$ENGINE" train nhwc.lua --set root="$WORK/tiny" --out "$WORK/nhwc"
    # CUDA graphs: refused on the CPU with the reason, in bench and in a script's trainer
    expect 2 "cuda_graphs cannot record this run's step: it needs a CUDA device (--device cuda)" -- \
      "$ENGINE" bench --model mlp --cuda_graphs --num_batches 2
    expect 2 "--cuda_graphs needs --num_warmup_batches 3 or more" -- \
      "$ENGINE" bench --model mlp --cuda_graphs --num_warmup_batches 1
    expect 0 "n/a here: cuda_graphs (the training phase's step only)" -- \
      "$ENGINE" bench --model mlp --cuda_graphs --phase inference --num_batches 2
    sed 's/log_every = 4}/log_every = 4, cuda_graphs = true}/' "$FIX/tiny_train.lua" > graphs.lua
    grep -q 'cuda_graphs = true' graphs.lua || fail "the fixture's trainer table changed"
    expect 2 "cuda_graphs cannot record this run's step: it needs a CUDA device" -- \
      "$ENGINE" train graphs.lua --set root="$WORK/tiny" --out "$WORK/graphs"
    ;;
  bench)
    expect 0 "mlp, training, batch 4" "NLLLoss" "5 timed batches" "samples/s" "peak memory" \
      "(p90 needs 10 batches, p99 100)" -- \
      "$ENGINE" bench --model mlp --batch_size 4 --num_batches 5 --num_warmup_batches 1 --threads 1
    # --json --out: the one JSON line alone on stdout (p99 null: 12 batches back a p90 only),
    # the file's path on stderr
    out=$("$ENGINE" bench --model mlp --batch_size 4 --num_batches 12 --threads 1 --json --out json 2>json-err.txt) ||
      fail "bench --json --out failed: $(cat json-err.txt)"
    [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && printf '%s' "$out" | grep -qE '"p90_ms":[0-9.]+,"p99_ms":null' ||
      fail "bench --json --out printed more than its JSON line, or wrong percentiles: $out"
    grep -qF "written to json/bench/mlp/" json-err.txt || fail "the file's path is not on stderr: $(cat json-err.txt)"
    out=$("$ENGINE" bench --model mlp --batch_size 4 --num_batches 5 --forward_only --json) ||
      fail "bench --json failed"
    printf '%s' "$out" | grep -qE '^\{"impl":"engine","model":"mlp","phase":"inference".*"p50_ms":[0-9.]+' ||
      fail "bench --json printed: $out"
    # a point whose process gets a quarter of its threads' time (one core for 4 threads) is
    # flagged starved in text, JSON and the file, and --compare leaves it out (issue 59)
    "$ENGINE" bench --model mlp --batch_size 8 --num_batches 20 --threads 3 --out fed >/dev/null 2>&1 ||
      fail "the fed point failed"
    expect 0 "starved: the process got " "% of its 4 threads' time" -- \
      taskset -c 0 "$ENGINE" bench --model mlp --batch_size 8 --num_batches 20 --threads 4
    taskset -c 0 "$ENGINE" bench --model mlp --batch_size 8 --num_batches 20 --threads 3 --out starved \
      >/dev/null 2>&1 || fail "the starved point failed"
    starved_json=$(taskset -c 0 "$ENGINE" bench --model mlp --batch_size 8 --num_batches 20 --threads 4 --json) ||
      fail "the starved point failed"
    printf '%s' "$starved_json" | grep -qE '"cpu_share":0\.[0-3][0-9]*,"starved":1' || fail "bench --json of a starved point: $starved_json"
    compared=$("$ENGINE" report --compare fed/bench/mlp/*.h5 starved/bench/mlp/*.h5) ||
      fail "--compare failed: $compared"
    # (the fed side may be starved too on a loaded machine: either way the pair is not compared)
    printf '%s\n' "$compared" | grep -q "not compared: starved" || fail "--compare compared a starved point: $compared"
    # the pipelined figure beside the synced one: on the CPU the same mean
    mean=$(printf '%s' "$out" | grep -oE '"mean_ms":[0-9.]+' | cut -d: -f2)
    printf '%s' "$out" | grep -qF "\"pipelined_ms\":$mean," ||
      fail "bench --json: pipelined_ms is not the mean ($mean) on the CPU: $out"
    expect 0 "training" -- "$ENGINE" bench --model mlp --batch_size 2 --num_batches 2 --forward_only false
    # DLBS's str2bool spellings, any case
    expect 0 "mlp, inference" -- "$ENGINE" bench --model mlp --batch_size 2 --num_batches 2 --forward_only True
    expect 0 "mlp, training" -- "$ENGINE" bench --model mlp --batch_size 2 --num_batches 2 --forward_only F
    expect 0 "scripts/perf/modules/lua_mlp.lua, training, batch 3" -- \
      "$ENGINE" bench --model "$REPO/scripts/perf/modules/lua_mlp.lua" --batch_size 3 --num_batches 2
    expect 0 "resnet18, training, batch 2" "CrossEntropyLoss" -- \
      "$ENGINE" bench --model resnet18 --batch_size 2 --num_batches 1 --num_warmup_batches 0
    expect 2 "--model 'resnet9000' is neither a zoo model nor a Lua module file" "alexnet, alexnet_owt" -- \
      "$ENGINE" bench --model resnet9000
    expect 2 "engine bench needs a model" -- "$ENGINE" bench
    expect 2 "--phase must be training, inference or data_ingestion" -- "$ENGINE" bench --model mlp --phase train
    expect 0 "mlp, data_ingestion, batch 8" "n/a here: cudnn_benchmark (no cuDNN on cpu)" -- \
      "$ENGINE" bench --model mlp --phase data_ingestion --batch_size 8 --num_batches 5 --cudnn_benchmark true
    tiny
    expect 0 "mlp, training, batch 4" "parts: data " " + forward " " + backward " " + optimizer " -- \
      "$ENGINE" bench --model mlp --data real --data_backend idx \
      --data_dir "$WORK/tiny" --data_shuffle true --num_loader_threads 1 --batch_size 4 --num_batches 3
    expect 0 "mlp, inference, batch 4" "parts: data " " + forward " -- \
      "$ENGINE" bench --model mlp --phase inference --data real --data_backend idx \
      --data_dir "$WORK/tiny" --batch_size 4 --num_batches 3
    expect 2 "--data real needs --data_dir" -- "$ENGINE" bench --model mlp --data real --data_backend idx
    # the resource monitor's summary, and its series in the benchmark file
    expect 0 "resources (" "% of a core (mean), resident " -- "$ENGINE" bench --model mlp --batch_size 4 \
      --num_batches 3 --threads 1 --out "$WORK/monitored"
    h5dump -d /points/0/resources/cpu_percent "$WORK"/monitored/bench/mlp/*.h5 >/dev/null ||
      fail "no resources/cpu_percent series in the benchmark file"
    "$ENGINE" report "$WORK/monitored" --format csv | head -1 | grep -q ",cpu_percent,gpu_percent," ||
      fail "engine report has no cpu_percent column"
    # a training script's own step: its model(hp), loss, optimizer and batch, --set applied
    expect 0 "tiny, training, batch 8, float32, cpu, 1 thread, NLLLoss" \
      "the training step of $FIX/tiny_train.lua: its model, loss and SGD optimizer, synthetic data; --set root=$WORK/tiny, batch_size=8" -- \
      "$ENGINE" bench "$FIX/tiny_train.lua" --set root="$WORK/tiny" --set batch_size=8 --num_batches 2 --threads 1
    expect 0 "parts: data " "real data" -- "$ENGINE" bench "$FIX/tiny_train.lua" --set root="$WORK/tiny" \
      --data real --num_batches 2 --threads 1
    out=$("$ENGINE" bench "$FIX/tiny_train.lua" --set root="$WORK/tiny" --num_batches 2 --threads 1 --json)
    printf '%s\n' "$out" | grep -q '^{"impl":"engine","model":"tiny","phase":"training",.*"batch_size":16,' ||
      fail "bench SCRIPT --json: $out"
    expect 2 "--set widht=3: unknown hyperparameter 'widht'" -- \
      "$ENGINE" bench "$FIX/tiny_train.lua" --set root="$WORK/tiny" --set widht=3
    # a module class built without the arguments its init takes: said
    printf '%s\n' "local nn = require 'nn'" "local Net = nn.Module:extend('Net')" \
      "Net.input_shape, Net.classes = {4}, 2" \
      "function Net:init(width) self.fc = nn.Linear(4, width or 2) end" \
      "function Net:forward(x) return self.fc(x) end" "return Net" > widthnet.lua
    expect 0 "widthnet.lua: Net:init(width) takes arguments and engine bench built it with none" -- \
      "$ENGINE" bench --model widthnet.lua --num_batches 1 --threads 1
    # DLBS: --data_dir alone means real data
    expect 0 "mlp, training, batch 4" "parts: data " -- "$ENGINE" bench --model mlp --data_backend idx \
      --data_dir "$WORK/tiny" --batch_size 4 --num_batches 2
    expect 2 "--data_backend must be idx, cifar, image_folder, caffe_lmdb or hdf5" -- \
      "$ENGINE" bench --model mlp --data real --data_backend lmdb --data_dir "$WORK/tiny"
    expect 5 "caffe_lmdb: $WORK/tiny is not an LMDB database" -- \
      "$ENGINE" bench --model lenet5 --data real --data_backend caffe_lmdb --data_dir "$WORK/tiny"
    # DLBS's --data_dir without --data_backend: Caffe's LMDB, as DLBS's PyTorch backend reads it
    expect 5 "caffe_lmdb: $WORK/tiny is not an LMDB database" -- \
      "$ENGINE" bench --model lenet5 --data_dir "$WORK/tiny"
    # DLBS's synthetic data in host memory, pinned or pageable (copied to a GPU for every batch)
    expect 0 "mlp, training, batch 2" -- "$ENGINE" bench --model mlp --data synthetic/pinned \
      --batch_size 2 --num_batches 1
    expect 0 "mlp, inference, batch 2" -- "$ENGINE" bench --model mlp --data synthetic/pageable \
      --phase inference --batch_size 2 --num_batches 1
    expect 2 "--data must be synthetic (DLBS's synthetic/device), synthetic/pinned, synthetic/pageable or real, got 'synthetic/host'" -- \
      "$ENGINE" bench --model mlp --data synthetic/host
    # DLBS's multi-GPU launcher's flags: torch.distributed.launch's --local_rank, --dist_backend
    expect 0 "mlp, training, batch 2" -- "$ENGINE" bench --model mlp --batch_size 2 --num_batches 1 \
      --local_rank=0 --dist_backend nccl
    expect 2 "--dist_backend nccl with --device cpu: the engine's ranks talk through NCCL on CUDA and Gloo on the CPU" -- \
      "$ENGINE" bench --model mlp --nproc 2 --dist_backend nccl
    expect 2 "--dist_backend must be nccl or gloo, got 'mpi'" -- "$ENGINE" bench --model mlp --dist_backend mpi
    expect 2 "--local_rank 1 disagrees with LOCAL_RANK=0" -- env LOCAL_RANK=0 "$ENGINE" bench --model mlp --local_rank 1
    expect 0 "n/a here: data_backend (synthetic data)" -- \
      "$ENGINE" bench --model mlp --data_backend caffe_lmdb --batch_size 2 --num_batches 1
    expect 0 "profile: trace.json" -- "$ENGINE" bench --model mlp --batch_size 2 --num_batches 2 --profile trace.json
    grep -q '"traceEvents"\|"ph"' trace.json || fail "the profile is not a Chrome trace"
    expect 0 "written to out/bench/mlp/" -- "$ENGINE" bench --model mlp --batch_size 2 --num_batches 2 --out out
    expect 2 "--forward_only takes true or false" -- "$ENGINE" bench --model mlp --forward_only=maybe
    expect 2 "unexpected argument 'maybe'" -- "$ENGINE" bench --model mlp --forward_only maybe
    expect 0 "inference" -- "$ENGINE" bench --model mlp --batch_size 2 --num_batches 2 --forward_only true
    expect 2 "--batch_size must be positive" -- "$ENGINE" bench --model mlp --batch_size 0
    expect 2 "precision 'float16' needs a CUDA device" -- "$ENGINE" bench --model mlp --dtype float16
    expect 2 "--model 'gpt' takes tokens" -- "$ENGINE" bench --model gpt
    printf 'local nn = require "nn"\nreturn nn.Linear(4, 2)\n' > linear.lua
    expect 2 "does not say its input shape" -- "$ENGINE" bench --model linear.lua
    expect 0 "linear.lua, training, batch 2" "CrossEntropyLoss" -- \
      "$ENGINE" bench --model linear.lua --input_shape 4 --num_classes 2 --batch_size 2 --num_batches 2
    expect 2 "--input_shape takes sizes separated by commas" -- \
      "$ENGINE" bench --model linear.lua --input_shape 4x --num_classes 2
    ;;
  bench_limits)
    # a sweep's points that fail in every way a point can: a shape error, a crash (SIGSEGV), memory
    # over --max_memory (RLIMIT_AS, so not under AddressSanitizer, which reserves terabytes of
    # address space: the asan test preset leaves this case out, docs/reliability.md)
    mkdir -p mods
    printf 'local nn, ffi = require "nn", require "ffi"\nlocal M = nn.Module:extend("Crash")\nM.input_shape, M.classes = {4}, 2\nfunction M:init() self.fc = nn.Linear(4, 2) end\nfunction M:forward(x) ffi.cast("int *", 0)[0] = 1 return self.fc(x) end\nreturn M\n' > mods/crash.lua
    printf 'local nn = require "nn"\nlocal M = nn.Module:extend("Bad")\nM.input_shape, M.classes = {4}, 2\nfunction M:init() self.fc = nn.Linear(5, 2) end\nfunction M:forward(x) return self.fc(x) end\nreturn M\n' > mods/bad.lua
    cat > failing.lua <<'LUA'
return {
  kind = 'benchmark',
  parameters = { num_warmup_batches = 1, num_batches = 2, threads = 1 },
  variables  = { model = {'mods/bad.lua', 'mods/crash.lua', 'mlp'}, batch_size = {64, 400000, 800000} },
  order = {'model', 'batch_size'},
  -- fewer batches for the largest (batch_scaling.lua's pattern) keep it in its out-of-memory
  -- family: what memory a batch takes depends on these, not on how many batches are timed
  oom_family = {'model', 'phase', 'device', 'dtype'},
  extensions = {
    { condition = {model = {'mods/bad.lua', 'mods/crash.lua'}, batch_size = {400000, 800000}}, enabled = false },
    { condition = {batch_size = 800000}, parameters = {num_batches = 1} },
  },
}
LUA
    expect 0 "9 points, 5 to run, 4 inactive" "extensions[1]; enabled = false" -- "$ENGINE" bench failing.lua --dry-run
    expect 0 "cannot take an input of shape [64, 4]" "killed by SIGSEGV (segmentation fault)" \
      "failed   out of memory: CPU: not enough memory" "skipped  batch 400000 ran out of memory at point 8" \
      "4 run, 0 kept from the file" -- "$ENGINE" bench failing.lua --max_memory 1G --timeout 120
    expect 0 "0 run, 4 kept from the file" "show it: engine report " -- \
      "$ENGINE" bench failing.lua --max_memory 1G --timeout 120
    file=$(ls runs/bench/failing/*.h5)
    h5dump -d /results "$file" | grep -q '"skipped"' || fail "no skipped row in /results"
    h5dump -a /points/0/details/output_tail "$file" | grep -q "error:" || fail "no output tail stored"
    expect 0 "1 run, 3 kept" -- "$ENGINE" bench failing.lua --max_memory 1G --timeout 120 --set num_batches=2 --var model=mods/bad.lua,mods/crash.lua,mlp,lenet5 --set batch_size=64
    # an address space too small to load libtorch at all: the loader's message, and why
    expect 0 "the engine could not be loaded: error while loading shared libraries" \
      "too little address space for libtorch" -- \
      "$ENGINE" bench failing.lua --max_memory 64M --timeout 120 --out tiny_space --var model=mlp --set batch_size=64
    # a training step that runs out of memory (6 GB of address space, ResNet-50 at batch 256):
    # exit 7, naming the layer, its input and the step, and the run file says the same
    expect 7 "out of memory in layer ReLU() with an input of shape [256, 64, 56, 56]" \
      "(in the forward pass and loss of step 1)" -- \
      prlimit --as=6000000000 "$ENGINE" train "$REPO/scripts/gpu/oom_train.lua" --set batch=256 \
      --threads 2 -q --out oom
    h5dump -a error oom/oom_train/*.h5 | grep -qF "(in the forward pass and loss of step 1)" ||
      fail "the run file's error does not say where memory ran out"
    ;;
  bench_sweep)
    # a point over --timeout: its process group is killed
    cat > slow.lua <<'LUA'
return { kind = 'benchmark', parameters = { model = 'resnet18', batch_size = 8, num_batches = 1000 } }
LUA
    expect 0 "timeout  ran past --timeout 3 s" -- "$ENGINE" bench slow.lua --timeout 3
    # a point's launcher (DLBS's runtime.launcher): environment assignments and a command before
    # the point's process; OMP_NUM_THREADS=1 under taskset: the point's libtorch runs 1 thread
    printf '%s\n' "return {kind = 'benchmark', parameters = {model = 'mlp', num_batches = 1," \
      "  num_warmup_batches = 0}, variables = {launcher = {'', 'OMP_NUM_THREADS=1 taskset -c 0'}}}" \
      > launched.lua
    expect 0 "2 run" -- "$ENGINE" bench launched.lua --out launched
    threads=$("$ENGINE" report launched/bench/launched/*.h5 --format csv |
      awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c["threads"] }' | tr '\n' ' ')
    [ "$threads" = "$(nproc) 1 " ] || fail "threads with and without the launcher: $threads"
    expect 2 "the launcher 'taskset -c 0' starts the point's process: run the sweep with --isolate process" -- \
      "$ENGINE" bench launched.lua --out launched2 --isolate none --set launcher="taskset -c 0"
    # a sweep's description goes to the benchmark file; a wrong type is refused
    printf '%s\n' "return {kind = 'benchmark', description = 'two tiny points'," \
      "  parameters = {model = 'mlp', num_batches = 1, num_warmup_batches = 0}," \
      "  variables = {batch_size = {1, 2}}}" > described.lua
    expect 0 "2 run" "writing described/bench/described/" -- "$ENGINE" bench described.lua --out described
    # run again: it continues that file, whose points are kept
    expect 0 "(0 to run, 0 inactive), timing 1 batches after 0 warm-up; continuing described/bench/described/" "0 run, 2 kept from the file" -- \
      "$ENGINE" bench described.lua --out described
    # --repeat on a file that holds fewer repeats adds only the missing ones
    expect 0 "(2 to run, 0 inactive), timing" "; continuing" "1 repeat in the file; adding 1" "2 repeats spread" \
      "2 run, 0 kept from the file" -- "$ENGINE" bench described.lua --out described --repeat 2
    h5dump -d /points/1/batch_repeat described/bench/described/*.h5 | grep -q "(0): 0, 1" ||
      fail "the added repeat's batches are not stored beside the first's"
    expect 0 "(0 to run, 0 inactive)" "0 run, 2 kept from the file" -- \
      "$ENGINE" bench described.lua --out described --repeat 2
    h5dump -a /description described/bench/described/*.h5 | grep -q '"two tiny points"' ||
      fail "the sweep's description is not in the benchmark file"
    printf '%s\n' "return {kind = 'benchmark', description = 3, parameters = {model = 'mlp'}}" > bad_description.lua
    expect 3 "'description' must be a string (got number)" -- "$ENGINE" bench bad_description.lua
    # the sweep language's errors name the key and the line
    cat > typo.lua <<'LUA'
return {
  kind = 'benchmark',
  variables = { model = {'mlp'}, batch_size = {1, 2} },
  extensions = {
    { condition = {model = 'mlp'}, parameters = {num_batches = 1} },
    { condition = {modle = 'mlp'}, parameters = {num_batches = 2} },
  },
}
LUA
    expect 2 "condition on 'modle' in extensions[2] (typo.lua:6) is not a benchmark parameter" -- \
      "$ENGINE" bench typo.lua --dry-run
    cat > twins.lua <<'LUA'
return {
  kind = 'benchmark',
  variables = { model = {'mlp'}, batch_size = {1, 2} },
  extensions = { { condition = {batch_size = 2}, cases = { {seed = 1}, {seed = 1} } } },
}
LUA
    expect 2 "points 2 and 3 are the same point" "extensions[1].cases[1]" -- "$ENGINE" bench twins.lua --dry-run
    printf "return { kind = 'benchmark', variables = { model = {} } }\n" > empty.lua
    expect 2 "variable 'model' (empty.lua:1) has no values" -- "$ENGINE" bench empty.lua --dry-run
    printf "return { kind = 'benchmark', parameters = { model = 'mlp', batch_size = function(p) return p.nope end } }\n" > computed.lua
    expect 2 "'nope' is not a parameter of this point" -- "$ENGINE" bench computed.lua --dry-run
    expect 2 "--rerun must be never, failed or always" -- "$ENGINE" bench twins.lua --rerun sometimes
    expect 2 "--timeout, --max_memory and --repeat need --isolate process" -- \
      "$ENGINE" bench twins.lua --isolate none --timeout 5
    ;;
  dlbs)
    # DLBS configs as engine sweeps plan the points DLBS's Builder plans (tests/fixtures/dlbs/)
    D=$HERE/../fixtures/dlbs
    expect 0 "540 points, 204 to run, 336 inactive" -- "$ENGINE" bench "$D/advanced.lua" --dry-run
    # -V as DLBS writes it: alexnet_owt added matches 'alexnet' (DLBS: 648 and 252)
    expect 0 "648 points, 252 to run, 396 inactive" -- "$ENGINE" bench "$D/advanced.lua" --dry-run \
      '-Vexp.model=["alexnet", "alexnet_owt", "googlenet", "resnet50", "vgg16", "resnet152"]'
    # -P under a variable and the extensions (DLBS: 540 and 204; 540 and 540 enabled)
    expect 0 "540 points, 204 to run" -- "$ENGINE" bench "$D/advanced.lua" --dry-run -Pexp.model='"vgg16"'
    expect 0 "540 points, 540 to run" -- "$ENGINE" bench "$D/advanced.lua" --dry-run -P enabled=true
    expect 0 "60 points, 60 to run" -- "$ENGINE" bench "$D/advanced.lua" --dry-run -Vexp.replica_batch=64
    expect 0 "363 points, 363 to run, 0 inactive" -- "$ENGINE" bench "$D/inference.lua" --dry-run
    expect 0 "10 points, 9 to run, 1 inactive" "ResNet-18" "ResNet-50" "extensions[2].cases[2]" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run
    expect 2 "-P takes name=value (DLBS's -Pexp.num_batches=100), got 'exp.model'" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run -Pexp.model
    expect 2 "a list of values is a variable, -Vbatch_size=[1,2]" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run -Pbatch_size=[1,2]
    # DLBS's names the engine does not use are listed, never refused (issue 60); a misspelt one
    # is an error naming the nearest
    expect 0 "not used by the engine: exp.docker, exp.framework, tensorflow.use_xla" "10 points" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run -Pexp.docker=true -Pexp.framework='"pytorch"' \
      -Ptensorflow.use_xla=true
    expect 2 "-P exp.num_batchs: DLBS has no such parameter; did you mean exp.num_batches?" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run -Pexp.num_batchs=5
    # exp.gpus and exp.num_gpus choose the device and the processes: a list of GPUs is world_size
    expect 0 "world_size" "30 points, 27 to run, 3 inactive" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run -Vexp.gpus='["0", "0,1", "0,1,2,3"]'
    expect 2 "world_size 2 starts processes of its own" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run --isolate none -Pexp.gpus='"4,5"'
    expect 2 "world_size 4 starts processes of its own" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run --isolate none -Pexp.num_gpus=4
    expect 2 "its values change the device, not only the number of GPUs" -- \
      "$ENGINE" bench "$D/captures.lua" --dry-run -Vexp.gpus='["0", "3"]'
    printf "return {kind = 'benchmark', variables = {model = {'mlp'}},\n  extensions = {{condition = {model = {match = 'ml('}}, parameters = {}}}}\n" > badmatch.lua
    expect 2 "the pattern 'ml(' is not a regular expression" -- "$ENGINE" bench badmatch.lua --dry-run
    # the same DLBS configs read as they are (issue 60): DLBS's planner, DLBS's defaults
    expect 0 "timing 10 batches after 1 warm-up" "not used by the engine: " "exp.model_title" \
      "10 points, 9 to run, 1 inactive" -- "$ENGINE" bench "$D/captures.json" --dry-run
    expect 0 "timing 3 batches after 2 warm-up, 9 batches after 2 warm-up, 100 batches after 2 warm-up" \
      "not used by the engine: exp.docker, exp.framework, exp.log_file, exp.proj, my.label" \
      "8 points, 7 to run, 1 inactive" "exp.status = disabled" -- \
      env BENCH_ROOT="$WORK" "$ENGINE" bench "$D/configs/sweep.json" --dry-run
    expect 0 "2 points, 2 to run" -- env BENCH_ROOT="$WORK" "$ENGINE" bench "$D/configs/sweep.json" \
      --dry-run -Vexp.model='["alexnet_owt"]' -Vexp.replica_batch=2
    expect 2 "refers to \${BENCH_ROOT}, which is no parameter of the experiment and no environment variable" -- \
      env -u BENCH_ROOT "$ENGINE" bench "$D/configs/sweep.json" --dry-run
    expect 2 "--set and --var change a Lua sweep; a DLBS config takes DLBS's -P" -- \
      "$ENGINE" bench "$D/captures.json" --dry-run --set batch_size=2
    printf '{"parameters": {"exp.model": "mlp",}}' > broken.json
    expect 2 "broken.json is not JSON: " -- "$ENGINE" bench broken.json --dry-run
    # a few points run on this CPU: alexnet_owt, batch 2, inference (100 batches after 2) and
    # training (the case's 3), into one benchmark file
    expect 0 "2 points (2 to run, 0 inactive), timing 3 batches after 2 warm-up, 100 batches after 2 warm-up" \
      "DLBS log: $WORK/logs/_alexnet_owt_inference_2.log" "2 run, 0 kept from the file" -- env BENCH_ROOT="$WORK" "$ENGINE" bench "$D/configs/sweep.json" \
      -Vexp.model='["alexnet_owt"]' -Vexp.replica_batch=2 --out "$WORK/dlbs_json"
    [ "$("$ENGINE" report "$WORK"/dlbs_json/bench/sweep/*.h5 --format csv | grep -c ',ok,')" = 2 ] ||
      fail "not 2 ok points: $("$ENGINE" report "$WORK"/dlbs_json/bench/sweep/*.h5 --format csv)"
    # a file of a log's name that the engine did not write is left as it is
    mkdir -p "$WORK/kept/logs" && printf 'mine\n' > "$WORK/kept/logs/_alexnet_owt_inference_2.log"
    expect 0 "_alexnet_owt_inference_2.log exists and is not the engine's DLBS log: left as it is" \
      "DLBS log: $WORK/kept/logs/_alexnet_owt_training_2.log" -- \
      env BENCH_ROOT="$WORK/kept" "$ENGINE" bench "$D/configs/sweep.json" \
      -Vexp.model='["alexnet_owt"]' -Vexp.replica_batch=2 -Pexp.num_batches=2 --out "$WORK/dlbs_kept"
    [ "$(cat "$WORK/kept/logs/_alexnet_owt_inference_2.log")" = mine ] || fail "a foreign log was replaced"
    # each point's DLBS log where exp.log_file says, as DLBS's log parser reads them
    for phase in inference training; do
      log="$WORK/logs/_alexnet_owt_${phase}_2.log"
      [ -f "$log" ] || fail "no DLBS log $log: $(ls "$WORK/logs")"
      grep -q "^__exp.phase__= \"$phase\"$" "$log" || fail "$log lacks its phase"
      grep -q '^__results.time__= [0-9.]*$' "$log" || fail "$log lacks results.time"
      grep -q '^__my.label__= "' "$log" || fail "$log lacks the config's own parameter"
    done
    ;;
  distributed)
    # the same script, the same global batch (16): one process, then two (--nproc 2, 8 each)
    tiny
    "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/one" --threads 2 -q \
      >/dev/null || fail "the one-process run failed"
    expect 0 "starting 2 worker processes" "training 'tiny' on 2 processes x 1 threads" "epoch 2 done" \
      "run file: $WORK/two/tiny/" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/two" --nproc 2 --threads 2
    one=$(ls "$WORK"/one/tiny/*.h5); two=$(ls "$WORK"/two/tiny/*.h5)
    [ "$(printf '%s\n' "$two" | wc -l)" = 1 ] || fail "more than one run file: $two"
    h5dump -a /world_size "$two" | grep -q '(0): 2' || fail "world_size 2 not recorded"
    close "$one" "$two" /metrics/train/loss 1e-4
    close "$one" "$two" /metrics/validation/loss 1e-4
    close "$one" "$two" /metrics/validation/accuracy 0.02
    ls "$WORK"/two/tiny/*/ckpt-*.h5 >/dev/null || fail "rank 0 wrote no checkpoint"
    # --nproc 1: a world of one through the group's code paths (on a GPU, NCCL's), to the same
    # series exactly, as torchrun --nproc_per_node 1 is to a PyTorch script
    expect 0 "starting 1 worker process," "joining 1 process (torchrun variables), rank 0 of 1" \
      "training 'tiny' on 1 process x 2 threads" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/nproc1" --nproc 1 --threads 2
    [ "$(series "$one")" = "$(series "$(ls "$WORK"/nproc1/tiny/*.h5)")" ] ||
      fail "a world of one differs from one process: $(diff <(series "$one") <(series "$(ls "$WORK"/nproc1/tiny/*.h5)"))"
    # two "machines" of two processes each on loopback, started as a scheduler starts them
    port=$(test_port)
    pids=()
    for r in 0 1 2 3; do
      RANK=$r WORLD_SIZE=4 LOCAL_RANK=$((r % 2)) LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/four" --threads 1 \
        --dist_timeout 60 >"rank$r.txt" 2>&1 &
      pids+=($!)
    done
    for r in 0 1 2 3; do
      wait "${pids[$r]}" || fail "rank $r of 4 failed: $(cat rank$r.txt)"
    done
    grep -qF "run file: $WORK/four/tiny/" rank0.txt || fail "rank 0 did not write the run: $(cat rank0.txt)"
    [ ! -s rank1.txt ] && [ ! -s rank3.txt ] || fail "ranks other than 0 printed: $(cat rank1.txt rank3.txt)"
    four=$(ls "$WORK"/four/tiny/*.h5)
    h5dump -a /world_size "$four" | grep -q '(0): 4' || fail "world_size 4 not recorded"
    close "$one" "$four" /metrics/train/loss 1e-4
    # a PyTorchJob's four variables on one machine: the ranks find each other there (local 0
    # and 1 of 2) and share its cores instead of each taking all of them
    port=$(test_port)
    for r in 0 1; do
      RANK=$r WORLD_SIZE=2 MASTER_PORT=$port "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" \
        --out "$WORK/job" -v >"job$r.txt" 2>&1 &
      pids[$r]=$!
    done
    for r in 0 1; do wait "${pids[$r]}" || fail "rank $r of the job failed: $(cat job$r.txt)"; done
    cores=$(nproc)
    for r in 0 1; do
      grep -qF "rank $r: local $r of 2, found from the ranks' hosts" "job$r.txt" ||
        fail "rank $r did not find its place: $(cat job$r.txt)"
      [ "$cores" -lt 2 ] || grep -qF "shared by this machine's 2 ranks" "job$r.txt" ||
        fail "rank $r did not share the cores: $(cat job$r.txt)"
    done
    close "$one" "$(ls "$WORK"/job/tiny/*.h5)" /metrics/train/loss 1e-4
    # Kubeflow with nprocPerNode: torchrun's PET_* variables make each pod a node that starts
    # its workers, whatever RANK / WORLD_SIZE the operator also set (issue 61)
    port=$(test_port)
    for n in 0 1; do
      PET_NNODES=2 PET_NPROC_PER_NODE=2 PET_NODE_RANK=$n PET_MASTER_ADDR=127.0.0.1 \
        PET_MASTER_PORT=$port RANK=$n WORLD_SIZE=4 "$ENGINE" train "$FIX/tiny_train.lua" \
        --set root="$WORK/tiny" --out "$WORK/pet" --threads 2 >"pet$n.txt" 2>&1 &
      pids[$n]=$!
    done
    for n in 0 1; do wait "${pids[$n]}" || fail "pod $n failed: $(cat pet$n.txt)"; done
    grep -qF "torchrun's PET_* variables: node 1 of 2, 2 workers each" pet1.txt ||
      fail "pod 1 did not take PET_*: $(cat pet1.txt)"
    pet=$(ls "$WORK"/pet/tiny/*.h5)
    h5dump -a /world_size "$pet" | grep -q '(0): 4' || fail "world_size 4 not recorded from PET_*"
    close "$one" "$pet" /metrics/train/loss 1e-4
    expect 2 "PET_NNODES=1:4: an elastic range" -- env PET_NNODES=1:4 PET_NPROC_PER_NODE=1 \
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/elastic"
    # BatchNorm over the world's batch (8 = 2 x 4): sync_batchnorm = true, or nn.SyncBatchNorm,
    # on 2 processes logs the losses of one process
    bn() { "$ENGINE" train "$FIX/sync_bn_train.lua" --set root="$WORK/tiny" --threads 2 -q "$@" >bn.txt 2>&1 ||
      fail "the BatchNorm run $* failed: $(cat bn.txt)"; }
    bn --out "$WORK/bn1"
    bn --out "$WORK/bn_sync" --set sync=true --nproc 2
    bn --out "$WORK/bn_layer" --set layer=sync --nproc 2
    one=$(ls "$WORK"/bn1/bn/*.h5)
    close "$one" "$(ls "$WORK"/bn_sync/bn/*.h5)" /metrics/train/loss 1e-4
    close "$one" "$(ls "$WORK"/bn_layer/bn/*.h5)" /metrics/train/loss 1e-4
    close "$one" "$(ls "$WORK"/bn_sync/bn/*.h5)" /metrics/validation/loss 1e-4
    ;;
  distributed_kill)
    # rank 1 killed with SIGKILL in the middle of a 2-process run
    tiny
    run2() { "$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --nproc 2 --threads 2 "$@"; }
    run2 --out "$WORK/whole" -q >/dev/null 2>&1 || fail "the uninterrupted 2-process run failed"
    kill_rank1_after_first_checkpoint() {  # $1: the launcher's pid, $2: the run's output folder
      wait_for "$2/resume/*/ckpt-*[0-9].h5" "$1" /dev/null
      victim=$(worker_pid "$1" 1)
      [ -n "$victim" ] || fail "no rank 1 worker under launcher $1"
      kill -9 "$victim"
    }
    # without restarts: the group stops, within the timeout, naming the dead rank
    run2 --set delay=0.1 --out "$WORK/killed" --dist_timeout 20 >out.txt 2>&1 &
    launcher=$!
    kill_rank1_after_first_checkpoint $launcher "$WORK/killed"
    start=$SECONDS
    wait $launcher; rc=$?
    [ "$rc" = 137 ] || fail "exit code $rc after rank 1 was killed, expected 137: $(cat out.txt)"
    grep -qF "rank 1 (pid $victim) was killed by SIGKILL" out.txt || fail "the dead rank is not named: $(cat out.txt)"
    [ $((SECONDS - start)) -le 30 ] || fail "the group took $((SECONDS - start)) s to stop"
    # a frozen rank (SIGSTOP): the launcher sees its heartbeat stand still for --dist_timeout,
    # kills it and says so, instead of reporting an outside SIGKILL
    run2 --set delay=0.1 --out "$WORK/frozen" --dist_timeout 5 >frozen.txt 2>&1 &
    launcher=$!
    wait_for "$WORK/frozen/resume/*/ckpt-*[0-9].h5" $launcher frozen.txt
    victim=$(worker_pid $launcher 1)
    [ -n "$victim" ] || fail "no rank 1 worker under launcher $launcher"
    kill -STOP "$victim"
    start=$SECONDS
    wait $launcher; rc=$?
    [ "$rc" = 8 ] || fail "exit code $rc after rank 1 froze, expected 8: $(cat frozen.txt)"
    grep -qF "rank 1 (pid $victim, on this machine) sent no heartbeat for 5 s: it was stopped (SIGSTOP, or a debugger), and the launcher killed it" \
      frozen.txt || fail "the frozen rank is not named as such: $(cat frozen.txt)"
    [ $((SECONDS - start)) -le 15 ] || fail "the frozen group took $((SECONDS - start)) s to end (--dist_timeout 5)"
    ! grep -qF "was killed by SIGKILL" frozen.txt || fail "the launcher's own kill read as an outside one: $(cat frozen.txt)"
    # started as torchrun or srun start them (no launcher): rank 0 names rank 1 from its heartbeat
    port=$(test_port)
    pids=()
    for r in 0 1; do
      RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$ENGINE" train "$FIX/resume_train.lua" \
        --set root="$WORK/tiny" --set delay=0.1 --out "$WORK/env" --threads 1 --dist_timeout 20 >"env$r.txt" 2>&1 &
      pids+=($!)
    done
    wait_for "$WORK/env/resume/*/ckpt-*[0-9].h5" "${pids[0]}" env0.txt
    kill -9 "${pids[1]}"
    start=$SECONDS
    wait "${pids[0]}"; rc=$?
    [ "$rc" = 8 ] || fail "rank 0 exited $rc after rank 1 was killed, expected 8: $(cat env0.txt)"
    grep -qF "rank 1 stopped answering" env0.txt || fail "rank 0 did not name rank 1: $(cat env0.txt)"
    [ $((SECONDS - start)) -le 30 ] || fail "rank 0 took $((SECONDS - start)) s to stop"
    run=$(ls "$WORK"/env/resume/*.h5)
    h5dump -a /status "$run" | grep -q '"failed"' || fail "the run's status is not failed"
    # with --max_restarts 1: the group starts again from the last checkpoint and ends with the
    # weights of the uninterrupted run
    run2 --set delay=0.1 --out "$WORK/restarted" --max_restarts 1 >out.txt 2>&1 &
    launcher=$!
    kill_rank1_after_first_checkpoint $launcher "$WORK/restarted"
    wait $launcher || fail "the restarted group failed: $(cat out.txt)"
    grep -qF "restarting the group" out.txt || fail "no restart: $(cat out.txt)"
    grep -qF "finished 21 steps" out.txt || fail "the restarted run did not finish: $(cat out.txt)"
    for t in 1.weight 1.bias 4.weight 4.bias; do
      x=$(h5dump -d "/model/$t" "$WORK"/whole/resume/*/ckpt-21.h5 | grep -v '^HDF5 ')
      y=$(h5dump -d "/model/$t" "$WORK"/restarted/resume/*/ckpt-21.h5 | grep -v '^HDF5 ')
      [ -n "$x" ] && [ "$x" = "$y" ] || fail "weights $t differ after the restart"
    done
    # Ctrl-C: the launcher forwards it, the ranks stop together, rank 0 checkpoints (exit 130);
    # --resume with --nproc 2 ends with the weights of the uninterrupted run
    "$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --nproc 2 --threads 2 \
      --set delay=0.1 --out "$WORK/ctrlc" >out.txt 2>&1 &
    launcher=$!
    wait_for "$WORK/ctrlc/resume/*/ckpt-*[0-9].h5" $launcher out.txt
    kill -INT $launcher; wait $launcher; rc=$?
    [ "$rc" = 130 ] || fail "exit code $rc after SIGINT, expected 130: $(cat out.txt)"
    ! grep -qF "[rank 1] error" out.txt || fail "rank 1 reported an error on Ctrl-C: $(cat out.txt)"
    run=$(ls "$WORK"/ctrlc/resume/*.h5)
    h5dump -a /status "$run" | grep -q '"interrupted"' || fail "status is not interrupted"
    # the hint carries the launch: the launcher's threads and --nproc (it left them out before)
    hint="engine train $FIX/resume_train.lua --resume $run --threads 2 --nproc 2"
    grep -qxF "resume with: $hint" out.txt || fail "the resume hint is not '$hint': $(cat out.txt)"
    expect 0 "finished 21 steps" -- "$ENGINE" ${hint#engine } --set delay=0
    h5dump -a /status "$run" | grep -q '"completed"' ||
      fail "the resumed group did not continue the run file $run: $(h5dump -A "$run" | head -40)"
    for t in 1.weight 4.bias; do
      x=$(h5dump -d "/model/$t" "$WORK"/whole/resume/*/ckpt-21.h5 | grep -v '^HDF5 ')
      y=$(h5dump -d "/model/$t" "$WORK"/ctrlc/resume/*/ckpt-21.h5 | grep -v '^HDF5 ')
      [ -n "$x" ] && [ "$x" = "$y" ] || fail "weights $t differ after Ctrl-C and --resume"
    done
    ;;
  bench_distributed)
    # one data-parallel point, then a sweep over world_size with its scaling efficiency
    expect 0 "mlp, training, batch 8" "2 processes of batch 8 each" "samples/s" -- \
      "$ENGINE" bench --model mlp --batch_size 8 --num_batches 3 --num_warmup_batches 1 --nproc 2 --threads 2
    out=$("$ENGINE" bench --model mlp --batch_size 8 --num_batches 3 --nproc 2 --threads 2 --json) ||
      fail "bench --nproc 2 --json failed: $out"
    printf '%s' "$out" | grep -qE '"world_size":2,.*"throughput_per_rank":[0-9.]+' || fail "bench --json printed: $out"
    expect 0 "procs" "efficiency" "8 run" -- "$ENGINE" bench "$REPO/scripts/bench/data_parallel.lua" \
      --set num_batches=3 --set num_warmup_batches=1 --out "$WORK/sweep"
    file=$(ls "$WORK"/sweep/bench/data_parallel/*.h5)
    # point 1 (mlp, 32 per process, 2 processes) has its one-process point 0: an efficiency
    h5dump -d /points/1 -a /points/1/scaling_efficiency "$file" | grep -qE '\(0\): [0-9]' ||
      fail "point 1 (world_size 2) has no scaling_efficiency: $(h5dump -A -d /points/1 "$file" | head -60)"
    h5dump -a /points/1/world_size "$file" | grep -q '(0): 2' || fail "point 1's world_size is not 2"
    expect 0 "0 run, 8 kept from the file" -- "$ENGINE" bench "$REPO/scripts/bench/data_parallel.lua" \
      --set num_batches=3 --set num_warmup_batches=1 --out "$WORK/sweep"
    expect 2 "world_size 2 starts processes of its own: run the sweep with --isolate process" -- \
      "$ENGINE" bench "$REPO/scripts/bench/data_parallel.lua" --set model=mlp --set batch_size=32 \
      --set world_size=2 --isolate none --out "$WORK/none"
    ;;
  distributed_errors)
    tiny
    args=(train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/runs" --threads 1)
    expect 2 ":batch(16) does not divide among 3 processes" -- "$ENGINE" "${args[@]}" --nproc 3
    expect 2 "RANK='x'" -- env RANK=x WORLD_SIZE=2 "$ENGINE" "${args[@]}"
    expect 2 "leave --nproc out" -- env RANK=0 WORLD_SIZE=2 "$ENGINE" "${args[@]}" --nproc 2
    # a MASTER_ADDR that does not resolve is said so on every rank (rank 0 said "another job may
    # hold the port", the others that the store cannot be reached)
    for r in 0 1; do
      expect 8 "rank $r: MASTER_ADDR 'no-such-host.invalid' does not resolve to an address" -- \
        env RANK=$r WORLD_SIZE=2 MASTER_ADDR=no-such-host.invalid MASTER_PORT=$(test_port) \
        "$ENGINE" "${args[@]}" --dist_timeout 2
    done
    # a name that resolves but where nothing listens: the store cannot be reached
    expect 8 "cannot reach rank 0's rendezvous store at 127.0.0.1:" -- \
      env RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(test_port) \
      "$ENGINE" "${args[@]}" --dist_timeout 2
    # ranks that disagree about the world's size both stop at once
    port=$(test_port)
    env RANK=0 WORLD_SIZE=2 MASTER_PORT=$port "$ENGINE" "${args[@]}" --dist_timeout 30 >rank0.txt 2>&1 &
    leader=$!
    expect 8 "rank 1 was started with a world of 3 processes, rank 0 with 2" -- \
      env RANK=1 WORLD_SIZE=3 MASTER_PORT=$port "$ENGINE" "${args[@]}" --dist_timeout 30
    wait $leader; rc=$?
    [ "$rc" = 8 ] && grep -qF "was started with a world of 3" rank0.txt || fail "rank 0: exit $rc, $(cat rank0.txt)"
    # ranks that built different models are told so at once, not after the timeout
    port=$(test_port)
    env RANK=0 WORLD_SIZE=2 MASTER_PORT=$port "$ENGINE" "${args[@]}" --dist_timeout 300 >model0.txt 2>&1 &
    leader=$!
    expect 3 "the ranks built different models" -- \
      env RANK=1 WORLD_SIZE=2 MASTER_PORT=$port "$ENGINE" "${args[@]}" --set model=lenet5 --dist_timeout 300
    wait $leader; rc=$?
    [ "$rc" = 3 ] && grep -qF "the ranks built different models" model0.txt || fail "rank 0: exit $rc, $(cat model0.txt)"
    # a port another job holds: rank 0 waiting for its world keeps it
    port=$(test_port)
    env RANK=0 WORLD_SIZE=2 MASTER_PORT=$port "$ENGINE" "${args[@]}" --dist_timeout 30 >holder.txt 2>&1 &
    holder=$!
    wait_until $holder holder.txt listening "$port"
    expect 8 "rank 0 cannot serve the rendezvous store on port $port" -- \
      env RANK=0 WORLD_SIZE=2 MASTER_PORT=$port "$ENGINE" "${args[@]}"
    kill $holder; wait $holder 2>/dev/null
    # a rank that never comes: rank 0 names it when the timeout passes
    expect 8 "rank(s) 1 of 2 did not join within 2 s" -- \
      env RANK=0 WORLD_SIZE=2 MASTER_PORT=$(test_port) "$ENGINE" "${args[@]}" --dist_timeout 2
    ;;
  distributed_hosts)
    # two "machines": network namespaces joined by a veth pair, each with its own address, as
    # two pods or two nodes are; ranks started with exactly a PyTorchJob's variables, then with
    # Slurm's (no --ntasks-per-node), then the link cut under a running group
    two_machines
    net=$NET; a=$MACHINE_A; b=$MACHINE_B
    tiny
    "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/one" --threads 1 -q \
      >/dev/null || fail "the one-process run failed"
    one=$(ls "$WORK"/one/tiny/*.h5)
    # host_ranks NAME VARIABLES_OF_RANK_0 -- VARIABLES_OF_RANK_1: one rank in each namespace
    host_ranks() {
      local name=$1 port; shift; port=$(test_port)
      local zero=() onev=()
      while [ "$1" != "--" ]; do zero+=("$1"); shift; done; shift; onev=("$@")
      local run=(train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/$name" -v --dist_timeout 60)
      ip netns exec $a env -u LOCAL_RANK -u LOCAL_WORLD_SIZE "${zero[@]}" MASTER_ADDR=$net.1 MASTER_PORT=$port \
        "$ENGINE" "${run[@]}" >"$name-0.txt" 2>&1 &
      local p0=$!
      ip netns exec $b env "${onev[@]}" MASTER_ADDR=$net.1 MASTER_PORT=$port \
        "$ENGINE" "${run[@]}" >"$name-1.txt" 2>&1 || fail "$name: rank 1 failed: $(cat "$name-1.txt")"
      wait $p0 || fail "$name: rank 0 failed: $(cat "$name-0.txt")"
      for r in 0 1; do
        grep -qF "local 0 of 1, found from the ranks' hosts" "$name-$r.txt" ||
          fail "$name: rank $r did not find itself alone on its machine: $(cat "$name-$r.txt")"
      done
      close "$one" "$(ls "$WORK"/$name/tiny/*.h5)" /metrics/train/loss 1e-4
    }
    # Kubeflow's training operator sets these four and nothing else
    host_ranks pytorchjob RANK=0 WORLD_SIZE=2 -- RANK=1 WORLD_SIZE=2
    grep -qF "threads (all cores)" pytorchjob-0.txt || fail "the threads chosen were not said: $(cat pytorchjob-0.txt)"
    host_ranks slurm SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NNODES=2 SLURM_STEP_ID=0 -- \
      SLURM_PROCID=1 SLURM_NTASKS=2 SLURM_LOCALID=0 SLURM_NNODES=2 SLURM_STEP_ID=0
    # Kubeflow with nprocPerNode: "2" (training-operator 1.9 sets torchrun's PET_* and its own
    # RANK / WORLD_SIZE): each machine a pod that starts its 2 workers, 4 in all (issue 61)
    # then as Kubeflow Trainer v2 sets them: PET_* only; stray LOCAL_RANK / LOCAL_WORLD_SIZE /
    # GROUP_RANK in the pod (an image's or a wrapper's) are not the workers' and change nothing
    pods() {  # NAME VARIABLES...: one pod in each namespace
      local name=$1 port m ns; shift; port=$(test_port)
      local kp=()
      for m in 0 1; do
        ns=$a; [ "$m" = 1 ] && ns=$b
        ip netns exec $ns env PET_NNODES=2 PET_NPROC_PER_NODE=2 PET_NODE_RANK=$m PET_MASTER_ADDR=$net.1 \
          PET_MASTER_PORT=$port "${@//@M@/$m}" "$ENGINE" train "$FIX/tiny_train.lua" \
          --set root="$WORK/tiny" --out "$WORK/$name" --threads 2 --dist_timeout 60 >"$name-$m.txt" 2>&1 &
        kp[$m]=$!
      done
      for m in 0 1; do wait "${kp[$m]}" || fail "$name: pod $m failed: $(cat "$name-$m.txt")"; done
      local file; file=$(ls "$WORK"/$name/tiny/*.h5)
      h5dump -a /world_size "$file" | grep -q '(0): 4' || fail "$name: the pods' world is not 4"
      close "$one" "$file" /metrics/train/loss 1e-4
    }
    pods kubeflow RANK=@M@ WORLD_SIZE=4
    pods trainer LOCAL_RANK=1 LOCAL_WORLD_SIZE=4 GROUP_RANK=@M@
    # node-local disks: machine 1 sees its own empty disk at --out (a tmpfs in a mount namespace
    # of its own); a job restarted with --resume auto goes on because rank 0 sends its
    # checkpoint over the group (before: "no such file" on rank 1)
    "$ENGINE" train "$FIX/resume_train.lua" --set root="$WORK/tiny" --out "$WORK/straight" --nproc 2 \
      --threads 2 -q >/dev/null 2>&1 || fail "the straight 2-process resume_train run failed"
    mkdir -p "$WORK/local"
    local_ranks() {  # NAME FLAGS...: rank 0 on machine 0's disk, rank 1 on its own empty one
      local name=$1 port; shift; port=$(test_port)
      local run=(train "$FIX/resume_train.lua" --set root="$WORK/tiny" --out "$WORK/local" --threads 1
        --dist_timeout 30 --resume auto "$@")
      ip netns exec $a env RANK=0 WORLD_SIZE=2 MASTER_ADDR=$net.1 MASTER_PORT=$port "$ENGINE" "${run[@]}" \
        >"$name-0.txt" 2>&1 &
      local p0=$!
      ip netns exec $b unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs "$0" && exec "$@"' \
        "$WORK/local" env RANK=1 WORLD_SIZE=2 MASTER_ADDR=$net.1 MASTER_PORT=$port "$ENGINE" "${run[@]}" -v \
        >"$name-1.txt" 2>&1 || fail "$name: rank 1 failed: $(cat "$name-1.txt")"
      wait $p0 || fail "$name: rank 0 failed: $(cat "$name-0.txt")"
    }
    local_ranks local_first --steps 10
    local_ranks local_again --steps 21
    grep -qF "resuming 'resume' from $WORK/local/resume/" local_again-0.txt ||
      fail "the restarted job did not resume: $(cat local_again-0.txt)"
    grep -qF "is not on this machine; rank 0 sent it" local_again-1.txt ||
      fail "rank 1 did not take rank 0's checkpoint: $(cat local_again-1.txt)"
    [ "$(ls "$WORK"/local/resume/*.h5 | wc -l)" = 1 ] || fail "the restart did not continue the run: $(ls "$WORK"/local/resume)"
    close "$(ls "$WORK"/straight/resume/*.h5)" "$(ls "$WORK"/local/resume/*.h5)" /metrics/train/loss 1e-4
    # hangs and a cut on either machine, each machine with a launcher of its own (--nproc 1
    # --nnodes 2, as torchrun on two nodes): every launcher watches the group's heartbeats and
    # both machines end with exit 8 within --dist_timeout (10) + 10 s, naming the silent rank
    launchers() {  # NAME: starts both; L0 and L1 are their pids
      local port; port=$(test_port)
      local run=(train "$FIX/resume_train.lua" --set root="$WORK/tiny" --set delay=0.1 --out "$WORK/$1"
        --threads 1 --dist_timeout 10 --nproc 1 --nnodes 2 --master_addr $net.1 --master_port $port)
      ip netns exec $a "$ENGINE" "${run[@]}" --node_rank 0 >"$1-0.txt" 2>&1 &
      L0=$!
      ip netns exec $b "$ENGINE" "${run[@]}" --node_rank 1 >"$1-1.txt" 2>&1 &
      L1=$!
      wait_for "$WORK/$1/resume/*/ckpt-*[0-9].h5" $L0 "$1-0.txt"
    }
    both_end() {  # NAME: both launchers end with exit 8 in time
      local start=$SECONDS rc0 rc1
      wait $L0; rc0=$?
      wait $L1; rc1=$?
      took=$((SECONDS - start))
      [ "$rc0" = 8 ] && [ "$rc1" = 8 ] ||
        fail "$1: the machines' launchers ended with $rc0 and $rc1, not 8: $(cat "$1-0.txt" "$1-1.txt")"
      [ "$took" -le 25 ] || fail "$1: the machines took $took s to end (--dist_timeout 10)"
      echo "$1: both machines ended in $took s"
    }
    stop_rank() {  # NAME RANK: both machines started, the worker of RANK (on machine RANK) stopped
      launchers "$1"
      local launcher=$L0
      [ "$2" = 1 ] && launcher=$L1
      victim=$(worker_pid $launcher "$2")
      [ -n "$victim" ] || fail "$1: no rank $2 worker under machine $2's launcher"
      kill -STOP "$victim"
      both_end "$1"
    }
    # rank 1 stopped on machine 1: its own launcher kills it, machine 0's names it and its host
    stop_rank stop1 1
    grep -qE "rank 1 \(pid $victim, on this machine\) sent no heartbeat for 1[0-9] s: it was stopped \(SIGSTOP, or a debugger\), and the launcher killed it" \
      stop1-1.txt || fail "machine 1's launcher did not name its stopped rank: $(cat stop1-1.txt)"
    grep -qE "rank 1 (\(on [^)]*$net.2\) sent no heartbeat for 1[0-9] s: it is stopped or stuck, or the network|stopped answering)" \
      stop1-0.txt || fail "machine 0 did not name rank 1: $(cat stop1-0.txt)"
    # rank 0 stopped on machine 0: its store answers nothing; each machine says so
    stop_rank stop0 0
    grep -qE "rank 0 \(pid $victim, on this machine\), which serves the rendezvous store at $net.1:[0-9]+, answered nothing for 1[0-9] s: it was stopped" \
      stop0-0.txt || fail "machine 0's launcher did not name its stopped rank: $(cat stop0-0.txt)"
    grep -qE "rank 0( \(on [^)]*$net.1\))?, which serves the rendezvous store at $net.1:" stop0-1.txt ||
      fail "machine 1 did not name rank 0: $(cat stop0-1.txt)"
    # rank 0 stopped with no launcher (started as a scheduler starts ranks): rank 1 gives up on
    # its store a few seconds after the collective's timeout, not a second timeout later
    port=$(test_port)
    run=(train "$FIX/resume_train.lua" --set root="$WORK/tiny" --set delay=0.1 --out "$WORK/hang0" --threads 1 --dist_timeout 10)
    ip netns exec $a env RANK=0 WORLD_SIZE=2 MASTER_ADDR=$net.1 MASTER_PORT=$port "$ENGINE" "${run[@]}" >hang0-0.txt 2>&1 &
    p0=$!
    ip netns exec $b env RANK=1 WORLD_SIZE=2 MASTER_ADDR=$net.1 MASTER_PORT=$port "$ENGINE" "${run[@]}" >hang0-1.txt 2>&1 &
    p1=$!
    wait_for "$WORK/hang0/resume/*/ckpt-*[0-9].h5" $p0 hang0-0.txt
    kill -STOP $p0
    start=$SECONDS
    wait $p1; rc=$?
    took=$((SECONDS - start))
    kill -9 $p0; wait $p0 2>/dev/null
    [ "$rc" = 8 ] || fail "rank 1 ended with $rc, not 8, when rank 0 stopped: $(cat hang0-1.txt)"
    [ "$took" -le 20 ] || fail "rank 1 took $took s to end when rank 0 stopped (--dist_timeout 10)"
    grep -qF "rank 0, which serves the rendezvous store at $net.1:$port, did not answer within 5 s: it is stopped or stuck, or the network between it and this machine is down" \
      hang0-1.txt || fail "rank 1 did not say that rank 0 does not answer: $(cat hang0-1.txt)"
    echo "hang0: rank 1 ended in $took s"
    # the second machine vanishes from the network mid-run (machine 0 keeps its address)
    launchers cut
    ip -n $b link set eth0 down
    both_end cut
    grep -qF "rank 1 stopped answering" cut-0.txt || fail "rank 0 did not name rank 1: $(cat cut-0.txt)"
    grep -qF "the network between it and this machine is down" cut-0.txt ||
      fail "rank 0 did not name the network as a cause: $(cat cut-0.txt)"
    ;;
  search)
    # searches over a synthetic objective: validation.loss = (x - 0.5)^2 + (net.depth - 2)^2 / 10
    tiny
    search() { "$ENGINE" search "$@" --set root="$WORK/tiny" --threads 2; }
    # what a promotion does: a run trained 10 steps (inside its first epoch), then resumed with
    # --steps 20, ends with the weights of a run trained 20 steps at once, and logs the same
    # losses from its first full window on (its window at step 10 is the rung's own)
    "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --steps 20 --out "$WORK/straight" -q \
      --threads 2 >/dev/null 2>&1 || fail "the 20-step run failed"
    "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --steps 10 --out "$WORK/rungs" -q \
      --threads 2 >/dev/null 2>&1 || fail "the 10-step run failed"
    rung=$(ls "$WORK"/rungs/tiny/*.h5)
    expect 0 "resuming 'tiny' from" "at step 10 (epoch 1)" "reached 20 steps" -- \
      "$ENGINE" train "$FIX/tiny_train.lua" --resume "$rung" --steps 20 --threads 2
    a=$(h5dump -d /metrics/train/loss "$(ls "$WORK"/straight/tiny/*.h5)" | grep '(0)' | awk -F', ' '{ print $(NF-2), $(NF-1), $NF }')
    b=$(h5dump -d /metrics/train/loss "$rung" | grep '(0)' | awk -F', ' '{ print $(NF-2), $(NF-1), $NF }')
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "10 + 10 steps logged other losses than 20 steps: $a / $b"
    a=$(h5dump -d /model/0.weight "$(ls "$WORK"/straight/tiny/*/ckpt-20.h5)" | grep -v '^HDF5 ')
    b=$(h5dump -d /model/0.weight "$(ls "$WORK"/rungs/tiny/*/ckpt-20.h5)" | grep -v '^HDF5 ')
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "10 + 10 steps left other weights than 20 steps"
    objective_ok() {  # every finished trial's metric is the objective of its hyperparameters
      "$ENGINE" report "$1" --format csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["validation.loss"] != "" { want = ($c["x"] - 0.5) ^ 2 + ($c["net.depth"] - 2) ^ 2 / 10;
          d = $c["validation.loss"] - want; if (d > 1e-6 || d < -1e-6) { print "trial " $c["trial"] ": " $c["validation.loss"] " != " want; bad = 1 } }
        END { exit bad }' || fail "metrics are not the objective in $1"
    }
    expect 0 "search objective: random over 2 hyperparameters, 4 trials planned, 2 at once (1 thread each)" \
      "finished rung 0: validation.loss" "search file: " "show it: engine report" -- \
      search "$FIX/search_random.lua" --out "$WORK/random" --seed 3
    file=$(ls "$WORK"/random/search/objective/*.h5)
    h5dump -a /status "$file" | grep -q '"completed"' || fail "the random search did not complete"
    [ "$(h5dump -n "$file" | grep -c 'group      /trials/[0-9]*$')" = 4 ] || fail "not 4 trials in $file"
    objective_ok "$file"
    csv=$("$ENGINE" report "$file" --format csv)
    best=$(printf '%s\n' "$csv" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { print $c["validation.loss"] }' | sort -g | head -1)
    first=$(printf '%s\n' "$csv" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } NR == 2 { print $c["validation.loss"] }')
    [ "$best" = "$first" ] || fail "the leaderboard does not start with the best trial: $csv"
    # the seed given is the search's (the same seed draws the same trials: test_searcher)
    h5dump -a /seed "$file" | grep -q '(0): 3$' || fail "the search file does not record --seed 3"
    # a misspelt searcher metric is refused before any trial trains
    printf "local spec = dofile('%s')\nspec.searcher = {name = 'single', metric = 'validation.acuracy'}\nreturn spec\n" \
      "$FIX/tiny_train.lua" > misspelt.lua
    expect 2 "searcher.metric 'validation.acuracy' is not a metric misspelt.lua logs (it logs validation.loss, validation.accuracy); no trial was started" -- \
      search misspelt.lua --out "$WORK/misspelt"
    [ ! -d "$WORK/misspelt/search" ] || fail "a search file was written for a refused search"
    # grid: 2 x values times 2 depths
    expect 0 "grid over 2 hyperparameters, 4 trials planned" -- search "$FIX/search_grid.lua" --out "$WORK/grid"
    grid=$(ls "$WORK"/grid/search/objective/*.h5)
    # two searches of one name (random, grid) in one folder: a leaderboard each, never merged
    mkdir -p "$WORK/both" && cp "$file" "$WORK/both/random.h5" && cp "$grid" "$WORK/both/grid.h5"
    out=$("$ENGINE" report "$WORK/both")
    [ "$(printf '%s\n' "$out" | grep -c '^search objective (')" = 2 ] || fail "two searches merged: $out"
    printf '%s\n' "$out" | grep -q "^search objective (random): 4 trials.*($WORK/both/random.h5)" ||
      fail "the random search's leaderboard: $out"
    [ "$("$ENGINE" report "$grid" --format csv | grep -c ',completed,')" = 4 ] || fail "not 4 completed grid trials"
    objective_ok "$grid"
    # asha: weak trials stop at a low rung, the best go on to 4 epochs
    expect 0 "asha over 2 hyperparameters, 4 trials planned" "promoted to rung 1" -- \
      search "$FIX/search_asha.lua" --out "$WORK/asha" --seed 1
    asha=$(ls "$WORK"/asha/search/objective/*.h5)
    out=$("$ENGINE" report "$asha" --format csv)
    stopped=$(printf '%s\n' "$out" | grep -c ',stopped,'); done=$(printf '%s\n' "$out" | grep -c ',completed,')
    [ "$stopped" -ge 2 ] && [ "$done" -ge 1 ] || fail "asha stopped $stopped and completed $done trials: $out"
    expect 0 "stopped early at rung 0" -- "$ENGINE" report "$asha"
    objective_ok "$asha"
    # asha with a per-step schedule over hp.budget (the trial's 8 steps, rungs of 2, 4 and 8):
    # a trial that reached the last rung has the rates and losses of one engine train run of 8
    # steps with its rate and seed (issue 59)
    expect 0 "asha over 1 hyperparameter" "promoted to rung 2" "its latest checkpoint: $WORK/schedule/" \
      "evaluate it: engine eval $FIX/search_schedule.lua --checkpoint $WORK/schedule/" -- \
      search "$FIX/search_schedule.lua" --out "$WORK/schedule" --seed 1
    whole=""
    for run in "$WORK"/schedule/search/schedule/*/*/schedule/*.h5; do
      h5dump -H -d /metrics/train/lr "$run" | grep -qF '( 8 )' && whole=$run && break
    done
    [ -n "$whole" ] || fail "no trial of the schedule search trained 8 steps"
    lr=$(h5dump -a /hparams/lr "$whole" | grep -oE '\(0\): [0-9.e-]+' | cut -d' ' -f2)
    seed=$(h5dump -a /seed "$whole" | grep -oE '\(0\): [0-9]+' | cut -d' ' -f2)
    "$ENGINE" train "$FIX/search_schedule.lua" --set root="$WORK/tiny" --set lr="$lr" --seed "$seed" \
      --steps 8 --threads 1 --out "$WORK/one_run" -q >/dev/null 2>&1 || fail "the straight run failed"
    one=$(ls "$WORK"/one_run/schedule/*.h5)
    for series in lr loss; do
      x=$(h5dump -d "/metrics/train/$series" "$whole" | grep -v '^HDF5 ')
      y=$(h5dump -d "/metrics/train/$series" "$one" | grep -v '^HDF5 ')
      [ -n "$x" ] && [ "$x" = "$y" ] ||
        fail "the promoted trial's $series differs from one run of 8 steps (lr $lr, seed $seed): $x // $y"
    done
    # hp.budget and hp.rung as the trial's command gives them; --budget's refusals
    expect 0 "budget 8, rung 2" -- "$ENGINE" train "$FIX/search_schedule.lua" --set root="$WORK/tiny" \
      --set lr=0.1 --steps 2 --budget 8 --out "$WORK/rung" --threads 1
    expect 2 "--budget is the whole length that --epochs or --steps trains a stage of" -- \
      "$ENGINE" train "$FIX/search_schedule.lua" --set root="$WORK/tiny" --set lr=0.1 --budget 8
    expect 2 "--budget 4 is shorter than the stage it plans for (--steps 8)" -- \
      "$ENGINE" train "$FIX/search_schedule.lua" --set root="$WORK/tiny" --set lr=0.1 --steps 8 --budget 4
    # a trial that fails is restarted once, then recorded with its reason; the search goes on
    # (seed 3 draws x = 0.22, 1.39, 0.97, 0.62: trials 1 and 2 fail)
    expect 0 "synthetic failure" "restart 1 of 1" -- search "$FIX/search_random.lua" --out "$WORK/failing" \
      --seed 3 --set fail_above=0.8
    failing=$(ls "$WORK"/failing/search/objective/*.h5)
    out=$("$ENGINE" report "$failing" --format csv)
    printf '%s\n' "$out" | grep ',failed,' | grep -q 'synthetic failure' || fail "no failed trial with its reason: $out"
    printf '%s\n' "$out" | grep -q ',completed,' || fail "the search did not go on past the failures: $out"
    expect 6 "every trial of the search failed (4); trial 0: " "synthetic failure" -- \
      search "$FIX/search_random.lua" --out "$WORK/all_failing" --seed 3 --set fail_above=-5
    # --trial_timeout: a trial that never ends is asked to stop at the limit, killed when it
    # does not, and fails "timed out" (not restarted); the search ends (issue 40, item 9)
    expect 6 "trial 0 ran past --trial_timeout 1 s: stopping it" \
      "trial 0 failed: timed out after 1 s (--trial_timeout)" "every trial of the search failed" -- \
      search "$FIX/search_hang.lua" --trial_timeout 1 --out "$WORK/hang"
    expect 2 "--trial_timeout must be a number of seconds > 0, got -3" -- \
      search "$FIX/search_hang.lua" --trial_timeout -3 --out "$WORK/refused"
    [ ! -e "$WORK/refused" ] || fail "a refused --trial_timeout created $WORK/refused"
    # killed with SIGKILL after two trials finished: --resume runs the rest, not those two again
    "$ENGINE" search "$FIX/search_asha.lua" --set root="$WORK/tiny" --threads 2 --seed 1 \
      --out "$WORK/killed" >killed.txt 2>&1 &
    pid=$!
    wait_until $pid killed.txt lines_at_least killed.txt 'finished rung' 2
    kill -9 $pid; wait $pid 2>/dev/null
    killed=$(ls "$WORK"/killed/search/objective/*.h5)
    finished=$(grep 'finished rung 0' killed.txt | sed 's/^trial \([0-9]*\) .*/\1/')
    [ -n "$finished" ] || fail "no trial finished before the kill: $(cat killed.txt)"
    out=$("$ENGINE" search --resume "$killed" --threads 2 2>&1) || fail "--resume failed: $out"
    printf '%s\n' "$out" | grep -qF "continuing $killed" || fail "--resume did not continue $killed: $out"
    for t in $finished; do
      ! printf '%s\n' "$out" | grep -q "^trial $t started" || fail "trial $t ran again after the resume: $out"
    done
    h5dump -a /status "$killed" | grep -q '"completed"' || fail "the resumed search did not complete"
    [ "$(h5dump -n "$killed" | grep -c 'group      /trials/[0-9]*$')" = 4 ] || fail "not 4 trials after the resume"
    h5dump -a /resumes "$killed" | grep -q '(0): 1' || fail "the resume is not recorded"
    # shards of a job array: Slurm's variables, then a Kubernetes indexed Job's; one leaderboard
    SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=2 SLURM_ARRAY_TASK_COUNT=2 \
      expect 0 "shard 1 of 2 (from SLURM_ARRAY_TASK_ID)" -- search "$FIX/search_random.lua" --out "$WORK/shards" --seed 3
    JOB_COMPLETION_INDEX=0 expect 0 "shard 0 of 2 (from JOB_COMPLETION_INDEX)" -- \
      search "$FIX/search_random.lua" --out "$WORK/shards" --seed 3 --shards 2
    expect 0 "4 trials (4 completed) in 2 files" -- "$ENGINE" report "$WORK/shards"
    merged=$("$ENGINE" report "$WORK/shards" --format csv | awk -F, 'NR > 1 { print $3 }' | sort -n | tr '\n' ' ')
    [ "$merged" = "0 1 2 3 " ] || fail "the shards ran trials $merged, not 0 to 3 once each"
    JOB_COMPLETION_INDEX=0 expect 2 "give the Job's completions with --shards N" -- \
      "$ENGINE" search "$FIX/search_random.lua"
    # Ctrl-C: the trials checkpoint, the search exits 130 as interrupted, --resume finishes it
    "$ENGINE" search "$FIX/search_asha.lua" --set root="$WORK/tiny" --threads 2 --seed 1 \
      --out "$WORK/ctrlc" >ctrlc.txt 2>&1 &
    pid=$!
    wait_until $pid ctrlc.txt lines_at_least ctrlc.txt 'finished rung' 1
    kill -INT $pid; wait $pid; rc=$?
    [ "$rc" = 130 ] || fail "exit code $rc after SIGINT, expected 130: $(cat ctrlc.txt)"
    interrupted=$(ls "$WORK"/ctrlc/search/objective/*.h5)
    # the trials that were training say so, as the search file does
    "$ENGINE" report "$interrupted" --format csv | grep -q ',interrupted,' ||
      fail "no trial marked interrupted: $("$ENGINE" report "$interrupted" --format csv)"
    h5dump -a /status "$interrupted" | grep -q '"interrupted"' || fail "status is not interrupted"
    grep -qF "engine search --resume $interrupted" ctrlc.txt || fail "no resume hint: $(cat ctrlc.txt)"
    expect 0 "4 trials" -- "$ENGINE" search --resume "$interrupted" --threads 2
    h5dump -a /status "$interrupted" | grep -q '"completed"' || fail "the resumed search did not complete"
    # bad input
    expect 2 "hyperparameter 'net.depth' is a search space (search.int(1, 3)): engine search runs this script" -- \
      "$ENGINE" train "$FIX/search_random.lua" --set root="$WORK/tiny"
    expect 0 "finished 4 steps" -- "$ENGINE" train "$FIX/search_random.lua" --set root="$WORK/tiny" \
      --set net.depth=2 --set x=0.5 --out "$WORK/dotted"
    expect 2 "unknown hyperparameter 'net.width'" "declares: fail_above, net.depth, root, x" -- \
      "$ENGINE" train "$FIX/search_random.lua" --set net.width=2
    expect 2 "has no \`searcher\` table" -- "$ENGINE" search "$FIX/tiny_train.lua"
    expect 2 "--shard splits grid and random searches; asha needs every trial's result" -- \
      "$ENGINE" search "$FIX/search_asha.lua" --shard 0/2
    ;;
  crash_kill)
    # runs and sweeps killed with SIGKILL at random moments leave files that h5dump reads
    # whole, with every series of a split as long as the others, and that engine report reads;
    # a killed run resumes. CRASH_KILLS kills of each (5 here; 50 in the slow tier).
    tiny
    kills=${CRASH_KILLS:-5}
    random_moment() { echo "$((RANDOM % 2500 + 300))"; }  # ms after the start
    check_file() {  # $1: the file, $2: what it is, $3: what engine report says of it
      if ! h5dump "$1" >dump.txt 2>&1; then
        # a kill inside a flush that extended the file, or a series into a new chunk, leaves
        # what h5dump cannot read (docs/results.md); said, not failed: engine report must read it
        echo "killed inside a flush: h5dump cannot read $1: $(grep 'h5dump error' dump.txt | head -1)"
      fi
      expect 0 "$3" -- "$ENGINE" report "$1"
    }
    check_lengths() {  # every series of /metrics/<split> as long as its step series
      # $2 = killed: a kill inside HDF5's flush may leave one series longer (docs/results.md);
      # said, not failed (engine report read it above); a resumed file must have one length
      for split in train validation; do
        h5dump -H -g "/metrics/$split" "$1" >/dev/null 2>&1 || continue
        n=$(h5dump -H -g "/metrics/$split" "$1" | grep -F 'DATASPACE' | sort -u | wc -l)
        [ "$n" = 1 ] && continue
        lengths=$(h5dump -H -g "/metrics/$split" "$1" | grep DATASPACE | sort | uniq -c | tr -s ' \n' ' ')
        [ "${2:-}" = killed ] || fail "series of /metrics/$split differ in length in $1: $lengths"
        echo "killed inside a flush: series of /metrics/$split differ in length: $lengths"
      done
    }
    for i in $(seq "$kills"); do
      rm -rf "$WORK/runs"
      "$ENGINE" train "$FIX/crash_train.lua" --set root="$WORK/tiny" --out "$WORK/runs" --threads 1 -q \
        >out.txt 2>&1 &
      pid=$!
      ms=$(random_moment)
      sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
      kill -9 $pid; wait $pid 2>/dev/null
      run=$(ls "$WORK"/runs/crash/*.h5 2>/dev/null)
      [ -n "$run" ] || continue  # killed before it created its run file
      if [ ! -s "$run" ]; then  # killed after reserving the name, before publishing the file
        expect 5 "is empty: the name a run, sweep or search reserved" -- "$ENGINE" report "$run"
        echo "run killed at $ms ms: its name reserved, nothing written"
        continue
      fi
      check_file "$run" "run file (kill $i at $ms ms)" "crashed or killed"
      check_lengths "$run" killed
      rows=$(h5dump -H -d /metrics/train/step "$run" 2>/dev/null | grep -o 'DATASPACE  SIMPLE { ( [0-9]*' | grep -o '[0-9]*$')
      echo "run killed at $ms ms: ${rows:-0} training rows"
      if h5dump -a /checkpoints/latest "$run" >/dev/null 2>&1; then
        # five steps past its newest checkpoint (a length it has reached: nothing to do): the
        # newest file in its folder, which --resume takes, also one the kill kept from being
        # recorded in the run file
        at=$(ls "${run%.h5}"/ckpt-*.h5 | grep -o 'ckpt-[0-9]*' | grep -o '[0-9]*$' | sort -n | tail -1)
        expect 0 "resuming 'crash' from" "finished" -- "$ENGINE" train "$FIX/crash_train.lua" \
          --resume "$run" --steps $((at + 5)) --threads 1
        check_lengths "$run"
      fi
    done
    for i in $(seq "$kills"); do
      rm -rf "$WORK/bench"
      "$ENGINE" bench "$REPO/scripts/bench/quick.lua" --out "$WORK/bench" >out.txt 2>&1 &
      pid=$!
      ms=$(random_moment)
      sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
      kill -9 $pid; wait $pid 2>/dev/null
      sweep=$(ls "$WORK"/bench/bench/quick/*.h5 2>/dev/null)
      [ -n "$sweep" ] || continue
      [ -s "$sweep" ] || { echo "sweep killed at $ms ms: its name reserved, nothing written"; continue; }
      check_file "$sweep" "benchmark file (kill $i at $ms ms)" "benchmark point"
      echo "sweep killed at $ms ms: $(h5dump -H -g /points "$sweep" 2>/dev/null | grep -c 'GROUP "[0-9]') points"
    done
    ;;
  report_serve)
    # the live page as a user starts it: the URL on stdout, the folder's JSON over plain HTTP
    # (bash's /dev/tcp), and Ctrl-C ending it cleanly; the page itself is tested in chromium
    # by test_live
    tiny
    "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --out "$WORK/runs" --threads 1 -q \
      >train.txt 2>&1 || fail "the run failed: $(cat train.txt)"
    "$ENGINE" report --serve "$WORK/runs" --port 0 >serve.txt 2>&1 &
    pid=$!
    at_exit "kill $pid 2>/dev/null"
    wait_until "$pid" serve.txt grep -q "^serving $WORK/runs at http://127.0.0.1:" serve.txt
    port=$(grep -oE '127\.0\.0\.1:[0-9]+' serve.txt | cut -d: -f2)
    get() {
      exec 3<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect to port $port"
      printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nConnection: close\r\n\r\n' "$1" "$port" >&3
      cat <&3
      exec 3<&-
    }
    get /api/folder | grep -q '"role":"runs"' || fail "no runs table in /api/folder: $(get /api/folder)"
    get / | grep -q '<script src="/live.js"' || fail "no page at /"
    get /api/run?path=../../etc/passwd | head -1 | grep -q ' 404 ' || fail "a path outside was not refused"
    kill -INT "$pid"
    wait "$pid"; rc=$?
    [ "$rc" = 0 ] || fail "Ctrl-C ended it with $rc: $(cat serve.txt)"
    grep -q "stopped serving" serve.txt || fail "no goodbye: $(cat serve.txt)"
    # what it refuses, before it listens
    expect 2 "is not a folder" -- "$ENGINE" report --serve "$WORK/nowhere" --port 0
    expect 2 "--serve shows one folder" -- "$ENGINE" report --serve "$WORK/runs" "$WORK/tiny" --port 0
    expect 2 "--plot does not apply" -- "$ENGINE" report --serve "$WORK/runs" --plot x.svg
    expect 2 "--port goes with --serve" -- "$ENGINE" report "$WORK/runs" --port 8000
    expect 2 "is not a port" -- "$ENGINE" report --serve "$WORK/runs" --port 70000
    [ ! -e x.svg ] || fail "--plot wrote a file though refused"
    ;;
  report)
    # which run had the best validation accuracy, and with what learning rate?
    tiny
    for lr in 0.2 0.05 0.001; do
      "$ENGINE" train "$FIX/tiny_train.lua" --set root="$WORK/tiny" --set lr=$lr --out "$WORK/runs" \
        --threads 1 -q >out.txt 2>&1 || fail "the run with lr $lr failed: $(cat out.txt)"
    done
    grep -qF "show it: engine report $WORK/runs/tiny/" out.txt || fail "train does not show the report line: $(cat out.txt)"
    expect 0 "3 runs" "lr" "validation.accuracy.best" "completed" -- \
      "$ENGINE" report "$WORK/runs" --sort validation.accuracy.best
    out=$("$ENGINE" report "$WORK/runs" --sort validation.accuracy.best --format csv)
    header=$(printf '%s\n' "$out" | head -1)
    [ "$header" = "$(printf '%s\n' "$header" | grep -E '^run,name,status,started,lr,steps,seconds,validation\.')" ] ||
      fail "CSV header: $header"
    [ "$(printf '%s\n' "$out" | wc -l)" = 4 ] || fail "CSV rows: $out"
    # lr 0.2 diverges and 0.001 learns slowly in 2 epochs: 0.05 comes first
    printf '%s\n' "$out" | sed -n 2p | grep -q ',0.050000000000000003,' || fail "lr 0.05 is not first: $out"
    "$ENGINE" report "$WORK/runs" --sort validation.accuracy.best | sed -n 3p | grep -qE ' 0\.05 ' ||
      fail "lr 0.05 is not first in the text table: $("$ENGINE" report "$WORK/runs" --sort validation.accuracy.best)"
    expect 0 "1 of 3 runs" -- "$ENGINE" report "$WORK/runs" --filter 'lr<0.01'
    expect 0 "2 runs (the most recent of 3)" -- "$ENGINE" report "$WORK/runs" --last 2
    expect 0 '"validation.accuracy.best":' -- "$ENGINE" report "$WORK/runs" --format json
    expect 0 "| run | name | status |" -- "$ENGINE" report "$WORK/runs" --format markdown
    # one run: its facts, metrics with best values and their course, checkpoints
    file=$(ls "$WORK"/runs/tiny/*.h5 | head -1)
    expect 0 "completed" "validation  accuracy" "best step" "course" "checkpoints" "hyperparameters" -- \
      "$ENGINE" report "$file"
    expect 0 "split,metric,rows,last,step,best,best step" -- "$ENGINE" report "$file" --format csv
    # a run file left "running" by a killed process: a run with no end in sight (crash_train.lua,
    # 1000 epochs), so that however slow the machine it is still running when looked at
    "$ENGINE" train "$FIX/crash_train.lua" --set root="$WORK/tiny" --out "$WORK/killed" \
      --threads 1 -q >killed.txt 2>&1 &
    pid=$!
    # until the run file lists its first checkpoint (the file appears a moment before)
    until [ -n "${killed:-}" ] && "$ENGINE" report "$killed" 2>/dev/null | grep -q "ckpt-"; do
      kill -0 $pid 2>/dev/null || fail "the run ended before its first checkpoint: $(cat killed.txt)"
      killed=$(ls "$WORK"/killed/crash/*.h5 2>/dev/null)
      sleep 0.05
    done
    expect 0 "running" -- "$ENGINE" report "$killed"
    kill -9 $pid; wait $pid 2>/dev/null
    expect 0 "crashed or killed" "/ckpt-" -- "$ENGINE" report "$killed"  # its kept checkpoints
    # benchmark files: the points, and a pivot
    for b in 8 16; do
      "$ENGINE" bench --model mlp --batch_size $b --num_batches 2 --num_warmup_batches 1 --threads 1 \
        --out "$WORK/bench" >out.txt 2>&1 || fail "bench batch $b failed: $(cat out.txt)"
    done
    grep -qF "show it: engine report $WORK/bench/bench/mlp/" out.txt ||
      fail "bench does not show the report line: $(cat out.txt)"
    expect 0 "2 benchmark points in 2 files" "throughput" -- "$ENGINE" report "$WORK/bench"
    expect 0 "throughput by model and batch_size (samples/s)" "batch_size=8" "batch_size=16" -- \
      "$ENGINE" report "$WORK/bench" --rows model --cols batch_size --value throughput
    out=$("$ENGINE" report "$WORK/bench" --cols batch_size --value speedup --format csv)
    printf '%s\n' "$out" | grep -qE '^mlp,1,[0-9.]+$' || fail "speedup pivot as CSV: $out"
    expect 2 "--value: no column 'speed' in the benchmark points" -- \
      "$ENGINE" report "$WORK/bench" --value speed
    # DLBS's records (tests/report/test_dlbs_export.cpp checks every key): one per point
    out=$("$ENGINE" report "$WORK/bench" --format dlbs) || fail "--format dlbs failed: $out"
    [ "$(printf '%s\n' "$out" | grep -c '"exp.replica_batch": ')" = 2 ] || fail "--format dlbs: $out"
    printf '%s\n' "$out" | grep -qF '"exp.model_title": "mlp"' || fail "--format dlbs, no model title: $out"
    expect 2 "--format dlbs exports benchmark files; $WORK/runs holds none" -- \
      "$ENGINE" report "$WORK/runs" --format dlbs
    expect 2 "--rows does not apply" -- "$ENGINE" report "$WORK/bench" --format dlbs --rows model
    # the same point measured again: compared point by point against its noise
    "$ENGINE" bench --model mlp --batch_size 8 --num_batches 20 --num_warmup_batches 1 --threads 1 \
      --out "$WORK/again" >out.txt 2>&1 || fail "bench again failed: $(cat out.txt)"
    first=$(ls "$WORK"/bench/bench/mlp/*.h5 | head -1); second=$(ls "$WORK"/again/bench/mlp/*.h5)
    expect 0 "$first -> $second: " "p50 change %" "noise %" "verdict" -- \
      "$ENGINE" report --compare "$first" "$second"
    expect 2 "--compare takes two benchmark files; $file is a run file" -- \
      "$ENGINE" report --compare "$file" "$second"
    # charts: SVG and PNG that rsvg-convert renders, and the static page
    expect 0 "chart: $WORK/curves.svg" -- "$ENGINE" report "$WORK/runs" --plot "$WORK/curves.svg"
    # a metric's train and validation curves on one chart
    grep -qF ">accuracy: train solid, validation dashed</text>" "$WORK/curves.svg" || fail "no accuracy chart"
    grep -qF ">lr=0.05</text>" "$WORK/curves.svg" || fail "no legend entry for lr 0.05"
    rsvg-convert -o "$WORK/curves_svg.png" "$WORK/curves.svg" || fail "rsvg-convert cannot draw the SVG"
    expect 0 "chart: $WORK/bench.png" -- "$ENGINE" report "$WORK/bench" --plot "$WORK/bench.png"
    [ "$(head -c 4 "$WORK/bench.png" | tail -c 3)" = PNG ] || fail "bench.png is not a PNG"
    expect 0 "page: $WORK/page/index.html" -- "$ENGINE" report "$WORK/runs" "$WORK/bench" --html "$WORK/page"
    grep -qF "<svg" "$WORK/page/index.html" && grep -qF "<table>" "$WORK/page/index.html" ||
      fail "the page lacks its chart or tables"
    ! grep -qF "<script" "$WORK/page/index.html" || fail "the page has a script"
    expect 2 "the chart's file must end in .svg or .png" -- "$ENGINE" report "$file" --plot "$WORK/c.jpg"
    expect 2 "--compare makes a table only" -- "$ENGINE" report --compare "$first" "$second" --plot "$WORK/c.svg"
    # bad input
    expect 2 "--format must be text, csv, markdown, json or dlbs, got 'xml'" -- "$ENGINE" report "$file" --format xml
    expect 2 "--sort: no column 'accuracy' (columns: run, name" -- "$ENGINE" report "$WORK/runs" --sort accuracy
    expect 2 "is a checkpoint: engine report reads run files" -- \
      "$ENGINE" report "$(ls "$WORK"/runs/tiny/*/ckpt-*.h5 | head -1)"
    expect 5 "$WORK/nope.h5: no such file" -- "$ENGINE" report "$WORK/nope.h5"
    printf 'text' > "$WORK/text.h5"
    expect 5 "$WORK/text.h5 is not an HDF5 file" -- "$ENGINE" report "$WORK/text.h5"
    expect 2 "engine report needs run or benchmark files, or folders" -- "$ENGINE" report
    ;;
  allocator)
    expect 0 "memory   caching allocator" -- "$ENGINE" info
    expect 0 "memory   system allocator" -- "$ENGINE" info --allocator system
    expect 2 "--allocator must be 'caching' (the default) or 'system', got 'tcmalloc'" -- \
      "$ENGINE" info --allocator tcmalloc
    printf 'print(require("torch").memory_stats().allocator)\n' > which.lua
    expect 0 "system" -- "$ENGINE" run --allocator system which.lua
    # after the script, --allocator belongs to the script's arguments
    expect 0 "caching" -- "$ENGINE" run which.lua --allocator system
    ;;
  *)
    fail "unknown case"
    ;;
esac
echo "ok [$CASE]"
