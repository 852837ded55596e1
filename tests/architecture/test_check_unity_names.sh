#!/usr/bin/env bash
# check_unity_names.sh on a made-up tree: it must name a helper and a table that two files of
# one folder define, exit 1, and pass the same names in different folders or outside an
# anonymous namespace.
set -uo pipefail
checker="$(cd "$(dirname "$0")" && pwd)/check_unity_names.sh"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/engine/alpha" "$tree/engine/beta" "$tree/tests/alpha"
write() {  # FILE BODY: a source file whose anonymous namespace holds BODY
  printf 'namespace engine {\nnamespace {\n\n%s\n\n}  // namespace\n}  // namespace engine\n' "$2" > "$1"
}
write "$tree/engine/alpha/one.cpp" $'int helper(int x) {\n  return x;\n}\nconst int kTable[] = {1};'
write "$tree/engine/alpha/two.cpp" $'void helper(const char* s) {}\nconstexpr int kTable[] = {2};'
write "$tree/engine/beta/three.cpp" 'int helper(int x) { return x; }'   # another folder: fine
write "$tree/tests/alpha/four.cpp" 'int helper(int x) { return x; }'    # another target: fine
printf 'namespace engine {\nint shared(int x) { return x; }\n}  // namespace engine\n' > "$tree/engine/beta/five.cpp"
printf 'namespace engine {\nint shared(int x);\n}  // namespace engine\n' > "$tree/engine/beta/six.cpp"

failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
out=$("$checker" "$tree"); status=$?
[ "$status" -eq 1 ] || fail "exit $status for two clashes, expected 1"
grep -q "engine/alpha: 'helper' is defined in the anonymous namespace of engine/alpha/one.cpp engine/alpha/two.cpp" <<<"$out" || fail "helper not named: $out"
grep -q "engine/alpha: 'kTable'" <<<"$out" || fail "kTable not named: $out"
[ "$(grep -c "is defined in" <<<"$out")" -eq 2 ] || fail "expected exactly 2 clashes: $out"

rm "$tree/engine/alpha/two.cpp"
out=$("$checker" "$tree"); status=$?
[ "$status" -eq 0 ] || fail "exit $status with no clash left: $out"
[ "$failures" -eq 0 ] && echo "test_check_unity_names: all checks passed"
exit $(( failures > 0 ))
