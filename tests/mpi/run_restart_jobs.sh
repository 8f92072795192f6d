#!/usr/bin/env bash
# Restart across jobs: one MPI job writes a storage window and exits, a second job maps
# the same file and must see the data (then frees it with unlink=true).
#   run_restart_jobs.sh MPIEXEC NUMPROC_FLAG NP EXE [MPIEXEC_PREFLAGS...]
set -u
mpiexec=$1 npflag=$2 np=$3 exe=$4
shift 4
dir=$(mktemp -d "${TIERIO_TEST_TMPDIR:-/tmp}/restart-jobs.XXXXXX") || exit 1
status=0
echo "== job 1: write"
"$mpiexec" "$@" "$npflag" "$np" "$exe" --phase write --dir "$dir" || status=1
if [ $status -eq 0 ]; then
  echo "== job 2: read"
  "$mpiexec" "$@" "$npflag" "$np" "$exe" --phase read --dir "$dir" || status=1
fi
if [ -e "$dir/restart.dat" ] && [ $status -eq 0 ]; then
  echo "run_restart_jobs: FAIL: restart.dat left after the read job (unlink=true)" >&2
  status=1
fi
rm -rf "$dir"
exit $status
