/* Which tiers this node has and what they are worth: DRAM and HBM from hwloc and the
 * kernel, then the site file's tiers, with the site file's figures taking precedence. */
#include "tier/tiers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tier/memavail.h"
#include "tier/tier_env.h"
#include "util/log.h"

static struct tio_tier_rec *new_tier(struct tio_tiers *t, const char *name,
                                     enum tio_tier_kind kind)
{
    struct tio_tier_rec *r = &t->tiers[t->ntiers++];
    memset(r, 0, sizeof *r);
    snprintf(r->info.name, sizeof r->info.name, "%s", name);
    r->info.kind = kind;
    int storage = kind == TIO_TIER_NODE_LOCAL || kind == TIO_TIER_GLOBAL;
    r->info.persistence = kind == TIO_TIER_GLOBAL ? TIO_PERSIST_PERMANENT
                        : storage                 ? TIO_PERSIST_JOB
                                                  : TIO_PERSIST_NONE;
    r->info.scope = kind == TIO_TIER_GLOBAL       ? TIO_SCOPE_GLOBAL
                  : kind == TIO_TIER_NODE_LOCAL   ? TIO_SCOPE_NODE
                                                  : TIO_SCOPE_PROCESS;
    return r;
}

/* Figures of the NUMA nodes in list (hwloc). */
static int numa_figures(struct tio_tiers *t, struct tio_tier_rec *r, const char *list,
                        const char *what, struct tio_err *err)
{
    uint64_t cap;
    double rbw, wbw, lat;
    int rc = tio_hw_numa_figures(&t->hw, list, what, &cap, &rbw, &wbw, &lat, err);
    if (rc)
        return rc;
    snprintf(r->info.numa_nodes, sizeof r->info.numa_nodes, "%s", list);
    r->info.capacity = cap;
    r->info.capacity_source = cap ? TIO_SOURCE_HWLOC : TIO_SOURCE_NONE;
    r->info.read_bandwidth = rbw;
    r->info.write_bandwidth = wbw;
    r->info.bandwidth_source = rbw > 0 || wbw > 0 ? TIO_SOURCE_HWLOC : TIO_SOURCE_NONE;
    r->info.latency = lat;
    r->info.latency_source = lat > 0 ? TIO_SOURCE_HWLOC : TIO_SOURCE_NONE;
    return TIO_OK;
}

/* Main memory, not bound: the kernel's total, hwloc's figures for the local non-HBM
 * nodes (when the machine publishes any). */
static void dram_figures(struct tio_tiers *t, struct tio_tier_rec *r)
{
    r->info.capacity = tio_meminfo("MemTotal");
    r->info.capacity_source = r->info.capacity ? TIO_SOURCE_SYSTEM : TIO_SOURCE_NONE;
    char list[64] = "";
    size_t used = 0;
    for (int i = 0; i < t->hw.nnuma; i++)
        if (t->hw.numa[i].local && !t->hw.numa[i].hbm && used < sizeof list - 12)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%u", used ? "," : "",
                                     t->hw.numa[i].os_index);
    uint64_t cap;
    double rbw = 0, wbw = 0, lat = 0;
    struct tio_err ignore = {0};
    if (list[0] && tio_hw_numa_figures(&t->hw, list, "dram", &cap, &rbw, &wbw, &lat,
                                       &ignore) == TIO_OK) {
        r->info.read_bandwidth = rbw;
        r->info.write_bandwidth = wbw;
        r->info.bandwidth_source = rbw > 0 || wbw > 0 ? TIO_SOURCE_HWLOC : TIO_SOURCE_NONE;
        r->info.latency = lat;
        r->info.latency_source = lat > 0 ? TIO_SOURCE_HWLOC : TIO_SOURCE_NONE;
    }
}

static int storage_figures(struct tio_tier_rec *r, const char *what, struct tio_err *err)
{
    struct stat st;
    const char *p = r->info.path;
    if (stat(p, &st) < 0)
        return tio_err_errno(err, errno, "%s: path \"%s\"", what, p);
    if (!S_ISDIR(st.st_mode))
        return tio_err_set(err, TIO_E_ARG, "%s: path \"%s\" is not a directory", what, p);
    if (access(p, W_OK | X_OK) < 0)
        return tio_err_errno(err, errno, "%s: path \"%s\" is not writable", what, p);
    struct statvfs vfs;
    if (statvfs(p, &vfs) == 0) {
        r->info.capacity = (uint64_t)vfs.f_blocks * vfs.f_frsize;
        r->info.capacity_source = TIO_SOURCE_SYSTEM;
    }
    return TIO_OK;
}

