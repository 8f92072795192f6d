/* Memory and storage tiers, buffers on them, and where to aggregate data (MA-TAPIOCA:
 * §3.1 Listing 1 and §3.2 of Tessier et al., ICS 2018). Full guide: docs/tier.md.
 *
 * A tiers handle is the machine as the processes of a communicator see it: the tiers of
 * each process's node (DRAM; high-bandwidth memory where hwloc reports it; node-local
 * storage; the global file system) with their characteristics, and the network between
 * the nodes (<tierio/net.h>). Characteristics come from hwloc's memory attributes where
 * the hardware reports them, from the system (memory and file-system sizes), and from a
 * site file (docs/tier.md; `tierio probe` measures this machine and writes one).
 *
 *   tio_tiers_t t;
 *   tio_tiers_open(MPI_COMM_WORLD, NULL, &t);         NULL: $TIERIO_SITE, or none
 *   tio_buf_t b;
 *   tio_buf_alloc(t, "ssd", size, "agg", 0, comm, &b); every process: its own buffer
 *   tio_buf_write(b, src, n, offset, rank);           into any process's buffer
 *   tio_buf_flush(b);                                  complete, and durable on storage
 *   tio_buf_read(b, dst, n, offset, rank);
 *   tio_buf_free(&b);
 *   tio_tiers_close(&t);
 *
 * Errors: the calls return MPI error codes (MPI_SUCCESS, or a code whose MPI_Error_string
 * names the argument, tier, key or path and the reason) and raise them through the error
 * handler of the communicator the handle or buffer was made with. Collective calls agree:
 * when one process fails, every process returns the error of the lowest failing rank, and
 * nothing is left behind (no file, mapping or window).
 *
 * Thread safety: a handle or buffer is used by one thread at a time; collective calls are
 * made in the same order by every process, as MPI collectives are. Different handles and
 * buffers may be used from different threads under MPI_THREAD_MULTIPLE. */
#ifndef TIERIO_TIER_H
#define TIERIO_TIER_H

#include "tierio/export.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tio_tier_kind {
    TIO_TIER_DRAM = 0,   /* main memory */
    TIO_TIER_HBM,        /* high-bandwidth memory: NUMA nodes hwloc reports as HBM or
                            MCDRAM, or that the site file names */
    TIO_TIER_NODE_LOCAL, /* storage of one node (SSD, NVMe, ramdisk) or of a set of nodes
                            (a burst buffer): a directory */
    TIO_TIER_GLOBAL      /* the global (parallel) file system: a directory every node sees */
};

/* How long data on a tier lives (MA-TAPIOCA, Tessier et al., ICS 2018: memPersistency). Ordered. */
enum tio_persistence {
    TIO_PERSIST_NONE = 0, /* as long as the buffer */
    TIO_PERSIST_JOB,      /* until the end of the job (node-local storage) */
    TIO_PERSIST_PERMANENT /* beyond the job (the global file system) */
};

/* Who can reach a tier's data directly (by load/store or by file). */
enum tio_scope {
    TIO_SCOPE_PROCESS = 0, /* the process that allocated it */
    TIO_SCOPE_NODE,        /* the processes of one node */
    TIO_SCOPE_NODES,       /* the processes of a set of nodes (site file: nodes = ...) */
    TIO_SCOPE_GLOBAL       /* every process */
};

/* Where a figure came from. */
enum tio_tier_source {
    TIO_SOURCE_NONE = 0, /* unknown (the figure is 0) */
    TIO_SOURCE_HWLOC,    /* hwloc memory attributes */
    TIO_SOURCE_SYSTEM,   /* the kernel: /proc/meminfo, cgroups, statvfs */
    TIO_SOURCE_SITE      /* the site file */
};

#define TIO_TIER_NAME_MAX 32
#define TIO_TIER_PATH_MAX 4096

/* One tier of this process's node. Figures are SI: seconds, bytes, bytes per second. */
struct tio_tier_info {
    char name[TIO_TIER_NAME_MAX];      /* "dram", "hbm", or the site file's section name */
    enum tio_tier_kind kind;
    enum tio_persistence persistence;
    enum tio_scope scope;
    double latency;                    /* s; 0 = unknown */
    double read_bandwidth;             /* B/s; 0 = unknown */
    double write_bandwidth;            /* B/s; 0 = unknown */
    unsigned long long capacity;       /* bytes of the tier on this node; 0 = unknown */
    unsigned long long available;      /* bytes a buffer could take now (free memory under
                                          the cgroup limit, or free space, capped by the
                                          site file's capacity) */
    char path[TIO_TIER_PATH_MAX];      /* storage tiers: the directory; else "" */
    char numa_nodes[64];               /* memory bound to these NUMA nodes (OS indexes,
                                          "1" or "1,3"); "" = not bound (DRAM) */
    enum tio_tier_source latency_source, bandwidth_source, capacity_source;
};

