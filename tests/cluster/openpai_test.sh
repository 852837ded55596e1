#!/usr/bin/env bash
# The OpenPAI recipe of docs/distributed.md across two machines (tests/cli/helpers.sh
# two_machines): its commands are taken from the page and run as written in each machine, with
# OpenPAI's variables set as OpenPAI sets them for a task role `worker` of two instances. The
# paths the recipe names are there as in its container: `engine` on the PATH, the script under
# /opt/engine/scripts (here the tests' tiny run) and /mnt/runs (both bound in a mount namespace
# of each machine's own). The series must be one process's.
#   openpai_test.sh ENGINE        (CTest: cluster.openpai; exit 77 = skipped, with the reason)
set -u
ENGINE=$1
CASE=openpai
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/../cli/fixtures
REPO=$(cd "$HERE/../.." && pwd)
WORK=${ENGINE_TEST_TMP:-/tmp}/cluster-openpai
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$HERE/../cli/helpers.sh"

two_machines
command -v nsenter >/dev/null && command -v unshare >/dev/null ||
  { echo "skipped: needs nsenter and unshare (util-linux)"; exit 77; }

# the recipe's commands: the items of `commands:`, a folded item (>-) joined into one line
awk '/^### OpenPAI/ { page = 1 } page && /^```yaml/ { yaml = 1; next } yaml && /^```/ { exit }
     yaml && /^ *commands:/ { items = 1; next }
     items && /^ *- >-$/ { if (line != "") print line; line = ""; next }
     items && /^ *- / { if (line != "") print line; sub(/^ *- /, ""); line = $0; next }
     items { sub(/^ +/, ""); line = (line == "" ? $0 : line " " $0) }
     END { if (line != "") print line }' "$REPO/docs/distributed.md" > commands.sh
grep -q '^engine train' commands.sh || fail "no OpenPAI recipe in docs/distributed.md: $(cat commands.sh)"

tiny
mkdir -p bin opt/engine/scripts mnt/runs
ln -s "$ENGINE" bin/engine
sed -e "s|root = ''|root = '$WORK/tiny'|" "$FIX/tiny_train.lua" > opt/engine/scripts/fashion_mnist.lua
threads=$(grep -oE -- '--threads [0-9]+' commands.sh | head -n 1)
"$ENGINE" train opt/engine/scripts/fashion_mnist.lua --out "$WORK/one" $threads -q >one.txt 2>&1 ||
  fail "the one-process run failed: $(cat one.txt)"

# instance INDEX MACHINE: the recipe's commands in one instance of the task role, with the
# variables OpenPAI sets (the port is the one it picked for the role's SynPort)
port=$(test_port)
instance() {
  env PATH="$WORK/bin:$PATH" PAI_TASK_ROLE_TASK_COUNT_worker=2 PAI_CURRENT_TASK_ROLE_CURRENT_TASK_INDEX=$1 \
      PAI_HOST_IP_worker_0=$NET.1 PAI_PORT_LIST_worker_0_SynPort=$port \
    nsenter --net=/run/netns/$2 unshare --mount sh -c \
      'mount --bind "$0/opt" /opt && mount --bind "$0/mnt" /mnt && exec bash "$0/commands.sh"' "$WORK" \
      </dev/null >instance-$1.txt 2>&1
}
instance 0 $MACHINE_A &
p0=$!
instance 1 $MACHINE_B || fail "instance 1 failed: $(cat instance-1.txt)"
wait $p0 || fail "instance 0 failed: $(cat instance-0.txt)"
grep -qF "training 'tiny' on 2 processes" instance-0.txt || fail "no world of 2: $(cat instance-0.txt)"
close "$(ls "$WORK"/one/tiny/*.h5)" "$(ls "$WORK"/mnt/runs/tiny/*.h5)" /metrics/train/loss 1e-4
echo "the OpenPAI recipe trained across two machines to one process's series"
