#!/usr/bin/env bash
# Runs inside every rank of an emulated cluster started with --pfs-write-bps and
# --node-mem-limit: the process must sit in cgroups with exactly those limits, and the
# memory limit must be enforced (a process allocating past it is killed). Functional
# checks only: no timing.
# Usage: check_limits.sh WRITE_BPS MEM_LIMIT
set -u
want_bps=$1 want_mem=$2
fail() { echo "check_limits [$(hostname)]: FAIL: $*" >&2; exit 1; }

blkio=$(awk -F: '$2 ~ /(^|,)blkio(,|$)/ {print $3}' /proc/self/cgroup)
memcg=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
[ -n "$blkio" ] || fail "not in a blkio cgroup"
[ -n "$memcg" ] || fail "not in a memory cgroup"
bps=$(cat "/sys/fs/cgroup/blkio$blkio/blkio.throttle.write_bps_device" 2>/dev/null)
echo "$bps" | grep -qE "^[0-9]+:[0-9]+ $want_bps\$" ||
  fail "blkio.throttle.write_bps_device is '$bps', expected $want_bps for the disk"
mem=$(cat "/sys/fs/cgroup/memory$memcg/memory.limit_in_bytes" 2>/dev/null)
[ "$mem" = "$want_mem" ] || fail "memory.limit_in_bytes is '$mem', expected $want_mem"

# Touch twice the limit in anonymous memory: the kernel must kill that process.
python3 -c "
import mmap
m = mmap.mmap(-1, 2 * $want_mem)
for i in range(0, 2 * $want_mem, 4096):
    m[i] = 1
" 2>/dev/null
rc=$?
[ "$rc" -eq 137 ] || fail "a process touching twice the node's memory limit exited $rc, not 137 (killed)"
echo "check_limits [$(hostname)]: limits in force"
