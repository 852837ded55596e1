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
mkdir -p spool/m1 spool/m2
# configure CPUS TASK_PLUGIN STATE: the cluster's configuration, each node with CPUS
configure() {
  mkdir -p "$WORK/$3"
  cat > "$SLURM_CONF" <<CONF
ClusterName=enginetest
SlurmctldHost=m1($NET.1)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$WORK/munge/socket
ProctrackType=proctrack/linuxproc
TaskPlugin=$2
TaskPluginParam=${4:-None}
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
StateSaveLocation=$WORK/$3
SlurmdSpoolDir=$WORK/spool/%n
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd-%n.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd-%n.log
ReturnToService=2
MpiDefault=none
NodeName=m1 NodeAddr=$NET.1 CPUs=$1 State=UNKNOWN
NodeName=m2 NodeAddr=$NET.2 CPUs=$1 State=UNKNOWN
PartitionName=main Nodes=m1,m2 Default=YES MaxTime=INFINITE State=UP
CONF
}
configure 16 task/none state
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
start_daemons() {
  on $MACHINE_A m1 slurmctld && on $MACHINE_A m1 slurmd && on $MACHINE_B m2 slurmd ||
    fail "the Slurm daemons did not start: $(tail -n 5 "$WORK"/slurm*.log)"
}
stop_daemons() {  # and waits until each has ended
  local p pid
  for p in slurmctld.pid slurmd-m1.pid slurmd-m2.pid; do
    pid=$(cat "$WORK/$p" 2>/dev/null) || continue
    kill "$pid" 2>/dev/null
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    rm -f "$WORK/$p"
  done
}
start_daemons
# login_node COMMAND...: a Slurm command as a user types it on the cluster's first node
login_node() { on $MACHINE_A m1 "$@"; }
# wait_slurm CONDITION...: until CONDITION holds, failing if a daemon ends first
wait_slurm() {
  until "$@"; do
    daemons_alive || fail "a Slurm daemon ended before '$*': $(tail -n 5 "$WORK"/slurm*.log)"
    sleep 0.2
  done
}
later_than() { [ "$(date +%s)" -gt "$1" ]; }  # the clock has passed second $1
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
grep -q '^srun .*engine train' fashion-mnist.sbatch || fail "no sbatch recipe in docs/distributed.md"

# submit HOME: submits the recipe as a user whose home is HOME; prints the job's id
submit() { HOME=$1 login_node sbatch --parsable fashion-mnist.sbatch || fail "sbatch refused the recipe"; }
job_gone() { ! login_node squeue -h -j "$1" | grep -q .; }
job_state() { login_node scontrol show job "$1" | grep -oE 'JobState=[A-Z]+'; }
completed() {
  wait_slurm job_gone "$1"
  [ "$(job_state "$1")" = JobState=COMPLETED ] ||
    fail "job $1 ended $(job_state "$1"): $(cat slurm-$1.out)
the daemons said: $(grep -hE "error|revoked" "$WORK"/slurm*.log | tail -n 8)"
}

# 1. the recipe as written, to the end: four ranks, two on each node
straight=$(submit "$WORK/straight")
completed $straight
grep -qF "joining 4 processes (Slurm variables), rank 0 of 4 (local 0 of 2), rendezvous m1:29500" \
  slurm-$straight.out || fail "the ranks did not join as two nodes of two: $(cat slurm-$straight.out)"
grep -qF "finished 21 steps" slurm-$straight.out || fail "the run did not finish: $(cat slurm-$straight.out)"

# release JOB: Slurm holds a requeued batch job for two minutes before it may start again;
# releasing it at once changes nothing the job sees
release() {
  local job=$1
  state() { login_node squeue -h -j $job -o %T:%r; }
  held_or_going() { case "$(state)" in PENDING:BeginTime | RUNNING:* | "") true ;; *) false ;; esac; }
  wait_slurm held_or_going
  [ "$(state)" = PENDING:BeginTime ] || return 0
  # the job's last start must have left both nodes first: released while they still complete
  # it, the next start is refused ("Job credential revoked") and the job ends FAILED. A slurmd
  # also refuses a credential made in the same second as the one it revoked (Slurm compares
  # them in whole seconds), so the release waits for the clock's next second after that
  wait_slurm both_idle
  local left=$(date +%s)
  wait_slurm later_than $left
  login_node scontrol update jobid=$job StartTime=now || fail "cannot release job $job"
}
# checkpointed JOB HOME: the job's run has its first checkpoint (fails if the job ended first)
checkpointed() {
  has_file "$2/runs/resume/*/ckpt-*[0-9].h5" && return
  ! job_gone $1 || fail "job $1 ended before its first checkpoint: $(cat slurm-$1.out)"
  return 1
}

# 2. the same run requeued in its middle (as a preemption does): every rank stops with a
# checkpoint, and Slurm's next start of the job goes on from it through --resume auto
requeued=$(submit "$WORK/requeued")
wait_slurm checkpointed $requeued "$WORK/requeued"
login_node scontrol requeue $requeued || fail "scontrol requeue $requeued failed"
release $requeued
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

