# Sourced by the RADOS benchmarks: the loopback Ceph cluster they run on. use_ceph_cluster
# keeps the running cluster whose ceph.conf $CEPH_CONF names, or starts one
# (scripts/ceph-cluster.sh) and exports CEPH_CONF; stop_ceph_cluster stops only a cluster
# it started.
ceph_cluster_started=""

use_ceph_cluster() {
  if [[ -z "${CEPH_CONF:-}" ]]; then
    ceph_cluster_started=$("$root/scripts/ceph-cluster.sh" up)
    export CEPH_CONF=$ceph_cluster_started/ceph.conf
  fi
}

stop_ceph_cluster() {
  if [[ -n "$ceph_cluster_started" ]]; then
    "$root/scripts/ceph-cluster.sh" down "$ceph_cluster_started" || true
    ceph_cluster_started=""
  fi
}
