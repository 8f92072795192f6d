/* An aggregation handle (include/tierio/agg.h) and what its files share. */
#ifndef TIO_AGG_HANDLE_H
#define TIO_AGG_HANDLE_H

#include <limits.h>
#include <mpi.h>

#include "agg/buffers.h"
#include "agg/driver.h"
#include "agg/iothread.h"
#include "agg/manifest.h"
#include "agg/plan.h"
#include "agg/settings.h"
#include "agg/strategy.h"
#include "tierio/agg.h"
#include "tierio/tier.h"

/* One declared access: the plan of this process's group, and this process's part. */
struct tio_agg_access {
    struct tio_agg_plan plan;         /* the group's domains and rounds */
    struct tio_agg_move *moves;       /* this process's transfers */
    size_t nmoves;
    int64_t mine;                     /* bytes of this process's buffer */
    struct tio_agg_piece *pieces;     /* every process's, ranks in icomm */
    size_t npieces;
    struct tio_agg_piece *gpieces;    /* the group's, ranks in gcomm (== pieces when the
                                         group is everybody) */
    size_t ngpieces;
    size_t own_first, own_n;          /* this process's pieces: gpieces[own_first ..] */
    int read_own;                     /* reads: each process preads its own pieces (target
                                         file, tierio_agg_read=auto, pieces disjoint) */
    char *cross;                      /* per round: moves bytes between nodes (NULL: not
                                         known, taken as yes) */
    int by_node;                      /* domains by node: nothing leaves its node */
    int exchanged;                    /* planned from the pieces of its node (or of all);
                                         0: a node-level declaration before its first
                                         call, which knows its own pieces only */
    int within_node;                  /* declared within the node (declare_node.c) ... */
    int among_all;                    /* ... and planned among all processes since */
    int checking;                     /* declared within the node, checked among all at
                                         the second call after it (check.c) */
    struct tio_err failed;            /* its declaration failed (cls != TIO_OK): every use
                                         is an error */
};

/* What each process brings to a node-regime call's first meeting (tio_agg_node_meet):
 * access id, failed, count (-2: its pieces were gathered already), first offset, first
 * size, its data is in its lane. */
#define TIO_AGG_MEET 6

/* Checks of node-level declarations under way at most (check.c). */
#define TIO_AGG_CHECKS 4
struct tio_agg_check;

/* The manifest entries a group made since the groups last exchanged theirs. */
struct tio_agg_journal {
    size_t n, cap;
    struct tio_agg_extent *ext;
};

/* The parts of a handle, by concern. */

/* The group this process aggregates in: everybody for the target `file`; for subfiles and
 * node-local storage, the processes of the nodes sharing one data file. Each group has its
 * own aggregators, buffers and synchronisations; groups meet at tio_agg_sync and close,
 * and before reading what was written (targets.c). */
struct tio_agg_group {
    MPI_Comm gcomm;                   /* icomm, or the group's (errors return) */
    int grank, gsize;
    int group, ngroups;
    int *group_of;                    /* rank -> group */
    int *gworld;                      /* group rank -> rank */
    int gnnodes;
    int *gnode_of;                    /* group rank -> node index within the group */
    int *file_of_group;               /* group -> data file index of the manifest */
};

/* The node regime (engine.c, declare_node.c, check.c): while every access keeps each
 * node's bytes on it, calls synchronise within nodes, and declarations are the node's,
 * checked among all in the background. */
struct tio_agg_node_regime {
    MPI_Comm nodecomm;                /* this node's processes of the group (gnode_of):
                                         the DRAM buffers' shared memory, and the rounds
                                         that move nothing between nodes synchronise here */
    int *node_ndom;                   /* node -> how many domains' aggregators it has */
    struct tio_agg_run *span;         /* 2 x gnnodes: the nodes' spans, and a scratch */
    int node_regime;                  /* calls synchronise within nodes only: every access
                                         keeps each node's bytes on it */
    int all_nodes_aggregate;          /* every node of the group has an aggregator */
    int nsize, node_rank;             /* processes in nodecomm, this one's rank there; */
    int *node_granks;
    int64_t *node_first;              /* a node-regime call's first meeting: TIO_AGG_MEET
                                         per process of the node */
    MPI_Comm vcomm;                   /* dup of gcomm for the declarations' checks */
    struct tio_agg_check *checks;     /* TIO_AGG_CHECKS records, a ring: */
    int check_head, nchecks;          /* the oldest check under way, and how many */
};

