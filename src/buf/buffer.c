/* Making and freeing a buffer on a tier: the memory (MPI's, NUMA-bound, or a file mapped
 * by a storage window) and the window over every process's piece. */
#include "buf/buffer.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tierio/hints.h"
#include "tierio/win.h"
#include "util/error_mpi.h"
#include "util/agree.h"

/* MPICH 4.0.2 misplaces the local base of MPI_Win_allocate windows whose size is not a
 * multiple of 16 (MACHINE.md): windows are made that much larger. */
static MPI_Aint window_size(MPI_Aint size)
{
    return (size + 15) / 16 * 16;
}

static int valid_file_name(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len > 64 || n[0] == '.')
        return 0;
    for (const char *c = n; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
            return 0;
    return 1;
}

/* What every process must pass alike. */
struct same {
    char tier[TIO_TIER_NAME_MAX];
    char name[72];
    int flags;
};

static void check_args(tio_tiers_t t, const char *tier, MPI_Aint size, const char *name,
                       int flags, struct tio_err *err)
{
    if (!t || !tier)
        tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: %s is NULL", !t ? "tiers" : "tier");
    else if (strlen(tier) >= TIO_TIER_NAME_MAX)
        tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: tier name \"%.40s...\" is too long",
                    tier);
    else if (size < 0)
        tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: size %lld is negative", (long long)size);
    else if (name && !valid_file_name(name))
        tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: name \"%.64s\": use 1-64 of "
                    "[A-Za-z0-9._-], not starting with '.'", name);
    else if (flags & ~TIO_BUF_KEEP)
        tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: unknown flags 0x%x", flags);
    else if ((flags & TIO_BUF_KEEP) && !name)
        tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: TIO_BUF_KEEP needs a name (to find the "
                    "files again)");
}

/* Rank 0's tier, name and flags against this process's. */
static void check_same(MPI_Comm comm, int rank, const char *tier, const char *name, int flags,
                       struct tio_err *err)
{
    struct same mine = {.flags = flags}, root;
    snprintf(mine.tier, sizeof mine.tier, "%s", tier ? tier : "");
    snprintf(mine.name, sizeof mine.name, "%s", name ? name : "");
    root = mine;
    PMPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, comm);
    if (err->cls == TIO_OK && rank > 0 && memcmp(&root, &mine, sizeof root))
        tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: this process passes tier \"%s\", name "
                    "\"%s\", flags %d; rank 0 passes \"%s\", \"%s\", %d: all must be the same",
                    mine.tier, mine.name, mine.flags, root.tier, root.name, root.flags);
}

/* A base name unique to this call: host and pid of rank 0, and a counter. */
static void unique_name(MPI_Comm comm, int rank, char *name, size_t len)
{
    static atomic_uint counter;
    if (rank == 0) {
        char host[64] = "";
        gethostname(host, sizeof host - 1);
        host[strcspn(host, ".")] = 0;
        snprintf(name, len, "tio-buf.%s.%ld.%u", host, (long)getpid(),
                 atomic_fetch_add(&counter, 1));
    }
    PMPI_Bcast(name, (int)len, MPI_CHAR, 0, comm);
}

static int storage_window(struct tio_buf *b, const struct tio_tier_info *info,
                          const char *name, int flags, MPI_Aint size, struct tio_err *err)
{
    MPI_Info hints = MPI_INFO_NULL;
    if (size > 0) {
        int n = snprintf(b->file, sizeof b->file, "%s/%s.%d", info->path, name, b->rank);
        struct stat st;
        if (n < 0 || (size_t)n >= sizeof b->file)
            tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: tier \"%s\": path too long", info->name);
        /* A scratch buffer removes its file at free: never someone else's. */
        else if (!(flags & TIO_BUF_KEEP) && lstat(b->file, &st) == 0)
            tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: \"%s\" exists; pass TIO_BUF_KEEP to "
                        "use its content, or another name", b->file);
        else {
            PMPI_Info_create(&hints);
            PMPI_Info_set(hints, TIO_WIN_HINT_ALLOC_TYPE, "storage");
            PMPI_Info_set(hints, TIO_WIN_HINT_FILENAME, b->file);
            PMPI_Info_set(hints, TIO_WIN_HINT_UNLINK, flags & TIO_BUF_KEEP ? "false" : "true");
        }
    }
    if (tio_agree(b->icomm, err, NULL, 0)) {
        if (hints != MPI_INFO_NULL)
            PMPI_Info_free(&hints);
        b->file[0] = 0;
        return err->cls;
    }
    int rc = tio_win_allocate(window_size(size), 1, hints, b->icomm, &b->base, &b->win);
    if (hints != MPI_INFO_NULL)
        PMPI_Info_free(&hints);
    return rc;
}