/* A tier of the site file, on this node. */
static int site_tier(struct tio_tiers *t, const struct tio_site_tier *s, struct tio_err *err)
{
    char what[TIO_TIER_PATH_MAX + 64];
    snprintf(what, sizeof what, "site file %s:%d: tier \"%s\"", t->site.file, s->line,
             s->name);
    struct tio_tier_rec *r = new_tier(t, s->name, s->kind);
    int rc = TIO_OK;
    switch (s->kind) {
    case TIO_TIER_DRAM:
        if (s->numa[0])
            rc = numa_figures(t, r, s->numa, what, err);
        else
            dram_figures(t, r);
        break;
    case TIO_TIER_HBM:
        if (s->numa[0]) {
            rc = numa_figures(t, r, s->numa, what, err);
        } else {
            /* HBM is what hwloc says it is; without it there is none, never DRAM
             * standing in for it. */
            char list[64];
            if (tio_hw_hbm_nodes(&t->hw, list, sizeof list) == 0)
                rc = tio_err_set(err, TIO_E_UNSUPPORTED,
                                 "%s: no HBM on this node (hwloc reports no HBM or MCDRAM "
                                 "NUMA node); set numa = ... or nodes = ...", what);
            else
                rc = numa_figures(t, r, list, what, err);
        }
        break;
    default:
        snprintf(r->info.path, sizeof r->info.path, "%s", s->path);
        rc = storage_figures(r, what, err);
        break;
    }
    if (rc) {
        t->ntiers--;
        return rc;
    }
    if (s->persistence >= 0)
        r->info.persistence = (enum tio_persistence)s->persistence;
    if (s->scope >= 0)
        r->info.scope = (enum tio_scope)s->scope;
    if (s->latency > 0) {
        r->info.latency = s->latency;
        r->info.latency_source = TIO_SOURCE_SITE;
    }
    if (s->read_bandwidth > 0 || s->write_bandwidth > 0) {
        /* A direction the site file leaves out stays as hwloc had it. */
        if (s->read_bandwidth > 0)
            r->info.read_bandwidth = s->read_bandwidth;
        if (s->write_bandwidth > 0)
            r->info.write_bandwidth = s->write_bandwidth;
        r->info.bandwidth_source = TIO_SOURCE_SITE;
    }
    if (s->capacity) {
        r->info.capacity = s->capacity;
        r->info.capacity_source = TIO_SOURCE_SITE;
        r->site_capacity = s->capacity;
    }
    return TIO_OK;
}

/* Does the site file describe this kind itself (for DRAM: unbound main memory), or use
 * the name tierio would give it? */
static int site_has(const struct tio_site *s, enum tio_tier_kind kind, const char *name)
{
    for (int i = 0; i < s->ntiers; i++)
        if (s->tiers[i].kind == kind && !(kind == TIO_TIER_DRAM && s->tiers[i].numa[0]))
            return 1;
    return tio_site_tier(s, name) != NULL;
}

int tio_tiers_local(struct tio_tiers *t, const char *site_file, const char *host,
                    struct tio_err *err)
{
    tio_site_init(&t->site);
    snprintf(t->host, sizeof t->host, "%s", host);
    struct tio_tier_env env; /* site_file may point into it until the load below */
    if (!site_file) {
        if (tio_tier_env(&env, err))
            return err->cls;
        site_file = env.site[0] ? env.site : NULL;
    }
    int rc = tio_hw_load(&t->hw, err);
    if (rc)
        return rc;
    if (site_file) {
        rc = tio_site_load(site_file, &t->site, err);
        if (rc) {
            tio_hw_unload(&t->hw);
            return rc;
        }
        t->have_site = 1;
    }
    /* Found without a site file: DRAM, and the HBM hwloc reports. */
    if (!site_has(&t->site, TIO_TIER_DRAM, "dram"))
        dram_figures(t, new_tier(t, "dram", TIO_TIER_DRAM));
    char hbm[64];
    if (!site_has(&t->site, TIO_TIER_HBM, "hbm") && tio_hw_hbm_nodes(&t->hw, hbm, sizeof hbm))
        rc = numa_figures(t, new_tier(t, "hbm", TIO_TIER_HBM), hbm, "hbm", err);
    for (int i = 0; !rc && i < t->site.ntiers; i++)
        if (tio_site_tier_on_host(&t->site.tiers[i], host))
            rc = site_tier(t, &t->site.tiers[i], err);
    if (!rc && t->have_site) {
        t->latency[0] = t->site.node_latency;
        t->latency[1] = t->site.net_latency;
        t->bandwidth[0] = t->site.node_bandwidth;
        t->bandwidth[1] = t->site.net_bandwidth;
    }
    if (rc)
        tio_tiers_local_free(t);
    return rc;
}

void tio_tiers_local_free(struct tio_tiers *t)
{
    tio_hw_unload(&t->hw);
    tio_site_free(&t->site);
    t->ntiers = 0;
    t->have_site = 0;
}

int tio_tiers_index(const struct tio_tiers *t, const char *name)
{
    for (int i = 0; i < t->ntiers; i++)
        if (!strcmp(t->tiers[i].info.name, name))
            return i;
    return -1;
}

void tio_tiers_info_now(const struct tio_tiers *t, int idx, struct tio_tier_info *out)
{
    const struct tio_tier_rec *r = &t->tiers[idx];
    *out = r->info;
    uint64_t avail = 0;
    if (out->kind == TIO_TIER_NODE_LOCAL || out->kind == TIO_TIER_GLOBAL) {
        struct statvfs vfs;
        if (statvfs(out->path, &vfs) == 0)
            avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    } else {
        avail = tio_mem_available();
        if (out->numa_nodes[0]) {
            uint64_t node_free = tio_hw_numa_free(out->numa_nodes);
            avail = node_free < avail ? node_free : avail;
        }
    }
    if (r->site_capacity && r->site_capacity < avail)
        avail = r->site_capacity;
    out->available = avail;
}

int tio_tiers_node_hops(const struct tio_tiers *t, int a, int b)
{
    if (a == b)
        return 0;
    return tio_site_hops(&t->site, t->node_name[a], t->node_name[b]);
}

int tio_tiers_node_io_hops(const struct tio_tiers *t, int a)
{
    return tio_site_io_hops(&t->site, t->node_name[a]);
}
