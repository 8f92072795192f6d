#!/bin/sh
# Run a command (an mpiexec line) in a private mount namespace that has
#   $TIERIO_TEST_FULL_DIR  a 1 MiB tmpfs (a full disk is one window away), and
#   $TIERIO_TEST_RO_DIR    a read-only bind mount of an empty directory.
# Every process of the job shares them; nothing is visible outside and nothing outlives
# the command. Needs root (unshare + mount): exits 77 (skip) otherwise.
set -u
if [ "$(id -u)" != 0 ]; then
    echo "skipped: mounting a tmpfs and a read-only bind mount needs root"
    exit 77
fi
if ! command -v unshare >/dev/null 2>&1; then
    echo "skipped: unshare(1) not found"
    exit 77
fi
if ! unshare --mount true 2>/dev/null; then
    echo "skipped: cannot make a mount namespace (unshare --mount)"
    exit 77
fi
base=${TIERIO_TEST_TMPDIR:-/tmp}
d=$(mktemp -d "$base/mounts-XXXXXX") || exit 1
trap 'rm -rf "$d"' EXIT
mkdir "$d/full" "$d/ro" || exit 1
export TIERIO_TEST_FULL_DIR="$d/full" TIERIO_TEST_RO_DIR="$d/ro"
unshare --mount --propagation private sh -c '
    mount -t tmpfs -o size=1m,mode=0755 tierio-full "$TIERIO_TEST_FULL_DIR" || exit 77
    mount --bind "$TIERIO_TEST_RO_DIR" "$TIERIO_TEST_RO_DIR" &&
        mount -o remount,bind,ro "$TIERIO_TEST_RO_DIR" || exit 77
    exec "$@"' sh "$@"
rc=$?
exit $rc
