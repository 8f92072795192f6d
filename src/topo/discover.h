/* One discovery: its agreed arguments, its scratch space, and the three algorithms. Each
 * algorithm is collective over the communicator, either succeeds on every process or fails
 * on every process with the same error, and names in res->probe the probe file this
 * process made (if any), which split.c removes on every path. */
#ifndef TIO_TOPO_DISCOVER_H
#define TIO_TOPO_DISCOVER_H

#include <limits.h>
#include <mpi.h>
#include <stdint.h>

#include "tierio/topo.h"
#include "topo/probe.h"
#include "util/error.h"
#include "util/settings.h"

/* A node's key: the hash of its processor name, and a rank (see nodes.c). */
struct topo_node_key {
    uint32_t h[4];
    int rank;
};

struct topo_call {
    MPI_Comm comm;
    int rank, size;
    int given;                        /* a directory was named (agreed by all) */
    char dir[PATH_MAX];               /* the same on every process */
    enum tio_nbhd_algorithm alg;      /* never TIO_NBHD_AUTO once agreed */
    char token[TOPO_TOKEN_LEN + 1];   /* the same on every process */
    /* Scratch allocated before the first exchange, whose agreement covers its failure:
     * gather_a holds size * 3 ints, gather_b size * 5 (see topo_allgather). */
    int *gather_a, *gather_b;
    int *leader;                      /* size ints: each rank's node leader (nodes.c) */
    struct topo_node_key *node_keys;  /* size keys (nodes.c) */
    int *class_count;                 /* size ints (exhaustive) */
    uint64_t *class_hash;             /* size words (exhaustive) */
    unsigned char *seen;              /* size bytes (exhaustive) */
};

struct topo_result {
    int color;            /* this process's group (any value), or MPI_UNDEFINED */
    char probe[PATH_MAX]; /* the probe this process made, for split.c to remove; "" none */
    int nodes, groups, excluded;
    struct topo_ops mine; /* this process's file operations */
    struct topo_ops all;  /* everybody's */
};

/* Parse dirname and info on this process, allocate the scratch space, draw the probes'
 * token, and agree with the others in one allreduce: no process failed, all name the same
 * directory (or none at all) and the same algorithm; the token combines every process's
 * random bits. bad_newcomm reports a NULL newcomm argument so that it fails everywhere. */
/* The keys of a split (args.c), for the reference. */
extern const struct tio_key_table tio_topo_keys;

int topo_call_init(struct topo_call *c, MPI_Comm comm, const char *dirname, MPI_Info info,
                   int bad_newcomm, struct tio_err *err);
void topo_call_free(struct topo_call *c);

int topo_exhaustive(struct topo_call *c, struct topo_result *res, struct tio_err *err);
int topo_heuristic(struct topo_call *c, struct topo_result *res, struct tio_err *err);
int topo_hybrid(struct topo_call *c, struct topo_result *res, struct tio_err *err);

#endif
