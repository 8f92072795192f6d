/* Restart: the newest version that every process can get back whole, and from where.
 *
 * Candidates are the versions with a manifest at some level, newest first (one MPI_MAX
 * per candidate). For a candidate, a reference manifest is chosen (the global one if it
 * is intact, else the first intact local copy; a local copy counts only if it is
 * byte-identical to it), and each process looks for its files, reading every byte
 * against the checksums:
 *   1. its own local copy;
 *   2. its partner copy, held by one process of the next neighbourhood;
 *   3. the global copy.
 * The first candidate where every process found a source wins. Partner copies are then
 * sent back over MPI and rewritten into the owners' local directories (and a lost node
 * manifest is written again), so the version is local once more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/handle.h"
#include "util/log.h"
#include "util/agree.h"

/* Do all files of `rank` in m match in vdir (partner: its partner sub-directory)? The
 * first mismatch is in why. */
static int files_match(const struct tio_manifest *m, int rank, const char *vdir, int partner,
                       struct tio_err *why)
{
    for (int i = m->first[rank]; i < m->first[rank + 1]; i++) {
        char p[PATH_MAX];
        if (tio_ckpt_file_path(p, sizeof p, vdir, partner, rank, m->files[i].name)) {
            tio_err_set(why, TIO_E_ARG, "path in \"%.200s\" too long", vdir);
            return 0;
        }
        if (!tio_ckpt_file_matches(p, m->files[i].size, m->files[i].crc, why))
            return 0;
    }
    return 1;
}

/* The manifest text at vdir if it is intact and describes version v of this set. */
static char *read_manifest(const struct tio_ckpt *ck, const char *vdir, long long v,
                           size_t *len, struct tio_err *why)
{
    char *t = NULL;
    struct tio_manifest m;
    if (tio_manifest_read(vdir, &t, len, why) != TIO_OK)
        return NULL;
    if (tio_manifest_parse(t, *len, &m, why) != TIO_OK) {
        free(t);
        return NULL;
    }
    int ok = m.version == v && !strcmp(m.set, ck->name);
    if (!ok)
        tio_err_set(why, TIO_E_IO, "manifest in \"%s\" is for \"%s\" version %lld", vdir, m.set,
                    m.version);
    tio_manifest_free(&m);
    if (!ok) {
        free(t);
        return NULL;
    }
    return t;
}

/* Broadcast a text from root; others get a malloc'ed copy. */
static char *bcast_text(MPI_Comm comm, int rank, int root, char *text, size_t *len)
{
    unsigned long long n = *len;
    PMPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, comm);
    char *t = rank == root ? text : malloc(n + 1);
    if (!t)
        PMPI_Abort(comm, 1); /* cannot take part in the broadcast: nobody must wait */
    for (unsigned long long off = 0; off < n; off += 1u << 30) {
        unsigned long long k = n - off < (1u << 30) ? n - off : 1u << 30;
        PMPI_Bcast(t + off, (int)k, MPI_CHAR, root, comm);
    }
    *len = n;
    return t;
}

/* Send partner-held files back to their owners (use[r]: rank r rebuilds from its
 * partner copy) and write them into the owners' local version directory. */
static int rebuild(struct tio_ckpt *ck, const struct tio_manifest *m, const char *lvdir,
                   const int *use, struct tio_err *err)
{
    int nsend = 0, nrecv = use[ck->rank];
    for (int i = 0; i < ck->nsenders; i++)
        nsend += use[ck->senders[i]];
    struct tio_stream *st = calloc((size_t)(nsend + nrecv + 1), sizeof *st);
    const struct tio_manifest_file **fp = malloc(sizeof *fp * (size_t)(m->nfiles + 1));
    char (*paths)[PATH_MAX] = malloc(sizeof *paths * (size_t)(m->nfiles + 1));
    if (!st || !fp || !paths)
        PMPI_Abort(ck->comm, 1); /* the others would wait for our bytes forever */
    if (nrecv)
        tio_ckpt_mkdirs(lvdir, err);
    int k = 0, s = 0;
    for (int i = 0; i <= ck->nsenders; i++) {
        /* the streams this process sends, then the one it receives */
        int who = i < ck->nsenders ? ck->senders[i] : ck->rank;
        if (!use[who])
            continue;
        st[s].peer = i < ck->nsenders ? who : ck->partner;
        st[s].files = &fp[k];
        st[s].paths = &paths[k];
        for (int j = m->first[who]; j < m->first[who + 1]; j++, k++) {
            fp[k] = &m->files[j];
            tio_ckpt_file_path(paths[k], PATH_MAX, lvdir, i < ck->nsenders, who,
                               m->files[j].name);
        }
        st[s].nfiles = m->first[who + 1] - m->first[who];
        s++;
    }
    tio_partner_exchange(ck, nsend, st, nrecv, st + nsend, err);
    if (nrecv && err->cls == TIO_OK)
        tio_fsync_dir(lvdir, err);
    free(st);
    free(fp);
    free(paths);
    return err->cls;
}

