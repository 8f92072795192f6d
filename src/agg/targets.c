/* Where the data goes, besides the shared file: the aggregation groups of subfile and
 * node-local targets, their data directories and data files, and the manifest's reading
 * and writing (src/agg/handle.h describes the groups). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agg/handle.h"
#include "tierio/net.h"
#include "util/agree.h"
#include "util/fileio.h"

/* The aggregation groups (see handle.h): everybody for the target file; the nodes of one
 * data file for subfiles (subfiling nodes each) and node-local storage (one node each). */
int tio_agg_make_groups(struct tio_agg *a, struct tio_err *err)
{
    int k = a->set.target == TIO_AGG_TARGET_SUBFILES ? a->set.subfiling : 1;
    int grouped = a->set.target != TIO_AGG_TARGET_FILE;
    a->grp.ngroups = grouped ? (a->nnodes + k - 1) / k : 1;
    a->grp.group_of = malloc(sizeof *a->grp.group_of * (size_t)a->size);
    a->grp.gworld = malloc(sizeof *a->grp.gworld * (size_t)a->size);
    a->grp.gnode_of = malloc(sizeof *a->grp.gnode_of * (size_t)a->size);
    int *seen = calloc((size_t)a->nnodes, sizeof *seen);
    if (!a->grp.group_of || !a->grp.gworld || !a->grp.gnode_of || !seen) {
        free(seen);
        return tio_err_set(err, TIO_E_NOMEM, "tio_agg_open: out of memory");
    }
    a->grp.group = 0;
    for (int r = 0; r < a->size; r++) {
        a->grp.group_of[r] = grouped ? a->node_of[r] / k : 0;
        if (r == a->rank)
            a->grp.group = a->grp.group_of[r];
    }
    /* Nodes are numbered again within the group, in the order of their lowest ranks. */
    for (int n = 0; n < a->nnodes; n++)
        seen[n] = -1;
    a->grp.gsize = a->grp.gnnodes = 0;
    for (int r = 0; r < a->size; r++) {
        if (a->grp.group_of[r] != a->grp.group)
            continue;
        if (r == a->rank)
            a->grp.grank = a->grp.gsize;
        if (seen[a->node_of[r]] < 0)
            seen[a->node_of[r]] = a->grp.gnnodes++;
        a->grp.gnode_of[a->grp.gsize] = seen[a->node_of[r]];
        a->grp.gworld[a->grp.gsize++] = r;
    }
    free(seen);
    if (a->grp.ngroups == 1) {
        a->grp.gcomm = a->icomm;
        return TIO_OK;
    }
    if (PMPI_Comm_split(a->icomm, a->grp.group, a->rank, &a->grp.gcomm) != MPI_SUCCESS) {
        a->grp.gcomm = MPI_COMM_NULL;
        return tio_err_set(err, TIO_E_OTHER, "tio_agg_open: MPI_Comm_split failed");
    }
    PMPI_Comm_set_errhandler(a->grp.gcomm, MPI_ERRORS_RETURN);
    return TIO_OK;
}

/* The tier a node-local target names ("" = the node's first node-local tier): 1 and *t
 * when this node has it. */
int tio_agg_find_target_tier(const struct tio_agg *a, struct tio_tier_info *t)
{
    int n = 0;
    tio_tiers_count(a->tiers, &n);
    for (int i = 0; i < n; i++) {
        if (tio_tiers_get(a->tiers, i, t) != MPI_SUCCESS)
            continue;
        if (a->set.target_tier[0] ? !strcmp(t->name, a->set.target_tier)
                                  : t->kind == TIO_TIER_NODE_LOCAL)
            return 1;
    }
    return 0;
}

/* The directory of this process's data files (subfiles, node-local). */
void tio_agg_data_dir(struct tio_agg *a, struct tio_err *err)
{
    if (a->set.target == TIO_AGG_TARGET_SUBFILES) {
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", a->path);
        snprintf(a->tgt.data_dir, sizeof a->tgt.data_dir, "%s", dirname(tmp));
        return;
    }
    struct tio_tier_info t;
    if (tio_agg_find_target_tier(a, &t)) {
        if (t.kind != TIO_TIER_NODE_LOCAL)
            tio_err_set(err, TIO_E_INFO_VALUE, "%s = %s: tier \"%s\" is %s, not "
                        "node-local storage", TIO_AGG_HINT_TARGET_TIER,
                        a->set.target_tier, t.name, tio_tier_kind_name(t.kind));
        else
            snprintf(a->tgt.data_dir, sizeof a->tgt.data_dir, "%s", t.path);
        return;
    }
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    if (a->set.target_tier[0])
        tio_err_set(err, TIO_E_INFO_VALUE, "%s = %s: %s has no such tier (tiers come from the "
                    "site file, $TIERIO_SITE)", TIO_AGG_HINT_TARGET_TIER, a->set.target_tier,
                    host);
    else
        tio_err_set(err, TIO_E_INFO_KEY, "%s = node-local: %s has no node-local tier (give "
                    "one in the site file, $TIERIO_SITE)", TIO_AGG_HINT_TARGET, host);
}

