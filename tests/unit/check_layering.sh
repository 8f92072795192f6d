#!/bin/sh
# Rules of the source tree that a compiler cannot check, each with the reason:
#  - one-sided transfers inside the library go through src/win/rma.h, which applies the
#    displacement shift of overlay windows; a raw PMPI_Put/PMPI_Get elsewhere in src/
#    (but the PMPI layer, which shifts the application's own calls) would write to the
#    wrong address in silence on such a window.
#  - settings are read through the key tables of util/settings.h (one precedence rule, one
#    message format, one reference): no getenv outside util/settings.c, but for the
#    launcher's variables that ummap/memnode_env.c reads to name a node's group; and no
#    MPI_Info_get* outside util/settings_mpi.c (the agg MPI-IO route copies info objects
#    whole, by key number).
#  - one node numbering: the MPI_COMM_TYPE_SHARED split is made in util/node.c only, so
#    that tiers, aggregation and storage windows agree on what a node is.
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
env=$(cd "$top" && grep -rnE '(^|[^_A-Za-z])getenv[[:space:]]*\(' src tools --include='*.c' --include='*.h' |
        grep -vE '^src/util/settings\.c:|^src/ummap/memnode_env\.c:')
if [ -n "$env" ]; then
  echo "environment read outside the key tables (declare the variable in its layer's table):"
  echo "$env"
  status=1
fi
info=$(cd "$top" && grep -rnE 'MPI_Info_get(_valuelen|_string)?[[:space:]]*\(' src \
         --include='*.c' --include='*.h' | grep -vE '^src/util/settings_mpi\.c:')
if [ -n "$info" ]; then
  echo "MPI_Info read outside util/settings_mpi.c (declare the key in its layer's table):"
  echo "$info"
  status=1
fi
split=$(cd "$top" && grep -rn 'MPI_COMM_TYPE_SHARED' src --include='*.c' |
          grep -vE '^src/(util/node\.c|pmpi/)')
if [ -n "$split" ]; then
  echo "a node split outside util/node.c (use tio_node_comm / tio_node_numbers):"
  echo "$split"
  status=1
fi
[ $status -eq 0 ] && echo "layering: ok"
exit $status