/* Write the reference manifest as the node's copy (its copy was lost or damaged). */
static void restore_node_manifest(const struct tio_manifest *m, const char *lvdir,
                                  struct tio_err *err)
{
    size_t cap = (size_t)m->nfiles * (TIO_CKPT_NAME_MAX + 64) + 1, n = 0, tl = 0;
    char *lines = malloc(cap), *t = NULL;
    if (!lines) {
        tio_err_set(err, TIO_E_NOMEM, "out of memory rewriting a manifest");
        return;
    }
    for (int i = 0; i < m->nfiles; i++) {
        int w = tio_manifest_line(lines + n, cap - n, m->files[i].rank, m->files[i].size,
                                  m->files[i].crc, m->files[i].name);
        n += (size_t)(w > 0 ? w : 0);
    }
    if (tio_manifest_build(m->set, m->version, m->nranks, lines, n, &t, &tl, err) == TIO_OK)
        tio_manifest_write(lvdir, t, tl, err);
    free(lines);
    free(t);
}

/* One version being evaluated for a restart, and what the steps found. */
struct candidate {
    long long v;
    int has_local, has_global;
    char lvdir[PATH_MAX], gvdir[PATH_MAX];
    struct tio_manifest m; /* the reference manifest (parsed when evaluate_manifest says 1) */
    int gvalid;            /* the global manifest is intact */
    int local_man;         /* this process's local manifest is the reference's copy */
    int local_ok, partner_ok, global_ok; /* where this process's files can come from */
    int *need, *held;      /* partner copies: per rank, needs one / one is held */
    struct tio_err why;    /* why this process has no source: not an error of the call */
    struct tio_err gwhy;   /* ... and what is wrong with the global copy */
};

/* The reference manifest: global if intact, else the lowest rank's intact local copy;
 * parsed into c->m, compared with this process's local copy. 1 when there is one (err may
 * still hold an error: a manifest of another job size), 0 when no level has an intact one
 * (agreed). */
static int reference_manifest(struct tio_ckpt *ck, struct candidate *c, struct tio_err *err)
{
    size_t llen = 0, glen = 0, rlen;
    char *ltext = c->has_local ? read_manifest(ck, c->lvdir, c->v, &llen, &c->why) : NULL;
    char *gtext = NULL;
    int root = 0;
    if (ck->rank == 0 && c->has_global) {
        struct tio_err gwhy;
        tio_err_clear(&gwhy);
        gtext = read_manifest(ck, c->gvdir, c->v, &glen, &gwhy);
        c->gvalid = gtext != NULL;
    }
    PMPI_Bcast(&c->gvalid, 1, MPI_INT, 0, ck->comm);
    if (!c->gvalid) {
        int mine = ltext ? ck->rank : ck->size;
        PMPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, ck->comm);
        if (root == ck->size) {
            free(ltext);
            if (ck->rank == 0)
                TIO_WARN("checkpoint \"%s\" version %lld: no intact manifest at any level; "
                         "trying an older version", ck->name, c->v);
            return 0;
        }
    }
    rlen = c->gvalid ? glen : llen;
    char *rtext = bcast_text(ck->comm, ck->rank, root, c->gvalid ? gtext : ltext, &rlen);
    if (tio_manifest_parse(rtext, rlen, &c->m, err) == TIO_OK && c->m.nranks != ck->size)
        tio_err_set(err, TIO_E_ARG, "checkpoint \"%s\" version %lld was written by %d "
                    "processes; this communicator has %d", ck->name, c->v, c->m.nranks,
                    ck->size);
    c->local_man = ltext && llen == rlen && !memcmp(ltext, rtext, rlen);
    if (ltext && !c->local_man)
        tio_err_set(&c->why, TIO_E_IO, "the manifest in \"%s\" differs from the reference "
                    "copy", c->lvdir);
    if (rtext != ltext && rtext != gtext)
        free(rtext);
    free(ltext);
    free(gtext);
    return 1;
}

