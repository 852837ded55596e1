#!/usr/bin/env bash
# The Dockerfile built and run for real, with Debian's podman: a base image made from Debian's
# mirror by debootstrap (no registry is reachable from here), the image built from this
# checkout, the container recipe of docs/distributed.md run in it, and two containers on one
# podman network training together with exactly a PyTorchJob's variables, to the series of the
# same job run with --nproc 2 in one container. Minutes of building (the image installs its packages from the mirror and compiles
# the engine), so only registered on request:
#   cmake -S . -B build -DENGINE_CONTAINER_TESTS=ON && ctest --test-dir build -L container -V
#   container_test.sh     (exit 77 = skipped, with the reason)
# It leaves the base image `localhost/debian:12` for the next run; everything else it makes
# (the engine's image, containers, the network) goes when it ends.
set -u
CASE=container
HERE=$(cd "$(dirname "$0")" && pwd)
FIX=$HERE/../cli/fixtures
REPO=$(cd "$HERE/../.." && pwd)
WORK=${ENGINE_TEST_TMP:-/tmp}/cluster-container
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
. "$HERE/../cli/helpers.sh"

[ "$(id -u)" = 0 ] || { echo "skipped: the containers are run as root"; exit 77; }
for tool in podman runc debootstrap h5dump; do
  command -v $tool >/dev/null ||
    { echo "skipped: no $tool here (Debian: apt-get install podman runc debootstrap hdf5-tools)"; exit 77; }
done
# runc, not crun: crun fails on this kernel's hybrid cgroups and on raising rlimits
podman() {
  command podman --runtime runc --cgroup-manager cgroupfs "$@"
}
limits=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

# The base image the Dockerfile starts FROM, made from Debian's mirror when it is not there yet
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
if ! podman image exists localhost/debian:12; then
  debootstrap --variant=minbase bookworm "$WORK/rootfs" "$mirror" >debootstrap.log 2>&1 ||
    fail "debootstrap from $mirror failed: $(tail -n 5 debootstrap.log)"
  tar -C "$WORK/rootfs" -c . | podman import - localhost/debian:12 >/dev/null ||
    fail "podman import of the base image failed"
  rm -rf "$WORK/rootfs"
fi

if [ -n "${ENGINE_TEST_IMAGE:-}" ]; then  # an image built before, when working on this test
  image=$ENGINE_TEST_IMAGE
else
  image=localhost/engine-test:$$
  at_exit 'command podman rmi -f $image >/dev/null 2>&1'
  start=$SECONDS
  podman build --pull=never --network host "${limits[@]}" -t $image "$REPO" >build.log 2>&1 ||
    fail "the image did not build: $(tail -n 20 build.log)"
  echo "the image built in $((SECONDS - start)) s"
fi

