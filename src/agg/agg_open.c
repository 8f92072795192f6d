/* tio_agg_open and tio_agg_close (the placement of the aggregators is in place.c). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agg/handle.h"
#include "agg/mpierr.h"
#include "tier/tier_env.h"
#include "tierio/net.h"
#include "util/error_mpi.h"
#include "util/log.h"
#include "util/agree.h"
#include "util/node.h"

#define SUPPORTED_MODES (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | \
                         MPI_MODE_CREATE | MPI_MODE_EXCL)

int tio_agg_raise(struct tio_agg *a, const struct tio_err *err)
{
    return tio_err_raise_comm(a ? a->comm : MPI_COMM_SELF, err);
}

/* A site file is named (TIERIO_SITE), or its variable is wrong: either way the tiers
 * handle must be opened, to use it or to say what is wrong with it. */
static int site_given(void)
{
    struct tio_tier_env e;
    struct tio_err ignore = {0};
    return tio_tier_env(&e, &ignore) != TIO_OK || e.site[0];
}

static int check_amode(int amode, int *oflags, struct tio_err *err)
{
    int access = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0) +
                 (amode & MPI_MODE_RDWR ? 1 : 0);
    if (access != 1)
        return tio_err_set(err, TIO_E_ARG, "tio_agg_open: amode 0x%x must have exactly one "
                           "of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR", amode);
    if (amode & ~SUPPORTED_MODES)
        return tio_err_set(err, TIO_E_ARG, "tio_agg_open: amode 0x%x: only MPI_MODE_RDONLY, "
                           "WRONLY, RDWR, CREATE and EXCL are supported", amode);
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return tio_err_set(err, TIO_E_ARG, "tio_agg_open: amode 0x%x: MPI_MODE_CREATE and "
                           "MPI_MODE_EXCL need write access", amode);
    *oflags = amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
    return TIO_OK;
}

/* Rank 0 opens (and with MPI_MODE_CREATE creates) the shared file or the manifest, so that
 * access errors show at open; returns the file system's block size in *blk and, for a
 * manifest, its content in *text. */
static void probe_target(struct tio_agg *a, int *created, int64_t *blk, char **text,
                         struct tio_err *err)
{
    int flags = a->oflags;
    if (a->amode & MPI_MODE_CREATE)
        flags |= O_CREAT;
    if (a->amode & MPI_MODE_EXCL)
        flags |= O_EXCL;
    struct stat st;
    int existed = stat(a->path, &st) == 0;
    int fd = open(a->path, flags | O_CLOEXEC, 0666);
    if (fd < 0) {
        tio_err_errno(err, errno, "tio_agg_open: \"%s\"", a->path);
        return;
    }
    *created = !existed;
    if (fstat(fd, &st) == 0)
        *blk = st.st_blksize > 0 ? st.st_blksize : 4096;
    close(fd);
    /* A manifest is read whatever the access mode: writes add to what it lists. */
    if (a->set.target != TIO_AGG_TARGET_FILE && (fd = open(a->path, O_RDONLY | O_CLOEXEC)) >= 0) {
        if (fstat(fd, &st) == 0 && st.st_size > 0) {
            *text = malloc((size_t)st.st_size + 1);
            if (!*text)
                tio_err_set(err, TIO_E_NOMEM, "tio_agg_open: out of memory");
            else if (!tio_agg_pread_all(fd, *text, st.st_size, 0, a->path, err))
                (*text)[st.st_size] = 0;
        }
        close(fd);
    }
}

