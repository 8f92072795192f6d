/* Node-wide memory budget of the ummap engine (seed 000 §6.2, DESIGN.md contract 2).
 *
 * The processes of one node that use ummap share one limit (UMMAP_MEM_LIMIT, or the memory
 * available times UMMAP_MEM_FACTOR). In static mode (UMMAP_MEMCONFIG=static, default) each
 * process may keep limit / local_processes bytes of segments resident. In dynamic mode a
 * process may exceed its share while the node as a whole is under the limit; when the node
 * is full, processes over their share are asked to give back half of their excess.
 *
 * The group of a process, where the number of local processes comes from, and what is
 * left in /dev/shm are described in docs/ummap_memory.md.
 *
 * Thread-safe: every call may be made from any thread, except that the object must not be
 * used after the tio_memnode_leave that drops the last reference. A child created by
 * fork() is not a member: the object it inherits is inert (charges nothing, asks nothing)
 * and a tio_memnode_join in the child makes a membership of its own. */
#ifndef TIO_UMMAP_MEMNODE_H
#define TIO_UMMAP_MEMNODE_H

#include <stddef.h>

typedef struct tio_memnode tio_memnode_t;

/* Join the node's group (created by the first process, found by the others), reading
 * the environment. A process that is already a member gets the same object again, with
 * one more reference (the environment is not read again). Returns 0 or an errno value
 * (*out is then NULL), each also logged with the reason: EINVAL for an invalid UMMAP_* or
 * launcher variable, or an explicit setting that differs from the group's; ENOMEM when no
 * limit is set and no memory is available; ENOSPC when /dev/shm has no room for the
 * group's object or the group has 1024 processes already; EPROTO when the name is held
 * by something that is not a group of this version; EACCES when another user owns it;
 * the errors of shm_open. */
int tio_memnode_join(tio_memnode_t **out);
/* Drop a reference; with the last one this process's bytes are returned and it leaves
 * the group. The last process to leave removes the shared object. NULL is ignored. */
void tio_memnode_leave(tio_memnode_t *m);

/* Account n more resident bytes to this process. Returns how many bytes the caller must
 * evict now to respect its limit (0: none): static mode, what is over its share; dynamic
 * mode, what the node is over its limit, as far as this process is over its share (when
 * it is not, the processes over their share are asked instead). A request from another
 * process that is pending is served here too, if larger. The n bytes are charged either
 * way; the caller calls tio_memnode_release() for what it evicts. */
size_t tio_memnode_charge(tio_memnode_t *m, size_t n);
/* Return n bytes (evicted, unmapped). What is released counts towards a pending request. */
void tio_memnode_release(tio_memnode_t *m, size_t n);

/* For the engine's I/O thread: wait up to timeout_ms for a request to give memory back.
 * Returns the bytes this process should evict now: what another process asked for
 * (dynamic mode), or, in static mode when the shares shrank because a process joined,
 * what is over the new share. 0 on timeout, after tio_memnode_wake, or with nothing to
 * do. A request is handed out once (here or by tio_memnode_charge). */
size_t tio_memnode_reclaim_wait(tio_memnode_t *m, unsigned timeout_ms);
/* Make tio_memnode_reclaim_wait return 0 now (engine shutdown, or a kick to its thread).
 * A wake while nobody waits is kept for the next wait. */
void tio_memnode_wake(tio_memnode_t *m);

/* This process's fair share (limit / local processes: what static mode lets it keep, and
 * the level dynamic mode never asks it to go below), the node's limit, and the mode. */
size_t tio_memnode_share(const tio_memnode_t *m);
size_t tio_memnode_limit(const tio_memnode_t *m);
int tio_memnode_dynamic(const tio_memnode_t *m);

#endif
