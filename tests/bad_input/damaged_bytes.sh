#!/usr/bin/env bash
# Byte-level damage (docs/reliability.md): every kind of file the engine reads back (run,
# benchmark and search files, checkpoints, torch.save files) with one byte changed at each of a
# spread of places, read by the command that reads it. Each read must end normally (the byte
# was one nothing depends on, or a number nothing checks) or with exit 4 or 5 (2 when the damage
# makes it an HDF5 file the engine did not write) and a message naming the file; never a
# signal, a timeout, an internal error or a crash-like text.
# Usage: damaged_bytes.sh ENGINE
set -u
ENGINE=$1
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
WORK=${ENGINE_TEST_TMP:-/tmp}/damaged-bytes
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1

"$ENGINE" run "$REPO/tests/cli/fixtures/make_tiny_mnist.lua" "$WORK/tiny" >/dev/null ||
  { echo "cannot make the tiny dataset"; exit 1; }
"$ENGINE" train "$HERE/scripts/base.lua" --set root="$WORK/tiny" -q --out "$WORK/runs" >/dev/null ||
  { echo "cannot train the base run"; exit 1; }
printf '%s\n' "local torch = require 'torch'" \
  "torch.save(arg[1], {weights = torch.randn(16, 8), step = 3, name = 'saved'})" > save.lua
printf '%s\n' "local torch = require 'torch'" "local t = torch.load(arg[1])" \
  "print(t.weights:sum():item(), t.step, t.name)" > load.lua
"$ENGINE" run save.lua "$WORK/saved.h5" >/dev/null || { echo "cannot torch.save"; exit 1; }
run=$(ls "$WORK"/runs/base/*.h5)
ckpt=$(ls "$WORK"/runs/base/*/ckpt-*.h5 | tail -1)

passed=0
failed=0
detected=0
# damage KIND FILE COMMAND...: the command, with DAMAGED replaced by a copy of FILE with one
# byte changed, for each of a spread of places (every 512th byte of the first 2 KiB, where HDF5
# keeps the superblock and the root's headers, and 2 places over the rest: the data, whose
# damage the readers' checks of sizes and types see the same way wherever it is). The bytes
# known to crash or hang HDF5 are read by damage_at below, each by name.
damage() {
  local kind=$1 file=$2; shift 2
  local size step offset
  size=$(stat -c %s "$file")
  local offsets=()
  for ((offset = 0; offset < 2048 && offset < size; offset += 512)); do offsets+=("$offset"); done
  step=$(( (size - 2048) / 2 ))
  if [ "$step" -gt 0 ]; then
    for ((offset = 2048 + step / 2; offset < size; offset += step)); do offsets+=("$offset"); done
  fi
  damage_at "$kind" "$file" "${offsets[*]}" "$@"
}

# damage_at KIND FILE "OFFSETS" COMMAND...: the same at the given places
damage_at() {
  local kind=$1 file=$2 offsets=$3; shift 3
  local offset value n=0 out rc
  for offset in $offsets; do
    n=$((n + 1))
    value=${XOR:-$(( (n % 3 == 0) ? 1 : ((n % 3 == 1) ? 255 : 128) ))}
    local copy="$WORK/damaged-$kind/$(basename "$file")"
    rm -rf "$WORK/damaged-$kind" && mkdir -p "$WORK/damaged-$kind"
    cp "$file" "$copy"
    # the byte at offset, xor value
    local byte
    byte=$(od -An -tu1 -j "$offset" -N1 "$copy" | tr -d ' ')
    printf "$(printf '\\%03o' $(( byte ^ value )))" |
      dd of="$copy" bs=1 seek="$offset" conv=notrunc status=none
    local args=()
    for a in "$@"; do args+=("${a//DAMAGED/$copy}"); done
    out=$(timeout 60 "${args[@]}" 2>&1); rc=$?
    local problem=""
    case "$rc" in
      0) ;;
      # 2: the damage made it an HDF5 file the engine did not write (its kind attribute)
      2|4|5) detected=$((detected + 1))
             printf '%s' "$out" | grep -qF -- "$copy" || problem="exit $rc without naming the file" ;;
      *) problem="exit $rc" ;;
    esac
    case "$out" in
      *"C++ exception"*|*"Segmentation"*|*"terminate called"*|*"Aborted"*|*"internal error"*)
        problem="${problem:+$problem; }crash-like output" ;;
    esac
    if [ -n "$problem" ]; then
      failed=$((failed + 1))
      printf 'FAIL %s byte %d ^ %d: %s\n%s\n' "$kind" "$offset" "$value" "$problem" \
        "$(printf '%s' "$out" | tail -3)"
    else
      passed=$((passed + 1))
    fi
  done
}

# bytes of the committed base files (tests/fuzz/base/) that HDF5 1.10.8 crashes on (SIGSEGV:
# run 965 and 1045, benchmark 957, search 965) or loops on for ever (run 935, benchmark 947,
# search 935) when they are flipped: found by reading every flipped byte of their first 2.5 KiB
# with h5py; before the guard (core/damaged_file_guard.hpp) engine report died by the signal or
# never ended. A loop is taken for damage after ENGINE_READ_TIMEOUT seconds (a read of these
# small files takes milliseconds; a slow one taken for damage would still pass, named).
export ENGINE_READ_TIMEOUT=1
XOR=255 damage_at run_crash "$REPO/tests/fuzz/base/run.h5" "935 965 1045" "$ENGINE" report DAMAGED
XOR=255 damage_at bench_crash "$REPO/tests/fuzz/base/bench.h5" "947 957" "$ENGINE" report DAMAGED
XOR=255 damage_at search_crash "$REPO/tests/fuzz/base/search.h5" "935 965" "$ENGINE" report DAMAGED
damage run "$run" "$ENGINE" report DAMAGED
damage bench "$REPO/tests/fuzz/base/bench.h5" "$ENGINE" report DAMAGED
damage search "$REPO/tests/fuzz/base/search.h5" "$ENGINE" report DAMAGED
damage checkpoint "$ckpt" "$ENGINE" eval "$HERE/scripts/base.lua" --checkpoint DAMAGED \
  --set root="$WORK/tiny" --out "$WORK/eval"
damage torch_save "$WORK/saved.h5" "$ENGINE" run load.lua DAMAGED

echo "damaged bytes: $passed passed ($detected found damaged: exit 2, 4 or 5), $failed failed"
[ "$failed" = 0 ]
