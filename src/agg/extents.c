/* Subfile and node-local targets: the group's runs placed in its data file (manifest and
 * journal), and the journals exchanged among the groups at a sync. */
#include <stdlib.h>
#include <string.h>

#include "agg/handle.h"
#include "util/agree.h"

/* Subfiles and node-local: the group's data goes to the group's data file, run by run
 * (the holes between them may be other groups' data), in the manifest and in the journal
 * the other groups will learn it from. */
int tio_agg_place_extents(struct tio_agg *a, const struct tio_agg_plan *p, struct tio_err *err)
{
    struct tio_agg_journal *j = &a->tgt.journal;
    int file = a->grp.file_of_group[a->grp.group];
    for (size_t r = 0; r < p->nruns && err->cls == TIO_OK; r++) {
        int64_t at, lo = p->runs[r].lo, hi = p->runs[r].hi;
        int was = a->tgt.manifest.dirty;
        a->tgt.manifest.dirty = 0;
        int rc = tio_agg_manifest_place(&a->tgt.manifest, lo, hi, file, &at, err);
        int changed = a->tgt.manifest.dirty;
        a->tgt.manifest.dirty |= was;
        if (rc)
            break;
        if (!changed) /* rewritten in place: nothing new to tell */
            continue;
        if (j->n == j->cap) {
            size_t cap = j->cap ? 2 * j->cap : 16;
            struct tio_agg_extent *e = realloc(j->ext, sizeof *e * cap);
            if (!e) {
                tio_err_set(err, TIO_E_NOMEM, "aggregation manifest: out of memory");
                break;
            }
            j->ext = e;
            j->cap = cap;
        }
        j->ext[j->n++] = (struct tio_agg_extent){lo, hi, file, at};
    }
    return err->cls;
}

/* Extents a process brings to the one-gather exchange; more take a second gather. */
#define XCH_FEW 8
#define XCH_BLOCK (1 + 4 * XCH_FEW)

static void pack(const struct tio_agg_extent *e, int64_t *out)
{
    out[0] = e->lo;
    out[1] = e->hi;
    out[2] = e->file;
    out[3] = e->at;
}

static int apply_all(struct tio_agg *a, const int64_t *v, long long n, struct tio_err *err)
{
    for (long long i = 0; i < n && err->cls == TIO_OK; i++) {
        struct tio_agg_extent e = {v[4 * i], v[4 * i + 1], (int)v[4 * i + 2], v[4 * i + 3]};
        tio_agg_manifest_apply(&a->tgt.manifest, &e, err);
    }
    return err->cls;
}

int tio_agg_exchange(struct tio_agg *a, struct tio_err *err)
{
    /* Each group's first process speaks for the group (all of its processes placed the
     * same extents). Usually one gather of a small fixed block per process does it. */
    if (!a->tgt.xch && !(a->tgt.xch = malloc(sizeof *a->tgt.xch * XCH_BLOCK * (size_t)a->size)))
        return tio_err_set(err, TIO_E_NOMEM, "aggregation manifest: out of memory");
    int64_t mine[XCH_BLOCK] = {0};
    size_t n = a->grp.grank == 0 ? a->tgt.journal.n : 0;
    mine[0] = (int64_t)n;
    for (size_t i = 0; i < n && i < XCH_FEW; i++)
        pack(&a->tgt.journal.ext[i], mine + 1 + 4 * i);
    PMPI_Allgather(mine, XCH_BLOCK, MPI_INT64_T, a->tgt.xch, XCH_BLOCK, MPI_INT64_T, a->icomm);
    a->tgt.journal.n = 0;
    a->tgt.wrote = 0;
    long long total = 0;
    int many = 0;
    for (int r = 0; r < a->size; r++) {
        total += a->tgt.xch[r * XCH_BLOCK];
        many |= a->tgt.xch[r * XCH_BLOCK] > XCH_FEW;
    }
    /* In group order (ranks), so that every process builds the same manifest. */
    if (!many) {
        for (int r = 0; r < a->size && err->cls == TIO_OK; r++)
            apply_all(a, a->tgt.xch + r * XCH_BLOCK + 1, a->tgt.xch[r * XCH_BLOCK], err);
        return err->cls;
    }
    int *counts = a->gather_counts, *displs = a->gather_displs;
    for (int r = 0, at = 0; r < a->size; r++) {
        counts[r] = 4 * (int)a->tgt.xch[r * XCH_BLOCK];
        displs[r] = at;
        at += counts[r];
    }
    int64_t *all = malloc(sizeof *all * (size_t)(4 * total + 1));
    int64_t *my = malloc(sizeof *my * (4 * n + 1));
    if (!all || !my) {
        /* The gather cannot be made without memory: stop the job rather than hang it. */
        free(all);
        free(my);
        tio_err_set(err, TIO_E_NOMEM, "aggregation manifest: out of memory");
        PMPI_Abort(a->icomm, 1);
        return err->cls;
    }
    for (size_t i = 0; i < n; i++)
        pack(&a->tgt.journal.ext[i], my + 4 * i);
    PMPI_Allgatherv(my, (int)(4 * n), MPI_INT64_T, all, counts, displs, MPI_INT64_T, a->icomm);
    apply_all(a, all, total, err);
    free(all);
    free(my);
    return err->cls;
}
