#!/usr/bin/env bash
# Self-test of tools/cluster/tio-cluster: builds cluster_selftest.c with mpicc.openmpi and
# mpicc.mpich, runs it on 3 emulated nodes x 2 ranks with `tio-cluster run` for each MPI
# (and once through up / mpirun / down), and checks that every cluster left nothing
# behind: no holder processes, reaper, cgroups, state or PFS dirs. It looks for its own
# clusters' traces by cluster ID: other clusters running meanwhile do not count.
# Exit 0 on success, 77 if the machine cannot emulate a cluster, 1 on failure.
# Needs root. Prints the measured up+job+down times.
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
tool=$here/../../tools/cluster/tio-cluster
tmp=$(mktemp -d /tmp/tio-selftest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "run_selftest: FAIL: $*" >&2; exit 1; }

# Everything the cluster named $TIO_CLUSTER_ID could leave behind, one item per line:
# holders (their environment names the cluster), its reaper, cgroups and default PFS dir.
# Other clusters on the machine (other tests, other users) do not count.
leftovers() {
  local id=$TIO_CLUSTER_ID pid
  {
    for pid in $(pgrep -x sleep || true); do
      { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qx "TIO_CLUSTER_ID=$id" &&
        echo "holder $pid"
    done
    pgrep -af "tio-cluster _reaper .* $id\$" | sed 's/^/reaper /' || true
    find /sys/fs/cgroup -name "tierio-$id" -type d -prune 2>/dev/null | sed 's/^/cgroup /'
    ls -d /tmp/tierio-pfs."$id".* 2>/dev/null | sed 's/^/dir /' || true
  } | sort
}

# A fresh cluster ID for the next cluster.
new_id() { TIO_CLUSTER_ID=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n'); export TIO_CLUSTER_ID; }

check_clean() {
  local what=$1 left
  left=$(leftovers)
  [[ -z $left ]] || fail "$what (cluster $TIO_CLUSTER_ID) left behind:"$'\n'"$left"
  [[ ! -e $tmp/state ]] || fail "$what left its state dir $tmp/state"
}

now() { printf '%s\n' "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# LD_PRELOAD must reach the ranks: cluster_selftest looks up a symbol of this library.
gcc -shared -fPIC -o "$tmp/preload.so" "$here/selftest_preload.c"
export TIERIO_SELFTEST_TOKEN="token with spaces $$"
export TIERIO_SELFTEST_PRELOAD=1

ran=0
for mpi in openmpi mpich; do
  if ! command -v "mpicc.$mpi" >/dev/null || ! command -v "mpiexec.$mpi" >/dev/null; then
    echo "run_selftest: $mpi not installed, not tested" >&2
    continue
  fi
  "mpicc.$mpi" -O2 -Wall -o "$tmp/selftest.$mpi" "$here/cluster_selftest.c"
  # openmpi with the default PFS dir (made and removed by tio-cluster), mpich with ours
  pfs_opt=()
  if [[ $mpi == mpich ]]; then
    mkdir "$tmp/pfs"
    pfs_opt=(--pfs "$tmp/pfs")
  fi
  t0=$(now)
  rc=0
  new_id
  LD_PRELOAD=$tmp/preload.so "$tool" run --nodes 3 --mpi "$mpi" --np 6 --ppn 2 \
    --state "$tmp/state" "${pfs_opt[@]}" --timing -- \
    "$tmp/selftest.$mpi" 2 "$TIERIO_SELFTEST_TOKEN" || rc=$?
  t1=$(now)
  [[ $rc -eq 77 ]] && exit 77
  [[ $rc -eq 0 ]] || fail "$mpi: tio-cluster run exited $rc"
  check_clean "tio-cluster run ($mpi)"
  if [[ $mpi == mpich ]]; then
    [[ -d $tmp/pfs && -z $(ls -A "$tmp/pfs") ]] ||
      fail "--pfs dir must stay, and the self-test must have removed its files"
  fi
  echo "run_selftest: $mpi: 3 nodes x 2 ranks: up+job+down $(secs "$t0" "$t1") s"
  ran=$((ran + 1))
done
[[ $ran -gt 0 ]] || { echo "tio-cluster: SKIP: neither Open MPI nor MPICH installed" >&2; exit 77; }

# The step-by-step interface: one cluster, both MPIs, exec, down.
t0=$(now)
new_id
"$tool" up --nodes 3 --state "$tmp/state" >/dev/null
export TIO_CLUSTER_STATE=$tmp/state
[[ $("$tool" exec node2 hostname) == node2 ]] || fail "exec node2 hostname"
[[ $("$tool" exec 10.77.0.2 hostname) == node1 ]] || fail "exec 10.77.0.2 hostname"
for mpi in openmpi mpich; do
  [[ -x $tmp/selftest.$mpi ]] || continue
  LD_PRELOAD=$tmp/preload.so "$tool" mpirun --mpi "$mpi" --np 6 -- \
    "$tmp/selftest.$mpi" 2 "$TIERIO_SELFTEST_TOKEN" || fail "tio-cluster mpirun ($mpi)"
done
"$tool" down
t1=$(now)
check_clean "tio-cluster up/mpirun/down"
echo "run_selftest: up + $ran jobs + down: $(secs "$t0" "$t1") s"
echo "run_selftest: OK"