/* Where this process's files can come from, in order of preference: its local copy, a
 * partner's copy (which processes need one and which are held is agreed), the global
 * copy. */
static void find_sources(struct tio_ckpt *ck, struct candidate *c)
{
    c->local_ok = c->has_local && c->local_man && files_match(&c->m, ck->rank, c->lvdir, 0,
                                                              &c->why);
    if (ck->cfg.partner) {
        c->need = calloc((size_t)ck->size, sizeof *c->need);
        c->held = calloc((size_t)ck->size, sizeof *c->held);
        if (!c->need || !c->held)
            PMPI_Abort(ck->comm, 1);
        c->need[ck->rank] = !c->local_ok;
        PMPI_Allreduce(MPI_IN_PLACE, c->need, ck->size, MPI_INT, MPI_MAX, ck->comm);
        for (int i = 0; i < ck->nsenders; i++) {
            int s = ck->senders[i];
            struct tio_err pwhy;
            tio_err_clear(&pwhy);
            if (!c->need[s])
                continue;
            c->held[s] = c->local_man && files_match(&c->m, s, c->lvdir, 1, &pwhy);
            if (!c->held[s])
                TIO_INFO("checkpoint \"%s\" version %lld: partner copy of rank %d unusable: %s",
                         ck->name, c->v, s, c->local_man ? pwhy.msg : "no intact manifest here");
        }
        PMPI_Allreduce(MPI_IN_PLACE, c->held, ck->size, MPI_INT, MPI_MAX, ck->comm);
        c->partner_ok = !c->local_ok && c->held[ck->rank];
    }
    if (!c->local_ok && !c->partner_ok && c->has_global) {
        if (c->gvalid)
            c->global_ok = files_match(&c->m, ck->rank, c->gvdir, 0, &c->gwhy);
        else
            tio_err_set(&c->gwhy, TIO_E_IO, "no intact global manifest in \"%s\"", c->gvdir);
    }
}

/* Every process has a source (agreed); when one has none, rank 0 logs the lowest failing
 * rank's reason, saying what is wrong with each copy it looked at. */
static int all_have_sources(struct tio_ckpt *ck, struct candidate *c)
{
    int ok = c->local_ok || c->partner_ok || c->global_ok, all_ok = 0;
    if (ok) {
        tio_err_clear(&c->why);
    } else {
        struct tio_err both;
        tio_err_clear(&both);
        tio_err_set(&both, TIO_E_IO, "no intact copy of its files%s%.200s%s%.200s%s",
                    c->why.cls ? " (local: " : "", c->why.msg,
                    c->why.cls && c->gwhy.cls ? "; global: " : c->gwhy.cls ? " (global: " : "",
                    c->gwhy.msg, c->why.cls || c->gwhy.cls ? ")" : "");
        c->why = both;
    }
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, ck->comm);
    if (!all_ok) {
        tio_agree(ck->comm, &c->why, NULL, 0);
        if (ck->rank == 0)
            TIO_WARN("checkpoint \"%s\" version %lld is not usable, trying an older version: "
                     "%s", ck->name, c->v, c->why.msg);
    }
    return all_ok;
}

/* The processes that restart from a partner copy get their files back locally; a node
 * that lost its manifest gets it back once all its processes have their files there
 * again. Errors agreed. */
