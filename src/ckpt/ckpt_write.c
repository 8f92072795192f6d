/* tio_ckpt_begin, tio_ckpt_route, tio_ckpt_commit, tio_ckpt_wait: writing a checkpoint
 * version, making it complete at its first level, and handing it to the drain. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/crc32c.h"
#include "ckpt/handle.h"
#include "util/error_mpi.h"
#include "util/log.h"
#include "util/agree.h"

static int null_handle(const char *call)
{
    struct tio_err err;
    tio_err_clear(&err);
    tio_err_set(&err, TIO_E_ARG, "%s: ckpt is NULL", call);
    return tio_err_raise_comm(MPI_COMM_WORLD, &err);
}

/* The first level of a version: the local directory if there is one, else the global. */
static const char *first_dir(const struct tio_ckpt *ck)
{
    return ck->cfg.local[0] ? ck->cfg.local : ck->cfg.global;
}

static const char *first_set(const struct tio_ckpt *ck)
{
    return ck->cfg.local[0] ? ck->local_set : ck->global_set;
}

/* Does this process write and remove at the first level for its group (the first
 * process of its neighbourhood, or rank 0 for the global directory)? */
static int first_leader(const struct tio_ckpt *ck)
{
    return ck->cfg.local[0] ? ck->nbhd_rank == 0 : ck->rank == 0;
}

/* One allreduce: did any process fail, and is the version the same everywhere? The
 * message of the lowest failing rank costs a second step, on the error path only. */
static int agree_version(struct tio_ckpt *ck, long long version, struct tio_err *err)
{
    long long v[3] = {err->cls != TIO_OK ? ck->size - ck->rank : 0, version, -version};
    PMPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, ck->comm);
    if (v[0])
        return tio_agree(ck->comm, err, NULL, 0);
    if (v[1] != -v[2])
        return tio_err_set(err, TIO_E_ARG, "tio_ckpt_begin: the processes passed different "
                           "versions (from %lld to %lld)", -v[2], v[1]);
    return TIO_OK;
}

int tio_ckpt_begin(tio_ckpt_t ck, long long version)
{
    if (!ck)
        return null_handle("tio_ckpt_begin");
    struct tio_err err;
    tio_err_clear(&err);
    tio_drain_poll(ck);
    if (ck->phase == TIO_PHASE_WRITING)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_begin: version %lld of \"%s\" is still being "
                    "written; commit it first", ck->version, ck->name);
    else if (version < 0)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_begin: version %lld is negative", version);
    else if (version <= ck->last_version)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_begin: version %lld of \"%s\" is not larger "
                    "than version %lld, begun or restarted before", version, ck->name,
                    ck->last_version);
    else if (tio_ckpt_vdir(ck->vdir, sizeof ck->vdir, first_dir(ck), ck->name, version))
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_begin: checkpoint path is too long");
    if (agree_version(ck, version, &err) != TIO_OK)
        return tio_ckpt_raise(ck, &err);

    /* Leftovers of this version or newer go, and the version's directory is made, by one
     * process per directory, before anybody writes. */
    if (ck->cfg.local[0] && ck->nbhd_rank == 0)
        tio_ckpt_remove_from(ck->local_set, version, &err);
    if (ck->cfg.global[0] && ck->rank == 0)
        tio_ckpt_remove_from(ck->global_set, version, &err);
    if (err.cls == TIO_OK && first_leader(ck))
        tio_ckpt_mkdirs(ck->vdir, &err);
    if (tio_agree(ck->comm, &err, NULL, 0) != TIO_OK)
        return tio_ckpt_raise(ck, &err);
    tio_manifest_free(&ck->man);
    ck->phase = TIO_PHASE_WRITING;
    ck->version = ck->last_version = version;
    ck->nfiles = 0;
    return MPI_SUCCESS;
}

