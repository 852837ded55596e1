#!/usr/bin/env bash
# The size rules of docs/architecture.md, checked on engine/: no file over 600 lines and no
# function over 80. A function is found as clang-format lays one out: its head starts at column 0
# (namespaces are not indented) and its body ends at the first later line that starts with '}'.
# Prints each violation as FILE:LINE: what; exits 1 when there is one.
#   tests/architecture/check_sizes.sh [REPO]
set -uo pipefail
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$repo" || exit 2
[ -d engine ] || { echo "check_sizes: no engine/ under $repo" >&2; exit 2; }
max_file=${ENGINE_MAX_FILE_LINES:-600}
max_function=${ENGINE_MAX_FUNCTION_LINES:-80}

violations=$(find engine -name '*.cpp' -o -name '*.hpp' | sort | xargs awk \
  -v max_file="$max_file" -v max_function="$max_function" '
  function check(   i, k, j, head) {
    if (n > max_file) printf "%s:1: %d lines, more than %d: split it by concern\n", name, n, max_file
    for (i = 1; i <= n; i++) {
      head = line[i]
      if (head !~ /^[A-Za-z_~]/ || head !~ /\(/) continue
      if (head ~ /^(namespace|struct|class|enum|union|extern|using|template|static_assert|typedef)/) continue
      if (substr(head, 1, index(head, "(")) ~ /=/) continue   # a variable initialised by a call
      for (k = i; k <= n && k < i + 8 && line[k] !~ /[{;][ \t]*$/; k++) {}
      if (k > n || line[k] !~ /\{[ \t]*$/) continue
      for (j = k + 1; j <= n && line[j] !~ /^}/; j++) {}
      if (j - i + 1 > max_function)
        printf "%s:%d: %d lines, more than %d: %s\n", name, i, j - i + 1, max_function, substr(head, 1, 80)
      i = j
    }
  }
  FNR == 1 && NR > 1 { check() }
  FNR == 1 { n = 0; name = FILENAME }
  { line[++n] = $0 }
  END { if (NR > 0) check() }
')
if [ -n "$violations" ]; then
  echo "$violations"
  echo "check_sizes: $(wc -l <<<"$violations") file(s) or function(s) too long (docs/architecture.md)"
  exit 1
fi
echo "check_sizes: no file over $max_file lines, no function over $max_function"
