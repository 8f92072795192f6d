/* Two-phase aggregation (MA-TAPIOCA, Tessier et al., ICS 2018: its Algorithms 1 and 2).
 * Full guide: docs/agg.md.
 *
 * Processes declare their upcoming accesses once; the engine cuts the file into one
 * domain per aggregator and each domain into rounds of one buffer; a placement strategy
 * picks the aggregator of every domain and the tier its buffers live on. Each aggregator
 * has at least two buffers: while one is written to (or read from) the target, the next
 * round is moved into (out of) the other by one-sided MPI_Put (MPI_Get). The target is one
 * shared file, subfiles (one per k aggregators' nodes) next to it, or node-local storage.
 *
 *   tio_agg_t a;
 *   tio_agg_open(MPI_COMM_WORLD, "/pfs/out.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY,
 *                info, &a);
 *   int x;                                        the access's id
 *   tio_agg_declare(a, 1, &offset, &size, &x);    collective, once
 *   tio_agg_write(a, x, data);                    collective, as often as needed
 *   tio_agg_close(&a);
 *
 * Settings come from the info given to tio_agg_open (or MPI_File_open), else from the
 * environment, else the default (the info key is listed first, then the variable):
 *   tierio_agg_strategy      TIERIO_AGG_STRATEGY      default | tapioca        [default]
 *   tierio_agg_aggregators   TIERIO_AGG_AGGREGATORS   count, or 0 = one per node [0]
 *                            (the MPI-IO hint cb_nodes is read when neither is set)
 *   tierio_agg_buffer_size   TIERIO_AGG_BUFFER_SIZE   bytes per buffer        [16 MiB]
 *                            (cb_buffer_size likewise)
 *   tierio_agg_buffer_count  TIERIO_AGG_BUFFER_COUNT  buffers per aggregator, >= 2 [2]
 *   tierio_agg_tier          TIERIO_AGG_TIER          a tier name (<tierio/tier.h>), or
 *                                                     auto = the cost model's choice
 *                                                     [dram; auto with tapioca]
 *   tierio_agg_persistence   TIERIO_AGG_PERSISTENCE   none | job | permanent  [none]
 *   tierio_agg_target        TIERIO_AGG_TARGET        file | subfiles | node-local [file]
 *   tierio_agg_subfiling     TIERIO_AGG_SUBFILING     aggregators' nodes per subfile [1]
 *   tierio_agg_target_tier   TIERIO_AGG_TARGET_TIER   node-local target: the tier
 *                                                     [the first node-local tier]
 *   tierio_agg_align         TIERIO_AGG_ALIGN         domain alignment, bytes (the
 *                                                     MPI-IO hint striping_unit likewise)
 *                                                     [the file system's block size]
 *   tierio_agg_read          TIERIO_AGG_READ          auto | aggregate         [auto]
 *                            auto: a read whose processes' pieces do not interleave
 *                            (each process's first-to-last byte range meets no other's)
 *                            is made by every process from the shared file itself, as
 *                            ROMIO does; aggregating it would only add a copy (target
 *                            file only; subfiles and node-local always aggregate)
 *   tierio_agg_write         TIERIO_AGG_WRITE         aggregate | auto         [aggregate]
 *                            (MPI-IO route only: auto makes non-interleaved collective
 *                            writes independent writes)
 *   tierio_agg_domains       TIERIO_AGG_DOMAINS       local | balanced         [local]
 *                            balanced: every domain holds the same number of bytes;
 *                            local: when the nodes' data lie apart (the range from a
 *                            node's first byte to its last holds no other node's byte, as
 *                            in a 1D array of ranks placed by node) each node's data is
 *                            cut among the node's aggregators and nothing crosses the
 *                            network (domains by node, the node regime below); otherwise
 *                            a boundary moves (by at most half a domain, adding no round)
 *                            to where one aggregator's node's data ends and the next
 *                            one's begins. Only with an alignment of at most 4096 bytes (a
 *                            larger one, e.g. a stripe, is kept)
 * Tiers come from tio_tiers_open's discovery ($TIERIO_SITE names the site file).
 *
 * Errors: the calls return MPI error codes (MPI_SUCCESS, or a code whose MPI_Error_string
 * names the argument, hint or path and the reason) raised through the error handler of
 * the communicator given to tio_agg_open. Every call but tio_agg_get_info is collective;
 * when one process fails, every process returns the error of the lowest failing rank
 * (with subfiles and node-local targets: every process of its group of nodes, see
 * below; in the node regime: every process of its node), and an open that fails leaves
 * no file, buffer or window behind.
 *
 * The node regime (target file, tierio_agg_domains=local, every node with an aggregator):
 * while every access declared on a handle has its nodes' data apart, each node works
 * alone — a declaration is local, the access's first call gathers the pieces within the
 * node (its first synchronisation; a first write of one piece per process moves the data
 * into the node's aggregator with it, without a round), writes and reads synchronise
 * among the node's processes only — so a write of such a layout crosses no network and
 * waits for no other node. What a node cannot see is checked among all processes in the
 * background: each declaration starts a nonblocking allgather of every process's
 * (count, first byte, last byte), completed at the second write or read after it (or at
 * tio_agg_sync / tio_agg_close). When it finds the nodes' data interleaved, that access is
 * planned among all processes and from then on the handle's calls synchronise among all
 * (the access's writes before that are right: each node wrote its processes' bytes; only
 * pieces of different nodes that overlap, which writes do not allow, had no defined
 * result). When it finds that a process's declaration failed (bad arguments fail that
 * process at once, its node at the access's first call), the access fails on every
 * process. A write's or read's error,
 * and processes passing different ids, are reported at once to the processes of the node
 * where they happen, and to every other process by the next tio_agg_sync or tio_agg_close
 * (which returns "a write or read since the last sync failed on rank R: ...", or that the
 * processes passed different accesses). tio_agg_get_info tells the regime in effect.
 *
 * Subfiles and node-local targets: the processes of each data file's nodes form a group
 * that aggregates alone (its own aggregators, buffers and synchronisations, like an MPI-IO
 * program writing a file per node on a node communicator). Groups meet at tio_agg_sync and
 * tio_agg_close, where the manifest is made whole; a group reads the data it wrote, with
 * the same nodes and decomposition.
 *
 * Threads: a handle is used by one thread at a time. Aggregators run one I/O thread per
 * handle that makes no MPI call (MPI_THREAD_SINGLE programs are fine). */
