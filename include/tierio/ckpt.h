/* Multi-level checkpointing: write a checkpoint to the fastest node-local tier, make it
 * durable there, and drain it to the global tier (the parallel file system) in the
 * background. After §6 of Latham et al., ICPADS 2017 (FILE_SYNC_LOCAL, then FILE_SYNC);
 * SCR and VeloC are the peers. Full guide: docs/ckpt.md.
 *
 * A checkpoint is a set of files, any number per process, named by the application and
 * written with whatever I/O it likes (POSIX, stdio, HDF5, ...) to the paths
 * tio_ckpt_route gives. Checkpoints carry a version number that grows from one to the next.
 *
 *   tio_ckpt_t ck;
 *   tio_ckpt_open(MPI_COMM_WORLD, "sim", info, &ck);     info: directories, options
 *   tio_ckpt_restart(ck, &version, &level);              newest complete one, or -1
 *   ... read the files at tio_ckpt_route(ck, "state", path, len) ...
 *   for each step:
 *       tio_ckpt_begin(ck, step);
 *       tio_ckpt_route(ck, "state", path, sizeof path);  write the file at path
 *       (or tio_ckpt_write(ck, "state", buf, len);       a buffer, checksummed on the way)
 *       tio_ckpt_commit(ck);                             durable locally; drain starts
 *   tio_ckpt_close(&ck);                                 waits for the drain
 *
 * Levels. A checkpoint exists at up to three levels:
 *   local    the node-local directory (TIO_CKPT_LOCAL_DIR): every process's own files;
 *   partner  (TIO_CKPT_PARTNER=true) a copy of every process's files in the node-local
 *            directory of a process in another storage neighbourhood (another node), so
 *            that the loss of one node's storage is survived without the global tier;
 *   global   the global directory (TIO_CKPT_GLOBAL_DIR), filled by the drain.
 * Either directory may be omitted: local only (no drain), or global only (commit writes
 * there directly, the classic single-level checkpoint).
 *
 * What "complete" means. A checkpoint version is complete at a level when every process's
 * files and a manifest are durable there. The manifest lists every process's files with
 * their sizes and CRC-32C checksums; it is written last, to a temporary name, fsync'ed,
 * renamed into place and its directory fsync'ed; the files and their directories are
 * fsync'ed before. So a checkpoint torn by a crash (files missing, short, or a manifest
 * that never got its name) is never taken for a complete one, and a file damaged later is
 * caught by its checksum: restart reads and checks every byte it hands out.
 *
 * Errors: the calls return MPI error codes (MPI_SUCCESS or a code whose MPI_Error_string
 * names the argument, key, path or rank and the reason) and raise them through the error
 * handler the communicator had at tio_ckpt_open (MPI_ERRORS_ARE_FATAL aborts). Collective
 * calls agree on errors: when one process fails, every process returns the error of the
 * lowest failing rank.
 *
 * Thread safety: a handle is used by one thread at a time, and its collective calls are
 * made in the same order by every process of its communicator, as for MPI collectives.
 * Different handles may be used from different threads under MPI_THREAD_MULTIPLE. The
 * background drain is a thread of tierio that uses only POSIX I/O, unless MPI was
 * initialised with MPI_THREAD_MULTIPLE: then it also completes the global checkpoint by
 * itself (a non-blocking agreement on a private communicator), without waiting for the
 * application's next call. */
#ifndef TIERIO_CKPT_H
#define TIERIO_CKPT_H

#include "tierio/export.h"

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Info keys of tio_ckpt_open. */
#define TIO_CKPT_HINT_LOCAL_DIR "tierio_ckpt_local_dir"   /* node-local directory */
#define TIO_CKPT_HINT_GLOBAL_DIR "tierio_ckpt_global_dir"  /* directory every process sees */
#define TIO_CKPT_HINT_PARTNER "tierio_ckpt_partner"     /* true | false (default false) */
#define TIO_CKPT_HINT_KEEP   "tierio_ckpt_keep"        /* complete versions kept per level,
                                                          >= 1 (default 2) */
#define TIO_CKPT_HINT_DRAIN  "tierio_ckpt_drain"       /* async | sync | none (default async
                                                          with both directories, else none) */
#define TIO_CKPT_HINT_DRAIN_EVERY "tierio_ckpt_drain_every" /* drain every k-th commit, k >= 1
                                                          (default 1) */
/* Deprecated spellings (one pattern, TIO_<LAYER>_HINT_<NAME>, for every layer). */
#define TIO_CKPT_LOCAL_DIR TIO_CKPT_HINT_LOCAL_DIR
#define TIO_CKPT_GLOBAL_DIR TIO_CKPT_HINT_GLOBAL_DIR
#define TIO_CKPT_PARTNER TIO_CKPT_HINT_PARTNER
#define TIO_CKPT_KEEP TIO_CKPT_HINT_KEEP
#define TIO_CKPT_DRAIN TIO_CKPT_HINT_DRAIN
#define TIO_CKPT_DRAIN_EVERY TIO_CKPT_HINT_DRAIN_EVERY

