#!/usr/bin/env bash
# A job whose processes joined a node memory group is killed (SIGKILL on one rank; the
# launcher then takes the others down: nobody leaves). Its object has no live member left;
# the next job's join must remove it, and that job must leave /dev/shm clean.
#   test_memnode_killjob.sh MPIEXEC NUMPROC_FLAG NP EXE [MPIEXEC_PREFLAGS...]
set -u
mpiexec=$1 npflag=$2 np=$3 exe=$4
shift 4
pre=("$@") # MPIEXEC_PREFLAGS
base=${TIERIO_TEST_TMPDIR:-/tmp}
mkdir -p "$base"
dir=$(mktemp -d "$base/memnode-kill.XXXXXX") || exit 1
status=0
fail() { echo "test_memnode_killjob: FAIL: $*" >&2; cat "$dir/stderr" >&2 2>/dev/null; status=1; }
mkfifo "$dir/out"

"$mpiexec" "${pre[@]}" "$npflag" "$np" "$exe" --hold >"$dir/out" 2>"$dir/stderr" &
mpipid=$!
exec 3<"$dir/out"
name="" pids=""
while IFS= read -r -t 60 line <&3; do
  echo "job 1: $line"
  case $line in
    held*) set -- $line; name=$2; shift 2; pids="$*"; break ;;
  esac
done
cat <&3 >/dev/null &   # keep draining the job's output
drain=$!

if [ -z "$name" ]; then
  fail "job 1 never reported \"held\""
  kill -TERM "$mpipid" 2>/dev/null
else
  [ "$(echo "$pids" | wc -w)" -eq "$np" ] || fail "expected $np pids, got: $pids"
  victim=${pids%% *}
  echo "killing rank process $victim with SIGKILL"
  kill -9 "$victim"
fi
wait "$mpipid" 2>/dev/null
exec 3<&-
wait "$drain" 2>/dev/null
# The launcher has ended; its ranks must be dead (or exiting: PF_EXITING, flag 4).
for p in $pids; do
  stat=$(cat "/proc/$p/stat" 2>/dev/null) || continue
  rest=${stat##*) }
  set -- $rest
  state=$1 flags=${7:-0}
  if [ "$state" != Z ] && [ "$state" != X ] && [ $((flags & 4)) -eq 0 ]; then
    fail "rank process $p is still alive (state $state)"
    kill -9 "$p" 2>/dev/null
  fi
done
# A process still exiting may hold its lock on the group's object for a moment (the
# kernel releases fcntl locks when it closes the process's files): the next job would
# rightly see a live member. Wait until each is gone or a zombie (files closed), 10 s at
# most; one still exiting after that is reported by the join check below.
for p in $pids; do
  for _ in $(seq 100); do
    stat=$(cat "/proc/$p/stat" 2>/dev/null) || break
    rest=${stat##*) }
    case ${rest%% *} in Z|X) break ;; esac
    sleep 0.1
  done
done

if [ -n "$name" ]; then
  if [ -e "/dev/shm$name" ]; then
    echo "job 1 left /dev/shm$name (nobody ran to remove it): the next join must"
  else
    echo "note: /dev/shm$name was already removed by another join on this machine"
  fi
  "$mpiexec" "${pre[@]}" "$npflag" "$np" "$exe" --after-kill "$name" >"$dir/out2" 2>"$dir/stderr"
  rc=$?
  cat "$dir/out2"
  [ $rc -eq 0 ] || fail "job 2 exited $rc"
  [ ! -e "/dev/shm$name" ] || fail "/dev/shm$name is still there after job 2"
fi
rm -rf "$dir"
[ $status -eq 0 ] && echo "test_memnode_killjob: passed"
exit $status
