#!/usr/bin/env bash
# Install the build tree into a scratch prefix, then build a consumer with the CMake
# package and with pkg-config (both libraries), and run it.
set -euo pipefail
build=$1 src=$2 mpicc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/consumer" -B "$work/b" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DMPI_C_COMPILER="$mpicc" >/dev/null
cmake --build "$work/b" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib" "$work/b/consumer-explicit" | grep -q "tierio"
for pc in tierio tierio-pmpi; do
  flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs "$pc")
  cc "$src/consumer/consumer.c" -o "$work/c-$pc" $flags
  LD_LIBRARY_PATH="$work/prefix/lib" "$work/c-$pc" | grep -q "tierio"
done
echo "install: CMake package and pkg-config (tierio, tierio-pmpi) work"