static void release(struct tio_agg *a)
{
    if (a->own_fd >= 0)
        close(a->own_fd);
    for (int i = 0; i < a->naccess; i++)
        tio_agg_access_free(&a->access[i]);
    free(a->access);
    if (a->route_free)
        a->route_free(a->route);
    free(a->gather_counts);
    free(a->gather_displs);
    free(a->gather_first);
    if (a->tgt.have_manifest)
        tio_agg_manifest_free(&a->tgt.manifest);
    if (a->strategy && a->strategy->release)
        a->strategy->release(a);
    free(a->place.rank);
    free(a->place.tier);
    free(a->place.cost);
    free(a->place.window);
    tio_agg_checks_free(a);
    if (a->nr.vcomm != MPI_COMM_NULL)
        PMPI_Comm_free(&a->nr.vcomm);
    free(a->nr.node_granks);
    free(a->nr.node_first);
    free(a->dom_node);
    free(a->nr.node_ndom);
    free(a->nr.span);
    free(a->node_of);
    free(a->grp.group_of);
    free(a->grp.gworld);
    free(a->grp.gnode_of);
    free(a->grp.file_of_group);
    free(a->tgt.journal.ext);
    free(a->tgt.xch);
    if (a->grp.gcomm != MPI_COMM_NULL && a->grp.gcomm != a->icomm)
        PMPI_Comm_free(&a->grp.gcomm);
    if (a->nr.nodecomm != MPI_COMM_NULL)
        PMPI_Comm_free(&a->nr.nodecomm);
    if (a->tiers)
        tio_tiers_close(&a->tiers);
    if (a->icomm != MPI_COMM_NULL)
        PMPI_Comm_free(&a->icomm);
    if (a->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&a->comm);
    free(a);
}

/* A handle with its own communicators and nothing else yet; NULL: out of memory. */
static struct tio_agg *new_handle(MPI_Comm comm, int amode)
{
    struct tio_agg *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->comm = a->icomm = a->grp.gcomm = a->nr.nodecomm = a->nr.vcomm = MPI_COMM_NULL;
    a->my_domain = -1;
    a->own_fd = -1;
    a->nr.node_regime = 1; /* until an access needs more */
    PMPI_Comm_dup(comm, &a->comm);
    PMPI_Comm_dup(comm, &a->icomm);
    PMPI_Comm_set_errhandler(a->icomm, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(comm, &a->rank);
    PMPI_Comm_size(comm, &a->size);
    a->amode = amode;
    return a;
}

/* The path, the access mode, the settings and their strategy, checked locally; then the
 * settings compared with rank 0's (collective, not agreed). */
static void take_arguments(struct tio_agg *a, const char *path, int amode,
                           const struct tio_agg_settings *set, struct tio_err *err)
{
    if (!path)
        tio_err_set(err, TIO_E_ARG, "tio_agg_open: path is NULL");
    else if (strlen(path) >= sizeof a->path - 16)
        tio_err_set(err, TIO_E_ARG, "tio_agg_open: path \"%.64s...\" is too long", path);
    else
        snprintf(a->path, sizeof a->path, "%s", path);
    if (err->cls == TIO_OK)
        check_amode(amode, &a->oflags, err);
    a->set = *set;
    if (err->cls == TIO_OK) {
        a->strategy = tio_agg_strategy_find(a->set.strategy);
        if (!a->strategy)
            tio_err_set(err, TIO_E_INFO_VALUE, "hint %s=\"%s\" is invalid: no such strategy "
                        "(there are %s; also environment variable TIERIO_AGG_STRATEGY)",
                        TIO_AGG_HINT_STRATEGY, a->set.strategy, tio_agg_strategy_names());
    }
    /* Every process must ask for the same thing. */
    struct tio_agg_settings root = a->set;
    PMPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, a->icomm);
    if (err->cls == TIO_OK && memcmp(&root, &a->set, sizeof root) != 0)
        tio_err_set(err, TIO_E_INFO_VALUE, "tio_agg_open: the aggregation settings of this "
                    "process differ from rank 0's (info and environment must agree)");
}

/* The tiers handle (hwloc, the site file) costs most of an open: only when something
 * needs it. Plain DRAM without a site file needs only the nodes. (Agreed with the
 * errors: one collective.) */
static int open_tiers_if_needed(struct tio_agg *a, struct tio_err *err)
{
    int need_tiers[1] = {err->cls == TIO_OK &&
                         (strcmp(a->strategy->name, "default") != 0 ||
                          (a->set.tier[0] && strcmp(a->set.tier, "dram") != 0) ||
                          a->set.target == TIO_AGG_TARGET_NODE_LOCAL ||
                          site_given())};
    if (tio_agree(a->icomm, err, need_tiers, 1))
        return err->cls;
    if (need_tiers[0]) {
        int rc = tio_tiers_open(a->icomm, NULL, &a->tiers);
        if (rc != MPI_SUCCESS) {
            a->tiers = NULL;
            return tio_agg_err_from_mpi(rc, err, "tio_agg_open: discovering the tiers");
        }
        tio_net_nodes(a->tiers, &a->nnodes);
    }
    return TIO_OK;
}

