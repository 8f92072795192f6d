#!/usr/bin/env bash
# Per-node memory limits of tools/cluster/tio-cluster (--node-mem-limit) and its peak
# memory report (--mem-report).
#   test_mem_limits.sh usage          bad values are usage errors (exit 2) that name the
#                                     problem, and leave nothing behind
#   test_mem_limits.sh normal         normal:MEAN,SD[,SEED] draws: reproducible, seeded,
#                                     spread, never below the floor, in force in the nodes
#   test_mem_limits.sh report MPI     the report of a job that passes and of one whose
#                                     node ran out of memory (run), and of up/down
# Exit 0 on success, 1 on failure, 77 where a cluster cannot be emulated (the usage
# checks run anywhere: the tool refuses bad values before it needs root).
set -euo pipefail

here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
tool=$here/../../tools/cluster/tio-cluster
tmp=$(mktemp -d /tmp/tio-memtest.XXXXXX)
state=$tmp/state
# A failed check must not leave a cluster up.
trap '"$tool" down --state "$state" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

MIB=1048576
FLOOR=$((32 * MIB))  # tio-cluster's floor for normal: draws

fail() { echo "test_mem_limits: FAIL: $*" >&2; exit 1; }

# Runs the tool; a skip (77) ends the test as skipped.
tool() {
  local rc=0
  "$tool" "$@" || rc=$?
  [[ $rc -ne 77 ]] || exit 77
  return "$rc"
}

# ---- usage ----------------------------------------------------------------------------

# expect_usage_error TEXT ARGS...: `tio-cluster up ARGS` must exit 2 with TEXT in its
# message, before creating anything.
expect_usage_error() {
  local text=$1 rc=0 err
  shift
  err=$("$tool" up --state "$state" "$@" 2>&1 >/dev/null) || rc=$?
  [[ $rc -eq 2 ]] || fail "up $*: exit $rc, expected 2 (usage error): $err"
  [[ $err == *"$text"* ]] || fail "up $*: message '$err' does not say '$text'"
  [[ ! -e $state ]] || fail "up $*: created $state"
}

check_usage() {
  expect_usage_error "2 sizes for 3 nodes" --nodes 3 --node-mem-limit 256Mi,128Mi
  expect_usage_error "4 sizes for 3 nodes" --nodes 3 --node-mem-limit 1Gi,1Gi,1Gi,1Gi
  expect_usage_error "empty size" --nodes 3 --node-mem-limit 1Gi,,1Gi
  expect_usage_error "cannot be negative: '-64Mi'" --nodes 2 --node-mem-limit 128Mi,-64Mi
  expect_usage_error "not a size: '64Q'" --nodes 2 --node-mem-limit 64Q
  expect_usage_error "not a whole number of bytes" --nodes 2 --node-mem-limit 0.1Ki
  expect_usage_error "less than a page" --nodes 2 --node-mem-limit 0
  expect_usage_error "SD: a size cannot be negative" --nodes 2 --node-mem-limit normal:256Mi,-1Mi
  expect_usage_error "MEAN: not a size" --nodes 2 --node-mem-limit normal:lots,1Mi
  expect_usage_error "not normal:MEAN,SD[,SEED]" --nodes 2 --node-mem-limit normal:256Mi
  expect_usage_error "not normal:MEAN,SD[,SEED]" --nodes 2 --node-mem-limit normal:256Mi,1Mi,1,2
  expect_usage_error "SEED '-3'" --nodes 2 --node-mem-limit normal:256Mi,1Mi,-3
  expect_usage_error "below the floor 32Mi" --nodes 2 --node-mem-limit normal:16Mi,1Mi
  expect_usage_error "--mem-report: no directory" --nodes 2 --mem-report "$tmp/no/such/file"
  echo "test_mem_limits: usage errors OK"
}

# ---- normal: --------------------------------------------------------------------------