static int bound_window(struct tio_buf *b, const struct tio_tier_info *info, MPI_Aint size,
                        struct tio_err *err)
{
    char what[TIO_TIER_NAME_MAX + 32];
    snprintf(what, sizeof what, "tier \"%s\"", info->name);
    b->bound_len = (size_t)window_size(size);
    b->bound = tio_hw_alloc(b->hw, info->numa_nodes, b->bound_len, what, err);
    if (tio_agree(b->icomm, err, NULL, 0)) {
        tio_hw_free(b->hw, b->bound, b->bound_len);
        b->bound = NULL;
        return err->cls;
    }
    b->base = b->bound;
    int rc = PMPI_Win_create(b->bound, window_size(size), 1, MPI_INFO_NULL, b->icomm, &b->win);
    if (rc != MPI_SUCCESS) {
        tio_hw_free(b->hw, b->bound, b->bound_len);
        b->bound = NULL;
    }
    return rc;
}

static void release(struct tio_buf *b)
{
    if (b->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&b->comm);
    if (b->icomm != MPI_COMM_NULL)
        PMPI_Comm_free(&b->icomm);
    free(b->sizes);
    free(b);
}

/* Returns TIO_OK, or an error in err (agreed, nothing made), or *mpi_rc: an error code the
 * window call returned (agreed by that call, not raised yet). */
static int alloc(tio_tiers_t t, const char *tier, MPI_Aint size, const char *name, int flags,
                 MPI_Comm comm, tio_buf_t *out, struct tio_err *err, int *mpi_rc)
{
    struct tio_buf *b = calloc(1, sizeof *b);
    if (!b)
        return tio_err_set(err, TIO_E_NOMEM, "tio_buf_alloc: out of memory");
    b->comm = b->icomm = MPI_COMM_NULL;
    b->win = MPI_WIN_NULL;
    PMPI_Comm_dup(comm, &b->comm);
    PMPI_Comm_dup(comm, &b->icomm);
    PMPI_Comm_set_errhandler(b->icomm, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(comm, &b->rank);
    PMPI_Comm_size(comm, &b->size);
    b->sizes = malloc(sizeof(MPI_Aint) * (size_t)b->size);
    if (!b->sizes)
        tio_err_set(err, TIO_E_NOMEM, "tio_buf_alloc: out of memory");

    check_args(t, tier, size, name, flags, err);
    check_same(b->icomm, b->rank, tier, name, flags, err);
    struct tio_tier_info info = {0};
    if (err->cls == TIO_OK) {
        int idx = tio_tiers_index(t, tier);
        if (idx < 0) {
            char have[256] = "";
            for (int i = 0, used = 0; i < t->ntiers && used < 200; i++)
                used += snprintf(have + used, sizeof have - (size_t)used, "%s%s", i ? ", " : "",
                                 t->tiers[i].info.name);
            tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: %s has no tier \"%s\" (it has %s)",
                        t->host, tier, have);
        } else {
            tio_tiers_info_now(t, idx, &info);
            b->kind = info.kind;
            b->storage = info.kind == TIO_TIER_NODE_LOCAL || info.kind == TIO_TIER_GLOBAL;
            b->hw = &t->hw;
            snprintf(b->tier, sizeof b->tier, "%s", info.name);
            if ((flags & TIO_BUF_KEEP) && !b->storage)
                tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: TIO_BUF_KEEP on tier \"%s\": it is "
                            "memory (%s), nothing outlives the buffer", tier,
                            tio_tier_kind_name(info.kind));
            else if ((unsigned long long)size > info.available)
                tio_err_set(err, TIO_E_NOSPACE, "tio_buf_alloc: tier \"%s\" on %s has %llu "
                            "bytes available, %lld asked", tier, t->host, info.available,
                            (long long)size);
        }
    }
    /* One way of making the window for all: the tier of that name must be storage
     * everywhere, bound memory everywhere or MPI's memory everywhere. */
    int path[3] = {0, 0, 0};
    path[b->storage ? 0 : info.numa_nodes[0] ? 1 : 2] = err->cls == TIO_OK;
    if (tio_agree(b->icomm, err, path, 3) == TIO_OK && path[0] + path[1] + path[2] > 1)
        tio_err_set(err, TIO_E_ARG, "tio_buf_alloc: tier \"%s\" is %s on some processes' "
                    "nodes and %s on others': one buffer cannot span both", tier,
                    path[0] ? "storage" : "NUMA-bound memory",
                    path[2] ? "MPI's memory" : "NUMA-bound memory");
    if (err->cls != TIO_OK) {
        release(b);
        return err->cls;
    }

    int rc;
    char unique[72];
    if (b->storage) {
        if (!name)
            unique_name(b->icomm, b->rank, unique, sizeof unique);
        rc = storage_window(b, &info, name ? name : unique, flags, size, err);
    } else if (info.numa_nodes[0]) {
        rc = bound_window(b, &info, size, err);
    } else {
        rc = tio_win_allocate(window_size(size), 1, MPI_INFO_NULL, b->icomm, &b->base, &b->win);
    }
    if (err->cls != TIO_OK) { /* agreed: nothing was made */
        release(b);
        return err->cls;
    }
    if (rc != MPI_SUCCESS) {
        release(b);
        *mpi_rc = rc;
        return TIO_E_OTHER;
    }
    PMPI_Win_set_errhandler(b->win, MPI_ERRORS_RETURN);
    b->local_size = size;
    PMPI_Allgather(&b->local_size, 1, MPI_AINT, b->sizes, 1, MPI_AINT, b->icomm);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, b->win);
    *out = b;
    return TIO_OK;
}

