#!/usr/bin/env bash
# check_sizes.sh on a made-up tree: it names a function over the limit (with a head over two
# lines) and a file over the limit, leaves a short function and a long table alone, exits 1,
# and passes once they are gone.
set -uo pipefail
checker="$(cd "$(dirname "$0")" && pwd)/check_sizes.sh"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/engine/alpha"
body() { for i in $(seq 1 "$1"); do echo "  x += $i;"; done; }
{
  echo 'int short_one(int x) {'; body 3; echo '  return x;'; echo '}'
  echo 'int long_one(int x,'; echo '             int y) {'; body 90; echo '  return x;'; echo '}'
  echo 'const int kTable[] = {'; for i in $(seq 1 100); do echo "  $i,"; done; echo '};'
} > "$tree/engine/alpha/code.cpp"
for i in $(seq 1 700); do echo "// line $i"; done > "$tree/engine/alpha/big.hpp"

failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
out=$("$checker" "$tree"); status=$?
[ "$status" -eq 1 ] || fail "exit $status for two violations, expected 1"
grep -q "engine/alpha/code.cpp:7: 94 lines, more than 80: int long_one" <<<"$out" || fail "long function not named: $out"
grep -q "engine/alpha/big.hpp:1: 700 lines, more than 600" <<<"$out" || fail "long file not named: $out"
grep -q "short_one\|kTable" <<<"$out" && fail "a short function or a table was named: $out"

rm "$tree/engine/alpha/big.hpp"
sed -i '/x += [0-9]*;/d' "$tree/engine/alpha/code.cpp"
out=$("$checker" "$tree"); status=$?
[ "$status" -eq 0 ] || fail "exit $status with nothing too long left: $out"
[ "$failures" -eq 0 ] && echo "test_check_sizes: ok"
exit $((failures > 0))