/* Subfiles and node-local targets: where the data is (targets.c, extents.c). */
struct tio_agg_target_state {
    struct tio_agg_manifest manifest;
    int have_manifest;
    struct tio_agg_journal journal;   /* this group's new extents */
    int wrote;                        /* written since the groups last exchanged */
    int64_t *xch;                     /* the exchange's gather buffer */
    char data_dir[PATH_MAX];          /* where this process's data files are */
};

/* What tio_agg_get_info reports of the calls made. */
struct tio_agg_stats {
    long calls, passed;               /* accesses served; MPI-IO route: passed to MPI */
    long independent;                 /* reads each process made itself (read=auto) */
    long independent_writes;          /* ... and writes */
};

struct tio_agg {
    /* The handle: communicators, file, settings, tiers, nodes (agg_open.c). */
    MPI_Comm comm;                    /* dup of the caller's: its error handler reports */
    MPI_Comm icomm;                   /* dup with MPI_ERRORS_RETURN for the calls inside */
    int rank, size;
    char path[PATH_MAX];
    int amode, oflags;                /* MPI amode; O_RDONLY / O_WRONLY / O_RDWR */
    struct tio_agg_settings set;
    const struct tio_agg_strategy *strategy;
    void *strategy_state;             /* what the strategy keeps (its release frees it) */
    int planning_read;                /* the access being planned is for a read (the
                                         MPI-IO route; strategies with a plan hook) */
    tio_tiers_t tiers;
    int nnodes;
    int *node_of;                     /* rank -> node index (util/node.h) */
    int64_t align;                    /* domain alignment in effect */

    struct tio_agg_group grp;

    /* The placement in this group: aggregator and tier of every domain (place.c). */
    int placed;
    struct tio_agg_placement place;   /* ranks are group ranks */
    int *dom_node;                    /* domain -> node of its aggregator (gnode_of) */
    int my_domain;                    /* -1 when this process does not aggregate */
    struct tio_agg_buffers bufs;
    struct tio_agg_io *io;            /* aggregators: the I/O thread */
    struct tio_agg_driver drv;        /* aggregators: the target */
    int drv_open;
    int own_fd;                       /* the shared file, opened at the first read this
                                         process makes itself (-1 before) */

    struct tio_agg_node_regime nr;
    struct tio_agg_target_state tgt;

    /* The declared accesses (agg_access.c). */
    int naccess, cap_access;
    struct tio_agg_access *access;
    int *gather_counts, *gather_displs; /* declarations: per process */
    int64_t *gather_first;            /* ... 3 per process: count, first piece */

    /* The MPI-IO route's state between calls: defined, made and used by mpiio.c only;
     * freed with the handle through route_free. NULL for tio_agg_open's handles. */
    struct tio_agg_route *route;
    void (*route_free)(struct tio_agg_route *route);

    /* Since the last tio_agg_sync: the first failed call of this process and the accesses
     * of its calls, which the next sync (or close) agrees on among all processes — in the
     * node regime a call's outcome reaches only its node at once. */
    struct tio_err late;
    uint64_t call_hash;

    struct tio_agg_stats stats;
};

/* targets.c: the groups (collective over icomm), this process's data directory, the
 * manifest read at open (rank 0 read text; collective), each group's data file, and the
 * manifest written to the file. Errors in err. */
int tio_agg_make_groups(struct tio_agg *a, struct tio_err *err);
int tio_agg_find_target_tier(const struct tio_agg *a, struct tio_tier_info *t);
void tio_agg_data_dir(struct tio_agg *a, struct tio_err *err);
void tio_agg_load_manifest(struct tio_agg *a, char *text, struct tio_err *err);
int tio_agg_group_files(struct tio_agg *a, struct tio_err *err);
void tio_agg_save_manifest(struct tio_agg *a, struct tio_err *err);

/* tio_agg_open / tio_agg_close without raising: the error (agreed) in err. The open takes
 * the settings its caller parsed from the info (each info is parsed once); an error already
 * in err (a bad setting) is agreed and fails the open. */
int tio_agg_open_err(MPI_Comm comm, const char *path, int amode,
                     const struct tio_agg_settings *set, struct tio_agg **out,
                     struct tio_err *err);
