/* What tests, statistics and the engine's housekeeping may ask of a node memory group
 * beyond memnode.h: its shared object, what is charged, who is in it. */
#ifndef TIO_UMMAP_MEMNODE_INSPECT_H
#define TIO_UMMAP_MEMNODE_INSPECT_H

#include <stddef.h>

#include "ummap/memnode.h"

/* The shm object's name ("/tierio-memnode-<uid>-<hash>-<key>") and where the key came
 * from ("UMMAP_NODE_KEY", "PMIX_NAMESPACE", "hydra_pmi_proxy", ...). */
const char *tio_memnode_name(const tio_memnode_t *m);
const char *tio_memnode_key_source(const tio_memnode_t *m);
/* Where the process count for the shares came from ("UMMAP_NODE_PROCS",
 * "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS" or "processes joined") in the process
 * that created the group. */
const char *tio_memnode_procs_source(const tio_memnode_t *m);

/* Bytes charged to this process, and to every member of the node (dead members not yet
 * detected included). */
size_t tio_memnode_charged(const tio_memnode_t *m);
size_t tio_memnode_node_total(const tio_memnode_t *m);
/* Members of the group (dead ones not yet detected included). */
unsigned tio_memnode_members(const tio_memnode_t *m);
/* Detect members that ended without leaving (killed) and drop their bytes now; returns
 * how many were found. Done anyway by the dynamic mode when the node is full, by joins
 * and leaves, and by tio_memnode_reclaim_wait when it times out. */
unsigned tio_memnode_reap(tio_memnode_t *m);

#endif
