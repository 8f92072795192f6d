/* The drain: copy a committed checkpoint from the local tier to the global one in a
 * thread, then complete it (global manifest) once every process has copied its files.
 *
 * The copy is plain POSIX I/O (read, checksum, write, fsync). Completing needs every
 * process's outcome, i.e. MPI. The thread uses MPI only when the application initialised
 * it with MPI_THREAD_MULTIPLE (MPI_Query_thread): then it agrees on its own private
 * communicator, polling non-blocking operations with short sleeps so that a process that
 * finished early does not spin on a core the application computes on, and the global
 * checkpoint completes without any call from the application. Otherwise the agreement is
 * made by the application's thread at the next collective call of the handle that needs
 * it (the commit that starts the next drain, wait, close). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt/handle.h"
#include "util/log.h"
#include "util/agree.h"

struct tio_drain {
    pthread_t thread;
    long long version;
    int rank, size;
    int nfiles;
    char (*src)[PATH_MAX];
    char (*dst)[PATH_MAX];
    uint64_t *fsize;
    uint32_t *fcrc;
    char gvdir[PATH_MAX];
    char *text; /* the manifest (rank 0 writes it) */
    size_t len;
    int mt;
    MPI_Comm comm; /* the drain communicator (mt) */
    struct tio_err err;
    double copy_seconds; /* what the copy took, for the debug log */
    uint64_t bytes;
    /* rank 0: remove global versions beyond keep in this thread, off the application's
     * path (a version's files on a parallel file system take time to unlink) */
    int prune;
    int keep;
    char gset[PATH_MAX];
    struct tio_err prune_err;
    int threaded; /* a thread runs drain_main (else it ran in tio_drain_go) */
    atomic_int finished;
};

static void drain_free(struct tio_drain *d)
{
    free(d->src);
    free(d->dst);
    free(d->fsize);
    free(d->fcrc);
    free(d->text);
    free(d);
}

static void wait_polling(MPI_Request *req)
{
    const struct timespec ms = {0, 1000000};
    for (;;) {
        int flag = 0;
        PMPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return;
        nanosleep(&ms, NULL);
    }
}

/* tio_agree (util/agree.h), made of non-blocking operations waited for by polling. */
static void agree_polling(MPI_Comm comm, int rank, int size, struct tio_err *err)
{
    int v = err->cls != TIO_OK ? size - rank : 0, top = 0;
    MPI_Request req;
    PMPI_Iallreduce(&v, &top, 1, MPI_INT, MPI_MAX, comm, &req);
    wait_polling(&req);
    if (top == 0)
        return;
    int root = size - top;
    struct { int cls; char msg[TIO_ERRMSG_MAX]; } m;
    memset(&m, 0, sizeof m);
    if (rank == root) {
        m.cls = err->cls;
        snprintf(m.msg, sizeof m.msg, "%s", err->msg);
    }
    PMPI_Ibcast(&m, (int)sizeof m, MPI_BYTE, root, comm, &req);
    wait_polling(&req);
    tio_err_clear(err);
    tio_err_adopt(err, m.cls, m.msg, root);
}

static void write_global_manifest(struct tio_drain *d)
{
    if (d->rank == 0 && d->err.cls == TIO_OK)
        tio_manifest_write(d->gvdir, d->text, d->len, &d->err);
}

