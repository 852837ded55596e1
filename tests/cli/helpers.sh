# Helpers of the command-line tests, sourced by cli_test.sh and tests/cluster/*.sh. They read
# ENGINE, CASE, FIX and WORK from the script that sources them.
fail() { echo "FAIL [$CASE]: $*"; exit 1; }

# expect RC PATTERN... -- COMMAND...: runs COMMAND, checks its exit code and that its output
# (stdout and stderr) contains every PATTERN (fixed strings).
expect() {
  local rc=$1; shift
  local patterns=()
  while [ "$1" != "--" ]; do patterns+=("$1"); shift; done
  shift
  local out got
  out=$("$@" 2>&1); got=$?
  [ "$got" = "$rc" ] || fail "exit code $got, expected $rc, from: $*
$out"
  for p in "${patterns[@]}"; do
    printf '%s' "$out" | grep -qF -- "$p" || fail "output lacks '$p', from: $*
$out"
  done
  case "$out" in *"C++ exception"*|*"Segmentation"*|*"terminate called"*) fail "crash-like output: $out";; esac
}

tiny() { "$ENGINE" run "$FIX/make_tiny_mnist.lua" "$WORK/tiny" >/dev/null || fail "cannot make the tiny dataset"; }

# wait_until PID LOG CONDITION...: until the command CONDITION succeeds (the event, however
# long it takes); fails, showing LOG, when process PID ends first.
wait_until() {
  local pid=$1 log=$2; shift 2
  until "$@"; do
    kill -0 "$pid" 2>/dev/null || fail "process $pid ended before '$*': $(cat "$log")"
    sleep 0.05
  done
}
has_file() { compgen -G "$1" >/dev/null; }
# wait_for GLOB PID LOG: until a file matches GLOB.
wait_for() { wait_until "$2" "$3" has_file "$1"; }
# listening PORT: a process on this machine listens on TCP PORT (read from /proc, no connection)
listening() {
  awk -v port=":$(printf '%04X' "$1")" '$2 ~ port"$" && $4 == "0A" { found = 1 } END { exit !found }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
# lines_at_least FILE PATTERN N: FILE holds N lines with PATTERN.
lines_at_least() { [ "$(grep -c -- "$2" "$1")" -ge "$3" ]; }

# The metric series of a run file, as text, for comparing runs.
series() { h5dump -d /metrics/train/loss -d /metrics/validation/accuracy -d /metrics/train/step "$1" | grep -v '^HDF5 '; }

# The numbers of one dataset of a run file, one per line.
numbers() { h5dump -y -d "$2" "$1" | sed -n '/DATA {/,/}/p' | grep -oE -- '-?[0-9][0-9.]*(e[+-]?[0-9]+)?'; }

# close FILE_A FILE_B DATASET TOLERANCE: the same count of values, each pair within the relative
# tolerance.
close() {
  local a b
  a=$(numbers "$1" "$3"); b=$(numbers "$2" "$3")
  [ -n "$a" ] || fail "no values in $3 of $1"
  paste <(printf '%s\n' "$a") <(printf '%s\n' "$b") | awk -v tol="$4" '
    NF != 2 { bad = 1 }
    { d = $1 - $2; if (d < 0) d = -d; m = ($1 < 0 ? -$1 : $1); if (d > tol * (m > 1 ? m : 1)) bad = 1 }
    END { exit bad }' || fail "$3 differs beyond $4 between $1 and $2:
$(paste <(printf '%s\n' "$a") <(printf '%s\n' "$b"))"
}

# The pid of the worker with RANK=$2 among the children of launcher $1 (empty until started).
worker_pid() {
  local p
  for p in $(pgrep -P "$1"); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "RANK=$2" && { echo "$p"; return; }
    worker_pid "$p" "$2"  # a backgrounded shell function's subshell stands between
  done
}

# A port for a test's rendezvous (the launcher finds free ones itself).
test_port() { echo $((20000 + (RANDOM % 20000))); }

# at_exit COMMAND: runs COMMAND (a string) when the script exits, the latest first.
EXIT_COMMANDS=()
at_exit() {
  EXIT_COMMANDS=("$1" "${EXIT_COMMANDS[@]}")
  trap 'for c in "${EXIT_COMMANDS[@]}"; do eval "$c"; done' EXIT
}

# two_machines: two network namespaces joined by a veth pair, each with its own address on its
# own eth0, as two machines (two nodes, two pods) are: each reaches the other only through its
# address. Sets MACHINE_A and MACHINE_B (the namespaces) and NET (their addresses are $NET.1 and
# $NET.2);
# when the script exits, whatever still runs in them is killed and they are removed. Needs
# root: exits 77 (CTest's skip) with the reason elsewhere.
two_machines() {
  [ "$(id -u)" = 0 ] && command -v ip >/dev/null ||
    { echo "skipped: network namespaces need root and ip (iproute2)"; exit 77; }
  NET=192.168.$((20 + RANDOM % 200)); MACHINE_A=enga$$; MACHINE_B=engb$$
  ip netns add $MACHINE_A && ip netns add $MACHINE_B ||
    { echo "skipped: this kernel refuses network namespaces"; exit 77; }
  at_exit 'for ns in $MACHINE_A $MACHINE_B; do ip netns pids $ns | xargs -r kill -9; ip netns del $ns; done 2>/dev/null'
  ip link add va$$ type veth peer name vb$$ || fail "cannot make a veth pair"
  ip link set va$$ netns $MACHINE_A && ip link set vb$$ netns $MACHINE_B
  ip -n $MACHINE_A link set va$$ name eth0 && ip -n $MACHINE_B link set vb$$ name eth0
  ip -n $MACHINE_A addr add $NET.1/24 dev eth0 && ip -n $MACHINE_B addr add $NET.2/24 dev eth0
  for ns in $MACHINE_A $MACHINE_B; do ip -n $ns link set lo up && ip -n $ns link set eth0 up; done
}
