#!/usr/bin/env bash
# tierio-env(7) is generated from docs/settings.md (generated from the code): regenerate
# and compare, so that the manual page cannot drift; both pages must render without
# warnings.   check_man.sh SRC VERSION
set -euo pipefail
src=$1 version=$2
want=$(python3 "$src/docs/man/make_env_man.py" "$src/docs/settings.md" "$version")
if [ "$want" != "$(cat "$src/docs/man/tierio-env.7")" ]; then
  echo "docs/man/tierio-env.7 differs from docs/settings.md; regenerate it with" >&2
  echo "  python3 docs/man/make_env_man.py docs/settings.md $version > docs/man/tierio-env.7" >&2
  exit 1
fi
grep -q "\"tierio $version\"" "$src/docs/man/tierio.1" || { echo "tierio.1: not version $version" >&2; exit 1; }
for page in tierio.1 tierio-env.7; do
  if command -v groff >/dev/null; then
    warn=$(groff -man -Tutf8 -ww "$src/docs/man/$page" 2>&1 >/dev/null)
    [ -z "$warn" ] || { echo "$page: $warn" >&2; exit 1; }
  fi
done
echo "check_man: tierio.1 and tierio-env.7 are current"