int tio_buf_alloc(tio_tiers_t tiers, const char *tier, MPI_Aint size, const char *name,
                  int flags, MPI_Comm comm, tio_buf_t *buf)
{
    struct tio_err err = {0};
    if (!buf || comm == MPI_COMM_NULL) {
        tio_err_set(&err, TIO_E_ARG, "tio_buf_alloc: %s", !buf ? "buf is NULL"
                                                                : "comm is MPI_COMM_NULL");
        return tio_err_raise_comm(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, &err);
    }
    *buf = NULL;
    int mpi_rc = MPI_SUCCESS;
    if (alloc(tiers, tier, size, name, flags, comm, buf, &err, &mpi_rc) == TIO_OK)
        return MPI_SUCCESS;
    if (mpi_rc == MPI_SUCCESS)
        return tio_err_raise_comm(comm, &err);
    PMPI_Comm_call_errhandler(comm, mpi_rc);
    return mpi_rc;
}

int tio_buf_fail(struct tio_buf *b, struct tio_err *err)
{
    return tio_err_raise_comm(b ? b->comm : MPI_COMM_SELF, err);
}

int tio_buf_local(tio_buf_t b, void **base, MPI_Aint *size)
{
    struct tio_err err = {0};
    if (!b || !base || !size) {
        tio_err_set(&err, TIO_E_ARG, "tio_buf_local: buf, base or size is NULL");
        return tio_buf_fail(b, &err);
    }
    *base = b->base;
    *size = b->local_size;
    return MPI_SUCCESS;
}

int tio_buf_win(tio_buf_t b, MPI_Win *win)
{
    struct tio_err err = {0};
    if (!b || !win) {
        tio_err_set(&err, TIO_E_ARG, "tio_buf_win: buf or win is NULL");
        return tio_buf_fail(b, &err);
    }
    *win = b->win;
    return MPI_SUCCESS;
}

int tio_buf_free(tio_buf_t *buf)
{
    struct tio_err err = {0};
    if (!buf || !*buf) {
        tio_err_set(&err, TIO_E_ARG, "tio_buf_free: no buffer (NULL)");
        return tio_err_raise_comm(MPI_COMM_SELF, &err);
    }
    struct tio_buf *b = *buf;
    int rc = PMPI_Win_unlock_all(b->win);
    /* Storage: written back, then the file removed unless kept (the window's hints). */
    int rc2 = b->storage || !b->bound ? tio_win_free(&b->win) : PMPI_Win_free(&b->win);
    if (b->bound)
        tio_hw_free(b->hw, b->bound, b->bound_len);
    if (rc == MPI_SUCCESS)
        rc = rc2;
    *buf = NULL;
    if (rc != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(b->comm, rc);
    release(b);
    return rc;
}
