#!/usr/bin/env bash
# Attach a loop device to a fresh image, run the MPI test on it, detach, and check the
# bytes the ranks wrote through their windows are in the image: what MPI_Win_sync made
# durable on the device. Skips (77) without root or loop devices.
# Usage: run_blockdev.sh NP PROGRAM MPIEXEC [MPIEXEC args before the program...]
set -euo pipefail
np=$1 prog=$2; shift 2
if [ "$(id -u)" -ne 0 ] || ! command -v losetup >/dev/null || [ ! -e /dev/loop-control ]; then
  echo "blockdev: SKIP: needs root and loop devices" >&2; exit 77
fi
work=$(mktemp -d "${TIERIO_TEST_TMPDIR:-/tmp}/blockdev.XXXXXX")
dev=""
cleanup() { [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
per_rank=65536
truncate -s $((np * per_rank)) "$work/disk.img"
dev=$(losetup -f --show "$work/disk.img") || { echo "blockdev: SKIP: losetup failed" >&2; exit 77; }
"$@" -n "$np" "$prog" "$dev" "$per_rank"
losetup -d "$dev"; dev=""
# The expected image: rank r's range holds, in chunk c, the pattern of rank c.
python3 - "$work/disk.img" "$np" "$per_rank" <<'PY'
import sys
img, np_, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(img, "rb").read()
chunk = size // np_
for r in range(np_):
    for c in range(np_):
        want = bytes(((c * 31 + i * 7 + 1) & 0xFF) for i in range(chunk))
        at = r * size + c * chunk
        if data[at:at + chunk] != want:
            sys.exit(f"blockdev: FAIL: device bytes of rank {r}, chunk {c} differ")
print("blockdev: device image holds every byte")
PY
