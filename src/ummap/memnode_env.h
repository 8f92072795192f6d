/* The configuration of a node memory group (memnode.c), read from the environment:
 * which group (the key, hence the shared object's name), its limit, its mode and how many
 * processes share it. Pure functions of the environment and /proc, so that they can be
 * unit-tested; docs/ummap_memory.md has the rules. */
#ifndef TIO_UMMAP_MEMNODE_ENV_H
#define TIO_UMMAP_MEMNODE_ENV_H

#include <stdint.h>

#define TIO_MEMNODE_DEFAULT_FACTOR 0.9
#define TIO_MEMNODE_MAX_PROCS 1048576u
#define TIO_MEMNODE_PREFIX "tierio-memnode-"

struct tio_memnode_config {
    char key[256];          /* the group key (shortened if longer) */
    const char *key_source; /* "UMMAP_NODE_KEY", "PMIX_NAMESPACE", ... (static string) */
    char name[128];         /* shm object name: "/tierio-memnode-<uid>-<hash>-<key>" */
    uint64_t limit;         /* bytes for the whole node */
    uint32_t nprocs;        /* processes that share the limit; 0: those joined */
    const char *nprocs_source;
    int dynamic;
    int limit_explicit, mode_explicit, nprocs_explicit; /* set by UMMAP_* variables */
};

/* Read UMMAP_NODE_KEY, UMMAP_MEM_LIMIT, UMMAP_MEM_FACTOR, UMMAP_MEMCONFIG,
 * UMMAP_NODE_PROCS and the launcher's variables. Returns 0, EINVAL for an invalid value
 * or ENOMEM when no limit is set and no memory is available (both with a log message
 * naming the variable). */
int tio_memnode_config_read(struct tio_memnode_config *c);

/* A size as everywhere in tierio (util/values.h: "64Ki", "2Gi" are powers of 1024, "2G"
 * of 1000) -> bytes. Returns 0, or EINVAL for anything else, 0 and values beyond 64
 * bits. */
int tio_memnode_parse_size(const char *s, uint64_t *out);

/* The shm object name of a key for a user: "/tierio-memnode-<uid>-<16 hex>-<key part>". */
void tio_memnode_object_name(char *out, unsigned long len, unsigned uid, const char *key);

#endif