static void *drain_main(void *arg)
{
    struct tio_drain *d = arg;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (tio_ckpt_mkdirs(d->gvdir, &d->err) == TIO_OK) {
        for (int i = 0; i < d->nfiles && d->err.cls == TIO_OK; i++) {
            tio_ckpt_copy_file(d->src[i], d->dst[i], d->fsize[i], d->fcrc[i], &d->err);
            d->bytes += d->fsize[i];
        }
        if (d->err.cls == TIO_OK)
            tio_fsync_dir(d->gvdir, &d->err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    d->copy_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (d->mt) {
        agree_polling(d->comm, d->rank, d->size, &d->err);
        write_global_manifest(d);
        agree_polling(d->comm, d->rank, d->size, &d->err);
        /* complete: what is beyond keep can go now */
        d->prune = d->rank == 0 && d->err.cls == TIO_OK;
    }
    /* Older versions only (this one is the newest): safe while this one is in flight. */
    if (d->prune)
        tio_ckpt_prune(d->gset, d->keep, d->version, &d->prune_err);
    atomic_store(&d->finished, 1);
    return NULL;
}

struct tio_drain *tio_drain_prepare(struct tio_ckpt *ck, long long version,
                                    const struct tio_manifest *m, const char *text,
                                    size_t len, struct tio_err *err)
{
    struct tio_drain *d = calloc(1, sizeof *d);
    int n = m->first[ck->rank + 1] - m->first[ck->rank];
    size_t k = (size_t)(n ? n : 1);
    if (d) {
        d->src = malloc(k * sizeof *d->src);
        d->dst = malloc(k * sizeof *d->dst);
        d->fsize = malloc(k * sizeof *d->fsize);
        d->fcrc = malloc(k * sizeof *d->fcrc);
        d->text = malloc(len + 1);
    }
    if (!d || !d->src || !d->dst || !d->fsize || !d->fcrc || !d->text) {
        if (d)
            drain_free(d);
        tio_err_set(err, TIO_E_NOMEM, "out of memory preparing the drain");
        return NULL;
    }
    d->version = version;
    d->rank = ck->rank;
    d->size = ck->size;
    d->nfiles = n;
    d->mt = ck->thread_multiple;
    d->comm = ck->drain_comm;
    d->keep = ck->cfg.keep;
    snprintf(d->gset, sizeof d->gset, "%s", ck->global_set);
    memcpy(d->text, text, len);
    d->len = len;
    char lvdir[PATH_MAX];
    if (tio_ckpt_vdir(lvdir, sizeof lvdir, ck->cfg.local, ck->name, version) ||
        tio_ckpt_vdir(d->gvdir, sizeof d->gvdir, ck->cfg.global, ck->name, version)) {
        drain_free(d);
        tio_err_set(err, TIO_E_ARG, "checkpoint directory paths are too long");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const struct tio_manifest_file *f = &m->files[m->first[ck->rank] + i];
        if (tio_ckpt_file_path(d->src[i], PATH_MAX, lvdir, 0, ck->rank, f->name) ||
            tio_ckpt_file_path(d->dst[i], PATH_MAX, d->gvdir, 0, ck->rank, f->name)) {
            drain_free(d);
            tio_err_set(err, TIO_E_ARG, "checkpoint file paths are too long");
            return NULL;
        }
        d->fsize[i] = f->size;
        d->fcrc[i] = f->crc;
    }
    return d;
}

void tio_drain_go(struct tio_ckpt *ck, struct tio_drain *d)
{
    ck->drain = d;
    /* The global pruning owed by the previous drain's completion is this thread's. */
    d->prune = ck->prune_global && ck->rank == 0;
    ck->prune_global = 0;
    d->threaded = 1;
    int rc = pthread_create(&d->thread, NULL, drain_main, d);
    if (rc) {
        d->threaded = 0;
        TIO_WARN("checkpoint \"%s\": no drain thread (%s): draining in the foreground",
                 ck->name, strerror(rc));
        drain_main(d);
    }
}

void tio_drain_discard(struct tio_drain *d)
{
    if (d)
        drain_free(d);
}

long long tio_drain_version(const struct tio_ckpt *ck)
{
    return ck->drain ? ck->drain->version : -1;
}

void tio_drain_finish(struct tio_ckpt *ck, int defer_prune)
{
    struct tio_drain *d = ck->drain;
    if (!d)
        return;
    if (d->threaded)
        pthread_join(d->thread, NULL);
    ck->drain = NULL;
    if (!d->mt) {
        tio_agree(ck->comm, &d->err, NULL, 0);
        write_global_manifest(d);
        tio_agree(ck->comm, &d->err, NULL, 0);
    }
    TIO_DEBUG("checkpoint \"%s\" version %lld: drain copied %llu bytes in %.3f s", ck->name,
              d->version, (unsigned long long)d->bytes, d->copy_seconds);
    if (d->prune_err.cls != TIO_OK)
        TIO_WARN("checkpoint \"%s\": removing old global versions: %s", ck->name,
                 d->prune_err.msg);
    if (d->err.cls == TIO_OK) {
        ck->global_complete = d->version;
        /* Versions beyond keep go: by the next drain's thread when one starts now (the
         * thread under MPI_THREAD_MULTIPLE did it already), else right here. */
        if (!d->mt && defer_prune) {
            ck->prune_global = 1;
        } else if (!d->mt && d->rank == 0) {
            struct tio_err perr;
            tio_err_clear(&perr);
            if (tio_ckpt_prune(ck->global_set, ck->cfg.keep, -1, &perr))
                TIO_WARN("checkpoint \"%s\": removing old global versions: %s", ck->name,
                         perr.msg);
        }
    } else {
        /* Every process has stopped copying: the torn global copy goes. */
        if (d->rank == 0) {
            struct tio_err rerr;
            tio_err_clear(&rerr);
            tio_ckpt_remove_version(ck->global_set, d->version, &rerr);
        }
        TIO_WARN("checkpoint \"%s\" version %lld: drain to \"%s\" failed: %s", ck->name,
                 d->version, ck->cfg.global, d->err.msg);
        tio_err_wrap(&ck->drain_err, d->err.cls, d->err.msg, "draining checkpoint \"%s\" "
                     "version %lld to the global directory failed", ck->name, d->version);
    }
    drain_free(d);
}

void tio_drain_settle(struct tio_ckpt *ck)
{
    tio_drain_finish(ck, 0);
    if (ck->prune_global && ck->rank == 0) {
        struct tio_err perr;
        tio_err_clear(&perr);
        if (tio_ckpt_prune(ck->global_set, ck->cfg.keep, -1, &perr))
            TIO_WARN("checkpoint \"%s\": removing old global versions: %s", ck->name,
                     perr.msg);
    }
    ck->prune_global = 0;
}

void tio_drain_poll(struct tio_ckpt *ck)
{
    if (ck->drain && ck->drain->mt && atomic_load(&ck->drain->finished))
        tio_drain_finish(ck, 0);
}
