#include "tier/tier_hwloc.h"

#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/log.h"

/* A memory attribute of node `obj` as seen from the CPUs in `cpus`; 0 when hwloc has no
 * value (most machines publish no bandwidth or latency: ACPI HMAT is rare). */
static uint64_t attr(hwloc_topology_t topo, hwloc_memattr_id_t id, hwloc_obj_t obj,
                     hwloc_cpuset_t cpus)
{
    struct hwloc_location loc = {.type = HWLOC_LOCATION_TYPE_CPUSET};
    loc.location.cpuset = cpus;
    hwloc_uint64_t v = 0;
    if (hwloc_memattr_get_value(topo, id, obj, &loc, 0, &v) < 0)
        return 0;
    return v;
}

static void fill_numa(hwloc_topology_t topo, hwloc_obj_t obj, hwloc_cpuset_t mine,
                      struct tio_numa *n)
{
    memset(n, 0, sizeof n[0]);
    n->os_index = obj->os_index;
    if (obj->subtype) {
        snprintf(n->subtype, sizeof n->subtype, "%s", obj->subtype);
        n->hbm = !strcasecmp(obj->subtype, "HBM") || !strcasecmp(obj->subtype, "MCDRAM");
    }
    n->local = obj->cpuset && hwloc_bitmap_intersects(obj->cpuset, mine);
    n->capacity = attr(topo, HWLOC_MEMATTR_ID_CAPACITY, obj, mine);
    /* Bandwidths are in MiB/s, latencies in ns. The read/write forms when published,
     * else the generic one for both. */
    uint64_t bw = attr(topo, HWLOC_MEMATTR_ID_BANDWIDTH, obj, mine);
    uint64_t rbw = attr(topo, HWLOC_MEMATTR_ID_READ_BANDWIDTH, obj, mine);
    uint64_t wbw = attr(topo, HWLOC_MEMATTR_ID_WRITE_BANDWIDTH, obj, mine);
    n->read_bw = (double)(rbw ? rbw : bw) * 1048576.0;
    n->write_bw = (double)(wbw ? wbw : bw) * 1048576.0;
    uint64_t lat = attr(topo, HWLOC_MEMATTR_ID_LATENCY, obj, mine);
    uint64_t rlat = attr(topo, HWLOC_MEMATTR_ID_READ_LATENCY, obj, mine);
    n->latency = (double)(lat ? lat : rlat) * 1e-9;
}

int tio_hw_load(struct tio_hw *hw, struct tio_err *err)
{
    memset(hw, 0, sizeof *hw);
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) < 0)
        return tio_err_errno(err, errno, "hwloc: cannot initialise a topology");
    /* The machine as it is, for this process: binding and memory attributes are real. */
    hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
    if (hwloc_topology_load(topo) < 0) {
        int e = errno;
        hwloc_topology_destroy(topo);
        return tio_err_errno(err, e, "hwloc: cannot load the topology of this machine");
    }
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (!mine) {
        hwloc_topology_destroy(topo);
        return tio_err_set(err, TIO_E_NOMEM, "hwloc: out of memory");
    }
    /* The CPUs this process may run on are the initiator of memory accesses. */
    if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) < 0)
        hwloc_bitmap_copy(mine, hwloc_topology_get_topology_cpuset(topo));
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    if (n > TIO_HW_MAX_NUMA) {
        TIO_WARN("hwloc reports %d NUMA nodes; tierio looks at the first %d", n,
                 TIO_HW_MAX_NUMA);
        n = TIO_HW_MAX_NUMA;
    }
    for (int i = 0; i < n; i++)
        fill_numa(topo, hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i), mine,
                  &hw->numa[hw->nnuma++]);
    hwloc_bitmap_free(mine);
    hw->topology = topo;
    return TIO_OK;
}

void tio_hw_unload(struct tio_hw *hw)
{
    if (hw->topology)
        hwloc_topology_destroy((hwloc_topology_t)hw->topology);
    hw->topology = NULL;
    hw->nnuma = 0;
}

const struct tio_numa *tio_hw_numa(const struct tio_hw *hw, unsigned os_index)
{
    for (int i = 0; i < hw->nnuma; i++)
        if (hw->numa[i].os_index == os_index)
            return &hw->numa[i];
    return NULL;
}

int tio_hw_hbm_nodes(const struct tio_hw *hw, char *list, size_t len)
{
    int count = 0;
    size_t used = 0;
    list[0] = 0;
    for (int i = 0; i < hw->nnuma; i++) {
        if (!hw->numa[i].hbm || !hw->numa[i].local)
            continue;
        int w = snprintf(list + used, len - used, "%s%u", count ? "," : "",
                         hw->numa[i].os_index);
        if (w > 0 && (size_t)w < len - used)
            used += (size_t)w;
        count++;
    }
    return count;
}

