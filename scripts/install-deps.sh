#!/usr/bin/env bash
# Installs, from Debian's packages, whatever Kumo needs to build, run and test that this
# machine does not have yet. Safe to run again: it installs nothing that is present.
#
#   scripts/install-deps.sh            to build and run the server
#   scripts/install-deps.sh --cluster  also a loopback Ceph cluster and HAProxy
#                                      (scripts/kumo-cluster.sh)
#   scripts/install-deps.sh --test     also everything scripts/test.sh runs (a superset)
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libboost-dev libboost-system-dev librocksdb-dev rapidjson-dev
  libssl-dev libdeflate-dev zlib1g-dev libzstd-dev libxxhash-dev libcli11-dev libfmt-dev libspdlog-dev libabsl-dev
  librados-dev libradospp-dev
)
# A local cluster of front ends: Ceph's daemons for scripts/ceph-cluster.sh, and HAProxy to
# balance requests over the front ends.
cluster=(ceph-mon ceph-osd ceph-mgr ceph-common uuid-runtime haproxy)
if [ "${1:-}" = "--cluster" ]; then
  packages+=("${cluster[@]}")
fi
if [ "${1:-}" = "--test" ]; then
  # haproxy: tests/e2e/test_kumo_cluster.py runs scripts/kumo-cluster.sh. pytest-xdist: the
  # e2e suite runs its files in parallel (scripts/test.sh).
  packages+=(libgtest-dev libgmock-dev python3 python3-pytest python3-pytest-xdist
             python3-boto3 awscli
             clang libclang-rt-14-dev python3-rados "${cluster[@]}")
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
