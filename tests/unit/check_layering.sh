#!/bin/sh
# Rules of the source tree that a compiler cannot check, each with the reason:
#  - one-sided transfers inside the library go through src/win/rma.h, which applies the
#    displacement shift of overlay windows; a raw PMPI_Put/PMPI_Get elsewhere in src/
#    (but the PMPI layer, which shifts the application's own calls) would write to the
#    wrong address in silence on such a window.
# Usage: check_layering.sh SOURCE_DIR
top=${1:?usage: check_layering.sh SOURCE_DIR}
status=0
raw=$(cd "$top" && grep -rnE 'PMPI_(Put|Get|Rput|Rget)[[:space:]]*\(' src \
        --include='*.c' --include='*.h' | grep -vE '^src/(pmpi/|win/rma\.h:)')
if [ -n "$raw" ]; then
  echo "raw one-sided calls outside src/win/rma.h (use tio_rma_put/tio_rma_get):"
  echo "$raw"
  status=1
fi
[ $status -eq 0 ] && echo "layering: ok"
exit $status
