/* What hwloc reports about this node's memory: its NUMA nodes, which of them are
 * high-bandwidth memory, and the memory attributes (capacity, bandwidth, latency) the
 * hardware or firmware publishes (ACPI HMAT). Plus memory bound to NUMA nodes, the way
 * HBM and NUMA-bound DRAM tiers are allocated. */
#ifndef TIO_TIER_HWLOC_H
#define TIO_TIER_HWLOC_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define TIO_HW_MAX_NUMA 64

struct tio_numa {
    unsigned os_index;
    int hbm;                 /* hwloc's subtype says HBM or MCDRAM */
    int local;               /* near the CPUs this process may run on */
    char subtype[32];        /* hwloc's subtype, "" when none */
    uint64_t capacity;       /* bytes (hwloc Capacity), 0 = unknown */
    double read_bw, write_bw;/* B/s from the initiator of this process's CPUs, 0 = unknown */
    double latency;          /* s, 0 = unknown */
};

struct tio_hw {
    void *topology;          /* hwloc_topology_t, kept for bound allocations */
    int nnuma;
    struct tio_numa numa[TIO_HW_MAX_NUMA];
};

/* Load the topology (this process's view: its CPU binding is the initiator). */
int tio_hw_load(struct tio_hw *hw, struct tio_err *err);
void tio_hw_unload(struct tio_hw *hw);

/* The NUMA node with this OS index, or NULL. */
const struct tio_numa *tio_hw_numa(const struct tio_hw *hw, unsigned os_index);
/* Number of HBM nodes local to this process; their indexes as "a,b" in list. */
int tio_hw_hbm_nodes(const struct tio_hw *hw, char *list, size_t len);

/* Check a NUMA list ("1,3") against the machine: every node must exist. On success
 * fills the figures summed (capacity) or taken from the slowest node (bandwidth,
 * latency) of the list. `what` names the tier for messages. */
int tio_hw_numa_figures(const struct tio_hw *hw, const char *list, const char *what,
                        uint64_t *capacity, double *read_bw, double *write_bw,
                        double *latency, struct tio_err *err);
/* Free bytes on the listed nodes now (the kernel's per-node MemFree). */
uint64_t tio_hw_numa_free(const char *list);

/* Memory bound to the listed NUMA nodes (strict: never placed elsewhere). Page-aligned;
 * release with tio_hw_free. */
void *tio_hw_alloc(const struct tio_hw *hw, const char *list, size_t size, const char *what,
                   struct tio_err *err);
void tio_hw_free(const struct tio_hw *hw, void *p, size_t size);

#endif
