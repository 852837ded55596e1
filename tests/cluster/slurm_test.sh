#!/usr/bin/env bash
# A real Slurm across two machines: Debian's slurmctld, slurmd and munge, started here with a
# configuration of their own, one slurmd in each of two network namespaces (tests/cli/helpers.sh
# two_machines), each with its own host name. The sbatch recipe of docs/distributed.md is taken
# from the page and submitted as it is written: two nodes of two ranks, a run to the end, the
# same run requeued in the middle and going on through --resume auto to the same series,
# submitted again once complete, and `engine train` in a batch script without srun.
#   slurm_test.sh ENGINE        (CTest: cluster.slurm; exit 77 = skipped, with the reason)
set -u
ENGINE=$1
CASE=slurm
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/../cli/fixtures
REPO=$(cd "$HERE/../.." && pwd)
WORK=${ENGINE_TEST_TMP:-/tmp}/cluster-slurm
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$HERE/../cli/helpers.sh"

two_machines
for tool in slurmctld slurmd sbatch scontrol munged nsenter unshare; do
  command -v $tool >/dev/null || { echo "skipped: no $tool here (Debian's slurmctld, slurmd,
slurm-client and munge; scripts/install-deps.sh --tests installs them)"; exit 77; }
done

# munge, the authentication Slurm uses, with a key and a socket of its own
mkdir -m 700 munge && head -c 1024 /dev/urandom > munge/key && chmod 400 munge/key
munged --force --socket="$WORK/munge/socket" --key-file="$WORK/munge/key" --log-file="$WORK/munge/log" \
  --pid-file="$WORK/munge/pid" --seed-file="$WORK/munge/seed" || fail "munged did not start"
at_exit 'munged --stop --socket="$WORK/munge/socket" >/dev/null 2>&1'

# the cluster: machine A is node m1 (controller and first node), machine B is node m2. Each
# declares 16 CPUs, what the recipe asks of a node, whatever this machine has.
export SLURM_CONF=$WORK/slurm.conf
mkdir -p state spool/m1 spool/m2
cat > "$SLURM_CONF" <<CONF
ClusterName=enginetest
SlurmctldHost=m1($NET.1)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool/%n
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd-%n.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd-%n.log
ReturnToService=2
MpiDefault=none
NodeName=m1 NodeAddr=$NET.1 CPUs=16 State=UNKNOWN
NodeName=m2 NodeAddr=$NET.2 CPUs=16 State=UNKNOWN
PartitionName=main Nodes=m1,m2 Default=YES MaxTime=INFINITE State=UP
CONF
printf '127.0.0.1 localhost\n%s.1 m1\n%s.2 m2\n' $NET $NET > hosts  # the cluster's name service

# on MACHINE NAME COMMAND...: runs COMMAND on a machine: its network, its host name, its hosts
on() {
  local machine=$1 name=$2; shift 2
  nsenter --net=/run/netns/$machine unshare --uts --mount sh -c \
    'mount --bind "$0" /etc/hosts && hostname "$1" && shift && exec "$@"' "$WORK/hosts" "$name" "$@"
}
daemons_alive() {
  local p
  for p in slurmctld.pid slurmd-m1.pid slurmd-m2.pid; do
    [ -s "$WORK/$p" ] && kill -0 "$(cat "$WORK/$p")" 2>/dev/null || return 1
  done
}
at_exit 'for p in "$WORK"/slurm*.pid; do kill "$(cat "$p")"; done 2>/dev/null'
on $MACHINE_A m1 slurmctld && on $MACHINE_A m1 slurmd && on $MACHINE_B m2 slurmd ||
  fail "the Slurm daemons did not start: $(tail -n 5 "$WORK"/slurm*.log)"
# login_node COMMAND...: a Slurm command as a user types it on the cluster's first node
login_node() { on $MACHINE_A m1 "$@"; }
# wait_slurm CONDITION...: until CONDITION holds, failing if a daemon ends first
wait_slurm() {
  until "$@"; do
    daemons_alive || fail "a Slurm daemon ended before '$*': $(tail -n 5 "$WORK"/slurm*.log)"
    sleep 0.2
  done
}
both_idle() { [ "$(login_node sinfo -h -N -o %t | grep -c idle)" = 2 ]; }
wait_slurm both_idle

# What the recipe finds on the cluster: `engine` on the PATH, scripts/fashion_mnist.lua in the
# directory the job is submitted from (here the tests' tiny run, slowed down so that a requeue
# lands in its middle) and $HOME.
tiny
mkdir -p bin scripts && ln -s "$ENGINE" bin/engine
sed -e "s|root = ''|root = '$WORK/tiny'|" -e "s|delay = 0 }|delay = 0.05 }|" \
  "$FIX/resume_train.lua" > scripts/fashion_mnist.lua