typedef struct tio_tiers *tio_tiers_t;

/* Collective over comm. Discovers the tiers of every process's node and the network
 * between the nodes. site_file: a site file (docs/tier.md) read by every process; NULL
 * takes $TIERIO_SITE, and neither means none (then the tiers are DRAM and the HBM hwloc
 * reports, with hwloc's and the system's figures, and no network figures). A tier of the
 * site file that cannot exist here is an error naming the file, line and reason (an HBM
 * tier on a machine without HBM, a NUMA node that does not exist, a storage directory that
 * is missing or not writable). comm is duplicated. */
TIO_API int tio_tiers_open(MPI_Comm comm, const char *site_file, tio_tiers_t *tiers);

/* Collective over the handle's communicator. Frees it and sets *tiers to NULL. */
TIO_API int tio_tiers_close(tio_tiers_t *tiers);

/* Local. The number of tiers of this process's node, and tier `index` (0..count-1; the
 * order is DRAM, HBM, then the site file's order). The figures `available` is measured
 * at each call. */
TIO_API int tio_tiers_count(tio_tiers_t tiers, int *count);
TIO_API int tio_tiers_get(tio_tiers_t tiers, int index, struct tio_tier_info *info);
/* Local. The index of the tier called name, or -1 when this node has none (not an
 * error). */
TIO_API int tio_tiers_find(tio_tiers_t tiers, const char *name, int *index);

/* "dram", "hbm", "node-local", "global" / "none", "job", "permanent" / "process", "node",
 * "nodes", "global" (the spellings of the site file); NULL for an unknown value. */
TIO_API const char *tio_tier_kind_name(enum tio_tier_kind kind);
TIO_API const char *tio_persistence_name(enum tio_persistence persistence);
TIO_API const char *tio_scope_name(enum tio_scope scope);

/* ---- buffers on a tier (Listing 1 of Tessier et al., ICS 2018: memAlloc, memWrite,
 * memRead, memFlush, memFree) -------------------------------------------------------- */

typedef struct tio_buf *tio_buf_t;

/* Flags of tio_buf_alloc. */
#define TIO_BUF_KEEP 1 /* storage tiers: keep the files at tio_buf_free (and map an
                          existing file with its content at allocation), so that a later
                          phase or job finds the data; refused on memory tiers */

/* Collective over comm (any communicator; each process looks the tier up in the handle,
 * among its own node's tiers). Every process gets a buffer of `size` bytes (0 allowed: a
 * process that only writes into the others') on the tier called `tier` of its own node,
 * and every process can write into and read from every other's buffer: the buffers form
 * one MPI window over comm. The handle must outlive the buffer.
 *   DRAM    MPI_Win_allocate (memory from MPI, its fastest one-sided path);
 *   HBM, and DRAM bound to NUMA nodes by the site file:
 *           memory bound to those nodes (hwloc, strict binding), MPI_Win_create;
 *   storage a file <dir>/<name>.<rank> per process, mapped into memory and exposed as a
 *           storage window (tio_win_allocate with alloc_type=storage): space is reserved
 *           at allocation, the file is removed at free unless TIO_BUF_KEEP.
 * name: the files' base name on storage tiers ([A-Za-z0-9._-], at most 64 bytes, not
 * starting with '.'); NULL makes one unique to the call. Every process passes the same
 * tier, name and flags. A size beyond the tier's available bytes is an error. */
TIO_API int tio_buf_alloc(tio_tiers_t tiers, const char *tier, MPI_Aint size, const char *name,
                  int flags, MPI_Comm comm, tio_buf_t *buf);

/* Local. Copy size bytes from src into the buffer of process `rank` (of the buffer's
 * comm) at offset. Returns when src may be reused; the data is in place at the target
 * once this process has called tio_buf_flush. */
