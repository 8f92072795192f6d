/* The engine's environment variables (DESIGN.md contract 2 and docs/ummap_memory.md).
 * UMMAP_BULK_SYNC, UMMAP_DRIVER and TIERIO_UMMAP_HANDLERS are read through this table
 * where they are used; the node memory group's variables are read by memnode_env.c,
 * whose rules (launcher variables as fallbacks) this table documents and whose parsers
 * its hooks are. */
#include "ummap/keys.h"
#include "util/values.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ummap/driver.h"
#include "ummap/memnode_env.h"

struct tio_um_env {
    int bulk_sync;
    char driver[16];
    int handlers;
    int dynamic;
    uint64_t limit;
    double factor;
    uint32_t procs;
    char key[256];
};

int tio_um_driver_known(const struct tio_key *k, const char *val, void *s, const char **why,
                        char *buf, size_t len)
{
    (void)k;
    (void)s;
    if (tio_umdrv_find(val))
        return 0;
    char names[128];
    tio_umdrv_names(names, sizeof names);
    snprintf(buf, len, "expected %s (the I/O drivers of this build)", names);
    return *why = buf, -1;
}

static int mem_limit(const struct tio_key *k, const char *val, void *s, const char **why,
                     char *buf, size_t len)
{
    (void)buf;
    (void)len;
    if (tio_memnode_parse_size(val, (uint64_t *)((char *)s + k->off)))
        return *why = "expected a positive number of bytes, optionally with " TIO_SIZE_UNITS,
               -1;
    return 0;
}

static int mem_factor(const struct tio_key *k, const char *val, void *s, const char **why,
                      char *buf, size_t len)
{
    (void)buf;
    (void)len;
    char *end;
    double f = strtod(val, &end);
    if (end == val || *end || !isfinite(f) || f <= 0 || f > 1)
        return *why = "expected a number greater than 0 and at most 1", -1;
    *(double *)((char *)s + k->off) = f;
    return 0;
}

static const struct tio_key_word bulk_words[] = {
    {"0", 0}, {"1", 1}, {"false", 0}, {"true", 1}, {"no", 0},
    {"yes", 1}, {"off", 0}, {"on", 1}, {NULL, 0}};
static const struct tio_key_word memconfig_words[] = {{"static", 0}, {"dynamic", 1}, {NULL, 0}};

#define F(m) TIO_KEY_FIELD(struct tio_um_env, m)
static const struct tio_key keys[] = {
    {.env = "UMMAP_BULK_SYNC", .type = TIO_KEY_CHOICE, .words = bulk_words, .nocase = 1,
     .def = "0", F(bulk_sync), .values = "1 | 0 (true/false, yes/no, on/off)",
     .doc = "umsync and the I/O thread coalesce contiguous dirty segments into one write "
            "(ummap_opts.bulk_sync < 0 defers to it)."},
    {.env = "UMMAP_DRIVER", .type = TIO_KEY_STRING, .parse = tio_um_driver_known, F(driver),
     .def_doc = "posix", .values = "posix | direct | uring (where liburing exists)",
     .doc = "I/O driver of mappings that name none (hint storage_alloc_driver, "
            "ummap_opts.driver)."},
    {.env = "TIERIO_UMMAP_HANDLERS", .type = TIO_KEY_UINT, .lo = 1, .hi = TIO_UM_HANDLERS_MAX, .def = "2",
     F(handlers), .values = "1 .. 16",
     .doc = "threads serving userfaultfd events of the process's mappings."},
    {.env = "UMMAP_MEMCONFIG", .type = TIO_KEY_CHOICE, .words = memconfig_words, .nocase = 1,
     .def = "static", F(dynamic), .values = "static | dynamic",
     .doc = "the node memory limit is split evenly among the processes (static) or shared "
            "as they need it (dynamic); docs/ummap_memory.md."},
    {.env = "UMMAP_MEM_LIMIT", .type = TIO_KEY_CUSTOM, .parse = mem_limit, F(limit),
     .def_doc = "UMMAP_MEM_FACTOR x available memory",
     .values = "a size (bytes, or with a unit: see Sizes above)",
     .doc = "memory for segments on the whole node."},
    {.env = "UMMAP_MEM_FACTOR", .type = TIO_KEY_CUSTOM, .parse = mem_factor, F(factor),
     .def = "0.9", .values = "0 < f <= 1",
     .doc = "share of the available memory (MemAvailable and the memory cgroup) used when "
            "UMMAP_MEM_LIMIT is not set."},
    {.env = "UMMAP_NODE_PROCS", .type = TIO_KEY_UINT, .lo = 1, .hi = TIO_MEMNODE_MAX_PROCS,
     F(procs), .def_doc = "the launcher's (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS), "
                          "else the processes joined",
     .values = "1 .. 1048576", .doc = "processes that share the node's limit."},
    {.env = "UMMAP_NODE_KEY", .type = TIO_KEY_STRING, F(key),
     .def_doc = "the job's (PMIX_NAMESPACE, hydra, SLURM_JOB_ID.SLURM_STEP_ID, parent)",
     .values = "text", .doc = "names the group of processes that share one node limit."},
};
#undef F

TIO_SETTINGS_TABLE(tio_um_env_table, 60, "user-level mmap engine (environment)", "ummap.md",
                   keys, struct tio_um_env)


int tio_um_env_bulk_sync(struct tio_err *err)
{
    struct tio_um_env e;
    return tio_settings_env_one(&tio_um_env_table, "UMMAP_BULK_SYNC", &e, err) ? -1
                                                                               : e.bulk_sync;
}

const char *tio_um_env_driver(char *out, size_t len, struct tio_err *err)
{
    struct tio_um_env e;
    if (tio_settings_env_one(&tio_um_env_table, "UMMAP_DRIVER", &e, err))
        return NULL;
    snprintf(out, len, "%s", e.driver);
    return out;
}

int tio_um_env_handlers(struct tio_err *err)
{
    struct tio_um_env e;
    return tio_settings_env_one(&tio_um_env_table, "TIERIO_UMMAP_HANDLERS", &e, err)
               ? -1
               : e.handlers;
}
