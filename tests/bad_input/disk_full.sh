#!/usr/bin/env bash
# One write path meeting a full disk (docs/reliability.md): run by run.sh inside a mount namespace
# of its own (unshare -m) so that it can mount a small tmpfs.
# Usage: disk_full.sh ENGINE WORK CASE REPO
# The command writes onto the tmpfs; once its first write there has landed (a row, a checkpoint,
# a benchmark point, a search trial) the disk is filled, and the command goes on until it ends.
# Its output is this script's output and its exit code this script's; what it left on the disk
# is copied to WORK/CASE/left for run.sh to check.
set -u
ENGINE=$1 WORK=$2 CASE=$3 REPO=$4
D=$WORK/$CASE
DISK=$D/disk
rm -rf "$D" && mkdir -p "$DISK" "$D/left" || exit 90
mount -t tmpfs -o size=32m engine-test-disk "$DISK" || { echo "cannot mount a tmpfs"; exit 91; }

fill_disk() {
  dd if=/dev/zero of="$DISK/filler" bs=64k 2>/dev/null
  dd if=/dev/zero of="$DISK/filler-tail" bs=4k 2>/dev/null
  true
}
# wait_then_fill PID TEST...: fills the disk once TEST succeeds (or the command has ended)
wait_then_fill() {
  local pid=$1; shift
  until "$@" >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  fill_disk
}
# a reader beside the writer: HDF5's own lock would refuse it
h5() { HDF5_USE_FILE_LOCKING=FALSE h5dump "$@"; }
has_row() { for f in "$DISK"/runs/base/*.h5; do h5 -d /metrics/train/step "$f" || return 1; done; }
has_checkpoint() { ls "$DISK"/runs/base/*/ckpt-*.h5; }
# a point's result line is printed once the point is in the file (written and flushed); reading
# the file itself while a sweep of fast points writes it found it consistent too seldom
has_point() { grep -q '^  ok: ' "$D/out.txt"; }
# a finished trial's line is printed once the search file records it
has_trial() { grep -q '^trial [0-9]* finished rung' "$D/out.txt"; }

case "$CASE" in
  disk_full_flush)  # the run file's rows, between checkpoints
    "$ENGINE" train "$WORK/disk_rows.lua" --set root="$WORK/tiny" -q --out "$DISK/runs" &
    pid=$!
    wait_then_fill "$pid" has_row ;;
  disk_full_checkpoint)  # a checkpoint, with earlier ones on the disk
    "$ENGINE" train "$WORK/disk_checkpoints.lua" --set root="$WORK/tiny" -q --out "$DISK/runs" &
    pid=$!
    wait_then_fill "$pid" has_checkpoint ;;
  disk_full_bench)  # a sweep's benchmark file, after its first point
    "$ENGINE" bench "$WORK/disk_sweep.lua" --isolate none --out "$DISK/bench" >"$D/out.txt" 2>&1 &
    pid=$!
    wait_then_fill "$pid" has_point ;;
  disk_full_search)  # a search file and its trials' run files, after the first trial
    "$ENGINE" search "$REPO/tests/cli/fixtures/search_grid.lua" --set root="$WORK/tiny" --out "$DISK/runs" \
      >"$D/out.txt" 2>&1 &
    pid=$!
    wait_then_fill "$pid" has_trial ;;
  disk_full_predict)  # predictions, over a file of earlier ones that must stay as it was
    cp "$WORK/predictions.csv" "$DISK/predictions.csv"
    fill_disk
    "$ENGINE" predict "$REPO/scripts/loans_wide_deep.lua" --checkpoint "$(ls "$WORK"/loans/runs/loans/*.h5)" -q \
      --input "$WORK/loans/data/new_loans.csv" --output "$DISK/predictions.csv" &
    pid=$! ;;
  *) echo "no case $CASE"; exit 92 ;;
esac
wait "$pid"
rc=$?
[ -f "$D/out.txt" ] && cat "$D/out.txt"
rm -f "$DISK/filler" "$DISK/filler-tail"
cp -a "$DISK/." "$D/left/"
exit "$rc"
