/* The manifest of subfile and node-local targets: see manifest.h.
 *
 * Text form, one record per line:
 *   tierio-agg-manifest 1
 *   base <name> <file|node-local>
 *   file <index> <size> <host or ->
 *   extent <lo> <hi> <file> <at>                 */
#include "agg/manifest.h"
#include "agg/ranges.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nomem(struct tio_err *err)
{
    return tio_err_set(err, TIO_E_NOMEM, "aggregation manifest: out of memory");
}

int tio_agg_manifest_init(struct tio_agg_manifest *m, int node_local, const char *base,
                          int nfiles, const char (*hosts)[TIO_AGG_HOST_MAX],
                          struct tio_err *err)
{
    memset(m, 0, sizeof *m);
    m->node_local = node_local;
    if (strlen(base) >= sizeof m->base || !*base || strchr(base, '/') || strchr(base, ' '))
        return tio_err_set(err, TIO_E_ARG, "aggregation manifest: data file name \"%.64s\" "
                           "is empty, too long, or has a '/' or a space", base);
    snprintf(m->base, sizeof m->base, "%s", base);
    m->nfiles = nfiles;
    m->files = calloc((size_t)(nfiles > 0 ? nfiles : 1), sizeof *m->files);
    if (!m->files)
        return nomem(err);
    for (int i = 0; hosts && i < nfiles; i++)
        snprintf(m->files[i].host, sizeof m->files[i].host, "%s", hosts[i]);
    return TIO_OK;
}

void tio_agg_manifest_free(struct tio_agg_manifest *m)
{
    free(m->files);
    free(m->ext);
    memset(m, 0, sizeof *m);
}

static int reserve(struct tio_agg_manifest *m, size_t more, struct tio_err *err)
{
    if (m->next + more <= m->cap)
        return TIO_OK;
    size_t cap = m->cap ? m->cap : 16;
    while (cap < m->next + more)
        cap *= 2;
    struct tio_agg_extent *e = realloc(m->ext, sizeof *e * cap);
    if (!e)
        return nomem(err);
    m->ext = e;
    m->cap = cap;
    return TIO_OK;
}

/* Index of the first extent ending after x. */
static size_t ext_after(const struct tio_agg_manifest *m, int64_t x)
{
    return tio_agg_first_ending_after(m->ext, m->next, sizeof *m->ext, x);
}

const struct tio_agg_extent *tio_agg_manifest_find(const struct tio_agg_manifest *m, int64_t x)
{
    size_t k = ext_after(m, x);
    return k < m->next && m->ext[k].lo <= x ? &m->ext[k] : NULL;
}

/* Put [lo, hi) -> (file, at) in, cutting what it replaces out of the extents it overlaps:
 * one of them may split in two, the others shrink or go. */
static int put_extent(struct tio_agg_manifest *m, int64_t lo, int64_t hi, int file,
                      int64_t at, struct tio_err *err)
{
    if (reserve(m, 2, err))
        return err->cls;
    size_t k = ext_after(m, lo), end = k;
    while (end < m->next && m->ext[end].lo < hi)
        end++;
    struct tio_agg_extent keep[2];
    int nkeep = 0;
    if (k < end && m->ext[k].lo < lo) {
        keep[nkeep] = m->ext[k];
        keep[nkeep++].hi = lo;
    }
    if (k < end && m->ext[end - 1].hi > hi) {
        struct tio_agg_extent r = m->ext[end - 1];
        r.at += hi - r.lo;
        r.lo = hi;
        keep[nkeep++] = r;
    }
    struct tio_agg_extent mine = {lo, hi, file, at};
    /* Replace ext[k, end) by the left part, the new extent, the right part. */
    size_t add = (size_t)nkeep + 1, gone = end - k;
    memmove(&m->ext[k + add], &m->ext[end], sizeof *m->ext * (m->next - end));
    m->next = m->next - gone + add;
    size_t i = k;
    if (nkeep > 0 && keep[0].hi == lo && keep[0].lo < lo)
        m->ext[i++] = keep[0];
    m->ext[i++] = mine;
    for (int j = 0; j < nkeep; j++)
        if (keep[j].lo == hi)
            m->ext[i++] = keep[j];
    m->dirty = 1;
    return TIO_OK;
}

int tio_agg_manifest_place(struct tio_agg_manifest *m, int64_t lo, int64_t hi, int file,
                           int64_t *at, struct tio_err *err)
{
    if (file < 0 || file >= m->nfiles || lo < 0 || hi <= lo)
        return tio_err_set(err, TIO_E_ARG, "aggregation manifest: extent [%lld, %lld) in "
                           "file %d of %d", (long long)lo, (long long)hi, file, m->nfiles);
    size_t k = ext_after(m, lo);
    if (k < m->next && m->ext[k].lo == lo && m->ext[k].hi == hi && m->ext[k].file == file) {
        *at = m->ext[k].at; /* rewritten in place */
        return TIO_OK;
    }
    *at = m->files[file].size;
    if (put_extent(m, lo, hi, file, *at, err))
        return err->cls;
    m->files[file].size += hi - lo;
    return TIO_OK;
}

