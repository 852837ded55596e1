#!/usr/bin/env bash
# Names that a unity build would merge: each target's sources compile 8 to a translation unit
# (ENGINE_UNITY_BUILD, docs/architecture.md), so a function or k-constant defined in the
# anonymous namespace of two files of one folder (engine/X or tests/X, a target each) either
# fails to compile (same signature) or, worse, silently overloads the other file's (different
# signatures) when the two land in one batch. Prints each such name with its files; exits 1
# when there is one.
#   tests/architecture/check_unity_names.sh [REPO]
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$repo" || exit 2

# The names a file defines at the top level of its anonymous namespaces (clang-format puts
# definitions at column 0 there): functions, and constants named kSomething.
anonymous_names() {
  awk '
    /^namespace \{/ { inside = 1; next }
    /^\}  \/\/ namespace$/ { inside = 0; next }
    !inside || /^(namespace|using|return|template|struct|class|enum|typedef)( |$)/ { next }
    /^[A-Za-z].*[A-Za-z_0-9]\(/ {
      line = $0; sub(/\(.*/, "", line); n = split(line, w, /[ *&]+/)
      if (w[n] ~ /^[A-Za-z_][A-Za-z_0-9]*$/ && w[n] != "operator") print w[n]
      next
    }
    /^[A-Za-z].*[^A-Za-z0-9_]k[A-Z][A-Za-z0-9_]*(\[\])? *(=|\{)/ {
      line = $0; sub(/(\[\])? *(=|\{).*/, "", line); n = split(line, w, /[ *&]+/)
      if (w[n] ~ /^k[A-Z]/) print w[n]
    }' "$1" | sort -u
}

clashes=0
for folder in engine/*/ tests/*/; do
  folder=${folder%/}
  while read -r name files; do
    [ -n "$name" ] || continue
    echo "$folder: '$name' is defined in the anonymous namespace of $files (rename one: a unity build merges them)"
    clashes=$((clashes + 1))
  done < <(find "$folder" -name '*.cpp' | sort | while read -r file; do
             anonymous_names "$file" | sed "s|\$| $file|"
           done | awk '{ count[$1]++; where[$1] = where[$1] " " $2 }
                       END { for (n in count) if (count[n] > 1) print n where[n] }' | sort)
done
[ "$clashes" -eq 0 ] || exit 1
echo "check_unity_names: no anonymous-namespace name is defined twice in one folder"
