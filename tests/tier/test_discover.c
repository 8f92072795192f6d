/* What a node's tiers are (src/tier/tier.c, tier_hwloc.c), checked against hwloc and the
 * kernel read here independently: DRAM always, HBM exactly where hwloc reports HBM or
 * MCDRAM NUMA nodes (this machine kind has none: the tier must be absent, never faked),
 * site-file tiers with their figures taking precedence, storage tiers checked, memory
 * bound to a NUMA node really there, and every impossible tier refused with the file, the
 * line and the reason. */
#include <hwloc.h>
#include <math.h>
#include <sys/statvfs.h>

#include "../unit/check.h"
#include "tier/tiers.h"

static const char *site(const char *dir, const char *name, const char *text)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tt_write_file(path, text, strlen(text));
    return path;
}

/* hwloc's own count of HBM NUMA nodes, by its subtype. */
static int hwloc_hbm_count(int *numa_nodes)
{
    hwloc_topology_t topo;
    CHECK(hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0);
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE), hbm = 0;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if (o->subtype && (!strcasecmp(o->subtype, "HBM") || !strcasecmp(o->subtype, "MCDRAM")))
            hbm++;
    }
    hwloc_topology_destroy(topo);
    *numa_nodes = n;
    return hbm;
}

static uint64_t meminfo_total(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    char line[256];
    unsigned long long kb = 0;
    CHECK(f != NULL);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

static void without_site(void)
{
    CASE("no site file");
    unsetenv("TIERIO_SITE");
    struct tio_tiers t = {0};
    struct tio_err err = {0};
    CHECK(tio_tiers_local(&t, NULL, "here", &err) == TIO_OK);
    int nnuma, hbm = hwloc_hbm_count(&nnuma);
    printf("hwloc: %d NUMA node(s), %d HBM\n", nnuma, hbm);
    CHECK_EQ(t.hw.nnuma, nnuma);
    CHECK_EQ(t.ntiers, 1 + (hbm > 0));
    const struct tio_tier_info *d = &t.tiers[0].info;
    CHECK(!strcmp(d->name, "dram") && d->kind == TIO_TIER_DRAM);
    CHECK_EQ(d->persistence, TIO_PERSIST_NONE);
    CHECK_EQ(d->scope, TIO_SCOPE_PROCESS);
    CHECK_EQ(d->capacity, meminfo_total());
    CHECK_EQ(d->capacity_source, TIO_SOURCE_SYSTEM);
    CHECK(d->numa_nodes[0] == 0 && d->path[0] == 0);
    /* Bandwidth and latency only where hwloc has them, never made up. */
    CHECK((d->read_bandwidth > 0) == (d->bandwidth_source == TIO_SOURCE_HWLOC));
    CHECK((d->latency > 0) == (d->latency_source == TIO_SOURCE_HWLOC));
    CHECK_EQ(tio_tiers_index(&t, "hbm"), hbm > 0 ? 1 : -1);
    struct tio_tier_info now;
    tio_tiers_info_now(&t, 0, &now);
    CHECK(now.available > 0 && now.available <= d->capacity);
    /* no site file: no network figures */
    CHECK(t.latency[1] == 0 && t.bandwidth[1] == 0);
    tio_tiers_local_free(&t);
}

static void with_site(const char *dir)
{
    CASE("site file tiers");
    char storage[4096];
    snprintf(storage, sizeof storage, "%s/ssd", dir);
    CHECK_OK(mkdir(storage, 0700));
    char text[8192];
    snprintf(text, sizeof text,
             "[network]\nlatency = 7us\nbandwidth = 5GB/s\nnode_bandwidth = 20GB/s\n"
             "[tier dram]\nkind = dram\nlatency = 90ns\nbandwidth = 38GB/s\n"
             "[tier near]\nkind = dram\nnuma = 0\n"
             "[tier ssd]\nkind = node-local\npath = %s\nwrite_bandwidth = 1GB/s\n"
             "capacity = 1MiB\n"
             "[tier elsewhere]\nkind = node-local\npath = /nonexistent\nnodes = other*\n",
             storage);
    struct tio_tiers t = {0};
    struct tio_err err = {0};
    if (tio_tiers_local(&t, site(dir, "site.conf", text), "here", &err))
        fprintf(stderr, "%s\n", err.msg);
    CHECK(err.cls == TIO_OK);
    int nnuma, hbm = hwloc_hbm_count(&nnuma);
    /* dram (the site's), hbm (hwloc's, if any), near, ssd; not "elsewhere" */
    CHECK_EQ(t.ntiers, 3 + (hbm > 0));
    CHECK_EQ(tio_tiers_index(&t, "elsewhere"), -1);
    const struct tio_tier_info *d = &t.tiers[tio_tiers_index(&t, "dram")].info;
    CHECK(fabs(d->latency - 90e-9) < 1e-18 && d->latency_source == TIO_SOURCE_SITE);
    CHECK(d->read_bandwidth == 38e9 && d->write_bandwidth == 38e9);
    CHECK_EQ(d->bandwidth_source, TIO_SOURCE_SITE);
    CHECK_EQ(d->capacity, meminfo_total());

    const struct tio_tier_info *n = &t.tiers[tio_tiers_index(&t, "near")].info;
    CHECK(!strcmp(n->numa_nodes, "0"));
    CHECK_EQ(n->capacity_source, TIO_SOURCE_HWLOC);
    CHECK(n->capacity > 0);

    int si = tio_tiers_index(&t, "ssd");
    const struct tio_tier_info *s = &t.tiers[si].info;
    CHECK_EQ(s->kind, TIO_TIER_NODE_LOCAL);
    CHECK_EQ(s->persistence, TIO_PERSIST_JOB);
    CHECK_EQ(s->scope, TIO_SCOPE_NODE);
    CHECK(!strcmp(s->path, storage));
    CHECK(s->write_bandwidth == 1e9 && s->read_bandwidth == 0);
    CHECK_EQ(s->capacity, 1u << 20);
    struct tio_tier_info now;
    tio_tiers_info_now(&t, si, &now);
    CHECK_EQ(now.available, 1u << 20); /* capped by the site's capacity */

    CHECK(t.latency[1] == 7e-6 && t.bandwidth[1] == 5e9);
    CHECK(t.latency[0] == 0 && t.bandwidth[0] == 20e9);
    tio_tiers_local_free(&t);

    CASE("$TIERIO_SITE");
    setenv("TIERIO_SITE", site(dir, "env.conf", "[tier scratch]\nkind = global\npath = /tmp\n"),
           1);
    CHECK(tio_tiers_local(&t, NULL, "here", &err) == TIO_OK);
    int gi = tio_tiers_index(&t, "scratch");
    CHECK(gi >= 0);
    CHECK_EQ(t.tiers[gi].info.persistence, TIO_PERSIST_PERMANENT);
    CHECK_EQ(t.tiers[gi].info.scope, TIO_SCOPE_GLOBAL);
    struct statvfs v;
    CHECK(statvfs("/tmp", &v) == 0);
    CHECK_EQ(t.tiers[gi].info.capacity, (uint64_t)v.f_blocks * v.f_frsize);
    tio_tiers_local_free(&t);
    unsetenv("TIERIO_SITE");
}

/* The site file must be refused with its path, line and the reason in the message. */
static void refused(const char *dir, const char *text, enum tio_errclass cls,
                    const char *line, const char *reason)
{
    struct tio_tiers t = {0};
    struct tio_err err = {0};
    const char *path = site(dir, "bad.conf", text);
    int rc = tio_tiers_local(&t, path, "here", &err);
    if (rc == TIO_OK) {
        fprintf(stderr, "[%s] accepted:\n%s\n", tt_current_case, text);
        exit(1);
    }
    CHECK_EQ(rc, cls);
    CHECK_HAS(err.msg, path);
    CHECK_HAS(err.msg, line);
    CHECK_HAS(err.msg, reason);
    CHECK(t.hw.topology == NULL && t.ntiers == 0); /* nothing held */
}

static void impossible(const char *dir)
{
    int nnuma, hbm = hwloc_hbm_count(&nnuma);
    CASE("an HBM tier with a NUMA node that does not exist");
    refused(dir, "# a comment\n[tier hbm]\nkind = hbm\nnuma = 7\n", TIO_E_ARG, ":2: tier \"hbm\"",
            "NUMA node 7 does not exist on this machine");
    refused(dir, "[tier hbm]\nkind = hbm\nnuma = 0,99\n", TIO_E_ARG, ":1:",
            "NUMA node 99 does not exist");
    if (hbm == 0) {
        CASE("an HBM tier on a machine without HBM");
        refused(dir, "[tier fast]\nkind = hbm\n", TIO_E_UNSUPPORTED, ":1: tier \"fast\"",
                "no HBM on this node");
    } else {
        printf("this machine has HBM: the no-HBM refusal is not checked here\n");
    }
    CASE("storage tiers that cannot be used");
    refused(dir, "[tier ssd]\nkind = node-local\npath = /nonexistent/dir\n", TIO_E_NOENT,
            ":1: tier \"ssd\"", "No such file or directory");
    refused(dir, "[tier ssd]\nkind = node-local\npath = /etc/hostname\n", TIO_E_ARG, ":1:",
            "is not a directory");
    if (geteuid() != 0) {
        refused(dir, "[tier ssd]\nkind = global\npath = /proc\n", TIO_E_ACCESS, ":1:",
                "not writable");
    }
    CASE("a malformed site file");
    refused(dir, "[tier x]\nkind = dram\nlatency = fast\n", TIO_E_ARG, ":3:", "not a time");
    struct tio_tiers t = {0};
    struct tio_err err = {0};
    CHECK(tio_tiers_local(&t, "/nonexistent.conf", "here", &err) == TIO_E_NOENT);
    CHECK_HAS(err.msg, "/nonexistent.conf");
}

static void bound_memory(void)
{
    CASE("memory bound to NUMA node 0");
    struct tio_tiers t = {0};
    struct tio_err err = {0};
    CHECK(tio_tiers_local(&t, NULL, "here", &err) == TIO_OK);
    size_t len = 8 << 20;
    char *p = tio_hw_alloc(&t.hw, "0", len, "test", &err);
    CHECK(p != NULL);
    memset(p, 0x5a, len); /* fault every page in */
    hwloc_bitmap_t where = hwloc_bitmap_alloc();
    CHECK(hwloc_get_area_memlocation((hwloc_topology_t)t.hw.topology, p, len, where,
                                     HWLOC_MEMBIND_BYNODESET) == 0);
    char s[64];
    hwloc_bitmap_list_snprintf(s, sizeof s, where);
    printf("pages of the bound allocation are on NUMA node(s) %s\n", s);
    CHECK(hwloc_bitmap_isset(where, 0) && hwloc_bitmap_weight(where) == 1);
    hwloc_bitmap_free(where);
    for (size_t i = 0; i < len; i += 4096)
        CHECK(p[i] == 0x5a);
    tio_hw_free(&t.hw, p, len);
    CHECK(tt_is_mapped(p, len) == 0);

    CASE("memory bound to a NUMA node that does not exist");
    tio_err_clear(&err);
    p = tio_hw_alloc(&t.hw, "63", 1 << 20, "tier \"x\"", &err);
    CHECK(p == NULL);
    CHECK(err.cls != TIO_OK);
    CHECK_HAS(err.msg, "tier \"x\": cannot allocate 1048576 bytes bound to NUMA node(s) 63");
    tio_tiers_local_free(&t);
}

int main(void)
{
    const char *dir = tt_tmpdir("tier-discover");
    without_site();
    with_site(dir);
    impossible(dir);
    bound_memory();
    printf("test_discover: all checks passed\n");
    return 0;
}