/* Where the data of a restarted checkpoint came from (tio_ckpt_restart). With several
 * processes, the slowest source any process used. */
enum tio_ckpt_level {
    TIO_CKPT_LEVEL_NONE = 0,    /* no complete checkpoint was found */
    TIO_CKPT_LEVEL_LOCAL = 1,   /* every process found its own files in the local directory */
    TIO_CKPT_LEVEL_PARTNER = 2, /* some were rebuilt from their partner copies */
    TIO_CKPT_LEVEL_GLOBAL = 3   /* some were read from the global directory */
};

typedef struct tio_ckpt *tio_ckpt_t;

/* Collective over comm. name ([A-Za-z0-9._-], not starting with '.', at most 64 bytes)
 * names the checkpoint set: its files live in <dir>/<name>/v<version>/. info carries the
 * keys above; at least one directory is required, both must exist, and every process must
 * see the global directory. The local directory is split into storage neighbourhoods
 * (processes that see the same directory, tio_comm_split_neighborhood); every process must
 * see one. The partner copy needs at least two neighbourhoods. Every process passes the
 * same name and values. comm is duplicated: the handle does not need it afterwards. */
TIO_API int tio_ckpt_open(MPI_Comm comm, const char *name, MPI_Info info, tio_ckpt_t *ckpt);

/* Collective. Finds the newest version complete for every process at some level -- its
 * own local files, else its partner copy (rebuilt into its local directory over MPI),
 * else the global copy -- checking every byte against the manifest's checksums, and makes
 * it the current one: tio_ckpt_route then gives the paths to read. Versions that fail the
 * checks are skipped with a warning on stderr. *version = -1 and *level =
 * TIO_CKPT_LEVEL_NONE when there is none (not an error). A checkpoint written by a
 * different number of processes is an error. Call it before the first tio_ckpt_begin. */
TIO_API int tio_ckpt_restart(tio_ckpt_t ckpt, long long *version, int *level);

/* Collective. Starts checkpoint `version` (>= 0, the same on every process, larger than
 * any version this handle has begun or restarted). Whatever is stored under the set's
 * name for versions >= `version` -- a checkpoint torn by a crash, or newer ones left by a
 * run that restarted from an older version -- is removed first. */
TIO_API int tio_ckpt_begin(tio_ckpt_t ckpt, long long version);

/* Local. The path of this process's file `file` ([A-Za-z0-9._-], at most 64 bytes, not
 * starting with '.') in the current checkpoint, in path[0..len). Between begin and commit
 * it is where to write the file (in the local directory, or the global one without a
 * local directory); every file routed must exist at commit. After tio_ckpt_restart it is
 * where to read it, and a file this process did not write in that version is an error of
 * class MPI_ERR_NO_SUCH_FILE. */
TIO_API int tio_ckpt_route(tio_ckpt_t ckpt, const char *file, char *path, int len);

/* Local. Writes buf[0..len) as this process's file `file` of the version being written
 * (creating or replacing it) and computes its checksum on the way, so that commit need
 * not read it back: the fast path for state held in memory. The file must not be changed
 * afterwards except through tio_ckpt_route (which makes commit read it again). If it
 * fails, the version cannot be committed (commit returns an error). */
TIO_API int tio_ckpt_write(tio_ckpt_t ckpt, const char *file, const void *buf, size_t len);

/* Collective. Ends the checkpoint begun: fsyncs every file and directory, computes the
 * checksums, sends the partner copies (TIO_CKPT_PARTNER), and writes the manifest, last
 * and atomically. When it returns the version is complete at the first level (local, or
 * global without a local directory). Then, every TIO_CKPT_DRAIN_EVERY-th commit, it waits
 * for the drain in flight (at most one runs) and starts draining this version: in the
 * background with "async", before returning with "sync". Versions beyond TIO_CKPT_KEEP
 * are removed. A failure of an earlier background drain does not fail this call; it is
 * returned by tio_ckpt_wait or tio_ckpt_close. On error the version is removed. */
TIO_API int tio_ckpt_commit(tio_ckpt_t ckpt);

/* Collective. Returns when the drain in flight (if any) is over: on success that version
 * is complete on the global tier. Returns the first drain failure not yet returned. */
TIO_API int tio_ckpt_wait(tio_ckpt_t ckpt);

/* Local. The newest version this process knows to be complete at the local level (own
 * files and manifest; partner copies included) and at the global level; -1 for none.
 * Under MPI_THREAD_MULTIPLE it sees a background drain that has finished. */
TIO_API int tio_ckpt_status(tio_ckpt_t ckpt, long long *local_version, long long *global_version);

/* Collective. Waits for the drain in flight, removes an uncommitted checkpoint, frees the
 * handle and sets *ckpt to NULL. Returns the first drain failure not yet returned. */
TIO_API int tio_ckpt_close(tio_ckpt_t *ckpt);

#ifdef __cplusplus
}
#endif
#endif