/* The manifest: the one in the file (rank 0 read it), or a new one. */
void tio_agg_load_manifest(struct tio_agg *a, char *text, struct tio_err *err)
{
    long len = text ? (long)strlen(text) + 1 : 0;
    PMPI_Bcast(&len, 1, MPI_LONG, 0, a->icomm);
    if (len > 0 && a->rank != 0 && !(text = malloc((size_t)len)))
        tio_err_set(err, TIO_E_NOMEM, "tio_agg_open: out of memory");
    if (tio_agree(a->icomm, err, NULL, 0)) {
        if (a->rank != 0)
            free(text);
        return;
    }
    if (len > 0) {
        PMPI_Bcast(text, (int)len, MPI_CHAR, 0, a->icomm);
        tio_agg_manifest_parse(&a->tgt.manifest, text, a->path, err);
        if (err->cls == TIO_OK &&
            a->tgt.manifest.node_local != (a->set.target == TIO_AGG_TARGET_NODE_LOCAL))
            tio_err_set(err, TIO_E_INFO_VALUE, "\"%s\" lists data on %s, but %s is %s",
                        a->path, a->tgt.manifest.node_local ? "node-local storage" : "subfiles",
                        TIO_AGG_HINT_TARGET, tio_agg_target_name(a->set.target));
        if (a->rank != 0)
            free(text);
    } else {
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", a->path);
        tio_agg_manifest_init(&a->tgt.manifest, a->set.target == TIO_AGG_TARGET_NODE_LOCAL,
                              basename(tmp), 0, NULL, err);
        a->tgt.manifest.dirty = 1; /* written at the first sync, even if empty */
    }
    a->tgt.have_manifest = err->cls == TIO_OK || a->tgt.manifest.files != NULL;
}

/* Each group's data file in the manifest: subfile g for group g; node-local, the file of
 * the group's node (found by host name in a manifest read back, else a new one). */
int tio_agg_group_files(struct tio_agg *a, struct tio_err *err)
{
    struct tio_agg_manifest *m = &a->tgt.manifest;
    a->grp.file_of_group = malloc(sizeof *a->grp.file_of_group * (size_t)a->grp.ngroups);
    if (!a->grp.file_of_group)
        return tio_err_set(err, TIO_E_NOMEM, "tio_agg_open: out of memory");
    for (int g = 0; g < a->grp.ngroups; g++) {
        char host[TIO_AGG_HOST_MAX] = "";
        int want = g, leader = 0, node;
        if (a->set.target == TIO_AGG_TARGET_NODE_LOCAL) {
            while (a->grp.group_of[leader] != g)
                leader++;
            tio_net_node(a->tiers, leader, &node, host, sizeof host);
            want = -1;
            for (int f = 0; f < m->nfiles && want < 0; f++)
                if (!strcmp(m->files[f].host, host))
                    want = f;
            if (want < 0)
                want = m->nfiles;
        }
        if (want >= m->nfiles) {
            struct tio_agg_mfile *f = realloc(m->files, sizeof *f * (size_t)(want + 1));
            if (!f)
                return tio_err_set(err, TIO_E_NOMEM, "tio_agg_open: out of memory");
            for (int i = m->nfiles; i <= want; i++) {
                memset(&f[i], 0, sizeof f[i]);
                snprintf(f[i].host, sizeof f[i].host, "%s", host);
            }
            m->files = f;
            m->nfiles = want + 1;
            m->dirty = 1;
        }
        a->grp.file_of_group[g] = want;
    }
    return TIO_OK;
}

/* Write the manifest: durably replaced (util/fileio.h), so that it is never seen half
 * written and the new one survives a crash once this returns. */
void tio_agg_save_manifest(struct tio_agg *a, struct tio_err *err)
{
    char *text = NULL;
    size_t len = 0;
    if (!tio_agg_manifest_format(&a->tgt.manifest, &text, &len, err))
        tio_replace_file(a->path, text, len, 0666, err);
    free(text);
}
