#!/usr/bin/env bash
# check_layers.sh on a made-up tree: it reads the floors from the tree's docs/architecture.md
# table, names an include of a floor above, a folder without a row, a row without a folder and
# <regex> outside its wrapper,
# exits 1, and passes once they are gone.
set -uo pipefail
checker="$(cd "$(dirname "$0")" && pwd)/check_layers.sh"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/docs" "$tree/engine/core" "$tree/engine/io" "$tree/engine/extra"
cat > "$tree/docs/architecture.md" <<'DOC'
# Architecture

| folder | may include | and |
|---|---|---|
| `core` | | nothing of ours |
| `io` | `core` | |
| `gone` | `core` | |
DOC
printf '#include "engine/io/writer.hpp"\n' > "$tree/engine/core/low.cpp"  # upward
printf '#include "engine/core/low.hpp"\n' > "$tree/engine/io/writer.cpp"   # allowed
printf 'int x;\n' > "$tree/engine/extra/new.cpp"
printf '#include <regex>\n' > "$tree/engine/io/search.cpp"          # outside core/regex.cpp
printf '#include <regex>\n' > "$tree/engine/core/regex.cpp"        # its wrapper

failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
out=$("$checker" "$tree"); status=$?
[ "$status" -eq 1 ] || fail "exit $status for four violations, expected 1"
grep -q "engine/core/low.cpp:1: core includes io" <<<"$out" || fail "upward include not named: $out"
grep -q "engine/extra: a folder that has no floor in docs/architecture.md" <<<"$out" || fail "new folder not named: $out"
grep -q "a row for engine/gone, a folder that is not there" <<<"$out" || fail "stale row not named: $out"
grep -q "engine/io/writer.cpp" <<<"$out" && fail "an allowed include was named: $out"
grep -q "engine/io/search.cpp:1: #include <regex> outside its wrapper (use engine/core/regex.hpp)" <<<"$out" || fail "<regex> outside its wrapper not named: $out"
grep -q "engine/core/regex.cpp" <<<"$out" && fail "the wrapper's own include was named: $out"

rm "$tree/engine/core/low.cpp" "$tree/engine/io/search.cpp"
rm -r "$tree/engine/extra"
sed -i '/`gone`/d' "$tree/docs/architecture.md"
out=$("$checker" "$tree"); status=$?
[ "$status" -eq 0 ] || fail "exit $status with nothing wrong left: $out"

rm "$tree/docs/architecture.md"
"$checker" "$tree" >/dev/null 2>&1; status=$?
[ "$status" -eq 2 ] || fail "exit $status with no doc, expected 2"
[ "$failures" -eq 0 ] && echo "test_check_layers: ok"
exit $((failures > 0))