int tio_agg_close_err(struct tio_agg *a, struct tio_err *err);

/* Set in info the settings in effect (the key table) and the handle's statistics: the
 * answer of tio_agg_get_info and tierio's part of MPI_File_get_info's. */
void tio_agg_info_fill(const struct tio_agg *a, MPI_Info info);
/* A comma-separated list of count items (item writes item i into s, returns its length)
 * set in info under key, cut short with "..." at what MPI_Info takes (MPI_MAX_INFO_VAL:
 * 256 in Open MPI, whose MPI_Info_set refuses longer values). */
typedef int (*tio_agg_item_fn)(const struct tio_agg *a, int i, char *s, size_t len);
void tio_agg_info_list(MPI_Info info, const char *key, int count, tio_agg_item_fn item,
                       const struct tio_agg *a);

/* Raise err through the handle's communicator (MPI_COMM_SELF without a handle). */
int tio_agg_raise(struct tio_agg *a, const struct tio_err *err);

/* place.c: choose the aggregators of this process's group (the strategy), allocate their buffers,
 * open the target, start the I/O thread. Collective over the group; first: the first
 * access (NULL at open). */
int tio_agg_place(struct tio_agg *a, const struct tio_agg_access *first, struct tio_err *err);

/* access.c, below the C API (agg_access.c), the MPI-IO route and the node regime:
 *
 * The nodes' data of these pieces lie apart and the handle can keep every byte on its node
 * (placed, the target file, domains that follow the data, alignment of at most a page):
 * the access may have domains by node. Allocates nothing: the same on every process. */
int tio_agg_apart(struct tio_agg *a, const struct tio_agg_piece *pieces, size_t n);
/* The same for the nodes' spans already in a->nr.span (tio_agg_spans_of / tio_agg_span_add). */
int tio_agg_spans_apart_here(struct tio_agg *a);
int tio_agg_by_node_possible(const struct tio_agg *a);
/* The node regime is in effect (engine.c). */
int tio_agg_node_level(const struct tio_agg *a);

/* Compute an access from every process's pieces (pieces[], ranks in icomm, in rank
 * order, with mem offsets; taken over): domains by node when by_node (tio_agg_apart said
 * so), else balanced or following the data. Local: every process of a group gets the
 * same plan. */
int tio_agg_access_make(struct tio_agg *a, struct tio_agg_access *x,
                        struct tio_agg_piece *pieces, size_t n, int by_node,
                        struct tio_err *err);
void tio_agg_access_free(struct tio_agg_access *x);

/* Whether an access of these pieces has domains by node (tio_agg_apart, and what the
 * caller's regime says); ctx is the caller's. The same on every process of the group. */
typedef int (*tio_agg_by_node_fn)(struct tio_agg *a, const struct tio_agg_piece *pieces,
                                  size_t n, void *ctx);
/* The one way an access is planned, for tio_agg_declare and the MPI-IO route alike (the
 * front door): its domains (by node when by_node says so), the aggregators placed by the
 * handle's first access (agreed over the group: if one process failed, all stop), the plan
 * made again once they are placed (their nodes known, domains may follow the data), and
 * whether its reads are made process by process. Takes over pieces (NULL with err set:
 * this process failed before). x is freed on failure; after placement a failure (out of
 * memory) is this process's alone: the access's first round stops everybody. */
int tio_agg_plan_access(struct tio_agg *a, struct tio_agg_access *x,
                        struct tio_agg_piece *pieces, size_t n, tio_agg_by_node_fn by_node,
                        void *ctx, struct tio_err *err);
/* Only what the plan derives (plan, moves, cross-node rounds): the pieces stay. */
void tio_agg_access_free_plan(struct tio_agg_access *x);

/* Room for one more access in a->access (or err: out of memory). */
int tio_agg_access_room(struct tio_agg *a, struct tio_err *err);

/* Every process's pieces from the (count, first offset, first size) gathered from each of
 * the size processes of comm (first: 3 per process, counts >= 0; total: their sum), in
 * rank order with their mem offsets, ranks rank_of[r] (NULL: r). When a process has more
 * than one, all follow in an allgatherv of this process's count pieces (offsets[i],
 * sizes[i]), after an agreement over comm on running out of memory: returns 1 when it
 * failed (every process of comm stops). Else 0, *out malloc'ed — or NULL with err set,
 * this process's failure alone. Uses a's gather_counts and gather_displs. */
