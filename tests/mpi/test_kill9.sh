#!/usr/bin/env bash
# Kill a storage-window job with SIGKILL after it called MPI_Win_sync; the synced data
# must be in the file (byte for byte) and written back.
#   test_kill9.sh MPIEXEC NUMPROC_FLAG NP EXE [MPIEXEC_PREFLAGS...]
# Uses $TIERIO_TEST_TMPDIR. See test_kill9.c for what this does and does not prove.
set -u
mpiexec=$1 npflag=$2 np=$3 exe=$4
shift 4
base=${TIERIO_TEST_TMPDIR:-/tmp}
dir=$(mktemp -d "$base/kill9.XXXXXX") || exit 1
fail() { echo "test_kill9: FAIL: $*" >&2; cat "$dir/stderr" >&2 2>/dev/null; status=1; }
status=0
mkfifo "$dir/out"

"$mpiexec" "$@" "$npflag" "$np" "$exe" --dir "$dir" >"$dir/out" 2>"$dir/stderr" &
mpipid=$!
exec 3<"$dir/out"
pids=""
# Wait for the job's "synced" line (a blocking read, bounded by a timeout).
while IFS= read -r -t 60 line <&3; do
  echo "job: $line"
  case $line in
    synced*) pids=${line#synced }; break ;;
  esac
done
cat <&3 >/dev/null &   # keep draining the job's output
drain=$!

if [ -z "$pids" ]; then
  fail "the job never reported \"synced\""
  kill -TERM "$mpipid" 2>/dev/null   # the launcher takes its ranks down
else
  nranks=$(echo "$pids" | wc -w)
  [ "$nranks" -eq "$np" ] || fail "expected $np pids, got: $pids"
  echo "killing ranks with SIGKILL: $pids"
  kill -9 $pids
fi
wait "$mpipid" 2>/dev/null   # the launcher ends once its ranks are dead
exec 3<&-
wait "$drain" 2>/dev/null
# Each rank must be dead, a zombie, or exiting (PF_EXITING: it runs no code of its own
# any more; the launcher may have ended before the kernel finished tearing it down).
for p in $pids; do
  stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
  rest=${stat##*) }            # fields after "pid (comm) "
  set -- $rest
  state=$1 flags=${7:-0}
  if [ "$state" != Z ] && [ "$state" != X ] && [ $((flags & 4)) -eq 0 ]; then
    fail "rank process $p is still alive (state $state, flags $flags)"
    kill -9 "$p" 2>/dev/null
  fi
done

if [ -n "$pids" ]; then
  "$exe" --check "$dir" "$np" || fail "the synced data is not in the file"
fi
rm -rf "$dir"
[ $status -eq 0 ] && echo "test_kill9: passed"
exit $status
