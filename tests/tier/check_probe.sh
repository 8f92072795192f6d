#!/usr/bin/env bash
# `tierio probe` end to end: it measures the tiers it is given (and, on two emulated nodes,
# the network), writes a site file that parses with every figure present, leaves no probe
# file behind, and a bad option or directory fails with a message.
#   check_probe.sh TIERIO TEST_TIER_SITE MPIEXEC MODE(local|mpi|cluster) MPI_FLAVOR TMPDIR
set -euo pipefail
tierio=$1 checker=$2 mpiexec=$3 mode=$4 flavor=$5 tmp=$6
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d "$tmp/probe.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/local" "$dir/global"
fail() { echo "check_probe: FAIL: $*" >&2; exit 1; }

# Nothing may be left in the measured directories.
empty() { [[ -z $(ls -A "$1") ]] || fail "left in $1: $(ls -A "$1")"; }

case $mode in
local)
  "$tierio" probe --size 8Mi --tier ssd=node-local:"$dir/local" \
            --tier pfs=global:"$dir/global" -o "$dir/site.conf"
  "$checker" --probed "$dir/site.conf" dram ssd pfs
  empty "$dir/local"; empty "$dir/global"
  # from a site file: its tiers measured again, its hops and capacities kept, a tier of
  # another host left as it is
  cat >"$dir/in.conf" <<CONF
[network]
hops = hostA hostB 3
[tier ssd]
kind = node-local
path = $dir/local
capacity = 1GiB
[tier far]
kind = node-local
path = /nonexistent
nodes = some-other-host
CONF
  "$tierio" probe --size 4Mi --site "$dir/in.conf" -o "$dir/re.conf" >"$dir/out.txt"
  "$checker" --probed "$dir/re.conf" dram ssd
  grep -q "^hops = hostA hostB 3$" "$dir/re.conf" || fail "hops lost: $(cat "$dir/re.conf")"
  grep -q "^capacity = 1073741824$" "$dir/re.conf" || fail "capacity lost"
  grep -q "^nodes = some-other-host$" "$dir/re.conf" || fail "tier far lost"
  grep -q "far .*not on this host" "$dir/out.txt" || fail "far: $(cat "$dir/out.txt")"
  empty "$dir/local"
  # the table goes to stderr when the site file goes to stdout
  "$tierio" probe --size 4Mi -o - >"$dir/stdout.conf" 2>"$dir/stderr.txt"
  "$checker" --probed "$dir/stdout.conf" dram
  grep -q "dram" "$dir/stderr.txt" || fail "no table on stderr"
  # errors: a directory that does not exist, a bad option; no site file written then
  if "$tierio" probe --size 4Mi --tier x=global:"$dir/nope" -o "$dir/bad.conf" \
       >"$dir/out.txt" 2>&1; then fail "probe of a missing directory succeeded"; fi
  grep -q "$dir/nope" "$dir/out.txt" || fail "no path in: $(cat "$dir/out.txt")"
  if "$tierio" probe --size 3Mi >"$dir/out.txt" 2>&1; then fail "--size 3Mi accepted"; fi
  grep -q "multiple of 1 MiB" "$dir/out.txt" || fail "message: $(cat "$dir/out.txt")"
  if "$tierio" probe --tier bad -o "$dir/bad.conf" >"$dir/out.txt" 2>&1; then
    fail "--tier bad accepted"; fi
  [[ ! -e $dir/bad.conf ]] || fail "a site file was written after a usage error"
  # a usage error says usage, not that a measurement failed (exit status 2)
  grep -q "^usage: tierio probe" "$dir/out.txt" || fail "no usage: $(cat "$dir/out.txt")"
  if grep -q "measurement failed" "$dir/out.txt"; then fail "usage error called a failed measurement"; fi
  rc=0; "$tierio" probe --tier bad >/dev/null 2>&1 || rc=$?
  [[ $rc == 2 ]] || fail "usage error exit status $rc, not 2"
  # --opt=value (getopt_long) and --json: one JSON object with every tier measured
  "$tierio" probe --size=4Mi --tier=ssd=node-local:"$dir/local" --json --output="$dir/j.conf" \
    >"$dir/j.json"
  "$checker" --probed "$dir/j.conf" dram ssd
  python3 - "$dir/j.json" <<'PY' || fail "--json: $(cat "$dir/j.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok" and r["site_file"].endswith("j.conf"), r
tiers = {t["name"]: t for t in r["tiers"]}
assert tiers["dram"]["status"] == "measured" and tiers["dram"]["read_bytes_per_s"] > 0, r
assert tiers["ssd"]["status"] == "measured" and tiers["ssd"]["latency_s"] > 0, r
assert r["bytes_per_measurement"] == 4 << 20, r
PY
  empty "$dir/local"
  ;;
mpi)
  # two ranks of one node: the network within the node is measured, not between nodes
  "$mpiexec" -n 2 "$tierio" probe --size 4Mi --tier ssd=node-local:"$dir/local" \
             -o "$dir/site.conf"
  "$checker" --probed "$dir/site.conf" dram ssd
  grep -q "^node_latency" "$dir/site.conf" || fail "no node_latency"
  if grep -q "^latency" <(sed -n '/\[network\]/,/^\[tier/p' "$dir/site.conf"); then
    fail "an inter-node latency on one node"; fi
  empty "$dir/local"
  ;;
cluster)
  # two emulated nodes: node-local tmpfs and the network between them
  "$here/../../tools/cluster/tio-cluster" run --nodes 2 --mpi "$flavor" --np 3 --ppn 2 \
      --pfs "$dir/global" -- "$tierio" probe --size 4Mi \
      --tier ssd=node-local:/tmp/tierio-node-local --tier pfs=global:"$dir/global" \
      -o "$dir/global/site.conf"
  "$checker" --probed "$dir/global/site.conf" --network dram ssd pfs
  rm "$dir/global/site.conf"
  empty "$dir/global"
  ;;
*) fail "unknown mode $mode" ;;
esac
echo "check_probe $mode: passed"