int tio_agg_gather_pieces(MPI_Comm comm, int size, const int64_t *first, long long total,
                          int count, const MPI_Offset offsets[], const MPI_Offset sizes[],
                          const int *rank_of, struct tio_agg_piece **out, size_t *nout,
                          struct tio_agg *a, struct tio_err *err);

/* declare_node.c: declarations within each node (while tio_agg_node_declarations).
 * check.c: their check among all in the background. tio_agg_settle completes the checks
 * that have seen a call since their declaration (all of them with all = 1): collective, at
 * the start of every call on the handle; tio_agg_note_call after every write or read.
 * tio_agg_check_start: this process's count (-1: its declaration failed) and pieces. */
int tio_agg_node_declarations(const struct tio_agg *a);
void tio_agg_check_start(struct tio_agg *a, int id, int64_t count,
                         const struct tio_agg_piece *mine, size_t n, struct tio_err *err);
/* A write or read on access id ended with err: remembered for the next sync. */
void tio_agg_note_call(struct tio_agg *a, int id, int writing, const struct tio_err *err);
int tio_agg_declare_node(struct tio_agg *a, int count, const MPI_Offset offsets[],
                         const MPI_Offset sizes[], int *id, struct tio_err *err);
int tio_agg_checks_alloc(struct tio_agg *a, struct tio_err *err);

/* The first synchronisation of a call in the node regime: an allgather within the node
 * of each process's access id, error, and — for an access declared within the node and
 * not used yet — its pieces, from which every process then plans it (and lane: this
 * process's data is in its lane, tio_agg_lane_fill; *lanes: everybody's is). 1 to stop
 * (a failure, or processes passing different accesses: err says which, alike on the
 * node). */
int tio_agg_node_meet(struct tio_agg *a, struct tio_agg_access *x, int id, int lane,
                      int *lanes, struct tio_err *err);
/* The first write of such an access: each process may copy its data (one piece at most)
 * into a lane of its own in the first buffer of the node's aggregator before the meeting,
 * which then writes them all to the target (tio_agg_lanes_write) without a round: 1 when
 * this process's data is there (the aggregator's stays in its own buffer). */
int tio_agg_lane_fill(struct tio_agg *a, const struct tio_agg_access *x, const void *buf,
                      const struct tio_err *err);
void tio_agg_lanes_write(struct tio_agg *a, const void *buf, struct tio_err *err);
int tio_agg_settle(struct tio_agg *a, int all, struct tio_err *err);
void tio_agg_checks_free(struct tio_agg *a);

/* extents.c. Subfiles and node-local: the groups exchange the extents they placed since the last
 * exchange, so that every process has the same manifest again. Collective over icomm. */
int tio_agg_exchange(struct tio_agg *a, struct tio_err *err);

/* Subfiles and node-local: record in the manifest (and the journal) where each domain of
 * plan p goes: the group's data file. Every process of the group does it alike, before
 * the I/O phase of a write. */
int tio_agg_place_extents(struct tio_agg *a, const struct tio_agg_plan *p, struct tio_err *err);

/* The two phases of one access (engine.c). Collective; errors agreed; err may hold a
 * local error already (it stops every process at the first round). id: the same on
 * every process, checked. met: the call's first synchronisation was made already (the
 * node regime's meeting, by tio_agg_read for an access declared within the node). */
int tio_agg_run_write(struct tio_agg *a, struct tio_agg_access *x, int id, const void *buf,
                      struct tio_err *err);
int tio_agg_run_read(struct tio_agg *a, struct tio_agg_access *x, int id, void *buf,
                     int met, struct tio_err *err);
/* The read of an access with x->read_own: this process preads its own pieces; one
 * synchronisation, the same as a read's first round, agrees on errors and on the access
 * (a process that failed before and runs tio_agg_run_read meets it there). */
int tio_agg_run_read_own(struct tio_agg *a, struct tio_agg_access *x, int id, void *buf,
                         int met, struct tio_err *err);

/* Durable: the aggregators' files and the manifest. Collective; errors agreed. */
int tio_agg_do_sync(struct tio_agg *a, struct tio_err *err);

#endif
