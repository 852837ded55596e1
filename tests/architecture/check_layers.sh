#!/usr/bin/env bash
# The layer rules of docs/architecture.md, read from its table and checked on the sources: every #include of the
# engine's own headers goes to the same floor or one below, Lua's headers are included under
# engine/lua only, and engine/cli reaches Lua through engine/lua/session.hpp alone, never
# through Lua's C API; spdlog and <regex> are included by their wrappers in engine/core only.
# Prints each violation as FILE:LINE: what; exits 1 when there is one.
#   tests/architecture/check_layers.sh [REPO]
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$repo/engine" || { echo "check_layers: no engine/ under $repo" >&2; exit 2; }

# What each folder may include besides itself: the table of docs/architecture.md, the one
# place the floors are written ("| `folder` | `core` `io` | ... |" rows).
doc="$repo/docs/architecture.md"
[ -f "$doc" ] || { echo "check_layers: no $doc, which holds the floors" >&2; exit 2; }
declare -A allowed=()
while IFS='|' read -r _ folder includes _; do
  folder=$(tr -d '` ' <<<"$folder")
  allowed[$folder]=$(grep -o '`[a-z_]*`' <<<"$includes" | tr -d '`' | tr '\n' ' ')
done < <(grep -E '^\| `[a-z_]+` \|' "$doc")
[ "${#allowed[@]}" -gt 0 ] || { echo "check_layers: no table of floors in $doc" >&2; exit 2; }

violations=0
report() { echo "$1"; violations=$((violations + 1)); }

for folder in "${!allowed[@]}"; do
  [ -d "$folder" ] || report "docs/architecture.md: a row for engine/$folder, a folder that is not there"
done

for layer in */; do
  layer=${layer%/}
  [ "${allowed[$layer]+set}" = set ] || { report "engine/$layer: a folder that has no floor in docs/architecture.md (add its row to the table)"; continue; }
  while IFS=: read -r file line text; do
    [ -n "$file" ] || continue
    target=$(sed -n 's|.*#[[:space:]]*include[[:space:]]*"engine/\([a-z_]*\)/.*|\1|p' <<<"$text")
    [ -n "$target" ] || continue
    [ "$target" = "$layer" ] && continue
    case " ${allowed[$layer]} " in
      *" $target "*) ;;
      *) report "engine/$file:$line: $layer includes $target, a floor above it or beside it" ;;
    esac
  done < <(grep -rn --include='*.hpp' --include='*.cpp' '#[[:space:]]*include[[:space:]]*"engine/' "$layer")
done

# Lua's own headers: engine/lua only.
while IFS=: read -r file line text; do
  [ -n "$file" ] || continue
  case "$file" in lua/*) ;; *) report "engine/$file:$line: Lua's header outside engine/lua: ${text#"${text%%[![:space:]]*}"}" ;; esac
done < <(grep -rnE --include='*.hpp' --include='*.cpp' '#[[:space:]]*include[[:space:]]*[<"](lua|lauxlib|lualib|luajit|lua\.hpp)(\.h)?[">]' */)

# engine/run and engine/cli: the session facade only, and no Lua C API.
above_lua=()
for folder in run cli; do [ -d "$folder" ] && above_lua+=("$folder"); done
while IFS=: read -r file line text; do
  [ -n "$file" ] || continue
  case "$text" in *'"engine/lua/session.hpp"'*) ;; *) report "engine/$file:$line: the floors above engine/lua reach Lua through engine/lua/session.hpp only" ;; esac
done < <(grep -rn --include='*.hpp' --include='*.cpp' '#[[:space:]]*include[[:space:]]*"engine/lua/' "${above_lua[@]}" /dev/null)
while IFS=: read -r file line text; do
  [ -n "$file" ] || continue
  report "engine/$file:$line: Lua's C API above engine/lua (move it behind engine/lua/session.hpp)"
done < <(grep -rnE --include='*.hpp' --include='*.cpp' '\blua_State\b|\blua_[a-z]+[[:space:]]*\(|\bluaL_[a-zA-Z]+' "${above_lua[@]}" /dev/null)

# Libraries compiled once, behind a wrapper (docs/architecture.md): spdlog's and fmt's
# formatting in core/log.cpp, std::regex in core/regex.cpp.
while IFS=: read -r file line text; do
  [ -n "$file" ] || continue
  case "$text" in
    *spdlog* | *fmt/format*) [ "$file" = core/log.cpp ] && continue; wrapper=core/log.hpp ;;
    *) [ "$file" = core/regex.cpp ] && continue; wrapper=core/regex.hpp ;;
  esac
  report "engine/$file:$line: ${text#"${text%%[![:space:]]*}"} outside its wrapper (use engine/$wrapper)"
done < <(grep -rnE --include='*.hpp' --include='*.cpp' '#[[:space:]]*include[[:space:]]*<(spdlog/|fmt/format|regex>)' */)

if [ "$violations" -gt 0 ]; then
  echo "check_layers: $violations violation(s) of the layer rules (docs/architecture.md)"
  exit 1
fi
echo "check_layers: every include follows the floors"