#ifndef TIERIO_AGG_H
#define TIERIO_AGG_H

#include "tierio/export.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Info keys (the values are strings, as always with MPI_Info). */
#define TIO_AGG_HINT_ENABLE        "tierio_agg"            /* MPI_File_open: enable | disable */
#define TIO_AGG_HINT_STRATEGY      "tierio_agg_strategy"
#define TIO_AGG_HINT_AGGREGATORS   "tierio_agg_aggregators"
#define TIO_AGG_HINT_BUFFER_SIZE   "tierio_agg_buffer_size"
#define TIO_AGG_HINT_BUFFER_COUNT  "tierio_agg_buffer_count"
#define TIO_AGG_HINT_TIER          "tierio_agg_tier"
#define TIO_AGG_HINT_PERSISTENCE   "tierio_agg_persistence"
#define TIO_AGG_HINT_TARGET        "tierio_agg_target"
#define TIO_AGG_HINT_SUBFILING     "tierio_agg_subfiling"
#define TIO_AGG_HINT_TARGET_TIER   "tierio_agg_target_tier"
#define TIO_AGG_HINT_ALIGN         "tierio_agg_align"
#define TIO_AGG_HINT_READ          "tierio_agg_read"  /* auto | aggregate */
#define TIO_AGG_HINT_WRITE         "tierio_agg_write" /* MPI-IO route: aggregate | auto */
#define TIO_AGG_HINT_DOMAINS       "tierio_agg_domains" /* local | balanced */
/* Strategy memory_conscious (docs/agg.md): aggregators per node, per-aggregator message
 * size of writes and of reads, the least memory a node needs to aggregate, bytes per
 * aggregation group, and the percent of a node's available memory aggregation may take. */