TIO_API int tio_buf_write(tio_buf_t buf, const void *src, MPI_Aint size, MPI_Aint offset, int rank);
/* Local. Copy size bytes at offset of process rank's buffer into dst; returns when they
 * are there. Data another process wrote is seen once that process has flushed (and the
 * two have synchronised, e.g. with a barrier). Where MPI serves the window with messages
 * (Open MPI's osc pt2pt: NUMA-bound memory, storage across nodes) an operation completes
 * when its target process is in an MPI call. */
TIO_API int tio_buf_read(tio_buf_t buf, void *dst, MPI_Aint size, MPI_Aint offset, int rank);
/* Local. Completes every write this process made, at its targets; then, on a storage
 * tier, writes this process's own buffer back to its file and returns when that is
 * durable (only dirty pages are written). To make durable what others wrote into your
 * buffer: they flush, all synchronise, then you flush. */
TIO_API int tio_buf_flush(tio_buf_t buf);
/* Local. This process's own buffer: its address and size (loads and stores there are
 * fine outside the calls above; flush before others read what you stored). */
TIO_API int tio_buf_local(tio_buf_t buf, void **base, MPI_Aint *size);
/* Local. The buffer's window, for one-sided operations of the caller's own. It is in a
 * passive-target epoch to every process (MPI_Win_lock_all) until tio_buf_free. */
TIO_API int tio_buf_win(tio_buf_t buf, MPI_Win *win);
/* Collective. Writes back (storage), frees the window, the memory and (unless
 * TIO_BUF_KEEP) the files, and sets *buf to NULL. */
TIO_API int tio_buf_free(tio_buf_t *buf);

/* ---- where to aggregate: the cost model (§3.2 of Tessier et al., ICS 2018) ----------
 *
 * For a set of producers i each holding ω(i) bytes in memory and a candidate tier A on
 * some node, with l = max(l_network, l_A) and B(i->A) = min(B_network, B_i, B_A):
 *
 *   Cost_A = Σ_i  l·d(i,A) + ω(i)/B(i->A)      a producer on A's node moves its data
 *                                               over one hop inside the node, at A's
 *                                               latency and min(B_i, B_A)
 *   Cost_T = l_T·d(A,T) + Σ_i ω(i) / B(A->T)   l_T = max(l_network, l_T), B(A->T) =
 *                                               min(B_network, B_T) (see the flag below)
 *
 * over the tiers that meet the persistence asked for and have the capacity: all the data
 * when it must persist, else nbuf × bufsize. The aggregator is the candidate with the
 * smallest Cost_A + Cost_T. d counts network hops (<tierio/net.h>). */

/* Flags of struct tio_cost_opts. */
#define TIO_COST_DRAIN_AT_TIER_SPEED 1 /* bound Cost_T's bandwidth by the candidate's read
                                          bandwidth too (Table 2 of Tessier et al.,
                                          ICS 2018 does not) */

struct tio_cost_opts {
    enum tio_persistence persistence; /* what the aggregated data needs (MA-TAPIOCA:
                                         MA-TAPIOCA_PERSISTENCY); NONE = any tier */
    unsigned long long nbuf;          /* N_buff aggregation buffers of */
    unsigned long long bufsize;       /* S_buff bytes: the room a non-persistent
                                         aggregation needs */
    double target_latency;            /* T, where the data goes next (usually the global
                                         file system): s, 0 = not limiting */
    double target_bandwidth;          /* B/s, 0 = not limiting */
    int flags;                        /* TIO_COST_* */
};

/* The model's inputs for one candidate, besides the candidate tier itself. */
struct tio_cost_input {
    int nproducers;
    const unsigned long long *bytes;  /* ω(i): bytes producer i sends to the aggregator */
    const int *hops;                  /* d(i,A): network hops from producer i to the
                                         candidate's node; 0 = on that node */
    const double *src_bandwidth;      /* B_i, bytes/s, per producer; NULL = not limiting */
    int hops_to_target;               /* d(A,T) */
    double net_latency;               /* l_network, s */
    double net_bandwidth;             /* B_network, B/s */
    struct tio_cost_opts opts;
};

/* Why a candidate is not one. */
enum tio_cost_verdict {
    TIO_COST_OK = 0,
    TIO_COST_NOT_PERSISTENT, /* the tier's persistence is below what is asked */
    TIO_COST_TOO_SMALL       /* its available bytes are below what is needed */
};

struct tio_cost {
    enum tio_cost_verdict verdict;
    unsigned long long needed;        /* bytes the candidate must hold */
    double aggregate;                 /* Cost_A, s    } 0 unless verdict is OK */
    double transfer;                  /* Cost_T, s    } */
    double total;                     /* Cost_A + Cost_T */
};

