/* Node-wide memory budget of the ummap engine (seed 000 §6.2, DESIGN.md contract 2).
 *
 * The processes of one node that use ummap share one limit (UMMAP_MEM_LIMIT, or the memory
 * available times UMMAP_MEM_FACTOR). In static mode (UMMAP_MEMCONFIG=static, default) each
 * process may keep limit / local_processes bytes of segments resident. In dynamic mode a
 * process may exceed its share while the node as a whole is under the limit; when the node
 * is full, processes over their share are asked to give back half of their excess.
 *
 * The engine calls these under its own lock; they are thread-safe regardless. */
#ifndef TIO_UMMAP_MEMNODE_H
#define TIO_UMMAP_MEMNODE_H

#include <stddef.h>

typedef struct tio_memnode tio_memnode_t;

/* Join the node's group (created by the first process, found by the others); reads the
 * environment. Returns 0 or an errno value. */
int tio_memnode_join(tio_memnode_t **out);
/* Leave: this process's bytes are returned; the last process removes the shared object. */
void tio_memnode_leave(tio_memnode_t *m);

/* Account n more resident bytes to this process. Returns how many bytes the caller must
 * evict now to respect its limit (0: none). The n bytes are charged either way; the caller
 * calls tio_memnode_release() for what it evicts. */
size_t tio_memnode_charge(tio_memnode_t *m, size_t n);
void tio_memnode_release(tio_memnode_t *m, size_t n);

/* For the engine's I/O thread: wait up to timeout_ms for a request to give memory back.
 * Returns the bytes this process should evict now (0 on timeout or nothing to do). */
size_t tio_memnode_reclaim_wait(tio_memnode_t *m, unsigned timeout_ms);
/* Wake a thread blocked in tio_memnode_reclaim_wait (engine shutdown). */
void tio_memnode_wake(tio_memnode_t *m);

/* What the process may keep resident now, and the node's limit (for statistics, tests). */
size_t tio_memnode_share(const tio_memnode_t *m);
size_t tio_memnode_limit(const tio_memnode_t *m);
int tio_memnode_dynamic(const tio_memnode_t *m);

#endif
