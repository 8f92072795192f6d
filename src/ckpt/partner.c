/* Partner copies: every process's checkpoint files are also kept in the node-local
 * directory of one process of the next storage neighbourhood (the neighbourhoods in the
 * order of their lowest rank, cyclically), so that losing one neighbourhood's storage
 * loses no checkpoint: its processes' files are still one neighbourhood further. Storage
 * neighbourhoods rather than nodes, because nodes sharing a device fail together. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/crc32c.h"
#include "ckpt/handle.h"

#define PIECE (4u << 20) /* bytes per message: bounded memory, full network speed */
#define TAG 7411

int tio_partner_setup(struct tio_ckpt *ck, struct tio_err *err)
{
    /* Each neighbourhood is known by the rank (in comm) of its first process. */
    int leader = ck->rank, nsize;
    PMPI_Bcast(&leader, 1, MPI_INT, 0, ck->nbhd);
    PMPI_Comm_size(ck->nbhd, &nsize);
    int mine[3] = {leader, ck->nbhd_rank, nsize};
    int *all = malloc(sizeof(int) * 3 * (size_t)ck->size);
    int *partner = malloc(sizeof(int) * (size_t)ck->size);
    if (!all || !partner) {
        /* Allgather needs everyone: better stop than hang. */
        PMPI_Abort(ck->comm, 1);
    }
    PMPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, ck->comm);
    int first = -1, ngroups = 0;
    for (int r = 0; r < ck->size; r++)
        if (all[3 * r] == r) {
            ngroups++;
            if (first < 0)
                first = r;
        }
    if (ngroups < 2) {
        free(all);
        free(partner);
        return tio_err_set(err, TIO_E_INFO_VALUE,
                           TIO_CKPT_HINT_PARTNER "=true needs at least two storage "
                           "neighbourhoods, but every process sees the same local directory "
                           "\"%s\"", ck->cfg.local);
    }
    /* Process r's copy goes to the process of the same index (modulo its size) in the
     * next neighbourhood. */
    for (int r = 0; r < ck->size; r++) {
        int g = all[3 * r], next = -1;
        for (int q = g + 1; q < ck->size && next < 0; q++)
            if (all[3 * q] == q)
                next = q;
        if (next < 0)
            next = first;
        int want = all[3 * r + 1] % all[3 * next + 2];
        partner[r] = -1;
        for (int q = 0; q < ck->size; q++)
            if (all[3 * q] == next && all[3 * q + 1] == want)
                partner[r] = q;
    }
    ck->partner = partner[ck->rank];
    ck->nsenders = 0;
    for (int r = 0; r < ck->size; r++)
        ck->nsenders += partner[r] == ck->rank;
    ck->senders = malloc(sizeof(int) * (size_t)(ck->nsenders ? ck->nsenders : 1));
    if (!ck->senders) {
        free(all);
        free(partner);
        return tio_err_set(err, TIO_E_NOMEM, "out of memory placing partner copies");
    }
    for (int r = 0, i = 0; r < ck->size; r++)
        if (partner[r] == ck->rank)
            ck->senders[i++] = r;
    free(all);
    free(partner);
    return TIO_OK;
}

/* Progress of one stream. */
struct pos {
    const struct tio_stream *s;
    int file;       /* index of the current file */
    uint64_t off;   /* bytes of it done */
    int fd;
    int opened;     /* the current file was opened (or that failed) */
    uint32_t crc;
    char *buf;
    MPI_Aint piece; /* bytes in flight this round */
};

static uint64_t size_of(const struct pos *p) { return p->s->files[p->file]->size; }

/* Close the current receive file: check it, sync it (removed on failure). */
static void finish_recv_file(struct pos *p, struct tio_err *err)
{
    const struct tio_manifest_file *f = p->s->files[p->file];
    const char *path = p->s->paths[p->file];
    int bad = p->fd < 0; /* the reason was recorded when it failed */
    if (!bad && p->crc != f->crc) {
        tio_err_set(err, TIO_E_IO,
                    "copy of rank %d's \"%s\" received from rank %d has CRC-32C %08x, the "
                    "manifest says %08x", f->rank, f->name, p->s->peer, p->crc, f->crc);
        bad = 1;
    }
    if (!bad && fsync(p->fd) < 0) {
        tio_err_errno(err, errno, "fsync of \"%s\" failed", path);
        bad = 1;
    }
    if (p->fd >= 0 && close(p->fd) < 0 && !bad) {
        tio_err_errno(err, errno, "closing \"%s\" failed", path);
        bad = 1;
    }
    if (bad)
        unlink(path);
}

/* Move a stream on to the next file with bytes left to move, opening files on the way;
 * zero-byte files of a receive stream are created and finished right here. */