# The container recipe of docs/distributed.md, as written there (`docker` is podman here),
# its run file kept on this machine through a volume
recipe=$(awk '/^### The container/ { page = 1 } page && /^```sh/ { keep = 1; next }
              keep && /^```/ { exit } keep && /^docker run/' "$REPO/docs/distributed.md")
[ -n "$recipe" ] || fail "no 'docker run' line under 'The container' in docs/distributed.md"
read -r -a words <<<"${recipe#docker run }"
[ "${words[0]}" = --rm ] && [ "${words[1]}" = engine ] || fail "unexpected recipe: $recipe"
mkdir -p runs
start=$SECONDS
podman run --rm "${limits[@]}" -v "$WORK/runs:/work/runs" $image "${words[@]:2}" >readme-job.txt 2>&1 ||
  fail "the README job failed in the container: $(tail -n 20 readme-job.txt)"
echo "the README job ran in the container in $((SECONDS - start)) s"
grep -qF "training 'fashion_mnist' on 2 processes" readme-job.txt ||
  fail "the job did not train on 2 processes: $(cat readme-job.txt)"
has_file "$WORK/runs/fashion_mnist/*.h5" || fail "no run file came out of the container"

# Two containers, two "pods": one podman network, each container its own address and name,
# started with exactly the four variables Kubeflow's training operator sets and the command of
# the PyTorchJob of docs/distributed.md (100 steps of it), to the series of --nproc 2 in one
# container with as many threads per rank
commands=$(awk '/^kind: PyTorchJob/ { page = 1 } page && /command: \[/ { keep = 1 }
                keep { printf "%s", $0 } keep && /\]/ { print ""; keep = 0 } /^```$/ && page { exit }' \
             "$REPO/docs/distributed.md" | sed -e 's/.*command: \[//' -e 's/\].*//' | tr -d '",')
[ "$(printf '%s\n' "$commands" | wc -l)" = 2 ] && [ "$(printf '%s\n' "$commands" | sort -u | wc -l)" = 1 ] ||
  fail "the PyTorchJob of docs/distributed.md should give Master and Worker one command: $commands"
read -r -a job <<<"$(printf '%s\n' "$commands" | head -n 1)"
[ "${job[0]} ${job[1]}" = "engine train" ] || fail "unexpected PyTorchJob command: ${job[*]}"
threads=$(printf '%s\n' "${job[@]}" | grep -A1 -x -- --threads | tail -n 1)
steps=(--set max_steps=100 --set validate_every=50)
net=engine-test-$$
podman network create $net >/dev/null || fail "podman network create failed"
at_exit 'command podman rm -f engine-test-a-$$ engine-test-b-$$ >/dev/null 2>&1; command podman network rm -f $net >/dev/null 2>&1'
mkdir -p nproc two
podman run --rm "${limits[@]}" -v "$WORK/nproc:/runs" $image "${job[@]}" "${steps[@]}" \
  --nproc 2 --threads $((2 * threads)) >nproc.txt 2>&1 || fail "the --nproc 2 run failed: $(tail -n 20 nproc.txt)"
pod() {  # pod RANK: one rank in its container, named engine-test-a-$$ (rank 0) or -b-$$
  local name=engine-test-$([ "$1" = 0 ] && echo a || echo b)-$$
  podman run --rm "${limits[@]}" --name $name --hostname $name --network $net -v "$WORK/two:/runs" \
    -e RANK=$1 -e WORLD_SIZE=2 -e MASTER_ADDR=engine-test-a-$$ -e MASTER_PORT=29500 \
    $image "${job[@]}" "${steps[@]}" -v
}
start=$SECONDS
pod 0 >pod-0.txt 2>&1 &
p0=$!
# rank 1 starts once rank 0's container runs, so that its name is known on the network
running() { [ "$(command podman container inspect -f '{{.State.Running}}' "$1" 2>/dev/null)" = true ]; }
wait_until $p0 pod-0.txt running engine-test-a-$$
pod 1 >pod-1.txt 2>&1 || fail "rank 1's container failed: $(tail -n 20 pod-1.txt)"
wait $p0 || fail "rank 0's container failed: $(tail -n 20 pod-0.txt)"
echo "two containers trained together in $((SECONDS - start)) s: ${job[*]} ${steps[*]}"
for r in 0 1; do
  grep -qF "local 0 of 1, found from the ranks' hosts" pod-$r.txt ||
    fail "rank $r did not find itself alone on its machine: $(cat pod-$r.txt)"
done
grep -qF "rank 0: $threads threads (--threads)" pod-0.txt || fail "rank 0 did not take --threads $threads: $(cat pod-0.txt)"
one=$(ls "$WORK"/nproc/fashion_mnist/*.h5) two=$(ls "$WORK"/two/fashion_mnist/*.h5)
for series in /metrics/train/loss /metrics/validation/loss; do
  echo "$series: $(numbers "$two" $series | xargs)"
  [ "$(numbers "$one" $series)" = "$(numbers "$two" $series)" ] ||
    fail "$series differs between --nproc 2 and two containers: $(numbers "$one" $series | xargs) against $(numbers "$two" $series | xargs)"
done
grep -h "finished" nproc.txt pod-0.txt | sed 's/^/  /'
echo "the container recipe ran, and two containers trained to the series of --nproc 2"