/* Local, pure: the cost of aggregating onto `candidate` (its latency, write and read
 * bandwidth, available bytes and persistence). A candidate that does not qualify is not
 * an error: out->verdict says why, and no figure is needed to say it. Errors (MPI_ERR_ARG
 * class, raised on MPI_COMM_SELF): an argument is out of range, or a figure the model
 * needs for a candidate that qualifies is unknown (0): its latency or write bandwidth
 * (and read bandwidth with TIO_COST_DRAIN_AT_TIER_SPEED), the network's latency or
 * bandwidth. Unknown producer bandwidths (src_bandwidth NULL or 0) do not limit. */
TIO_API int tio_cost_eval(const struct tio_cost_input *in, const struct tio_tier_info *candidate,
                  struct tio_cost *out);

/* The collective choice. */
struct tio_placement {
    int rank;                         /* in comm: the process to hold the aggregation
                                         buffer (the lowest eligible one of its node) */
    char tier[TIO_TIER_NAME_MAX];     /* the tier on that process's node */
    double total, aggregate, transfer;
    int candidates;                   /* tiers evaluated, all nodes together */
    int qualified;                    /* of which met persistence and capacity */
};

/* Collective over comm (processes of the handle's communicator): the producers. Each
 * process passes the bytes it sends to the aggregator and whether it may be the
 * aggregator (eligible). Each node with an eligible process evaluates its own tiers, in
 * parallel, with the handle's network figures and distances (hops between the producers'
 * nodes and its own, and its distance to the I/O node for d(A,T)); the smallest total
 * wins (ties: lowest rank, then the first tier). Every process gets the same *out. An
 * error when no tier anywhere qualifies (the message gives what was needed and the best
 * there was), or when a figure the model needs is unknown (run `tierio probe`). */
TIO_API int tio_cost_place(tio_tiers_t tiers, MPI_Comm comm, unsigned long long bytes, int eligible,
                   const struct tio_cost_opts *opts, struct tio_placement *out);

/* ---- measuring a machine into a site file (what `tierio probe` does) ------------------ */

struct tio_site_probe_opts {
    const char *site;          /* a site file to start from: its tiers are measured again, its
                                  hops and capacities kept (NULL: $TIERIO_SITE, if set) */
    const char *const *tiers;  /* storage tiers to measure, "NAME=KIND:/PATH" (KIND node-local
                                  or global) */
    int ntiers;
    const char *node_local;    /* without site and tiers: a node-local directory to measure
                                  (NULL: $TIERIO_NODE_LOCAL) ... */
    const char *pfs;           /* ... and a global one (NULL: $TIERIO_PFS) */
    size_t size;               /* bytes moved per tier and pass: a multiple of 1 MiB, at least
                                  4 MiB (0: 64 MiB) */
    const char *out;           /* the site file to write (durably replaced); "-": stdout */
    FILE *report;              /* where rank 0 prints the figures (NULL: stdout) */
    int json;                  /* the figures as one JSON object instead of a table */
    FILE *progress;            /* where rank 0 shows which measurement runs, a line rewritten
                                  in place (for a terminal); NULL: nowhere */
};

/* Collective over comm. Rank 0 measures the latency and bandwidths of its node's tiers
 * (DRAM, the HBM hwloc reports, NUMA-bound DRAM and the storage directories of the site
 * file or the options); with ranks on two nodes or more, the network between rank 0 and a
 * rank of another node and within rank 0's node; rank 0 prints the figures and writes the
 * site file. While it runs, SIGINT and SIGTERM remove the probe file before the process
 * ends (the caller's handlers are restored after). Returns, on every process, 0; 1 when a
 * measurement or the write failed (no site file written); 2 when the options or the site
 * file are wrong. Messages go to stderr. */
TIO_API int tio_site_probe(MPI_Comm comm, const struct tio_site_probe_opts *opts);

/* A size as tierio reads it everywhere (site file, hints, environment, command line):
 * bytes, or a number with a unit that means what it says: K, M, G, T, P (also KB ...)
 * are powers of 1000, Ki, Mi, Gi, Ti, Pi (also KiB ...) powers of 1024; "1.5Gi" is
 * allowed when it is a whole number of bytes. 0, or -1 for anything else (and for a size
 * beyond 2^64 - 1). */
TIO_API int tio_parse_size(const char *s, uint64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
