/* tio_ckpt_open, tio_ckpt_close, tio_ckpt_status and tio_ckpt_restart's entry: the
 * handle's life, its configuration keys, and the storage neighbourhoods. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ckpt/handle.h"
#include "tierio/topo.h"
#include "util/error_mpi.h"
#include "util/settings_mpi.h"
#include "util/log.h"
#include "util/agree.h"

#define KEY_PREFIX "tierio_ckpt_"

int tio_ckpt_raise(struct tio_ckpt *ck, const struct tio_err *err)
{
    return tio_err_raise_comm(ck->comm, err);
}

/* The checkpoint keys (util/settings.h), read once from the info of tio_ckpt_open. */
static const struct tio_key_word drain_words[] = {
    {"none", TIO_DRAIN_NONE}, {"async", TIO_DRAIN_ASYNC}, {"sync", TIO_DRAIN_SYNC}, {NULL, 0}};

/* Paths leave room for <name>/v<version>/r<rank>.<file>. */
static int dir_room(const struct tio_key *k, const char *val, void *s, const char **why,
                    char *buf, size_t len)
{
    (void)s;
    if (strlen(val) < k->size - 256)
        return 0;
    snprintf(buf, len, "longer than %zu bytes", k->size - 257);
    return *why = buf, -1;
}

#define F(m) TIO_KEY_FIELD(struct tio_ckpt_config, m)
enum { K_LOCAL, K_GLOBAL, K_PARTNER, K_KEEP, K_DRAIN, K_EVERY };
static const struct tio_key keys[] = {
    {.name = TIO_CKPT_HINT_LOCAL_DIR, .type = TIO_KEY_STRING, F(local), .parse = dir_room,
     .def_doc = "none", .values = "a directory",
     .doc = "node-local directory of the fast level (this or the global one is required)."},
    {.name = TIO_CKPT_HINT_GLOBAL_DIR, .type = TIO_KEY_STRING, F(global), .parse = dir_room,
     .def_doc = "none", .values = "a directory", .doc = "directory every process sees."},
    {.name = TIO_CKPT_HINT_PARTNER, .type = TIO_KEY_BOOL, .def = "false", F(partner),
     .values = "true | false", .doc = "copy each process's files to a process of another "
                                      "node (needs the local directory)."},
    {.name = TIO_CKPT_HINT_KEEP, .type = TIO_KEY_UINT, .def = "2", F(keep), .lo = 1, .hi = 1000000,
     .values = "1 .. 1000000", .doc = "complete versions kept per level."},
    {.name = TIO_CKPT_HINT_DRAIN, .type = TIO_KEY_CHOICE, F(drain), .words = drain_words,
     .def_doc = "async with both directories, else none", .values = "async | sync | none",
     .doc = "copy the local level to the global one in the background, at commit, or not."},
    {.name = TIO_CKPT_HINT_DRAIN_EVERY, .type = TIO_KEY_UINT, .def = "1", F(drain_every), .lo = 1,
     .hi = 1000000000, .values = "k >= 1", .doc = "drain every k-th commit."},
};
#undef F

TIO_SETTINGS_TABLE(tio_ckpt_keys, 40, "checkpointing", "ckpt.md", keys, struct tio_ckpt_config)


static int check_dir(const char *key, const char *dir, struct tio_err *err)
{
    struct stat st;
    if (stat(dir, &st) < 0)
        return tio_err_errno(err, errno, "%s=\"%s\"", key, dir);
    if (!S_ISDIR(st.st_mode))
        return tio_err_set(err, TIO_E_NOENT, "%s=\"%s\" is not a directory", key, dir);
    return TIO_OK;
}

