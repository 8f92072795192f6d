/* Storage-topology discovery: which processes share a directory (docs/topo.md; after
 * Latham et al., "portable storage-topology discovery in MPI", ICPADS 2017).
 *
 * tio_comm_split_neighborhood splits a communicator into one communicator per group of
 * processes that see the same directory: every process of a group can open a file that
 * another process of the group created there, and no process outside it can. Typical
 * uses: one communicator per node-local SSD or ramdisk, per burst buffer shared by a rack,
 * or one for everybody on a parallel file system. Through libtierio-pmpi the same split is
 *
 *     MPI_Info_set(info, "nbhd_common_dirname", "/scratch");
 *     MPI_Comm_split_type(comm, TIERIO_COMM_TYPE_NEIGHBORHOOD, key, info, &newcomm);
 *
 * Results follow MPI_Comm_split's rules: in each new communicator processes are ordered
 * by key, ties by their rank in comm. A process that cannot see the directory at all gets
 * MPI_COMM_NULL (and MPI_SUCCESS) while the others get their groups; when no process can
 * see it, or it cannot be written, or the processes pass different directories or
 * algorithms, every process gets the same error and MPI_COMM_NULL. Discovery creates a
 * few small probe files in the directory (names starting ".tierio-nbhd-", unique to the
 * call, created O_EXCL|O_NOFOLLOW) and removes every one of them before returning, also
 * on error. See docs/topo.md. */
#ifndef TIERIO_TOPO_H
#define TIERIO_TOPO_H

#include "tierio/export.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The split_type of MPI_Comm_split_type that libtierio-pmpi handles. Where the MPI library
 * defines MPIX_COMM_TYPE_NEIGHBORHOOD (MPICH) it is that value, so programs written for
 * MPICH's extension get tierio's discovery unchanged; elsewhere (Open MPI) it is a value far
 * from the small integers MPI libraries use for their split types (and from
 * MPI_UNDEFINED). */
#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
#define TIERIO_COMM_TYPE_NEIGHBORHOOD MPIX_COMM_TYPE_NEIGHBORHOOD
#else
#define TIERIO_COMM_TYPE_NEIGHBORHOOD 0x54494f /* "TIO" */
#endif

/* Info keys. */
#define TIO_NBHD_HINT_DIRNAME   "nbhd_common_dirname"   /* the directory to probe */
#define TIO_NBHD_HINT_ALGORITHM "tierio_nbhd_algorithm" /* auto|hybrid|exhaustive|heuristic */
/* Deprecated spellings (one pattern, TIO_<LAYER>_HINT_<NAME>, for every layer). */
#define TIO_NBHD_DIRNAME_KEY TIO_NBHD_HINT_DIRNAME
#define TIO_NBHD_ALGORITHM_KEY TIO_NBHD_HINT_ALGORITHM

/* Discovery algorithms (docs/topo.md has their costs and the topologies each gets right). */
enum tio_nbhd_algorithm {
    TIO_NBHD_AUTO = 0,   /* tierio's choice: hybrid */
    TIO_NBHD_EXHAUSTIVE, /* every process creates a probe and lists the directory */
    TIO_NBHD_HEURISTIC,  /* one probe on rank 0, one look from another node */
    TIO_NBHD_HYBRID      /* one probe per node, results spread to the node's processes */
};

/* Split comm by shared visibility of directory dirname.
 *   dirname  the directory; NULL takes it from info's nbhd_common_dirname (giving both with
 *            different values is an error). Every process must name the same path.
 *   key      orders the processes in their new communicator, as in MPI_Comm_split.
 *   info     MPI_INFO_NULL, or may carry nbhd_common_dirname and tierio_nbhd_algorithm.
 *   newcomm  the group of processes sharing the directory with this one, or MPI_COMM_NULL
 *            when this process cannot see the directory.
 * Collective over comm (an intracommunicator). Returns MPI_SUCCESS or an MPI error code
 * (raised through comm's error handler) whose MPI_Error_string names the argument or path
 * and the reason; on error *newcomm is MPI_COMM_NULL on every process and no probe file is
 * left. Thread safety: as MPI_Comm_split (concurrent calls on different communicators are
 * fine under MPI_THREAD_MULTIPLE). */
TIO_API int tio_comm_split_neighborhood(MPI_Comm comm, const char *dirname, int key, MPI_Info info,
                                MPI_Comm *newcomm);

/* What the last discovery made by the calling thread cost and found. "File operations" are
 * the operations on the probed directory that create or look for something: creating a
 * probe file, looking one up by name (open and read), listing the directory. Removing the
 * probe files afterwards is counted apart (removals always equal successful creations). */
struct tio_nbhd_stats {
    enum tio_nbhd_algorithm algorithm; /* the algorithm that ran (auto resolved) */
    int error;              /* MPI_SUCCESS, or the error code the call returned */
    int nprocs;             /* processes in comm */
    int nodes;              /* nodes (distinct MPI_Get_processor_name) in comm; 0 when
                               the algorithm did not need to know (exhaustive) */
    int groups;             /* communicators made (groups sharing the directory) */
    int excluded;           /* processes that got MPI_COMM_NULL */
    long long fileops;      /* file operations by this process */
    long long fileops_all;  /* by all processes of comm: creates + lookups + listings +
                               checks */
    long long creates_all;  /* probe-file creations attempted, all processes */
    long long lookups_all;  /* probe files looked up by name, all processes */
    long long listings_all; /* directory listings, all processes */
    long long removals_all; /* probe files removed, all processes */
    double seconds;         /* wall-clock time of the call on this process */
    long long checks_all;   /* writability checks (access(2)) of the directory, all
                               processes: one per process that creates no probe (hybrid:
                               every process; heuristic: all but rank 0) */
};

/* Fill *stats with the last discovery of the calling thread (successful or not). Returns 1
 * when there was one, 0 (and *stats zeroed) when this thread has not called
 * tio_comm_split_neighborhood or MPI_Comm_split_type with TIERIO_COMM_TYPE_NEIGHBORHOOD. */
TIO_API int tio_nbhd_last_stats(struct tio_nbhd_stats *stats);

/* "exhaustive", "heuristic", "hybrid", "auto"; NULL for an unknown value. */
TIO_API const char *tio_nbhd_algorithm_name(enum tio_nbhd_algorithm algorithm);

#ifdef __cplusplus
}
#endif
#endif