/* The entry of file in the version being written (added as routed if new), or NULL. */
static struct tio_ckpt_file *add_file(struct tio_ckpt *ck, const char *file,
                                      struct tio_err *err)
{
    for (int i = 0; i < ck->nfiles; i++)
        if (!strcmp(ck->files[i].name, file))
            return &ck->files[i];
    if (ck->nfiles == ck->capfiles) {
        int cap = ck->capfiles ? 2 * ck->capfiles : 8;
        void *p = realloc(ck->files, sizeof *ck->files * (size_t)cap);
        if (!p) {
            tio_err_set(err, TIO_E_NOMEM, "out of memory adding checkpoint file \"%s\"", file);
            return NULL;
        }
        ck->files = p;
        ck->capfiles = cap;
    }
    struct tio_ckpt_file *f = &ck->files[ck->nfiles++];
    memset(f, 0, sizeof *f);
    tio_ckpt_copy_name(f->name, file);
    f->state = TIO_FILE_ROUTED;
    return f;
}

int tio_ckpt_route(tio_ckpt_t ck, const char *file, char *path, int len)
{
    if (!ck)
        return null_handle("tio_ckpt_route");
    struct tio_err err;
    tio_err_clear(&err);
    char p[PATH_MAX] = "";
    if (!path || len <= 0)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_route: path must be a buffer of len > 0 bytes");
    else if (tio_ckpt_check_name(file, "tio_ckpt_route: file", &err) != TIO_OK)
        ;
    else if (ck->phase == TIO_PHASE_IDLE)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_route: checkpoint \"%s\" has no version "
                    "begun or restarted", ck->name);
    else if (ck->phase == TIO_PHASE_RESTARTED && !tio_manifest_find(&ck->man, ck->rank, file))
        tio_err_set(&err, TIO_E_NOENT, "tio_ckpt_route: rank %d wrote no file \"%s\" in "
                    "version %lld of checkpoint \"%s\"", ck->rank, file, ck->version, ck->name);
    else if (tio_ckpt_file_path(p, sizeof p, ck->vdir, 0, ck->rank, file))
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_route: path of \"%s\" is too long", file);
    else if (strlen(p) >= (size_t)len)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_route: the path needs %zu bytes, len is %d",
                    strlen(p) + 1, len);
    else if (ck->phase == TIO_PHASE_WRITING) {
        /* The application writes it itself now: commit reads it to sum it. */
        struct tio_ckpt_file *f = add_file(ck, file, &err);
        if (f && f->state == TIO_FILE_SUMMED)
            f->state = TIO_FILE_ROUTED;
    }
    if (err.cls != TIO_OK)
        return tio_ckpt_raise(ck, &err);
    memcpy(path, p, strlen(p) + 1);
    return MPI_SUCCESS;
}

int tio_ckpt_write(tio_ckpt_t ck, const char *file, const void *buf, size_t len)
{
    if (!ck)
        return null_handle("tio_ckpt_write");
    struct tio_err err;
    tio_err_clear(&err);
    char p[PATH_MAX];
    struct tio_ckpt_file *f = NULL;
    if (!buf && len)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_write: buf is NULL");
    else if (tio_ckpt_check_name(file, "tio_ckpt_write: file", &err) != TIO_OK)
        ;
    else if (ck->phase != TIO_PHASE_WRITING)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_write: no version of \"%s\" is being "
                    "written (tio_ckpt_begin first)", ck->name);
    else if (tio_ckpt_file_path(p, sizeof p, ck->vdir, 0, ck->rank, file))
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_write: path of \"%s\" is too long", file);
    else
        f = add_file(ck, file, &err);
    if (!f)
        return tio_ckpt_raise(ck, &err);
    /* Sum from memory while writing: commit then need not read the file back. A failure
     * marks the file, so that commit cannot take a partial file for a checkpoint. */
    f->state = TIO_FILE_FAILED;
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        tio_err_errno(&err, errno, "tio_ckpt_write: cannot create \"%s\"", p);
        return tio_ckpt_raise(ck, &err);
    }
    uint32_t crc = 0;
    const char *b = buf;
    for (size_t done = 0; done < len && err.cls == TIO_OK;) {
        size_t k = len - done < (4u << 20) ? len - done : 4u << 20;
        crc = tio_crc32c(crc, b + done, k);
        if (tio_write_full(fd, b + done, k) < 0)
            tio_err_errno(&err, errno, "tio_ckpt_write: cannot write \"%s\"", p);
        done += k;
    }
    if (close(fd) < 0 && err.cls == TIO_OK)
        tio_err_errno(&err, errno, "tio_ckpt_write: closing \"%s\" failed", p);
    if (err.cls != TIO_OK)
        return tio_ckpt_raise(ck, &err);
    f->state = TIO_FILE_SUMMED;
    f->size = len;
    f->crc = crc;
    return MPI_SUCCESS;
}