# 3. a rank killed in the middle (SIGKILL: the OOM killer, a crash): the others end with exit 8,
# srun with 137, and the recipe requeues the job itself (Slurm's --requeue does not restart a
# failed job); the next start goes on from the last checkpoint to the straight run's series
killed=$(submit "$WORK/killed")
wait_slurm checkpointed $killed "$WORK/killed"
victim=""
for p in $(pgrep -x engine); do
  env_of=$(tr '\0' '\n' < /proc/$p/environ 2>/dev/null)
  grep -qx "SLURM_JOB_ID=$killed" <<<"$env_of" && grep -qx "SLURM_PROCID=1" <<<"$env_of" && victim=$p
done
[ -n "$victim" ] || fail "no rank 1 of job $killed found"
kill -9 "$victim"
restarted() { login_node scontrol show job $killed | grep -qE 'Restarts=[1-9]'; }
wait_slurm restarted  # the recipe's own scontrol requeue
release $killed
completed $killed
out=$(cat slurm-$killed.out)
for said in "--resume auto: going on with $WORK/killed/runs/resume/" "resuming 'resume' from" \
            "finished 21 steps"; do
  grep -qF -- "$said" <<<"$out" || fail "the job whose rank was killed did not say '$said': $out"
done
third=$(ls "$WORK"/killed/runs/resume/*.h5)
[ "$(series "$first")" = "$(series "$third")" ] ||
  fail "the restarted run's series differs from the straight run's: $(diff <(series "$first") <(series "$third"))"
restarts=$(login_node scontrol show job $killed | grep -oE 'Restarts=[0-9]+')
[ "$restarts" = Restarts=1 ] || fail "job $killed was started again $restarts times, not once"

# 4. the recipe submitted once more after its job completed: another job (another
# SLURM_JOB_ID, --run_name), which starts a run of its own; the completed one is untouched
before=$(md5sum "$second")
again=$(submit "$WORK/requeued")
completed $again
grep -qF "is another job's (its --run_name is $requeued), passed over" slurm-$again.out &&
  grep -qF "to go on with; starting one" slurm-$again.out ||
  fail "another submission did not start a run of its own: $(cat slurm-$again.out)"
[ "$(ls "$WORK"/requeued/runs/resume/*.h5 | wc -l)" = 2 ] || fail "the second job did not write a run of its own"
[ "$(md5sum "$second")" = "$before" ] || fail "another job changed the completed job's run file"

# 5. engine train in the batch script itself, without srun: refused with a word about srun
printf '#!/bin/bash\n#SBATCH --ntasks=2\nengine train scripts/fashion_mnist.lua --out "$HOME/nosrun"\necho "exit $?"\n' \
  > nosrun.sbatch
nosrun=$(HOME=$WORK login_node sbatch --parsable nosrun.sbatch) || fail "sbatch refused nosrun.sbatch"
completed $nosrun
grep -qF "not started by srun" slurm-$nosrun.out && grep -qx "exit 2" slurm-$nosrun.out ||
  fail "engine train outside srun was not refused with exit 2: $(cat slurm-$nosrun.out)"

# 6. CPU binding on (task/affinity, each node declaring the 2 CPUs it has): the recipe as
# written, submitted with one rank of 2 CPUs on each node (sbatch's flags override its #SBATCH
# lines): srun --cpus-per-task gives each rank both CPUs for its 2 threads. The same recipe
# without srun's --cpus-per-task shows what the flag is for: each rank bound to one CPU, as
# Slurm 22.05's srun no longer takes --cpus-per-task from sbatch
stop_daemons
configure 2 task/affinity state-bound Cores
start_daemons
wait_slurm both_idle
mkdir -p bound && ln -s ../scripts bound/scripts && cd bound || fail "no folder bound"
sed 's/^srun --cpus-per-task="$SLURM_CPUS_PER_TASK" /srun /' ../fashion-mnist.sbatch > unbound.sbatch
! grep -q -- '--cpus-per-task="$SLURM_CPUS_PER_TASK" engine' unbound.sbatch || fail "the srun flag was not taken out"
bound_job() {  # RECIPE HOME: one rank of 2 CPUs on each node; prints the job's id
  HOME=$2 login_node sbatch --parsable --ntasks-per-node=1 --cpus-per-task=2 "$1" || fail "sbatch refused $1"
}
job=$(bound_job ../fashion-mnist.sbatch "$WORK/bound/recipe")
completed $job
grep -qF "rank 0: 2 threads" slurm-$job.out || fail "rank 0 did not take 2 threads: $(cat slurm-$job.out)"
! grep -qF "this process may use" slurm-$job.out || fail "a rank of the recipe was bound to fewer CPUs than its threads: $(cat slurm-$job.out)"
job=$(bound_job unbound.sbatch "$WORK/bound/unbound")
completed $job
grep -qF "2 threads on the 1 core this process may use" slurm-$job.out ||
  fail "without srun --cpus-per-task the ranks were not bound to one CPU each (what the recipe's flag is for): $(cat slurm-$job.out)"
echo "two Slurm nodes: the recipe ran, was requeued and resumed to the same series, bound its ranks to their CPUs"
