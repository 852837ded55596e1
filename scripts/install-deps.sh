#!/usr/bin/env bash
# Installs the Debian 12 packages the engine needs to build, test and run. Idempotent: prints
# nothing and touches nothing when every package is already there.
#   scripts/install-deps.sh [--tests]    --tests: also what only the test suite uses (a real
#                                        Slurm for cluster.slurm, iproute2 for the namespaces,
#                                        chromium for the live page's test)
set -euo pipefail
case "${1:-}" in
  "" | --tests) ;;
  *) echo "usage: scripts/install-deps.sh [--tests]" >&2; exit 2 ;;
esac
packages=(
  cmake ninja-build g++ make pkg-config ccache
  libtorch-dev libopenblas0-openmp
  libluajit2-5.1-dev libcxxopts-dev libhdf5-dev hdf5-tools libspdlog-dev doctest-dev nlohmann-json3-dev
  zlib1g-dev libssl-dev libturbojpeg0-dev libpng-dev libgloo-dev
  liblmdb-dev libprotobuf-dev protobuf-compiler  # the caffe_lmdb data backend
  librsvg2-bin  # engine report --plot FILE.png
  libcpp-httplib-dev libjs-dygraphs  # engine report --serve: its server and its charts
  dataset-fashion-mnist
)
[ "${1:-}" = --tests ] && packages+=(slurmctld slurmd slurm-client munge iproute2
                                     chromium)  # test_live drives the live page in it
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
