#!/usr/bin/env bash
# `tierio info` and `tierio --version` tell the truth about this build: the version of the
# project, the MPI library it was built with and the one it runs with, the drivers; every
# environment variable's effective value, and an invalid one (exit 1, its error) or a
# misspelled one (a warning naming the real one). Usage errors exit 2 with "usage:".
#   check_info.sh TIERIO VERSION MPI_FLAVOR(openmpi|mpich)
set -euo pipefail
tierio=$1 version=$2 flavor=$3
fail() { echo "check_info: FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for v in $(env | grep -oE '^(TIERIO|UMMAP)_[A-Z0-9_]*' | grep -vE '^TIERIO_(TEST|BENCH|CLUSTER|SELFTEST)_'); do
  unset "$v"
done

[ "$("$tierio" --version)" = "tierio $version" ] || fail "--version: $("$tierio" --version)"

"$tierio" info --json >$work/good.json || fail "tierio info --json exited $?"
UMMAP_DRIVER=nonesuch TIERIO_AGG=enable TIERIO_AGG_STRATEGYY=x \
  "$tierio" info --json >$work/bad.json 2>$work/err.txt && rc=0 || rc=$?
[ "$rc" = 1 ] || fail "an invalid UMMAP_DRIVER: exit $rc, not 1"
python3 - "$version" "$flavor" $work/good.json $work/bad.json <<'PY' || fail "info --json"
import json, sys
version, flavor, good, bad = sys.argv[1:5]
g = json.load(open(good))
assert g["version"] == version and g["library_version"] == version, g
built = {"openmpi": "Open MPI ", "mpich": "MPICH "}[flavor]
assert g["mpi"].startswith(built), g["mpi"]
assert built.strip() in g["mpi_running"], g["mpi_running"]
assert "posix" in g["ummap_drivers"].split(), g["ummap_drivers"]
assert g["liburing"] in ("yes", "no") and ("uring" in g["ummap_drivers"].split()) == (g["liburing"] == "yes"), g
assert "default" in g["agg_strategies"] and "tapioca" in g["agg_strategies"], g
env = {e["variable"]: e for e in g["environment"]}
assert env["TIERIO_AGG"]["set"] is None and env["TIERIO_AGG"]["effective"] == "disable", env["TIERIO_AGG"]
assert not any("error" in e for e in g["environment"]), "error with a clean environment"
b = {e["variable"]: e for e in json.load(open(bad))["environment"]}
assert b["TIERIO_AGG"]["set"] == "enable" and b["TIERIO_AGG"]["effective"] == "enable", b["TIERIO_AGG"]
assert "UMMAP_DRIVER=\"nonesuch\" is invalid" in b["UMMAP_DRIVER"]["error"], b["UMMAP_DRIVER"]
PY
grep -q 'environment variable "TIERIO_AGG_STRATEGYY" is not one of tierio.s settings: ignored; did you mean "TIERIO_AGG_STRATEGY"' \
  $work/err.txt || fail "no misspelling warning: $(cat $work/err.txt)"

out=$("$tierio" info --bogus 2>&1) && rc=0 || rc=$?
[ "$rc" = 2 ] && grep -q "^usage: tierio info" <<<"$out" || fail "bad option: exit $rc: $out"
out=$("$tierio" settings --markdown=yes 2>&1) && rc=0 || rc=$?
[ "$rc" = 2 ] && grep -q "^usage: tierio settings" <<<"$out" || fail "settings --markdown=yes: exit $rc"
echo "check_info: --version, info (text facts, JSON, invalid and misspelled variables), usage errors"
