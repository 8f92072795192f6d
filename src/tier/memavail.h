/* How much memory this process can really use: the smaller of the kernel's
 * MemAvailable and the room left under the process's memory cgroup (v1 or v2). */
#ifndef TIO_TIER_MEMAVAIL_H
#define TIO_TIER_MEMAVAIL_H

#include <stdint.h>

/* Bytes available, or 0 if nothing could be read. */
uint64_t tio_mem_available(void);
/* A field of /proc/meminfo ("MemTotal", "MemAvailable"...) in bytes; 0 if absent. */
uint64_t tio_meminfo(const char *field);

#endif
