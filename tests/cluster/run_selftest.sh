#!/usr/bin/env bash
# Self-test of tools/cluster/tio-cluster: builds cluster_selftest.c with mpicc.openmpi and
# mpicc.mpich, runs it on 3 emulated nodes x 2 ranks with `tio-cluster run` for each MPI
# (and once through up / mpirun / down), and checks that every cluster left nothing
# behind: no holder processes, mounts, netns, cgroups, state or PFS dirs.
# Exit 0 on success, 77 if the machine cannot emulate a cluster, 1 on failure.
# Needs root. Prints the measured up+job+down times.
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
tool=$here/../../tools/cluster/tio-cluster
tmp=$(mktemp -d /tmp/tio-selftest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "run_selftest: FAIL: $*" >&2; exit 1; }

# Everything a cluster could leave behind, one item per line.  Compared before and after,
# so that clusters that other users of the machine have running do not count.
leftovers() {
  {
    ps -eo pid=,args= | awk '$2 == "sleep" && $3 == "infinity" { print "holder", $1 }
                             /tio-cluster _reaper/ && !/awk/ { print "reaper", $1 }'
    find /sys/fs/cgroup -name 'tierio-*' -type d -prune 2>/dev/null | sed 's/^/cgroup /'
    mount | grep tierio | sed 's/^/mount /' || true
    ip netns list | sed 's/^/netns /'
    ls -d /tmp/tio-cluster.* /tmp/tierio-pfs.* 2>/dev/null | sed 's/^/dir /' || true
  } | sort
}

check_clean() {
  local what=$1 new
  new=$(comm -13 "$tmp/before" <(leftovers))
  [[ -z $new ]] || fail "$what left behind:"$'\n'"$new"
  [[ ! -e $tmp/state ]] || fail "$what left its state dir $tmp/state"
}

now() { printf '%s\n' "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# LD_PRELOAD must reach the ranks: cluster_selftest looks up a symbol of this library.
gcc -shared -fPIC -o "$tmp/preload.so" "$here/selftest_preload.c"
export TIERIO_SELFTEST_TOKEN="token with spaces $$"
export TIERIO_SELFTEST_PRELOAD=1

leftovers >"$tmp/before"
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
