#!/usr/bin/env bash
# Runs a documentation page's engine snippets in order, as a reader would type them:
#   ```lua file=NAME      the block is written to NAME (in a fresh folder); ```json file=NAME too
#   ```sh run             the block is run there with bash -e (engine on PATH, scripts/,
#                         modules/ and datasets/ of the checkout beside it)
# Other blocks (PyTorch, Determined, DLBS... shown for comparison) are not run. The page fails
# when a block exits non-zero, prints a crash, or when it has no block to run.
#   tests/docs/run_snippets.sh ENGINE PAGE.md
set -u
engine=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
page=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
repo=$(cd "$(dirname "$0")/../.." && pwd)
name=$(basename "$page" .md)
work=${ENGINE_TEST_TMP:-/tmp}/docs-$name
rm -rf "$work" && mkdir -p "$work/bin" || exit 1
ln -s "$engine" "$work/bin/engine"
for d in scripts modules datasets; do ln -s "$repo/$d" "$work/$d"; done
export PATH="$work/bin:$PATH"
cd "$work" || exit 1

# Splits the page into numbered pieces: files to write and blocks to run, in page order.
awk -v out="$work/.pieces" '
  BEGIN { system("mkdir -p " out); n = 0; mode = "" }
  /^```/ && mode != "" { close(piece); mode = ""; next }
  /^```(lua|json) file=/ { n++; mode = "file"; sub(/^```(lua|json) file=/, ""); piece = sprintf("%s/%03d.file", out, n); print $0 > (piece ".name"); close(piece ".name"); printf "" > piece; next }
  /^```sh run/ { n++; mode = "run"; piece = sprintf("%s/%03d.run", out, n); printf "" > piece; next }
  mode != "" { print >> piece }
' "$page"

count=0
for piece in "$work"/.pieces/*; do
  case $piece in
    *.file.name) continue ;;
    *.file)
      target=$(cat "$piece.name")
      mkdir -p "$(dirname "$target")"
      cp "$piece" "$target"
      echo "== wrote $target" ;;
    *.run)
      count=$((count + 1))
      echo "== running block $count:"
      sed 's/^/   $ /' "$piece"
      out=$(bash -e -o pipefail "$piece" 2>&1); rc=$?
      printf '%s\n' "$out"
      if [ $rc != 0 ]; then echo "FAIL [$name]: block $count exited with $rc"; exit 1; fi
      case $out in *"C++ exception"*|*"Segmentation"*|*"terminate called"*|*"internal error"*)
        echo "FAIL [$name]: block $count printed a crash"; exit 1 ;; esac ;;
  esac
done
[ $count -gt 0 ] || { echo "FAIL [$name]: no \`\`\`sh run block in $page"; exit 1; }
echo "$name: $count blocks ran"
