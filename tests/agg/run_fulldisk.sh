#!/usr/bin/env bash
# run_fulldisk.sh SIZE command...: runs the command with TIERIO_TEST_TMPDIR on a tmpfs of
# SIZE bytes (a full disk in the making) mounted in a mount namespace of its own: the
# command's processes — and the emulated cluster's nodes, whose namespaces are made from
# it — share it, nothing outside sees it, and it goes with them. "@DIR@" in the command
# stands for its directory (e.g. tio-cluster's --pfs). Needs root: exits 77 otherwise.
set -uo pipefail
size=$1
shift
if [ "${TIO_FULLDISK_DIR-}" = "" ]; then
  if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
    echo "run_fulldisk.sh: needs root and unshare(1): skipped"
    exit 77
  fi
  dir=$(mktemp -d /tmp/tierio-fulldisk.XXXXXX) || exit 1
  TIO_FULLDISK_DIR=$dir unshare --mount --propagation private "$0" "$size" "$@"
  rc=$?
  rmdir "$dir" 2>/dev/null
  exit $rc
fi
mount -t tmpfs -o "size=$size" tierio-fulldisk "$TIO_FULLDISK_DIR" || exit 1
export TIERIO_TEST_TMPDIR=$TIO_FULLDISK_DIR
args=()
for a in "$@"; do
  args+=("${a//@DIR@/$TIO_FULLDISK_DIR}")
done
"${args[@]}"
