#!/usr/bin/env bash
# Node loss on the emulated cluster (tools/cluster/tio-cluster): node-local tmpfs at
# /tmp/tierio-node-local on every node, the shared directory as the global tier.
#   run_node_loss.sh TOOL MPI EXE partner|global NODES NP PPN
# Job 1 commits versions 1..3 with the drain every 2nd commit, so the global tier has
# version 2 and the local tier 2 and 3. Then node1's tmpfs is wiped (its ramdisk lost)
# between jobs, with `tio-cluster exec node1`, and new jobs restart:
#   global:  version 2 from the global tier (nothing newer survives the loss);
#   partner: version 3, node1's processes rebuilt from their partner copies on node2; a
#            second restart then finds version 3 wholly local again (rebuilt files and
#            node manifest); with node1 AND node2 wiped (a process's own files and its
#            partner copy both lost), version 2 from the global tier.
# Every restart checks every byte of every process's files. Exit 77 where the machine
# cannot emulate a cluster.
set -u
tool=$1 mpi=$2 exe=$3 mode=$4 nodes=$5 np=$6 ppn=$7
work=$(mktemp -d /tmp/tio-ckpt-nodeloss.XXXXXX) || exit 1
state=$work/cluster
status=0
fail() { echo "run_node_loss: FAIL: $*" >&2; status=1; }
cleanup() {
  "$tool" down --state "$state" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

rc=0
"$tool" up --nodes "$nodes" --state "$state" >/dev/null || rc=$?
[[ $rc -eq 77 ]] && exit 77
[[ $rc -eq 0 ]] || { echo "run_node_loss: FAIL: tio-cluster up exited $rc" >&2; exit 1; }
pfs=$(. "$state/cluster.env" && echo "$PFS")
nl=/tmp/tierio-node-local
opts=(--local "$nl" --global "$pfs" --name nodeloss --drain-every 2)
[[ $mode == partner ]] && opts+=(--partner)

job() {  # job ARGS...: one MPI job across the cluster
  echo "job: ${*}"
  "$tool" mpirun --state "$state" --mpi "$mpi" --np "$np" --ppn "$ppn" -- "$exe" "${opts[@]}" "$@"
}
wipe() {
  echo "wiping the node-local storage of $1"
  "$tool" exec --state "$state" "$1" sh -c "rm -rf $nl/* && test -z \"\$(ls -A $nl)\"" ||
    fail "could not wipe $1"
}

job --write 1 3 || fail "job 1 (checkpoints)"
[[ -e $pfs/nodeloss/v2/manifest && ! -e $pfs/nodeloss/v3 ]] ||
  fail "expected version 2 (only) complete on the global tier"
wipe node1
if [[ $mode == partner ]]; then
  job --restart --expect-version 3 --expect-level partner || fail "restart from partner copies"
  job --restart --expect-version 3 --expect-level local || fail "restart after the rebuild"
  wipe node1
  wipe node2
  job --restart --expect-version 2 --expect-level global || fail "restart with two nodes lost"
else
  job --restart --expect-version 2 --expect-level global || fail "restart from the global tier"
fi
[[ $status -eq 0 ]] && echo "run_node_loss ($mode, $mpi): passed"
exit $status
