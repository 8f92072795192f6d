#!/bin/sh
# docs/settings.md is generated from the key tables of the code: fail when they differ, so
# that the reference cannot drift. Usage: check_settings_doc.sh TIERIO_BINARY SOURCE_DIR
tierio=${1:?usage: check_settings_doc.sh TIERIO_BINARY SOURCE_DIR}
top=${2:?usage: check_settings_doc.sh TIERIO_BINARY SOURCE_DIR}
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$tierio" settings --markdown >"$out" || { echo "tierio settings --markdown failed"; exit 1; }
if ! diff -u "$top/docs/settings.md" "$out"; then
  echo "docs/settings.md differs from the code's key tables; regenerate it with"
  echo "  build/<mpi>/tools/tierio settings --markdown > docs/settings.md"
  exit 1
fi
echo "settings reference: up to date"