int tio_agg_manifest_apply(struct tio_agg_manifest *m, const struct tio_agg_extent *e,
                           struct tio_err *err)
{
    if (e->file < 0 || e->file >= m->nfiles || e->lo < 0 || e->hi <= e->lo || e->at < 0)
        return tio_err_set(err, TIO_E_ARG, "aggregation manifest: extent [%lld, %lld) at "
                           "%lld in file %d of %d", (long long)e->lo, (long long)e->hi,
                           (long long)e->at, e->file, m->nfiles);
    const struct tio_agg_extent *same = tio_agg_manifest_find(m, e->lo);
    if (same && same->lo == e->lo && same->hi == e->hi && same->file == e->file &&
        same->at == e->at)
        return TIO_OK;
    if (put_extent(m, e->lo, e->hi, e->file, e->at, err))
        return err->cls;
    if (m->files[e->file].size < e->at + (e->hi - e->lo))
        m->files[e->file].size = e->at + (e->hi - e->lo);
    return TIO_OK;
}

int tio_agg_manifest_format(const struct tio_agg_manifest *m, char **text, size_t *len,
                            struct tio_err *err)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return nomem(err);
    fprintf(f, "tierio-agg-manifest 1\nbase %s %s\n", m->base,
            m->node_local ? "node-local" : "file");
    for (int i = 0; i < m->nfiles; i++)
        fprintf(f, "file %d %" PRId64 " %s\n", i, m->files[i].size,
                m->files[i].host[0] ? m->files[i].host : "-");
    for (size_t i = 0; i < m->next; i++)
        fprintf(f, "extent %" PRId64 " %" PRId64 " %d %" PRId64 "\n", m->ext[i].lo,
                m->ext[i].hi, m->ext[i].file, m->ext[i].at);
    if (fclose(f) != 0) {
        free(buf);
        return nomem(err);
    }
    *text = buf;
    *len = n;
    return TIO_OK;
}

static int bad_line(struct tio_err *err, const char *name, int line, const char *why)
{
    return tio_err_set(err, TIO_E_IO, "manifest %s, line %d: %s", name, line, why);
}

int tio_agg_manifest_parse(struct tio_agg_manifest *m, const char *text, const char *name,
                           struct tio_err *err)
{
    memset(m, 0, sizeof *m);
    int line = 0, have_base = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        char buf[512], a[NAME_MAX + 1], b[TIO_AGG_HOST_MAX];
        line++;
        if (l >= sizeof buf) {
            bad_line(err, name, line, "line too long");
            goto fail;
        }
        memcpy(buf, p, l);
        buf[l] = 0;
        p += l + (nl ? 1 : 0);
        int idx, file, ver;
        int64_t x, y, z;
        char extra;
        if (line == 1) {
            if (sscanf(buf, "tierio-agg-manifest %d %c", &ver, &extra) != 1 || ver != 1) {
                bad_line(err, name, line, "not a tierio aggregation manifest (version 1)");
                goto fail;
            }
        } else if (!strncmp(buf, "base ", 5)) {
            if (have_base || sscanf(buf, "base %255s %63s %c", a, b, &extra) != 2 ||
                (strcmp(b, "file") && strcmp(b, "node-local"))) {
                bad_line(err, name, line, "expected \"base <name> file|node-local\" once");
                goto fail;
            }
            snprintf(m->base, sizeof m->base, "%s", a);
            m->node_local = !strcmp(b, "node-local");
            have_base = 1;
        } else if (!strncmp(buf, "file ", 5)) {
            if (sscanf(buf, "file %d %" SCNd64 " %63s %c", &idx, &x, b, &extra) != 3 ||
                idx != m->nfiles || x < 0) {
                bad_line(err, name, line, "expected \"file <next index> <size> <host>\"");
                goto fail;
            }
            struct tio_agg_mfile *f = realloc(m->files, sizeof *f * (size_t)(m->nfiles + 1));
            if (!f) {
                nomem(err);
                goto fail;
            }
            m->files = f;
            snprintf(f[idx].host, sizeof f[idx].host, "%s", strcmp(b, "-") ? b : "");
            f[idx].size = x;
            m->nfiles++;
        } else if (!strncmp(buf, "extent ", 7)) {
            if (sscanf(buf, "extent %" SCNd64 " %" SCNd64 " %d %" SCNd64 " %c", &x, &y, &file,
                       &z, &extra) != 4 || x < 0 || y <= x || file < 0 ||
                file >= m->nfiles || z < 0 || z > m->files[file].size - (y - x) ||
                (m->next > 0 && m->ext[m->next - 1].hi > x)) {
                bad_line(err, name, line, "expected \"extent <lo> <hi> <file> <offset>\", "
                         "sorted, disjoint, inside its file");
                goto fail;
            }
            if (reserve(m, 1, err))
                goto fail;
            m->ext[m->next++] = (struct tio_agg_extent){x, y, file, z};
        } else if (buf[0]) {
            bad_line(err, name, line, "unknown record");
            goto fail;
        }
    }
    if (!have_base) {
        bad_line(err, name, line, "no \"base\" record");
        goto fail;
    }
    return TIO_OK;
fail:
    tio_agg_manifest_free(m);
    return err->cls;
}
