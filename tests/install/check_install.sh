#!/usr/bin/env bash
# Install the build tree into a fresh prefix that no loader knows (as /opt/tierio, a Spack
# prefix or ~/.local would be), then use it the ways users do, all without
# LD_LIBRARY_PATH: the CLI; a CMake consumer of each target; a pkg-config consumer of each
# library; an unmodified MPI program with libtierio-pmpi in LD_PRELOAD, its file checked
# byte for byte. Then the mistake of building a consumer with the other MPI library: the
# CMake package must refuse it at configure time and libtierio at load time, naming both.
# Last, the uninstall target removes every installed file.
#   check_install.sh BUILD SRC MPICC MPIEXEC OTHER_MPICC(or "") FLAVOR OTHER_FLAVOR
set -euo pipefail
build=$1 src=$2 mpicc=$3 mpiexec=$4 other_mpicc=$5 flavor=$6 other=$7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset LD_LIBRARY_PATH
fail() { echo "install: FAILED: $*" >&2; exit 1; }
prefix="$work/opt/tierio"
cmake --install "$build" --prefix "$prefix" >/dev/null

# The CLI from the prefix.
"$prefix/bin/tierio" --version | grep -qx "tierio [0-9.]*" || fail "tierio --version"
"$prefix/bin/tierio" info --json | grep -q "\"mpi\":" || fail "tierio info --json"

# CMake consumers of tierio::tierio and tierio::tierio-pmpi.
cmake -S "$src/consumer" -B "$work/b" -DCMAKE_PREFIX_PATH="$prefix" \
      -DMPI_C_COMPILER="$mpicc" >/dev/null
cmake --build "$work/b" >/dev/null
for exe in consumer-explicit consumer-pmpi; do
  "$work/b/$exe" | grep -q "tierio" || fail "CMake consumer $exe"
done

# pkg-config consumers (the .pc files carry the rpath of the prefix).
for pc in tierio tierio-pmpi; do
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs "$pc")
  "$mpicc" "$src/consumer/consumer.c" -o "$work/c-$pc" $flags
  "$work/c-$pc" | grep -q "tierio" || fail "pkg-config consumer $pc"
done

# An unmodified MPI program, tierio through LD_PRELOAD from the prefix: 2 ranks, each
# writes 4 KiB of 'A' + rank into one storage window file.
"$mpicc" "$src/consumer/plain_mpi.c" -o "$work/plain"
LD_PRELOAD="$prefix/lib/libtierio-pmpi.so" timeout 60 "$mpiexec" -n 2 "$work/plain" \
  "$work/window.dat" || fail "unmodified program under LD_PRELOAD"
python3 - "$work/window.dat" <<'PY' || fail "window file content"
import sys
data = open(sys.argv[1], "rb").read()
want = b"A" * 4096 + b"B" * 4096
sys.exit(0 if data == want else f"window file: {len(data)} bytes, not 4096 x 'A' + 4096 x 'B'")
PY

# Built with the other MPI library: refused, naming both.
if [ -n "$other_mpicc" ]; then
  if out=$(cmake -S "$src/consumer" -B "$work/other" -DCMAKE_PREFIX_PATH="$prefix" \
             -DMPI_C_COMPILER="$other_mpicc" 2>&1); then
    fail "CMake configured a consumer with $other against a $flavor build"
  fi
  echo "$out" | tr -s ' \n' '  ' | grep -q "built with $flavor, but this project uses $other" ||
    fail "CMake's refusal does not name both MPIs: $out"
  # The unmodified program again, compiled with the other MPI's wrapper and linked with
  # libtierio-pmpi by hand (pkg-config would bring this build's MPI along, and CMake
  # refuses): both MPI libraries end up in the process, the program's calls reach the
  # other one.
  "$other_mpicc" "$src/consumer/plain_mpi.c" -o "$work/mixed" -I"$prefix/include" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -ltierio-pmpi -ltierio 2>/dev/null ||
    fail "could not build the mixed consumer"
  if out=$(timeout 60 "$work/mixed" "$work/mixed.dat" 2>&1); then
    fail "a program built with $other ran against a $flavor build of libtierio: $out"
  fi
  want_built=$([ "$flavor" = openmpi ] && echo "Open MPI" || echo "MPICH")
  echo "$out" | grep -q "libtierio was built with $want_built.*but this program runs with" ||
    fail "the load-time refusal does not name both MPIs: $out"
fi

# Uninstall: every file the install wrote is gone.
cmake --build "$build" --target uninstall >/dev/null
left=$(find "$prefix" -type f | head -5)
[ -z "$left" ] || fail "uninstall left files: $left"
echo "install: CLI, CMake and pkg-config consumers, LD_PRELOAD, MPI mismatch refused," \
     "uninstall: all work from $prefix"
