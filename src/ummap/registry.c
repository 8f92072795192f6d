/* The process's mappings, sorted by address, and the engine's process-wide parts (fault
 * handlers, I/O thread, memory budget), started with the first mapping and stopped with
 * the last so that a process without mappings has no extra threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ummap/engine.h"
#include "ummap/memnode.h"

static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct tio_umap **maps;
static size_t nmaps, capmaps;

static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;
static int users;
static tio_memnode_t *memnode;
static atomic_uint total_reads, total_writes;

tio_memnode_t *tio_um_memnode(void) { return memnode; }

void tio_um_count_io(unsigned reads, unsigned writes) {
    atomic_fetch_add(&total_reads, reads);
    atomic_fetch_add(&total_writes, writes);
}

void tio_um_totals(unsigned *reads, unsigned *writes) {
    *reads = atomic_load(&total_reads);
    *writes = atomic_load(&total_writes);
}

int tio_um_engine_acquire(void) {
    pthread_mutex_lock(&life_lock);
    int rc = 0;
    if (users == 0) {
        rc = tio_memnode_join(&memnode);
        if (!rc && (rc = tio_uffd_start()) != 0) tio_memnode_leave(memnode);
        if (!rc && (rc = tio_um_iothread_start()) != 0) {
            tio_uffd_stop();
            tio_memnode_leave(memnode);
        }
        if (rc) memnode = NULL;
    }
    if (!rc) users++;
    pthread_mutex_unlock(&life_lock);
    return rc;
}

void tio_um_engine_release(void) {
    pthread_mutex_lock(&life_lock);
    if (--users == 0) {
        tio_um_iothread_stop();
        tio_uffd_stop();
        tio_memnode_leave(memnode);
        memnode = NULL;
    }
    pthread_mutex_unlock(&life_lock);
}

/* Index of the first mapping whose base is above addr. */
static size_t upper(const char *addr) {
    size_t lo = 0, hi = nmaps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (maps[mid]->base <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static struct tio_umap *find(const char *addr) {
    size_t k = upper(addr);
    if (k == 0) return NULL;
    struct tio_umap *m = maps[k - 1];
    return addr < m->base + m->span ? m : NULL;
}

int tio_um_register(struct tio_umap *m) {
    pthread_rwlock_wrlock(&reg_lock);
    int rc = 0;
    if (nmaps == capmaps) {
        size_t nc = capmaps ? 2 * capmaps : 8;
        struct tio_umap **nm = realloc(maps, nc * sizeof *nm);
        if (!nm) rc = ENOMEM;
        else maps = nm, capmaps = nc;
    }
    if (!rc) {
        size_t k = upper(m->base);
        memmove(maps + k + 1, maps + k, (nmaps - k) * sizeof *maps);
        maps[k] = m;
        nmaps++;
    }
    pthread_rwlock_unlock(&reg_lock);
    return rc;
}

struct tio_umap *tio_um_unregister(void *addr) {
    pthread_rwlock_wrlock(&reg_lock);
    struct tio_umap *m = find(addr);
    if (m) {
        size_t k = upper(m->base) - 1;
        memmove(maps + k, maps + k + 1, (nmaps - k - 1) * sizeof *maps);
        nmaps--;
        if (!nmaps) {
            free(maps);
            maps = NULL;
            capmaps = 0;
        }
    }
    pthread_rwlock_unlock(&reg_lock);
    return m;
}

int tio_um_with(void *addr, int (*fn)(struct tio_umap *m, void *arg), void *arg) {
    pthread_rwlock_rdlock(&reg_lock);
    struct tio_umap *m = find(addr);
    int rc = m ? fn(m, arg) : EINVAL;
    pthread_rwlock_unlock(&reg_lock);
    return rc;
}

int tio_um_each_locked(int (*fn)(struct tio_umap *m, void *arg), void *arg) {
    int rc = 0;
    for (size_t k = 0; k < nmaps && !rc; k++) rc = fn(maps[k], arg);
    return rc;
}

int tio_um_each(int (*fn)(struct tio_umap *m, void *arg), void *arg) {
    pthread_rwlock_rdlock(&reg_lock);
    int rc = tio_um_each_locked(fn, arg);
    pthread_rwlock_unlock(&reg_lock);
    return rc;
}
