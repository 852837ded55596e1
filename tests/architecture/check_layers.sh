#!/usr/bin/env bash
# The layer rules of docs/architecture.md, checked on the sources: every #include of the
# engine's own headers goes to the same floor or one below, Lua's headers are included under
# engine/lua only, and engine/cli reaches Lua through engine/lua/session.hpp alone, never
# through Lua's C API. Prints each violation as FILE:LINE: what; exits 1 when there is one.
#   tests/architecture/check_layers.sh [REPO]
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$repo/engine" || { echo "check_layers: no engine/ under $repo" >&2; exit 2; }

# What each folder may include besides itself (the floors of docs/architecture.md).
declare -A allowed=(
  [core]=""
  [io]="core"
  [nn]="core"
  [data]="core io"
  [dist]="core"
  [report]="core io"
  [search]="core io"
  [train]="core io nn data dist"
  [bench]="core io nn data dist train"
  [lua]="core io nn data train bench dist search"
  [run]="core io nn data train bench dist search lua"
  [cli]="core io nn data train bench dist search lua run report"
)

violations=0
report() { echo "$1"; violations=$((violations + 1)); }

for layer in */; do
  layer=${layer%/}
  [ "${allowed[$layer]+set}" = set ] || { report "engine/$layer: a folder that has no floor in check_layers.sh (add it there and to docs/architecture.md)"; continue; }
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
while IFS=: read -r file line text; do
  [ -n "$file" ] || continue
  case "$text" in *'"engine/lua/session.hpp"'*) ;; *) report "engine/$file:$line: the floors above engine/lua reach Lua through engine/lua/session.hpp only" ;; esac
done < <(grep -rn --include='*.hpp' --include='*.cpp' '#[[:space:]]*include[[:space:]]*"engine/lua/' run cli)
while IFS=: read -r file line text; do
  [ -n "$file" ] || continue
  report "engine/$file:$line: Lua's C API above engine/lua (move it behind engine/lua/session.hpp)"
done < <(grep -rnE --include='*.hpp' --include='*.cpp' '\blua_State\b|\blua_[a-z]+[[:space:]]*\(|\bluaL_[a-zA-Z]+' run cli)

if [ "$violations" -gt 0 ]; then
  echo "check_layers: $violations violation(s) of the layer rules (docs/architecture.md)"
  exit 1
fi
echo "check_layers: every include follows the floors"
