#!/usr/bin/env bash
# Tests of tools/cluster/tio-pfs, the emulated cluster's FUSE parallel file system.
#   test_pfs.sh TIO_PFS posix     POSIX semantics (pfs_ops.py), byte for byte vs backing
#   test_pfs.sh TIO_PFS pacing    the throttle: lower bounds on time, hot page cache too
#   test_pfs.sh TIO_PFS shutdown  --ready-fd, SIGTERM, SIGINT, umount -l, umount, bad args
# Each mounts its own daemon over a fresh backing directory and checks that no daemon and
# no mount are left.  Exit 0 on success, 77 when the machine cannot run it (not root, no
# /dev/fuse, tio-pfs not built), 1 on failure.
set -uo pipefail
pfs=${1:?usage: test_pfs.sh TIO_PFS posix|pacing|shutdown}
mode=${2:?usage: test_pfs.sh TIO_PFS posix|pacing|shutdown}
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")

skip() { echo "test_pfs: SKIP: $*"; exit 77; }
fail() { echo "test_pfs [$mode]: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "needs root (tio-pfs mounts /dev/fuse itself)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
[ -x "$pfs" ] || skip "tio-pfs not built (libfuse3-dev missing at configure time)"

tmp=$(mktemp -d /tmp/tio-pfs-test.XXXXXX)
back=$tmp/back mnt=$tmp/mnt
mkdir -p "$back" "$mnt"
cleanup() {
  local pid
  for pid in $(pgrep -f "^$pfs $back " || true); do kill -TERM "$pid" 2>/dev/null; done
  mountpoint -q "$mnt" && umount -l "$mnt"
  rm -rf "$tmp"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# The daemon's pid, by its command line (it forks into the background).
daemon_pid() { pgrep -f "^$pfs $back $mnt" | head -n1; }

# Mount with the given options (background mode: returns when the mount answers).
up() {
  "$pfs" "$back" "$mnt" "$@" 2>>"$tmp/daemon.log" || fail "tio-pfs $* exited $?: $(cat "$tmp/daemon.log")"
  mountpoint -q "$mnt" || fail "not mounted after tio-pfs returned"
  grep -q " $mnt fuse.tio-pfs " /proc/mounts || fail "/proc/mounts has no fuse.tio-pfs at $mnt"
}

# A background daemon's parent is init, which may reap it late: a zombie has exited.
alive() { [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# Wait (at most 10 s) for pid to be gone; the mount must be gone too.
gone() {
  local pid=$1 i
  for i in $(seq 200); do
    alive "$pid" || break
    sleep 0.05
  done
  alive "$pid" && fail "daemon $pid still running 10 s after it was told to stop"
  mountpoint -q "$mnt" && fail "still mounted after the daemon stopped"
  return 0
}

down() {
  local pid
  pid=$(daemon_pid)
  [ -n "$pid" ] || fail "no daemon running"
  kill -TERM "$pid"
  gone "$pid"
  grep -q "tio-pfs: $mnt: read [0-9]* B in [0-9]* requests, wrote" "$tmp/daemon.log" ||
    fail "no totals line at exit: $(cat "$tmp/daemon.log")"
}

case $mode in
posix)
  up
  python3 "$here/pfs_ops.py" "$mnt" "$back" || fail "POSIX checks"
  down
  ;;

pacing)
  # Lower bounds on time: the throttle's correctness, not a performance assertion.
  # 40 MB at 20 MB/s with a burst of 1/20 s (1 MB): at least 1.95 s.
  up --write-bps 20M --read-bps 40M
  t=$(now)
  dd if=/dev/zero of="$mnt/paced" bs=1000000 count=40 status=none || fail "dd write"
  w=$(since "$t")
  [ "$(stat -c %s "$back/paced")" = 40000000 ] || fail "backing file has the wrong size"
  # The backing file is hot in the host page cache (it was just written, and is read
  # once more here): a cached read must still be paced.  40 MB at 40 MB/s: >= 0.95 s.
  cat "$back/paced" >/dev/null
  t=$(now)
  dd if="$mnt/paced" of=/dev/null bs=1000000 status=none || fail "dd read"
  r=$(since "$t")
  printf 'test_pfs: 40 MB written in %.2f s at --write-bps 20M, read (hot) in %.2f s at --read-bps 40M\n' "$w" "$r"
  ge "$w" 1.9 || fail "writing 40 MB at 20 MB/s took $w s (< 1.9 s): the write throttle leaks"
  ge "$r" 0.9 || fail "reading 40 MB at 40 MB/s took $r s (< 0.9 s): the read throttle leaks"
  down
  # The totals account for the waits: most of each transfer was spent waiting for tokens.
  waits=$(sed -n 's/.*waited \([0-9.]*\) s for read tokens, \([0-9.]*\) s for write tokens.*/\1 \2/p' \
          "$tmp/daemon.log" | tail -n1)
  ge "${waits% *}" 0.5 && ge "${waits#* }" 1.5 ||
    fail "totals do not show the waits for tokens: $(tail -n1 "$tmp/daemon.log")"

  # Per-request latency: 100 writes of 4 KiB at 5 ms each are at least 0.5 s (one
  # client: its requests are sequential).
  up --latency 5ms
  t=$(now)
  dd if=/dev/zero of="$mnt/small" bs=4096 count=100 status=none || fail "dd small writes"
  l=$(since "$t")
  printf 'test_pfs: 100 writes of 4 KiB in %.2f s at --latency 5ms\n' "$l"
  ge "$l" 0.5 || fail "100 writes at 5 ms latency took $l s (< 0.5 s)"
  down
  ;;

shutdown)
  # Bad arguments: status 2 and a message.
  for args in "" "$back" "$back $mnt --write-bps fast" "$back $mnt --latency 5parsecs" \
              "$back $mnt --ready-fd 99" "$back $mnt --no-such" "$back/none $mnt"; do
    # shellcheck disable=SC2086 # the words are the arguments
    "$pfs" $args 2>"$tmp/err"
    rc=$?
    [ "$rc" = 2 ] || fail "tio-pfs $args exited $rc, not 2"
    grep -q "^tio-pfs: " "$tmp/err" || fail "tio-pfs $args: no message"
  done
  mountpoint -q "$mnt" && fail "a bad command line mounted something"

  # --foreground --ready-fd: one byte when the mount is ready; SIGINT stops it.
  mkfifo "$tmp/ready"
  "$pfs" "$back" "$mnt" --foreground --ready-fd 3 3>"$tmp/ready" 2>>"$tmp/daemon.log" &
  pid=$!
  byte=$(timeout 10 head -c1 "$tmp/ready") || fail "no ready byte on --ready-fd"
  [ -n "$byte" ] || fail "empty ready signal"
  echo data >"$mnt/f" && [ "$(cat "$back/f")" = data ] || fail "mount not working once ready"
  kill -INT "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" = 0 ] || fail "daemon exited $rc after SIGINT"
  gone "$pid"

  # SIGTERM with a client holding a file open: the daemon still goes, the mount too.
  up
  exec 4<"$mnt/f"
  down
  exec 4<&-

  # Unmounted from outside, lazily and not: the daemon notices and exits.
  up
  pid=$(daemon_pid)
  umount -l "$mnt" || fail "umount -l"
  gone "$pid"
  up
  pid=$(daemon_pid)
  umount "$mnt" || fail "umount"
  gone "$pid"
  ;;
*)
  fail "unknown mode $mode"
  ;;
esac

pgrep -f "^$pfs $back " >/dev/null && fail "a tio-pfs daemon is left behind"
echo "test_pfs [$mode]: passed"