static void rebuild_from_partners(struct tio_ckpt *ck, struct candidate *c, struct tio_err *err)
{
    int any_partner = 0;
    /* held[r] && need[r]: r rebuilds from its partner copy. */
    for (int r = 0; r < ck->size; r++) {
        c->held[r] = c->held[r] && c->need[r];
        any_partner |= c->held[r];
    }
    if (!any_partner)
        return;
    rebuild(ck, &c->m, c->lvdir, c->held, err);
    if (tio_agree(ck->comm, err, NULL, 0) == TIO_OK) {
        int here = c->local_ok || c->partner_ok, all_here = 0;
        PMPI_Allreduce(&here, &all_here, 1, MPI_INT, MPI_MIN, ck->nbhd);
        if (ck->nbhd_rank == 0 && all_here && !c->local_man)
            restore_node_manifest(&c->m, c->lvdir, err);
        tio_agree(ck->comm, err, NULL, 0);
    }
}

/* Is version v usable? 1: yes, from *level (the slowest source any process uses), and the
 * handle now points at it; 0: no (why logged), or an error (agreed) in err. */
static int evaluate(struct tio_ckpt *ck, long long v, int *level, struct tio_err *err)
{
    struct candidate c = {.v = v, .has_local = ck->cfg.local[0] != 0,
                          .has_global = ck->cfg.global[0] != 0};
    tio_err_clear(&c.why);
    tio_err_clear(&c.gwhy);
    if (c.has_local)
        tio_ckpt_vdir(c.lvdir, sizeof c.lvdir, ck->cfg.local, ck->name, v);
    if (c.has_global)
        tio_ckpt_vdir(c.gvdir, sizeof c.gvdir, ck->cfg.global, ck->name, v);
    if (!reference_manifest(ck, &c, err))
        return 0;
    int usable = err->cls == TIO_OK;
    if (usable) {
        find_sources(ck, &c);
        usable = all_have_sources(ck, &c);
    }
    if (usable) {
        int mylevel = c.local_ok     ? TIO_CKPT_LEVEL_LOCAL
                      : c.partner_ok ? TIO_CKPT_LEVEL_PARTNER
                                     : TIO_CKPT_LEVEL_GLOBAL;
        PMPI_Allreduce(&mylevel, level, 1, MPI_INT, MPI_MAX, ck->comm);
        if (ck->cfg.partner)
            rebuild_from_partners(ck, &c, err);
        usable = err->cls == TIO_OK;
    }
    free(c.need);
    free(c.held);
    if (!usable) {
        tio_manifest_free(&c.m);
        return 0;
    }
    snprintf(ck->vdir, sizeof ck->vdir, "%s", c.local_ok || c.partner_ok ? c.lvdir : c.gvdir);
    tio_manifest_free(&ck->man);
    ck->man = c.m;
    if (*level <= TIO_CKPT_LEVEL_PARTNER)
        ck->local_complete = v;
    if (c.gvalid)
        ck->global_complete = v;
    return 1;
}

int tio_ckpt_do_restart(struct tio_ckpt *ck, long long *version, int *level,
                        struct tio_err *err)
{
    long long bound = LLONG_MAX;
    *version = -1;
    *level = TIO_CKPT_LEVEL_NONE;
    for (;;) {
        long long mine = -1, cand = -1;
        if (ck->cfg.local[0] && ck->nbhd_rank == 0)
            mine = tio_ckpt_newest_version(ck->local_set, bound);
        if (ck->cfg.global[0] && ck->rank == 0) {
            long long g = tio_ckpt_newest_version(ck->global_set, bound);
            mine = g > mine ? g : mine;
        }
        PMPI_Allreduce(&mine, &cand, 1, MPI_LONG_LONG, MPI_MAX, ck->comm);
        if (cand < 0)
            return TIO_OK;
        int lvl = TIO_CKPT_LEVEL_NONE;
        int usable = evaluate(ck, cand, &lvl, err);
        if (err->cls != TIO_OK)
            return err->cls;
        if (usable) {
            *version = cand;
            *level = lvl;
            ck->phase = TIO_PHASE_RESTARTED;
            ck->version = ck->last_version = cand;
            return TIO_OK;
        }
        bound = cand;
    }
}
