/* The state behind a tio_ckpt_t, shared by the files of the layer:
 *   ckpt_open.c     open, close, status, restart's entry, the configuration keys
 *   ckpt_write.c    begin, route, commit, wait
 *   restart.c       the search for the newest usable version
 *   partner.c       partner placement and file streams between processes
 *   drain.c         the background copy to the global tier
 *   manifest.c, store.c, crc32c.c   below MPI: formats, files, checksums */
#ifndef TIO_CKPT_HANDLE_H
#define TIO_CKPT_HANDLE_H

#include <limits.h>
#include <mpi.h>

#include "tierio/ckpt.h"

#include "ckpt/manifest.h"
#include "ckpt/store.h"
#include "util/error.h"
#include "util/settings.h"

enum tio_ckpt_drain_mode { TIO_DRAIN_NONE = 0, TIO_DRAIN_ASYNC, TIO_DRAIN_SYNC };

/* The keys of tio_ckpt_open (ckpt_open.c), for the reference. */
extern const struct tio_key_table tio_ckpt_keys;

struct tio_ckpt_config {
    char local[PATH_MAX];  /* "" when absent */
    char global[PATH_MAX]; /* "" when absent */
    int partner;
    int keep;
    enum tio_ckpt_drain_mode drain;
    int drain_every;
};

enum tio_ckpt_phase { TIO_PHASE_IDLE = 0, TIO_PHASE_WRITING, TIO_PHASE_RESTARTED };

struct tio_drain;

/* A file of the version being written. */
struct tio_ckpt_file {
    char name[TIO_CKPT_NAME_MAX + 1];
    int state;     /* TIO_FILE_ROUTED, _SUMMED (tio_ckpt_write: size, crc known), _FAILED */
    uint64_t size;
    uint32_t crc;
};
enum { TIO_FILE_ROUTED = 0, TIO_FILE_SUMMED, TIO_FILE_FAILED };

struct tio_ckpt {
    MPI_Comm comm;        /* a dup of the application's communicator */
    MPI_Comm nbhd;        /* processes sharing the local directory (or MPI_COMM_NULL) */
    MPI_Comm drain_comm;  /* the drain thread's own (MPI_THREAD_MULTIPLE only) */
    int rank, size, nbhd_rank;
    int thread_multiple;
    char name[TIO_CKPT_NAME_MAX + 1];
    struct tio_ckpt_config cfg;
    char local_set[PATH_MAX];  /* <local>/<name> */
    char global_set[PATH_MAX]; /* <global>/<name> */

    /* Partner copies: this process's files go to `partner`; it holds those of senders. */
    int partner;
    int *senders;
    int nsenders;

    enum tio_ckpt_phase phase;
    long long version;      /* being written, or restarted */
    long long last_version; /* newest begun or restarted; -1 */
    char vdir[PATH_MAX];    /* where this process's files of `version` are */
    struct tio_ckpt_file *files; /* routed or written while writing */
    int nfiles, capfiles;
    struct tio_manifest man; /* of the restarted version */

    long long local_complete, global_complete; /* -1: none known */
    long long commits;
    struct tio_drain *drain;  /* in flight, or NULL */
    int prune_global;         /* rank 0 owes the global level a pruning (next drain does it) */
    struct tio_err drain_err; /* first drain failure not yet returned */
};

/* Raise err through the handle's communicator and return the MPI code. */
int tio_ckpt_raise(struct tio_ckpt *ck, const struct tio_err *err);

/* ---- drain.c ---- */
/* Prepare draining `version` (its manifest text: this process's entries are copied, and
 * rank 0 writes the text as the global manifest). Local; NULL and err on failure. The
 * processes agree on the outcome, then call tio_drain_go (all prepared; the drain in
 * flight must be finished first) or tio_drain_discard. */
struct tio_drain *tio_drain_prepare(struct tio_ckpt *ck, long long version,
                                    const struct tio_manifest *m, const char *text,
                                    size_t len, struct tio_err *err);
/* Install d as the drain in flight and start its thread (if the system refuses a thread,
 * drain right here instead: the work must be done either way, the others count on it). */
void tio_drain_go(struct tio_ckpt *ck, struct tio_drain *d);
void tio_drain_discard(struct tio_drain *d);
/* Version of the drain in flight, or -1. */
long long tio_drain_version(const struct tio_ckpt *ck);
/* Collective (local under MPI_THREAD_MULTIPLE): wait for the drain in flight and
 * complete it; updates global_complete, records a failure in drain_err, and prunes the
 * global level (defer_prune: leave that to the next drain's thread, which the caller
 * starts right away). Nothing to do without a drain in flight. */
void tio_drain_finish(struct tio_ckpt *ck, int defer_prune);
/* tio_drain_finish, and the global pruning still owed: nothing left behind (wait, close). */
void tio_drain_settle(struct tio_ckpt *ck);
/* Local: under MPI_THREAD_MULTIPLE, harvest a drain whose thread has finished. */
void tio_drain_poll(struct tio_ckpt *ck);

/* ---- partner.c ---- */
/* Collective: work out partner and senders from the neighbourhoods. */
int tio_partner_setup(struct tio_ckpt *ck, struct tio_err *err);

/* A stream of files between two processes: sizes known to both sides in advance (from a
 * manifest), so no header travels. Each side names its paths; the receiver checks every
 * file's checksum and fsyncs it. */
struct tio_stream {
    int peer;
    int nfiles;
    const struct tio_manifest_file **files; /* entries, in the order sent */
    char (*paths)[PATH_MAX];                /* read from (send) / write to (receive) */
};
/* Collective over ck->comm in effect (every process calls it, with its own streams):
 * sends and receives every stream at once, in bounded memory. Never hangs on a local
 * failure: the bytes are still exchanged, and the failure is in err. */
int tio_partner_exchange(struct tio_ckpt *ck, int nsend, const struct tio_stream *send,
                         int nrecv, const struct tio_stream *recv, struct tio_err *err);

/* ---- restart.c ---- */
int tio_ckpt_do_restart(struct tio_ckpt *ck, long long *version, int *level,
                        struct tio_err *err);

#endif