/* Each process's node (from the tiers handle if open) and the declarations' gather
 * buffers. Local. */
static void number_nodes(struct tio_agg *a, struct tio_err *err)
{
    a->node_of = malloc(sizeof *a->node_of * (size_t)a->size);
    a->gather_counts = malloc(sizeof(int) * (size_t)a->size);
    a->gather_displs = malloc(sizeof(int) * (size_t)a->size);
    a->gather_first = malloc(sizeof(int64_t) * 3 * (size_t)a->size);
    if (!a->node_of || !a->gather_counts || !a->gather_displs || !a->gather_first)
        tio_err_set(err, TIO_E_NOMEM, "tio_agg_open: out of memory");
    if (a->tiers)
        for (int r = 0; a->node_of && r < a->size; r++)
            tio_net_node(a->tiers, r, &a->node_of[r], NULL, 1);
    else if (a->node_of) /* without the tiers handle: the same numbering (util/node.h) */
        tio_node_numbers(a->icomm, MPI_COMM_NULL, a->node_of, &a->nnodes, err);
}

/* Rank 0 probes the target (creating it if asked); every process learns whether it was
 * created and the alignment, and for subfiles and node-local targets reads the manifest
 * and opens its group's files. Agreed. */
static int open_target(struct tio_agg *a, int *created, struct tio_err *err)
{
    int64_t blk = 4096;
    char *text = NULL;
    if (a->rank == 0)
        probe_target(a, created, &blk, &text, err);
    /* Rank 0's answers travel with the agreement (the others give 0). */
    int flags[2] = {*created, a->rank == 0 ? (int)(blk < INT_MAX ? blk : 4096) : 0};
    tio_agree(a->icomm, err, flags, 2);
    *created = flags[0];
    blk = flags[1];
    if (err->cls != TIO_OK) {
        free(text);
        return err->cls;
    }
    a->align = a->set.align ? (int64_t)a->set.align : blk;
    if ((uint64_t)a->align > a->set.buffer_size)
        a->align = (int64_t)a->set.buffer_size;
    if (a->set.target != TIO_AGG_TARGET_FILE) {
        tio_agg_load_manifest(a, text, err);
        if (a->rank == 0)
            free(text);
        if (err->cls == TIO_OK)
            tio_agg_group_files(a, err);
        if (tio_agree(a->icomm, err, NULL, 0))
            return err->cls;
    } else {
        free(text);
    }
    return TIO_OK;
}

static int open_handle(MPI_Comm comm, const char *path, int amode,
                       const struct tio_agg_settings *set, struct tio_agg **out, int *created,
                       struct tio_err *err)
{
    struct tio_agg *a = *out = new_handle(comm, amode);
    if (!a)
        return tio_err_set(err, TIO_E_NOMEM, "tio_agg_open: out of memory");
    take_arguments(a, path, amode, set, err);
    if (open_tiers_if_needed(a, err))
        return err->cls;
    number_nodes(a, err);
    if (err->cls == TIO_OK && tio_agg_make_groups(a, err) == TIO_OK &&
        a->set.target != TIO_AGG_TARGET_FILE)
        tio_agg_data_dir(a, err);
    if (tio_agree(a->icomm, err, NULL, 0) || open_target(a, created, err))
        return err->cls;
    if (!a->strategy->needs_access)
        return tio_agg_place(a, NULL, err);
    return TIO_OK;
}

int tio_agg_open_err(MPI_Comm comm, const char *path, int amode,
                     const struct tio_agg_settings *set, struct tio_agg **out,
                     struct tio_err *err)
{
    struct tio_agg *a = NULL;
    int created = 0;
    *out = NULL;
    if (open_handle(comm, path, amode, set, &a, &created, err) == TIO_OK) {
        *out = a;
        return TIO_OK;
    }
    /* Agreed failure: undo everything, including a file this call created. */
    if (a && a->rank == 0 && created)
        unlink(a->path);
    if (a)
        release(a);
    return err->cls;
}

