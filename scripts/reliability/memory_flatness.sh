#!/bin/bash
# Resident memory over a long run and over a 200-point in-process sweep (docs/reliability.md):
# runs long_run.lua and sweep_200.lua with ENGINE, samples the process's VmRSS five times a second
# and prints it at 5%, 25%, 50%, 75% and 100% of each run, with the largest sample.
#   scripts/reliability/memory_flatness.sh build/bin/engine /tmp/flatness
set -euo pipefail
engine=$(realpath "${1:?usage: memory_flatness.sh ENGINE OUT_DIR}")
out=${2:?usage: memory_flatness.sh ENGINE OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"

# run NAME COMMAND...: the command in the background, its VmRSS sampled into $out/NAME.rss
run() {
  local name=$1
  shift
  "$@" > "$out/$name.log" 2>&1 &
  local pid=$! start=$SECONDS
  : > "$out/$name.rss"
  while kill -0 "$pid" 2> /dev/null; do
    local kb
    kb=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2> /dev/null || true)
    [ -n "$kb" ] && echo "$((SECONDS - start)) $kb" >> "$out/$name.rss"
    sleep 0.2
  done
  wait "$pid" || { echo "$name failed:"; tail -5 "$out/$name.log"; return 1; }
  awk -v name="$name" '{t[NR] = $1; kb[NR] = $2; if ($2 > max) max = $2}
    END {
      printf "%s: %d samples over %d s; resident MiB at", name, NR, t[NR]
      split("5 25 50 75 100", at, " ")
      for (i = 1; i <= 5; ++i) {
        n = int(NR * at[i] / 100); if (n < 1) n = 1
        printf " %s%%: %.1f", at[i], kb[n] / 1024
      }
      printf "; largest %.1f\n", max / 1024
    }' "$out/$name.rss"
}

run long_run "$engine" train "$here/long_run.lua" --out "$out/runs" --threads 1
run sweep_200 "$engine" bench "$here/sweep_200.lua" --isolate none --out "$out/bench"
