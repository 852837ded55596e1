#!/bin/bash
# Runs every libFuzzer target (cmake --preset fuzz && cmake --build --preset fuzz) for SECONDS
# each, JOBS at a time, growing tests/fuzz/corpus/<target>; a crash leaves its input in
# OUT/<target>/ and the log says what it was (docs/reliability.md).
#   tests/fuzz/run_fuzzers.sh [SECONDS=600] [JOBS=2] [OUT=/tmp/engine-fuzz] [TARGET...]
set -u
seconds=${1:-600}
jobs=${2:-2}
out=${3:-/tmp/engine-fuzz}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../../build-fuzz/bin
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(idx cifar csv image checkpoint result_files lua_options overrides
                                   dlbs_config)
mkdir -p "$out"
export ASAN_OPTIONS=detect_leaks=1:detect_container_overflow=0:allocator_may_return_null=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

fuzz() {
  local target=$1
  mkdir -p "$out/$target" "$here/corpus/$target"
  (cd "$out/$target" &&
    ENGINE_TEST_TMP="$out/$target" "$bin/fuzz_$target" -max_total_time="$seconds" \
      -rss_limit_mb=4096 -timeout=30 -max_len=4096 -print_final_stats=1 \
      -artifact_prefix="$out/$target/" "$here/corpus/$target" > "$out/$target.log" 2>&1)
  local rc=$?
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$target.log" | grep -o '[0-9]*$')
  echo "$target: exit $rc, ${runs:-?} inputs in $seconds s, corpus $(ls "$here/corpus/$target" | wc -l) files, crashes: $(ls "$out/$target" | grep -c '^crash-\|^leak-\|^timeout-\|^oom-')"
}

running=0
for target in "${targets[@]}"; do
  fuzz "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
