#!/usr/bin/env bash
# Documentation that works when followed literally: every C block (```c) of the README and
# docs/*.md is a complete program that compiles with the MPI compiler and links against
# this build's libraries, warnings as errors.
#   check_doc_examples.sh SRC MPICC INCLUDE_DIR LIB_DIR
set -euo pipefail
src=$1 mpicc=$2 inc=$3 lib=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$src" "$work" <<'PY'
import glob, re, sys
src, work = sys.argv[1:3]
n = 0
for doc in [f"{src}/README.md"] + sorted(glob.glob(f"{src}/docs/*.md")):
    text = open(doc).read()
    for i, block in enumerate(re.findall(r"```c\n(.*?)```", text, re.S)):
        name = doc[len(src) + 1:].replace("/", "_").replace(".md", "") + f"_{i}.c"
        open(f"{work}/{name}", "w").write(block)
        n += 1
if n == 0:
    sys.exit("check_doc_examples: no C block found: the extraction is broken")
PY
status=0 count=0
for f in "$work"/*.c; do
  count=$((count + 1))
  if ! out=$("$mpicc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$inc" "$f" -o "${f%.c}" \
               -L"$lib" -Wl,-rpath,"$lib" -ltierio-pmpi -ltierio -lm 2>&1); then
    echo "check_doc_examples: $(basename "$f") (block of ${f##*/}) does not compile:" >&2
    echo "$out" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "check_doc_examples: $count C blocks compile and link"
exit $status
