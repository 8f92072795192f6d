#!/bin/sh
# Rules of the source tree that a compiler cannot check, each with the reason:
#  - one-sided transfers inside the library go through src/win/rma.h, which applies the
#    displacement shift of overlay windows; a raw PMPI_Put/PMPI_Get elsewhere in src/
#    (but the PMPI layer, which shifts the application's own calls) would write to the
#    wrong address in silence on such a window.
#  - settings are read through the key tables of util/settings.h (one precedence rule, one
#    message format, one reference): no getenv outside util/settings.c, but for the
#    launcher's variables that ummap/memnode_env.c reads to name a node's group; and no
#    MPI_Info_get* outside util/settings_mpi.c.
#  - one node numbering: the MPI_COMM_TYPE_SHARED split is made in util/node.c only, so
#    that tiers, aggregation and storage windows agree on what a node is.
# Usage: check_layering.sh SOURCE_DIR
top=${1:?usage: check_layering.sh SOURCE_DIR}
cd "$top" || exit 1
status=0
# rule MESSAGE LINES: the lines found break the rule.
rule() {
  [ -z "$2" ] && return
  echo "$1:"
  echo "$2"
  status=1
}
rule "raw one-sided calls outside src/win/rma.h (use tio_rma_put/tio_rma_get)" \
  "$(grep -rnE 'PMPI_(Put|Get|Rput|Rget)[[:space:]]*\(' src --include='*.c' --include='*.h' |
     grep -vE '^src/(pmpi/|win/rma\.h:)')"
rule "environment read outside the key tables (declare the variable in its layer's table)" \
  "$(grep -rnE '(^|[^_A-Za-z])getenv[[:space:]]*\(' src tools --include='*.c' --include='*.h' |
     grep -vE '^src/util/settings\.c:|^src/ummap/memnode_env\.c:')"
rule "MPI_Info read outside util/settings_mpi.c (declare the key in its layer's table)" \
  "$(grep -rnE 'MPI_Info_get(_valuelen|_string)?[[:space:]]*\(' src --include='*.c' --include='*.h' |
     grep -vE '^src/util/settings_mpi\.c:')"
rule "a node split outside util/node.c (use tio_node_comm / tio_node_numbers)" \
  "$(grep -rn 'MPI_COMM_TYPE_SHARED' src --include='*.c' | grep -vE '^src/(util/node\.c|pmpi/)')"
[ $status -eq 0 ] && echo "layering: ok"
exit $status