int tio_agg_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, tio_agg_t *agg)
{
    struct tio_err err = {0};
    if (!agg || comm == MPI_COMM_NULL) {
        tio_err_set(&err, TIO_E_ARG, "tio_agg_open: %s", !agg ? "agg is NULL"
                                                            : "comm is MPI_COMM_NULL");
        return tio_err_raise_comm(comm == MPI_COMM_NULL ? MPI_COMM_SELF : comm, &err);
    }
    /* Parsed here, once; a parse error goes down with err and is agreed at open. */
    struct tio_agg_settings set;
    tio_agg_settings_from(&set, info, &err);
    if (tio_agg_open_err(comm, path, amode, &set, agg, &err))
        return tio_err_raise_comm(comm, &err);
    return MPI_SUCCESS;
}

int tio_agg_do_sync(struct tio_agg *a, struct tio_err *err)
{
    tio_agg_settle(a, 1, err); /* every check under way */
    /* Subfiles, node-local: the groups' extents first, so that the writer has the whole
     * manifest while the aggregators make their data durable. */
    if (a->set.target != TIO_AGG_TARGET_FILE && a->tgt.wrote)
        tio_agg_exchange(a, err);
    /* The last process writes it: with one aggregator per node (the lowest process) it is
     * not an aggregator when its node has two processes, so the manifest's fdatasync runs
     * beside the data's. */
    if (a->set.target != TIO_AGG_TARGET_FILE && a->tgt.manifest.dirty && a->oflags != O_RDONLY) {
        if (a->rank == a->size - 1 && err->cls == TIO_OK)
            tio_agg_save_manifest(a, err);
        a->tgt.manifest.dirty = 0;
    }
    if (a->drv_open)
        a->drv.ops->sync(&a->drv, err);
    /* What the writes and reads since the last sync did on the other processes (in the
     * node regime a call's outcome reaches only its node): a process none of whose calls
     * failed learns of the lowest rank's failure, or that the processes did not all work
     * on the same accesses. One that saw a failure was told then. */
    struct tio_err late = a->late;
    int saw = late.cls != TIO_OK;
    uint64_t h = a->call_hash;
    int flags[5] = {saw ? a->size - a->rank : 0, (int)(h & 0x7fffffff), -(int)(h & 0x7fffffff),
                    (int)(h >> 33), -(int)(h >> 33)};
    tio_err_clear(&a->late);
    a->call_hash = 0;
    if (tio_agree(a->icomm, err, flags, 5))
        return err->cls;
    if (flags[0] > 0) {
        tio_share_error(a->icomm, a->size - flags[0], &late);
        if (!saw)
            tio_err_set(err, late.cls, "a write or read since the last sync failed on %s",
                        late.msg);
    } else if (flags[1] != -flags[2] || flags[3] != -flags[4]) {
        tio_err_set(err, TIO_E_ARG, "the processes passed different accesses to their writes "
                    "and reads since the last sync (every process passes the same)");
    }
    return err->cls;
}

int tio_agg_sync(tio_agg_t a)
{
    struct tio_err err = {0};
    if (!a) {
        tio_err_set(&err, TIO_E_ARG, "tio_agg_sync: agg is NULL");
        return tio_agg_raise(NULL, &err);
    }
    if (tio_agg_do_sync(a, &err))
        return tio_agg_raise(a, &err);
    return MPI_SUCCESS;
}

int tio_agg_close_err(struct tio_agg *a, struct tio_err *err)
{
    tio_agg_do_sync(a, err);
    if (a->io)
        tio_agg_io_stop(a->io);
    if (a->drv_open)
        a->drv.ops->close(&a->drv);
    if (a->placed)
        tio_agg_buffers_free(&a->bufs, err);
    tio_agree(a->icomm, err, NULL, 0);
    release(a);
    return err->cls;
}

int tio_agg_close(tio_agg_t *agg)
{
    struct tio_err err = {0};
    if (!agg || !*agg) {
        tio_err_set(&err, TIO_E_ARG, "tio_agg_close: no handle (NULL)");
        return tio_agg_raise(NULL, &err);
    }
    struct tio_agg *a = *agg;
    *agg = NULL;
    /* The error handler outlives the handle. */
    MPI_Comm comm;
    PMPI_Comm_dup(a->comm, &comm);
    int rc = MPI_SUCCESS;
    if (tio_agg_close_err(a, &err))
        rc = tio_err_raise_comm(comm, &err);
    PMPI_Comm_free(&comm);
    return rc;
}