export PATH=$WORK/bin:$PATH
awk '/^### Slurm \(sbatch\)/ { page = 1 } page && /^```sh/ { keep = 1; next }
     keep && /^```/ { exit } keep' "$REPO/docs/distributed.md" > fashion-mnist.sbatch
grep -q '^srun engine train' fashion-mnist.sbatch || fail "no sbatch recipe in docs/distributed.md"

# submit HOME: submits the recipe as a user whose home is HOME; prints the job's id
submit() { HOME=$1 login_node sbatch --parsable fashion-mnist.sbatch || fail "sbatch refused the recipe"; }
job_gone() { ! login_node squeue -h -j "$1" | grep -q .; }
job_state() { login_node scontrol show job "$1" | grep -oE 'JobState=[A-Z]+'; }
completed() {
  wait_slurm job_gone "$1"
  [ "$(job_state "$1")" = JobState=COMPLETED ] || fail "job $1 ended $(job_state "$1"): $(cat slurm-$1.out)"
}

# 1. the recipe as written, to the end: four ranks, two on each node
straight=$(submit "$WORK/straight")
completed $straight
grep -qF "joining 4 processes (Slurm variables), rank 0 of 4 (local 0 of 2), rendezvous m1:29500" \
  slurm-$straight.out || fail "the ranks did not join as two nodes of two: $(cat slurm-$straight.out)"
grep -qF "finished 21 steps" slurm-$straight.out || fail "the run did not finish: $(cat slurm-$straight.out)"

# 2. the same run requeued in its middle (as a preemption does): every rank stops with a
# checkpoint, and Slurm's next start of the job goes on from it through --resume auto
requeued=$(submit "$WORK/requeued")
checkpointed() {
  has_file "$WORK/requeued/runs/resume/*/ckpt-*[0-9].h5" && return
  ! job_gone $requeued || fail "job $requeued ended before its first checkpoint: $(cat slurm-$requeued.out)"
  return 1
}
wait_slurm checkpointed
login_node scontrol requeue $requeued || fail "scontrol requeue $requeued failed"
# Slurm holds a requeued batch job for two minutes before it may start again; releasing it now
# changes nothing the job sees
state() { login_node squeue -h -j $requeued -o %T:%r; }
held_or_going() { case "$(state)" in PENDING:BeginTime | RUNNING:* | "") true ;; *) false ;; esac; }
wait_slurm held_or_going
[ "$(state)" != PENDING:BeginTime ] ||
  login_node scontrol update jobid=$requeued StartTime=now || fail "cannot release job $requeued"
completed $requeued
out=$(cat slurm-$requeued.out)
# (the run file's line, not the exit's "interrupted by SIGTERM at step": srun may end the task
# between the two, under load)
for said in "run file (interrupted): $WORK/requeued/runs/resume/" \
            "--resume auto: going on with $WORK/requeued/runs/resume/" \
            "resuming 'resume' from" "finished 21 steps"; do
  grep -qF -- "$said" <<<"$out" || fail "the requeued job did not say '$said': $out"
done
first=$(ls "$WORK"/straight/runs/resume/*.h5) second=$(ls "$WORK"/requeued/runs/resume/*.h5)
[ "$(series "$first")" = "$(series "$second")" ] ||
  fail "the requeued run's series differs from the straight run's: $(diff <(series "$first") <(series "$second"))"

# 3. the job submitted once more after it completed: nothing to do, the run file untouched
before=$(md5sum "$second")
again=$(submit "$WORK/requeued")
completed $again
grep -qF "already completed at step 21, nothing to do" slurm-$again.out ||
  fail "a completed run was not left as it is: $(cat slurm-$again.out)"
[ "$(md5sum "$second")" = "$before" ] || fail "submitting a completed run again changed its run file"

# 4. engine train in the batch script itself, without srun: refused with a word about srun
printf '#!/bin/bash\n#SBATCH --ntasks=2\nengine train scripts/fashion_mnist.lua --out "$HOME/nosrun"\necho "exit $?"\n' \
  > nosrun.sbatch
nosrun=$(HOME=$WORK login_node sbatch --parsable nosrun.sbatch) || fail "sbatch refused nosrun.sbatch"
completed $nosrun
grep -qF "not started by srun" slurm-$nosrun.out && grep -qx "exit 2" slurm-$nosrun.out ||
  fail "engine train outside srun was not refused with exit 2: $(cat slurm-$nosrun.out)"
echo "two Slurm nodes: the recipe ran, was requeued and resumed to the same series"
