/* How much memory this process can really use: the smaller of the kernel's
 * MemAvailable and the room left under the process's memory cgroup and every ancestor
 * of it (v1 or v2). */
#ifndef TIO_TIER_MEMAVAIL_H
#define TIO_TIER_MEMAVAIL_H

#include <stdint.h>

/* Bytes available, or 0 if nothing could be read. */
uint64_t tio_mem_available(void);
/* A field of /proc/meminfo ("MemTotal", "MemAvailable"...) in bytes; 0 if absent. */
uint64_t tio_meminfo(const char *field);

/* The room under the memory cgroups of a process, UINT64_MAX when none limits it: the
 * smallest limit - usage over its cgroup and the ancestors its mount shows (v2
 * memory.max - memory.current; v1 memory.limit_in_bytes - memory.usage_in_bytes, up to
 * the first parent with memory.use_hierarchy 0), the usage without the inactive file
 * pages of memory.stat (page cache the kernel reclaims first). mountinfo and self_cgroup are the texts
 * of /proc/self/mountinfo and /proc/self/cgroup; tio_mem_available passes the real ones,
 * tests a made-up hierarchy. A level whose limit cannot be read limits nothing; one
 * whose usage cannot be read counts as empty. */
uint64_t tio_cgroup_room(const char *mountinfo, const char *self_cgroup);

#endif