/* Checksum and sync this process's files; their manifest lines into *lines. */
static int sum_files(struct tio_ckpt *ck, char **lines, int *len, struct tio_err *err)
{
    size_t cap = (size_t)ck->nfiles * (TIO_CKPT_NAME_MAX + 64) + 1;
    char *l = malloc(cap);
    *lines = l;
    *len = 0;
    if (!l)
        return tio_err_set(err, TIO_E_NOMEM, "tio_ckpt_commit: out of memory");
    size_t n = 0;
    for (int i = 0; i < ck->nfiles; i++) {
        struct tio_ckpt_file *f = &ck->files[i];
        char p[PATH_MAX];
        uint64_t size = f->size;
        uint32_t crc = f->crc;
        tio_ckpt_file_path(p, sizeof p, ck->vdir, 0, ck->rank, f->name);
        struct tio_err e;
        tio_err_clear(&e);
        if (f->state == TIO_FILE_FAILED)
            return tio_err_set(err, TIO_E_IO, "file \"%s\": tio_ckpt_write failed, the "
                               "version cannot be committed", f->name);
        if (f->state == TIO_FILE_SUMMED)
            tio_ckpt_file_sync(p, size, &e);
        else
            tio_ckpt_file_sum(p, 1, &size, &crc, &e);
        if (e.cls == TIO_E_NOENT)
            return tio_err_set(err, TIO_E_NOENT, "file \"%s\" was routed but not written "
                               "(no \"%s\")", f->name, p);
        if (e.cls != TIO_OK)
            return tio_err_set(err, e.cls, "%s", e.msg);
        int w = tio_manifest_line(l + n, cap - n, ck->rank, size, crc, f->name);
        n += (size_t)(w > 0 ? w : 0);
    }
    *len = (int)n;
    return tio_fsync_dir(ck->vdir, err);
}

/* What rank 0 sends back after gathering: the manifest, or the error of the lowest
 * failing rank. Small manifests travel inside the header: one broadcast. */
#define INLINE_TEXT 8192
struct outcome {
    int cls;                 /* TIO_OK, or the error class */
    unsigned long long len;  /* bytes of the manifest or of the message */
    char text[INLINE_TEXT];
};

/* Rank 0 gathers every process's manifest lines (or its error message), and builds the
 * manifest (or picks the lowest failing rank's error); every process gets it back. Three
 * collectives: the sizes, the lines, the outcome. */
static int gather_manifest(struct tio_ckpt *ck, const char *lines, int len,
                           const struct tio_err *mine, char **text, size_t *tlen,
                           struct tio_err *err)
{
    int head[2] = {mine->cls, mine->cls ? (int)strlen(mine->msg) + 1 : len};
    const char *payload = mine->cls ? mine->msg : lines;
    int *heads = NULL, *lens = NULL, *displs = NULL;
    char *all = NULL;
    if (ck->rank == 0) {
        heads = malloc(sizeof(int) * 2 * (size_t)ck->size);
        lens = malloc(sizeof(int) * (size_t)ck->size);
        displs = malloc(sizeof(int) * (size_t)ck->size);
        if (!heads || !lens || !displs)
            PMPI_Abort(ck->comm, 1); /* the others wait for the outcome */
    }
    PMPI_Gather(head, 2, MPI_INT, heads, 2, MPI_INT, 0, ck->comm);
    long long total = 0;
    if (ck->rank == 0) {
        for (int r = 0; r < ck->size; r++) {
            lens[r] = heads[2 * r + 1];
            displs[r] = (int)total;
            total += lens[r];
        }
        if (!(all = malloc((size_t)total + 1)))
            PMPI_Abort(ck->comm, 1);
    }
    PMPI_Gatherv(payload, head[1], MPI_CHAR, all, lens, displs, MPI_CHAR, 0, ck->comm);