#define TIO_AGG_HINT_MC_PER_NODE      "tierio_agg_mc_per_node"
#define TIO_AGG_HINT_MC_WRITE_MESSAGE "tierio_agg_mc_write_message"
#define TIO_AGG_HINT_MC_READ_MESSAGE  "tierio_agg_mc_read_message"
#define TIO_AGG_HINT_MC_MIN_MEMORY    "tierio_agg_mc_min_memory"
#define TIO_AGG_HINT_MC_GROUP_MESSAGE "tierio_agg_mc_group_message"
#define TIO_AGG_HINT_MC_MEMORY_SHARE  "tierio_agg_mc_memory_share"
#define TIO_AGG_HINT_MC_LOCATION      "tierio_agg_mc_location" /* data | memory */

typedef struct tio_agg *tio_agg_t;

/* Collective over comm (duplicated). path: the shared file (target `file`), or the
 * manifest that lists where the data lives (targets `subfiles` and `node-local`: the data
 * goes to path.0, path.1, ... next to it, or to <node-local dir>/<name of path>.<k>).
 * amode: MPI_MODE_RDONLY, MPI_MODE_WRONLY or MPI_MODE_RDWR, with MPI_MODE_CREATE and
 * MPI_MODE_EXCL as in MPI_File_open (others are refused). Only aggregators open the
 * target; with MPI_MODE_CREATE rank 0 creates it first. info: the settings above
 * (MPI_INFO_NULL: environment and defaults); an invalid value is an error naming the key.
 * The default strategy picks its aggregators and allocates their buffers here; tapioca
 * does so at the first tio_agg_declare, when it knows how much data goes where. */
TIO_API int tio_agg_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, tio_agg_t *agg);

/* Collective. Declares one access: the data this process passes to a later
 * tio_agg_write or tio_agg_read with the returned id: count pieces of the file (offsets[i],
 * sizes[i] bytes), lying back to back in that call's buffer in this order. count may be 0
 * (a process with nothing to move) and differs between processes; pieces of different
 * processes may overlap only if the access is only read. Every process gets the same *id
 * (0, 1, 2, ... in the order of the declarations). The engine computes the access's
 * domains and rounds once: here, with one allgather (two when a process has several
 * pieces) among all processes — or in the node regime at the access's first call, among
 * the node's (the declaration itself only starts the nonblocking check above). Bad
 * arguments anywhere fail every process (in the node regime: that process at once, its
 * node at the access's first call, the others when the check concludes; ids stay
 * alike: a failed declaration uses its id up); running out of memory while planning fails
 * that process alone, and the access's first use then fails on its node or everywhere
 * (its first synchronisation checks that all work on the same access). */
TIO_API int tio_agg_declare(tio_agg_t agg, int count, const MPI_Offset offsets[],
                    const MPI_Offset sizes[], int *id);

/* Collective: every process passes the same id. Writes this process's pieces of access id
 * from buf (their total size); returns when every piece is in the target (in the node
 * regime: every piece of the node's processes; visible to every process once all have
 * returned, not yet durable: see tio_agg_sync). Any number of times per access. */
TIO_API int tio_agg_write(tio_agg_t agg, int id, const void *buf);

/* Collective, as tio_agg_write: reads this process's pieces of access id into buf. Bytes
 * that were never written (beyond the end of the file, or outside every extent of the
 * manifest) are an error. With tierio_agg_read=auto (the default) an access whose
 * processes' pieces do not interleave is read by each process itself from the shared
 * file, with one synchronisation that reports a failure everywhere. */
TIO_API int tio_agg_read(tio_agg_t agg, int id, void *buf);

