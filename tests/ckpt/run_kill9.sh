#!/usr/bin/env bash
# kill -9 in the middle of a checkpoint, on one node: a job commits versions 1..3 (each
# drained in the background) and is killed while it writes version 4 (half of every file
# written, no commit). Then, in new jobs:
#   1. restart: version 3 from the local level, every byte checked; version 4 (torn) is
#      never used;
#   2. with the local level wiped: the newest complete global version -- 3 if the drain of
#      3 finished before the kill (its manifest is there), else 2 -- and never a torn one.
#   run_kill9.sh MPIEXEC NUMPROC_FLAG NP EXE [MPIEXEC_PREFLAGS...]
set -u
mpiexec=$1 npflag=$2 np=$3 exe=$4
shift 4
base=${TIERIO_TEST_TMPDIR:-/tmp}
dir=$(mktemp -d "$base/ckpt-kill9.XXXXXX") || exit 1
status=0
fail() { echo "run_kill9: FAIL: $*" >&2; sed 's/^/  job stderr: /' "$dir/stderr" >&2 2>/dev/null; status=1; }
mkdir "$dir/local" "$dir/global"
mkfifo "$dir/out"
common=(--local "$dir/local" --global "$dir/global" --name k9)

"$mpiexec" "$@" "$npflag" "$np" "$exe" "${common[@]}" --write 1 3 --hang-at 4 \
  >"$dir/out" 2>"$dir/stderr" &
mpipid=$!
exec 3<"$dir/out"
pids= half=
while IFS= read -r -t 60 line <&3; do
  echo "job: $line"
  case $line in
    pids*) pids=${line#pids } ;;
    half*) half=1; break ;;
  esac
done
cat <&3 >/dev/null &
drain=$!
if [[ -z $half || -z $pids ]]; then
  fail "the job never reached the middle of version 4"
  kill -TERM "$mpipid" 2>/dev/null
else
  echo "killing ranks with SIGKILL: $pids"
  kill -9 $pids
fi
wait "$mpipid" 2>/dev/null
exec 3<&-
wait "$drain" 2>/dev/null
# the killed job's own scratch directory (tio_test.h names it after rank 0's pid)
[[ -n $pids ]] && rm -rf "$base/ckpt_job.${pids%% *}"

if [[ $status -eq 0 ]]; then
  [[ -d $dir/local/k9/v4 && ! -e $dir/local/k9/v4/manifest ]] ||
    fail "expected a torn local version 4 (directory without manifest)"
  "$mpiexec" "$@" "$npflag" "$np" "$exe" "${common[@]}" --restart --expect-version 3 \
    --expect-level local 2>"$dir/stderr" || fail "restart after the kill"
  rm -rf "$dir/local/k9"
  want=2
  [[ -e $dir/global/k9/v3/manifest ]] && want=3
  echo "global level: version 3 $([[ $want == 3 ]] && echo complete || echo torn)"
  [[ ! -e $dir/global/k9/v4/manifest ]] || fail "a global manifest for version 4 exists"
  "$mpiexec" "$@" "$npflag" "$np" "$exe" "${common[@]}" --restart --expect-version $want \
    --expect-level global 2>"$dir/stderr" || fail "restart from the global level"
fi
rm -rf "$dir"
[[ $status -eq 0 ]] && echo "run_kill9: passed"
exit $status
