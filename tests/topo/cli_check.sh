#!/bin/bash
# Runs `tierio topo` as one MPI rank (this script is what mpiexec starts on every rank) and,
# on rank 0, checks what it printed.
#   cli_check.sh single TIERIO NP     one node: a directory all ranks share, then a missing one
#   cli_check.sh json TIERIO NP       one node, --json -a exhaustive
#   cli_check.sh cluster TIERIO NP PPN   emulated cluster: $TIERIO_NODE_LOCAL and $TIERIO_PFS
# Every rank exits with tierio's status, rank 0 with 1 when the output is wrong.
set -u
mode=$1 tierio=$2 np=$3 ppn=${4:-$3}
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}
[[ -n $rank ]] || { echo "cli_check: run me under mpiexec" >&2; exit 2; }
dir=
# Rank 0 removes the directory it checked (empty: the probes are gone), also on failure.
fail() {
  echo "cli_check: FAIL: $*" >&2; printf '%s\n' "$out" >&2
  [[ -n $dir ]] && rmdir "$dir" 2>/dev/null
  exit 1
}
want() { grep -qF -- "$1" <<<"$out" || fail "no line containing: $1"; }

case $mode in
  single)
    dir=${TIERIO_TEST_TMPDIR:-/tmp}/topo-cli
    mkdir -p "$dir"
    out=$("$tierio" topo "$dir" "$dir/missing")
    rc=$?
    [[ $rank == 0 ]] || exit 0
    [[ $rc == 1 ]] || fail "exit status $rc, expected 1 (one directory is missing)"
    want "tierio topo: $np ranks on 1 node, algorithm hybrid"
    want "$dir: 1 group"
    want "group 1: ranks 0-$((np - 1)) on $(hostname)"
    # the hybrid: one creation, and every process checks that it can write
    want "cost: $((1 + np)) file operations (creations 1, lookups 0, listings 0, writability checks $np; probes removed 1)"
    want "$dir/missing: error: "
    [[ -z $(ls -A "$dir") ]] || fail "probe files left in $dir"
    rmdir "$dir"
    ;;
  json)
    # An MPI process can run one MPI program only: the JSON form is its own job.
    dir=${TIERIO_TEST_TMPDIR:-/tmp}/topo-cli-json
    mkdir -p "$dir"
    out=$("$tierio" topo --json -a exhaustive "$dir")
    rc=$?
    [[ $rank == 0 ]] || exit $rc
    [[ $rc == 0 ]] || fail "exit status $rc"
    ranks=$(seq -s, 0 $((np - 1)))
    want "{\"dir\":\"$dir\",\"algorithm\":\"exhaustive\",\"ranks\":$np,\"nodes\":1,\"groups\":[{\"ranks\":[$ranks],\"nodes\":[\"$(hostname)\"]}],\"no_access\":{\"ranks\":[],\"nodes\":[]}"
    want "\"fileops\":$((2 * np)),\"creates\":$np,\"lookups\":0,\"listings\":$np,\"checks\":0,\"removals\":$np,"
    [[ -z $(ls -A "$dir") ]] || fail "probe files left in $dir"
    rmdir "$dir"
    ;;
  cluster)
    out=$("$tierio" topo "$TIERIO_NODE_LOCAL" "$TIERIO_PFS")
    rc=$?
    [[ $rank == 0 ]] || exit $rc
    [[ $rc == 0 ]] || fail "exit status $rc"
    nodes=$(((np + ppn - 1) / ppn))
    want "tierio topo: $np ranks on $nodes nodes, algorithm hybrid"
    want "$TIERIO_NODE_LOCAL: $nodes groups"
    all=
    for ((k = 0; k < nodes; k++)); do
      ranks=$((k * ppn))
      ((ppn > 1)) && ranks+="-$((k * ppn + ppn - 1))"
      want "group $((k + 1)): ranks $ranks on node$k"
      all+="${all:+, }node$k"
    done
    want "cost: $((nodes + np)) file operations (creations $nodes, lookups 0, listings 0, writability checks $np; probes removed $nodes)"
    want "$TIERIO_PFS: 1 group"
    want "group 1: ranks 0-$((np - 1)) on $all"
    want "cost: $((nodes + np)) file operations (creations $nodes, lookups 0, listings 0, writability checks $np; probes removed 1)"
    ;;
  *) echo "cli_check: unknown mode $mode" >&2; exit 2 ;;
esac
echo "cli_check: $mode: tierio topo output as expected"