static int parse_config(MPI_Info info, struct tio_ckpt_config *c, struct tio_err *err)
{
    enum tio_key_from from[sizeof keys / sizeof *keys];
    memset(c, 0, sizeof *c);
    if (info == MPI_INFO_NULL)
        return tio_err_set(err, TIO_E_INFO_KEY, "info must give " TIO_CKPT_HINT_LOCAL_DIR " or "
                           TIO_CKPT_HINT_GLOBAL_DIR " (or both)");
    /* A key with our prefix that we do not know is a typo: say so. */
    if (tio_settings_unknown(&tio_ckpt_keys, info, KEY_PREFIX, err) ||
        tio_settings_from_info(&tio_ckpt_keys, c, info, 0, from, err))
        return err->cls;
    if (!c->local[0] && !c->global[0])
        return tio_err_set(err, TIO_E_INFO_KEY, "info must give " TIO_CKPT_HINT_LOCAL_DIR " or "
                           TIO_CKPT_HINT_GLOBAL_DIR " (or both)");
    int both = c->local[0] && c->global[0];
    if (!from[K_DRAIN])
        c->drain = both ? TIO_DRAIN_ASYNC : TIO_DRAIN_NONE;
    else if (c->drain != TIO_DRAIN_NONE && !both)
        return tio_err_set(err, TIO_E_INFO_KEY, TIO_CKPT_HINT_DRAIN "=%s needs both "
                           TIO_CKPT_HINT_LOCAL_DIR " and " TIO_CKPT_HINT_GLOBAL_DIR,
                           c->drain == TIO_DRAIN_SYNC ? "sync" : "async");
    if (c->partner && !c->local[0])
        return tio_err_set(err, TIO_E_INFO_KEY, TIO_CKPT_HINT_PARTNER "=true needs "
                           TIO_CKPT_HINT_LOCAL_DIR);
    if (c->local[0] && check_dir(TIO_CKPT_HINT_LOCAL_DIR, c->local, err))
        return err->cls;
    if (c->global[0] && check_dir(TIO_CKPT_HINT_GLOBAL_DIR, c->global, err))
        return err->cls;
    return TIO_OK;
}

/* Every process must have asked for the same thing: compare with rank 0's. */
static void check_same(MPI_Comm comm, const char *name, const struct tio_ckpt_config *c,
                       struct tio_err *err)
{
    static char mine[2 * PATH_MAX + 256], root[sizeof mine];
    snprintf(mine, sizeof mine, "name=%s local=%s global=%s partner=%d keep=%d drain=%d "
             "every=%d", name, c->local, c->global, c->partner, c->keep, (int)c->drain,
             c->drain_every);
    memcpy(root, mine, sizeof root);
    PMPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, comm);
    if (strcmp(mine, root))
        tio_err_set(err, TIO_E_ARG, "the processes passed different checkpoint names or "
                    "info values (this one: %.180s; rank 0's: %.180s)", mine, root);
}

static void free_handle(struct tio_ckpt *ck)
{
    if (!ck)
        return;
    if (ck->nbhd != MPI_COMM_NULL)
        PMPI_Comm_free(&ck->nbhd);
    if (ck->drain_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&ck->drain_comm);
    if (ck->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&ck->comm);
    free(ck->senders);
    free(ck->files);
    tio_manifest_free(&ck->man);
    free(ck);
}

int tio_ckpt_open(MPI_Comm comm, const char *name, MPI_Info info, tio_ckpt_t *ckpt)
{
    struct tio_err err;
    tio_err_clear(&err);
    if (comm == MPI_COMM_NULL) {
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_open: comm is MPI_COMM_NULL");
        return tio_err_raise_comm(MPI_COMM_WORLD, &err);
    }
    struct tio_ckpt *ck = calloc(1, sizeof *ck);
    if (ck)
        ck->comm = ck->nbhd = ck->drain_comm = MPI_COMM_NULL;
    if (!ckpt)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_open: ckpt must not be NULL");
    else if (!ck)
        tio_err_set(&err, TIO_E_NOMEM, "tio_ckpt_open: out of memory");
    else {
        *ckpt = NULL;
        ck->partner = -1;
        ck->last_version = ck->local_complete = ck->global_complete = -1;
        PMPI_Comm_rank(comm, &ck->rank);
        PMPI_Comm_size(comm, &ck->size);
        if (tio_ckpt_check_name(name, "tio_ckpt_open: name", &err) == TIO_OK) {
            tio_ckpt_copy_name(ck->name, name);
            parse_config(info, &ck->cfg, &err);
        }
    }
    if (tio_agree(comm, &err, NULL, 0) == TIO_OK)
        check_same(comm, ck->name, &ck->cfg, &err);
    if (tio_agree(comm, &err, NULL, 0) != TIO_OK) {
        free_handle(ck);
        return tio_err_raise_comm(comm, &err);
    }

    PMPI_Comm_dup(comm, &ck->comm);
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    ck->thread_multiple = provided == MPI_THREAD_MULTIPLE;
    if (ck->thread_multiple && ck->cfg.drain != TIO_DRAIN_NONE)
        PMPI_Comm_dup(comm, &ck->drain_comm);
    if (ck->cfg.local[0])
        tio_ckpt_set_path(ck->local_set, sizeof ck->local_set, ck->cfg.local, ck->name);
    if (ck->cfg.global[0])
        tio_ckpt_set_path(ck->global_set, sizeof ck->global_set, ck->cfg.global, ck->name);

    if (ck->cfg.local[0]) {
        /* The storage neighbourhoods: who writes a node's manifest, where partners go. */
        int rc = tio_comm_split_neighborhood(ck->comm, ck->cfg.local, ck->rank, MPI_INFO_NULL,
                                             &ck->nbhd);
        if (rc != MPI_SUCCESS) {
            char s[MPI_MAX_ERROR_STRING];
            int l = 0;
            PMPI_Error_string(rc, s, &l);
            tio_err_wrap(&err, TIO_E_OTHER, s, "splitting by " TIO_CKPT_HINT_LOCAL_DIR "=\"%s\" "
                         "failed", ck->cfg.local);
        } else if (ck->nbhd == MPI_COMM_NULL) {
            tio_err_set(&err, TIO_E_NOENT, TIO_CKPT_HINT_LOCAL_DIR "=\"%s\": this process cannot "
                        "use the directory", ck->cfg.local);
        } else {
            PMPI_Comm_rank(ck->nbhd, &ck->nbhd_rank);
        }
        if (tio_agree(ck->comm, &err, NULL, 0) == TIO_OK && ck->cfg.partner)
            tio_partner_setup(ck, &err);
    }
    if (err.cls == TIO_OK && ck->cfg.local[0])
        tio_ckpt_mkdirs(ck->local_set, &err);
    if (err.cls == TIO_OK && ck->cfg.global[0])
        tio_ckpt_mkdirs(ck->global_set, &err);
    if (tio_agree(ck->comm, &err, NULL, 0) != TIO_OK) {
        free_handle(ck);
        return tio_err_raise_comm(comm, &err);
    }
    if (ck->cfg.partner)
        TIO_DEBUG("checkpoint \"%s\": partner copies go to rank %d; %d process(es) send "
                  "theirs here", ck->name, ck->partner, ck->nsenders);
    *ckpt = ck;
    return MPI_SUCCESS;
}