    struct outcome *o = calloc(1, sizeof *o);
    char *t = NULL;
    if (!o)
        PMPI_Abort(ck->comm, 1);
    if (ck->rank == 0) {
        int bad = -1;
        for (int r = 0; r < ck->size && bad < 0; r++)
            if (heads[2 * r])
                bad = r;
        struct tio_err e;
        tio_err_clear(&e);
        if (bad >= 0) {
            tio_err_adopt(&e, heads[2 * bad], all + displs[bad], bad);
            o->cls = e.cls;
            o->len = strlen(e.msg) + 1;
            memcpy(o->text, e.msg, o->len);
        } else if (tio_manifest_build(ck->name, ck->version, ck->size, all, (size_t)total, &t,
                                      tlen, &e) != TIO_OK) {
            o->cls = e.cls;
            o->len = strlen(e.msg) + 1;
            memcpy(o->text, e.msg, o->len);
        } else {
            o->len = *tlen;
            memcpy(o->text, t, *tlen < INLINE_TEXT ? *tlen : INLINE_TEXT);
        }
    }
    free(heads);
    free(lens);
    free(displs);
    free(all);
    PMPI_Bcast(o, (int)sizeof *o, MPI_BYTE, 0, ck->comm);
    if (o->cls != TIO_OK) {
        tio_err_set(err, (enum tio_errclass)o->cls, "%s", o->text);
        free(o);
        free(t);
        return err->cls;
    }
    if (ck->rank != 0) {
        if (!(t = malloc(o->len)))
            PMPI_Abort(ck->comm, 1);
        memcpy(t, o->text, o->len < INLINE_TEXT ? o->len : INLINE_TEXT);
    }
    /* The rest of a large manifest, in pieces (MPI counts are ints). */
    for (unsigned long long off = INLINE_TEXT; off < o->len; off += 1u << 30) {
        unsigned long long k = o->len - off < (1u << 30) ? o->len - off : 1u << 30;
        PMPI_Bcast(t + off, (int)k, MPI_CHAR, 0, ck->comm);
    }
    *text = t;
    *tlen = o->len;
    free(o);
    return TIO_OK;
}

/* The partner copies of version ck->version, as manifest m lists the files. */
static int send_partner_copies(struct tio_ckpt *ck, const struct tio_manifest *m,
                               struct tio_err *err)
{
    char pdir[PATH_MAX];
    int pl = snprintf(pdir, sizeof pdir, "%s/" TIO_CKPT_PARTNER_DIR, ck->vdir);
    if (pl < 0 || (size_t)pl >= sizeof pdir)
        tio_err_set(err, TIO_E_ARG, "path of the partner directory is too long");
    else if (ck->nsenders > 0)
        tio_ckpt_mkdirs(pdir, err);
    /* Every process takes part even after a local failure: others send to it. */
    int nstreams = 1 + ck->nsenders, nfiles = m->nfiles;
    struct tio_stream *st = calloc((size_t)nstreams, sizeof *st);
    const struct tio_manifest_file **fp = malloc(sizeof *fp * (size_t)(nfiles + 1));
    char (*paths)[PATH_MAX] = malloc(sizeof *paths * (size_t)(nfiles + 1));
    if (!st || !fp || !paths)
        PMPI_Abort(ck->comm, 1); /* the others would wait for our bytes forever */
    int k = 0;
    for (int s = 0; s < nstreams; s++) {
        int who = s == 0 ? ck->rank : ck->senders[s - 1];
        st[s].peer = s == 0 ? ck->partner : who;
        st[s].files = &fp[k];
        st[s].paths = &paths[k];
        for (int i = m->first[who]; i < m->first[who + 1]; i++, k++) {
            fp[k] = &m->files[i];
            tio_ckpt_file_path(paths[k], PATH_MAX, ck->vdir, s != 0, who, m->files[i].name);
        }
        st[s].nfiles = m->first[who + 1] - m->first[who];
    }
    tio_partner_exchange(ck, 1, st, nstreams - 1, st + 1, err);
    if (ck->nsenders > 0 && err->cls == TIO_OK)
        tio_fsync_dir(pdir, err);
    free(st);
    free(fp);
    free(paths);
    return err->cls;
}

/* A failed commit leaves nothing: the version directory goes (every process is past
 * writing once the failure has been agreed on). */
static void discard_version(struct tio_ckpt *ck)
{
    if (ck->phase == TIO_PHASE_WRITING && first_leader(ck)) {
        struct tio_err rerr;
        tio_err_clear(&rerr);
        if (tio_ckpt_remove_version(first_set(ck), ck->version, &rerr))
            TIO_WARN("checkpoint \"%s\": removing failed version %lld: %s", ck->name,
                     ck->version, rerr.msg);
    }
    PMPI_Barrier(ck->comm);
    if (ck->phase == TIO_PHASE_WRITING)
        ck->phase = TIO_PHASE_IDLE;
}