/* Collective. Makes everything written so far durable (fdatasync of every target file by
 * the aggregators that wrote it; the manifest of subfiles and node-local targets), and
 * reports to every process that saw none the failure of any process's write or read since
 * the last sync (the lowest rank's), or that processes passed different accesses. */
TIO_API int tio_agg_sync(tio_agg_t agg);

/* Collective. Syncs, frees the buffers (and their files on storage tiers), and sets *agg
 * to NULL. */
TIO_API int tio_agg_close(tio_agg_t *agg);

/* Local. A new info with the settings in effect (the caller frees it): the keys above
 * with the values really used, plus
 *   tierio_agg_aggregator_ranks   the aggregators' ranks, comma-separated, in domain order
 *   tierio_agg_aggregator_tiers   the tier of each aggregator's buffers, likewise
 *   tierio_agg_collective_calls   accesses served by the engine so far
 *   tierio_agg_passed_calls       (MPI-IO route) collective calls passed to the MPI library
 *   tierio_agg_independent_reads  reads each process made itself (tierio_agg_read=auto,
 *                                 non-interleaved pieces): tio_agg_read calls, and the
 *                                 MPI-IO route's collective reads
 *   tierio_agg_independent_writes (MPI-IO route) the same for writes (tierio_agg_write=auto)
 *   tierio_agg_boundaries_moved   the last declared access: domain boundaries moved to
 *                                 follow the nodes' data (tierio_agg_domains=local)
 *   tierio_agg_cross_node_rounds  its rounds that move bytes between nodes (the others
 *                                 synchronise within nodes)
 *   tierio_agg_domains_by_node    its domains are by node (true | false)
 *   tierio_agg_declared_within    all, or node (its check among all not concluded yet)
 *   tierio_agg_sync_scope         node (the node regime) | all: whom a write or read
 *                                 synchronises
 * The aggregators are known once chosen: at open with the default strategy, at the first
 * declaration with tapioca (before that the two keys are absent). */
TIO_API int tio_agg_get_info(tio_agg_t agg, MPI_Info *info_used);

/* ---- the MPI-IO route ----------------------------------------------------------------
 * The same arguments as the MPI calls; libtierio-pmpi defines the MPI_File_* names with
 * them. A file is routed when the info of MPI_File_open has tierio_agg=enable, or
 * TIERIO_AGG=1 is in the environment and the info does not say tierio_agg=disable; it
 * then gets an aggregation handle with the settings above, on the file's communicator
 * (files of one process are never routed). On a routed file, write_at_all, read_at_all,
 * write_all and read_all go through the engine when, on every process, the memory buffer
 * is contiguous (count elements of a datatype without holes), the file view is contiguous
 * (a filetype without holes, "native" representation), atomic mode is off, the access
 * mode permits the call, writes do not overlap, and reads stay within the file; otherwise
 * (decided collectively, so all processes agree) the call goes to the MPI library
 * unchanged. Every other MPI_File call goes to the MPI library. The engine writes with
 * POSIX calls on its own descriptors; MPI-IO's consistency rules hold: a routed
 * collective call returns when its data is in the file (a call whose nodes' data lie
 * apart synchronises within nodes: the node regime, decided call by call from the
 * requests every process sees), MPI_File_sync makes it durable (the engine's sync, then
 * the MPI library's) and reports a failure of another node's routed call since the last
 * sync, and MPI_File_close syncs and frees the handle before the library closes the file.
 * MPI_File_get_info adds the keys of tio_agg_get_info. */
TIO_API int tio_file_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                  MPI_File *fh);
TIO_API int tio_file_close(MPI_File *fh);
TIO_API int tio_file_sync(MPI_File fh);
TIO_API int tio_file_get_info(MPI_File fh, MPI_Info *info_used);
TIO_API int tio_file_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status);
TIO_API int tio_file_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                         MPI_Datatype datatype, MPI_Status *status);
TIO_API int tio_file_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status);
TIO_API int tio_file_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status);

#ifdef __cplusplus
}
#endif
#endif