# limits_of N SPEC: brings up N nodes with --node-mem-limit SPEC and prints the limits the
# tool recorded (bytes, node0 first), after checking that they are the ones each node's
# memory cgroup has and that the tool printed them; then tears down.
limits_of() {
  local n=$1 spec=$2 err i got rc=0
  local -a lim
  "$tool" up --nodes "$n" --state "$state" --node-mem-limit "$spec" >/dev/null 2>"$tmp/up.err" ||
    rc=$?
  [[ $rc -ne 77 ]] || { cat "$tmp/up.err" >&2; exit 77; }
  [[ $rc -eq 0 ]] || fail "up --node-mem-limit $spec: $(<"$tmp/up.err")"
  # shellcheck disable=SC1091
  read -r -a lim <<<"$(. "$state/cluster.env" && echo "$NODE_MEM_LIMITS")"
  [[ ${#lim[@]} -eq $n ]] || fail "$spec: NODE_MEM_LIMITS has ${#lim[@]} values for $n nodes"
  err=$(<"$tmp/up.err")
  [[ $err == *"tio-cluster: node memory limits: node0="* ]] ||
    fail "$spec: up did not print the limits ($err)"
  for ((i = 0; i < n; i++)); do
    # shellcheck disable=SC2016
    got=$("$tool" exec --state "$state" "node$i" sh -c \
      'cat "/sys/fs/cgroup/memory$(awk -F: "\$2 ~ /(^|,)memory(,|\$)/ {print \$3}" /proc/self/cgroup)/memory.limit_in_bytes"')
    [[ $got == "${lim[i]}" ]] || fail "$spec: node$i's cgroup limit is $got, cluster.env says ${lim[i]}"
  done
  tool down --state "$state"
  echo "${lim[*]}"
}

check_normal() {
  local a b c d e v floors=0
  a=$(limits_of 4 normal:256Mi,96Mi,7)
  b=$(limits_of 4 normal:256MiB,96mib,7)
  [[ $a == "$b" ]] || fail "seed 7 gave '$a', then '$b'"
  c=$(limits_of 4 normal:256Mi,96Mi,8)
  [[ $a != "$c" ]] || fail "seeds 7 and 8 gave the same limits '$a'"
  # The draws are spread (an SD that is ignored would give four equal limits) and whole MiB.
  [[ $(tr ' ' '\n' <<<"$a" | sort -u | wc -l) -ge 3 ]] || fail "seed 7: limits not spread: $a"
  for v in $a $c; do
    ((v % MIB == 0)) || fail "limit $v is not a whole MiB"
  done
  # The generator is fixed (the help documents it): the default seed is 1, and these are
  # its draws, in MiB.  A change here changes every benchmark's nodes.
  d=$(limits_of 4 normal:256Mi,64Mi)
  e=$(limits_of 4 normal:256Mi,64Mi,1)
  [[ $d == "$e" ]] || fail "the default seed is not 1: '$d' vs '$e'"
  [[ $d == "$((304 * MIB)) $((330 * MIB)) $((295 * MIB)) $((241 * MIB))" ]] ||
    fail "normal:256Mi,64Mi,1 gave '$d', not 304 330 295 241 MiB"
  # A mean close to the floor: some draws are clipped to it, none is below.  (Assigned
  # first: a failing substitution in a for list would not stop the test.)
  e=$(limits_of 6 normal:64Mi,64Mi,7)
  for v in $e; do
    ((v >= FLOOR)) || fail "normal:64Mi,64Mi,7: limit $v is below the floor $FLOOR"
    ((v == FLOOR)) && floors=$((floors + 1))
  done
  ((floors > 0)) || fail "normal:64Mi,64Mi,7: no draw was clipped to the floor"
  echo "test_mem_limits: normal draws OK (seed 7: $a)"
}

# ---- report ---------------------------------------------------------------------------

# check_report FILE NODES LIMIT_NODE0 ... : FILE has one JSON object per node, in node
# order, with its limit and numbers that a memory cgroup can give.  Prints the objects
# back as "node max_usage failcnt oom_kills" lines for the caller's own checks.
check_report() {
  [[ -s $1 ]] || fail "no memory report $1"
  python3 - "$@" <<'EOF'
import json, sys
path, n, limits = sys.argv[1], int(sys.argv[2]), [int(v) for v in sys.argv[3:]]
lines = open(path).read().splitlines()
if len(lines) != n:
    sys.exit(f"{path}: {len(lines)} lines for {n} nodes")
for i, line in enumerate(lines):
    o = json.loads(line)
    if sorted(o) != ["failcnt", "limit", "max_usage", "node", "oom_kills"]:
        sys.exit(f"{path}: line {i + 1}: keys {sorted(o)}")
    if o["node"] != f"node{i}" or o["limit"] != limits[i]:
        sys.exit(f"{path}: line {i + 1}: {o}, expected node{i} with limit {limits[i]}")
    if not (isinstance(o["max_usage"], int) and 0 < o["max_usage"] <= o["limit"]):
        sys.exit(f"{path}: line {i + 1}: max_usage is not in (0, limit]: {o}")
    if not (isinstance(o["failcnt"], int) and o["failcnt"] >= 0):
        sys.exit(f"{path}: line {i + 1}: bad failcnt: {o}")
    if not (o["oom_kills"] is None or (isinstance(o["oom_kills"], int) and o["oom_kills"] >= 0)):
        sys.exit(f"{path}: line {i + 1}: bad oom_kills: {o}")
    print(o["node"], o["max_usage"], o["failcnt"], "null" if o["oom_kills"] is None else o["oom_kills"])
EOF
}

check_report_run() {
  local mpi=$1 rc node max fc oom
  # Every rank writes TOUCH MiB of anonymous memory, page by page.
  local touch='import sys; b = bytearray(int(sys.argv[1]) << 20)
for i in range(0, len(b), 4096): b[i] = 1'

  # A job that passes: each node's peak is at least the 32 MiB its rank touched.
  tool run --nodes 2 --mpi "$mpi" --np 2 --node-mem-limit 256Mi,192Mi \
    --mem-report "$tmp/ok.json" -- python3 -c "$touch" 32 2>"$tmp/run.err" ||
    fail "run with --mem-report: $(<"$tmp/run.err")"
  check_report "$tmp/ok.json" 2 $((256 * MIB)) $((192 * MIB)) >"$tmp/ok.txt" ||
    fail "report of a passing job"
  while read -r node max fc oom; do
    ((max >= 32 * MIB)) || fail "$node: max_usage $max is less than the 32 MiB its rank touched"
    [[ $oom == 0 || $oom == null ]] || fail "$node: $oom OOM kills in a job that fits"
  done <"$tmp/ok.txt"

  # A job that fails: node1's rank overruns its 64 MiB.  The report must still be written,
  # and say that node1 hit its limit.
  rc=0
  # shellcheck disable=SC2016
  tool run --nodes 2 --mpi "$mpi" --np 2 --node-mem-limit 256Mi,64Mi \
    --mem-report "$tmp/oom.json" -- sh -c \
    'if [ "$(hostname)" = node1 ]; then exec python3 -c "$0" 128; fi; sleep 1' "$touch" \
    >/dev/null 2>&1 || rc=$?
  [[ $rc -ne 0 ]] || fail "a job whose node ran out of memory exited 0"
  check_report "$tmp/oom.json" 2 $((256 * MIB)) $((64 * MIB)) >"$tmp/oom.txt" ||
    fail "report of a failed job"
  read -r node max fc oom < <(sed -n 2p "$tmp/oom.txt")
  ((fc > 0)) || fail "node1 overran its limit, but failcnt is $fc"
  [[ $oom == null ]] || ((oom >= 1)) || fail "node1's rank was OOM-killed, but oom_kills is $oom"

  # up --mem-report: written by down.  No --node-mem-limit: the nodes still get memory
  # cgroups, without a limit.
  tool up --nodes 3 --state "$state" --mem-report "$tmp/updown.json" >/dev/null 2>&1 ||
    fail "up --mem-report"
  [[ ! -e $tmp/updown.json ]] || fail "up wrote the report before down"
  tool down --state "$state"
  python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert [json.loads(l)["node"] for l in lines] == ["node0", "node1", "node2"], lines
' "$tmp/updown.json" || fail "report written by down"
  echo "test_mem_limits: memory reports OK ($mpi)"
}

case ${1-} in
  usage) check_usage ;;
  normal) check_normal ;;
  report) [[ -n ${2-} ]] || fail "usage: test_mem_limits.sh report openmpi|mpich"
          check_report_run "$2" ;;
  *) echo "usage: test_mem_limits.sh usage|normal|report MPI" >&2; exit 2 ;;
esac