int tio_ckpt_commit(tio_ckpt_t ck)
{
    if (!ck)
        return null_handle("tio_ckpt_commit");
    struct tio_err err, mine;
    tio_err_clear(&err);
    tio_err_clear(&mine);
    tio_drain_poll(ck);
    char *lines = NULL, *text = NULL;
    int llen = 0;
    size_t tlen = 0;
    struct tio_manifest m;
    memset(&m, 0, sizeof m);
    struct tio_drain *next = NULL;
    const int drain_now = ck->cfg.drain != TIO_DRAIN_NONE &&
                          (ck->commits + 1) % ck->cfg.drain_every == 0;

    if (ck->phase != TIO_PHASE_WRITING)
        tio_err_set(&mine, TIO_E_ARG, "tio_ckpt_commit: no version of \"%s\" was begun",
                    ck->name);
    else
        sum_files(ck, &lines, &llen, &mine);
    if (gather_manifest(ck, lines, llen, &mine, &text, &tlen, &err) != TIO_OK)
        goto fail;
    tio_manifest_parse(text, tlen, &m, &err); /* the same text everywhere: no agreement */
    if (err.cls != TIO_OK)
        PMPI_Abort(ck->comm, 1); /* only out of memory can fail it here */
    if (ck->cfg.partner) {
        send_partner_copies(ck, &m, &err);
        if (tio_agree(ck->comm, &err, NULL, 0) != TIO_OK)
            goto fail;
    }
    /* Every process's files (and partner copies) are durable: the manifest, last. The
     * drain of this version is prepared now, so that a failure to prepare it (memory) is
     * known to all with the same agreement. */
    if (first_leader(ck))
        tio_manifest_write(ck->vdir, text, tlen, &err);
    struct tio_err derr;
    tio_err_clear(&derr);
    if (drain_now)
        next = tio_drain_prepare(ck, ck->version, &m, text, tlen, &derr);
    int flags[1] = {drain_now && !next};
    if (tio_agree(ck->comm, &err, flags, 1) != TIO_OK)
        goto fail;

    ck->phase = TIO_PHASE_IDLE;
    ck->commits++;
    if (ck->cfg.local[0])
        ck->local_complete = ck->version;
    else
        ck->global_complete = ck->version;

    /* At most one drain in flight: the previous one ends before this one starts. */
    if (drain_now) {
        tio_drain_finish(ck, !flags[0]);
        if (flags[0]) {
            tio_drain_discard(next);
            TIO_WARN("checkpoint \"%s\" version %lld stays local: a process could not "
                     "prepare its drain (%s)", ck->name, ck->version,
                     derr.cls ? derr.msg : "see that process");
            tio_err_set(&ck->drain_err, TIO_E_NOMEM, "checkpoint \"%s\" version %lld was not "
                        "drained: a process could not prepare the drain", ck->name,
                        ck->version);
        } else {
            tio_drain_go(ck, next);
        }
    }
    if (first_leader(ck)) {
        struct tio_err perr;
        tio_err_clear(&perr);
        if (tio_ckpt_prune(first_set(ck), ck->cfg.keep, tio_drain_version(ck), &perr))
            TIO_WARN("checkpoint \"%s\": removing old versions: %s", ck->name, perr.msg);
    }
    if (drain_now && ck->cfg.drain == TIO_DRAIN_SYNC) {
        tio_drain_finish(ck, 0);
        err = ck->drain_err;
        tio_err_clear(&ck->drain_err);
    }
    free(lines);
    free(text);
    tio_manifest_free(&m);
    return tio_ckpt_raise(ck, &err);

fail:
    tio_drain_discard(next);
    free(lines);
    free(text);
    tio_manifest_free(&m);
    discard_version(ck);
    return tio_ckpt_raise(ck, &err);
}

int tio_ckpt_wait(tio_ckpt_t ck)
{
    if (!ck)
        return null_handle("tio_ckpt_wait");
    tio_drain_settle(ck);
    struct tio_err err = ck->drain_err;
    tio_err_clear(&ck->drain_err);
    return tio_ckpt_raise(ck, &err);
}