/* Calls fn for every index of "1,3"; stops at the first nonzero return. */
static int each_index(const char *list, int (*fn)(unsigned idx, void *ctx), void *ctx)
{
    for (const char *c = list; *c;) {
        if (*c < '0' || *c > '9')
            return -1;
        char *end;
        unsigned long v = strtoul(c, &end, 10);
        if (*end && *end != ',')
            return -1;
        int rc = fn((unsigned)v, ctx);
        if (rc)
            return rc;
        c = *end ? end + 1 : end;
    }
    return 0;
}

struct figures {
    const struct tio_hw *hw;
    const char *what;
    struct tio_err *err;
    uint64_t capacity;
    double rbw, wbw, lat;
    int first, lat_unknown;
};

static int add_node(unsigned idx, void *ctx)
{
    struct figures *f = ctx;
    const struct tio_numa *n = tio_hw_numa(f->hw, idx);
    if (!n) {
        char have[160] = "";
        size_t used = 0;
        for (int i = 0; i < f->hw->nnuma && used < sizeof have - 12; i++)
            used += (size_t)snprintf(have + used, sizeof have - used, "%s%u", i ? ", " : "",
                                     f->hw->numa[i].os_index);
        return tio_err_set(f->err, TIO_E_ARG,
                           "%s: NUMA node %u does not exist on this machine (hwloc reports "
                           "node%s %s)", f->what, idx, f->hw->nnuma > 1 ? "s" : "", have);
    }
    f->capacity += n->capacity;
    /* The list is as fast as its slowest node (an allocation may land on any), and a
     * figure unknown for one node is unknown for the list (0 is the smallest bandwidth). */
    if (f->first || n->read_bw < f->rbw)
        f->rbw = n->read_bw;
    if (f->first || n->write_bw < f->wbw)
        f->wbw = n->write_bw;
    if (n->latency == 0)
        f->lat_unknown = 1;
    else if (n->latency > f->lat)
        f->lat = n->latency;
    f->first = 0;
    return 0;
}

int tio_hw_numa_figures(const struct tio_hw *hw, const char *list, const char *what,
                        uint64_t *capacity, double *read_bw, double *write_bw,
                        double *latency, struct tio_err *err)
{
    struct figures f = {.hw = hw, .what = what, .err = err, .first = 1};
    int rc = each_index(list, add_node, &f);
    if (rc)
        return rc < 0 ? tio_err_set(err, TIO_E_ARG, "%s: bad NUMA list \"%s\"", what, list)
                      : rc;
    *capacity = f.capacity;
    *read_bw = f.rbw;
    *write_bw = f.wbw;
    *latency = f.lat_unknown ? 0 : f.lat;
    return TIO_OK;
}

static int add_free(unsigned idx, void *ctx)
{
    char path[96], line[256];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%u/meminfo", idx);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    unsigned long long kb;
    unsigned node;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Node %u MemFree: %llu kB", &node, &kb) == 2) {
            *(uint64_t *)ctx += (uint64_t)kb * 1024;
            break;
        }
    fclose(f);
    return 0;
}

uint64_t tio_hw_numa_free(const char *list)
{
    uint64_t total = 0;
    each_index(list, add_free, &total);
    return total;
}

static int set_node(unsigned idx, void *ctx)
{
    hwloc_bitmap_set((hwloc_bitmap_t)ctx, idx);
    return 0;
}

void *tio_hw_alloc(const struct tio_hw *hw, const char *list, size_t size, const char *what,
                   struct tio_err *err)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set) {
        tio_err_set(err, TIO_E_NOMEM, "%s: out of memory", what);
        return NULL;
    }
    each_index(list, set_node, set);
    /* Strict: memory that cannot be bound is an error, never memory elsewhere. */
    void *p = hwloc_alloc_membind((hwloc_topology_t)hw->topology, size ? size : 1, set,
                                  HWLOC_MEMBIND_BIND,
                                  HWLOC_MEMBIND_STRICT | HWLOC_MEMBIND_BYNODESET);
    int e = errno;
    hwloc_bitmap_free(set);
    if (!p)
        tio_err_errno(err, e, "%s: cannot allocate %zu bytes bound to NUMA node(s) %s", what,
                      size, list);
    return p;
}

void tio_hw_free(const struct tio_hw *hw, void *p, size_t size)
{
    if (p)
        hwloc_free((hwloc_topology_t)hw->topology, p, size ? size : 1);
}