static void advance(struct pos *p, int recv, struct tio_err *err)
{
    while (p->file < p->s->nfiles) {
        const char *path = p->s->paths[p->file];
        if (!p->opened) {
            p->opened = 1;
            p->fd = recv ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                         : open(path, O_RDONLY | O_CLOEXEC);
            if (p->fd < 0)
                tio_err_errno(err, errno, "cannot %s \"%s\"", recv ? "create" : "open", path);
        }
        if (p->off < size_of(p))
            return;
        if (recv)
            finish_recv_file(p, err);
        else if (p->fd >= 0)
            close(p->fd);
        p->fd = -1;
        p->opened = 0;
        p->crc = 0;
        p->off = 0;
        p->file++;
    }
}

static int done(const struct pos *p) { return p->file >= p->s->nfiles; }

/* Fill the piece to send from the file; a read failure still sends the bytes (zeros):
 * the receiver's checksum then fails, and nobody waits forever. */
static void read_piece(struct pos *q, struct tio_err *err)
{
    size_t got = 0, want = (size_t)q->piece;
    while (q->fd >= 0 && got < want) {
        ssize_t r = pread(q->fd, q->buf + got, want - got, (off_t)(q->off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                tio_err_set(err, TIO_E_IO, "\"%s\" is shorter than its manifest entry (%llu "
                            "bytes)", q->s->paths[q->file],
                            (unsigned long long)size_of(q));
            else
                tio_err_errno(err, errno, "cannot read \"%s\"", q->s->paths[q->file]);
            break;
        }
        got += (size_t)r;
    }
    memset(q->buf + got, 0, want - got);
}

int tio_partner_exchange(struct tio_ckpt *ck, int nsend, const struct tio_stream *send,
                         int nrecv, const struct tio_stream *recv, struct tio_err *err)
{
    int n = nsend + nrecv;
    struct pos *p = calloc((size_t)(n ? n : 1), sizeof *p);
    MPI_Request *req = malloc(sizeof *req * (size_t)(n ? n : 1));
    /* a real array: MPICH's MPI_STATUSES_IGNORE trips GCC's access checks */
    MPI_Status *stat = malloc(sizeof *stat * (size_t)(n ? n : 1));
    int nomem = !p || !req || !stat;
    for (int i = 0; i < n && !nomem; i++) {
        p[i].s = i < nsend ? &send[i] : &recv[i - nsend];
        p[i].fd = -1;
        p[i].buf = malloc(PIECE);
        nomem = !p[i].buf;
    }
    if (nomem) {
        /* The peers would wait for our bytes: better stop than hang. */
        tio_err_set(err, TIO_E_NOMEM, "out of memory for the partner copy buffers");
        PMPI_Abort(ck->comm, 1);
    }
    for (int i = 0; i < n; i++)
        advance(&p[i], i >= nsend, err);

    /* Rounds: one piece per stream in flight. Both ends of a stream walk the same files
     * with the same piece sizes, so pieces match in order. */
    for (;;) {
        int active = 0;
        for (int i = 0; i < n; i++) {
            struct pos *q = &p[i];
            req[i] = MPI_REQUEST_NULL;
            if (done(q))
                continue;
            uint64_t left = size_of(q) - q->off;
            q->piece = (MPI_Aint)(left < PIECE ? left : PIECE);
            if (i < nsend) {
                read_piece(q, err);
                PMPI_Isend(q->buf, (int)q->piece, MPI_BYTE, q->s->peer, TAG, ck->comm, &req[i]);
            } else {
                PMPI_Irecv(q->buf, (int)q->piece, MPI_BYTE, q->s->peer, TAG, ck->comm, &req[i]);
            }
            active++;
        }
        if (!active)
            break;
        PMPI_Waitall(n, req, stat);
        for (int i = 0; i < n; i++) {
            struct pos *q = &p[i];
            if (done(q))
                continue;
            if (i >= nsend) {
                q->crc = tio_crc32c(q->crc, q->buf, (size_t)q->piece);
                if (q->fd >= 0 && tio_pwrite_full(q->fd, q->buf, (size_t)q->piece, q->off) < 0) {
                    tio_err_errno(err, errno, "cannot write \"%s\"", q->s->paths[q->file]);
                    close(q->fd);
                    q->fd = -1;
                }
            }
            q->off += (uint64_t)q->piece;
            advance(q, i >= nsend, err);
        }
    }
    for (int i = 0; i < n; i++) {
        if (p[i].fd >= 0)
            close(p[i].fd);
        free(p[i].buf);
    }
    free(p);
    free(req);
    free(stat);
    return err->cls;
}