int tio_ckpt_status(tio_ckpt_t ck, long long *local_version, long long *global_version)
{
    if (!ck) {
        struct tio_err err;
        tio_err_clear(&err);
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_status: ckpt is NULL");
        return tio_err_raise_comm(MPI_COMM_WORLD, &err);
    }
    tio_drain_poll(ck);
    if (local_version)
        *local_version = ck->local_complete;
    if (global_version)
        *global_version = ck->global_complete;
    return MPI_SUCCESS;
}

int tio_ckpt_restart(tio_ckpt_t ck, long long *version, int *level)
{
    struct tio_err err;
    tio_err_clear(&err);
    if (!ck) {
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_restart: ckpt is NULL");
        return tio_err_raise_comm(MPI_COMM_WORLD, &err);
    }
    if (!version || !level)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_restart: version and level must not be NULL");
    else if (ck->last_version >= 0)
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_restart: checkpoint \"%s\" has already begun "
                    "or restarted version %lld; restart comes first", ck->name,
                    ck->last_version);
    if (tio_agree(ck->comm, &err, NULL, 0) == TIO_OK)
        tio_ckpt_do_restart(ck, version, level, &err);
    return tio_ckpt_raise(ck, &err);
}

int tio_ckpt_close(tio_ckpt_t *ckpt)
{
    struct tio_err err;
    tio_err_clear(&err);
    if (!ckpt || !*ckpt) {
        tio_err_set(&err, TIO_E_ARG, "tio_ckpt_close: ckpt is NULL");
        return tio_err_raise_comm(MPI_COMM_WORLD, &err);
    }
    struct tio_ckpt *ck = *ckpt;
    tio_drain_settle(ck);
    if (ck->phase == TIO_PHASE_WRITING) {
        /* Uncommitted: every process has stopped writing once all are here. */
        struct tio_err rerr;
        tio_err_clear(&rerr);
        PMPI_Barrier(ck->comm);
        if (ck->cfg.local[0] && ck->nbhd_rank == 0)
            tio_ckpt_remove_version(ck->local_set, ck->version, &rerr);
        if (!ck->cfg.local[0] && ck->rank == 0)
            tio_ckpt_remove_version(ck->global_set, ck->version, &rerr);
        if (rerr.cls)
            TIO_WARN("checkpoint \"%s\": removing uncommitted version %lld: %s", ck->name,
                     ck->version, rerr.msg);
    }
    err = ck->drain_err;
    /* Raise through a communicator that outlives the handle, with the same handler. */
    MPI_Comm user = MPI_COMM_NULL;
    if (err.cls != TIO_OK)
        PMPI_Comm_dup(ck->comm, &user);
    free_handle(ck);
    *ckpt = NULL;
    int code = MPI_SUCCESS;
    if (user != MPI_COMM_NULL) {
        code = tio_err_raise_comm(user, &err);
        PMPI_Comm_free(&user);
    }
    return code;
}
