/* Measuring a tier here (`tierio probe`): bandwidths and latency of memory (a buffer the
 * caller allocated where the tier is) and of a storage directory (a probe file, always
 * removed). Small and quick: a few passes over tens of MiB. */
#ifndef TIO_TIER_PROBE_H
#define TIO_TIER_PROBE_H

#include <stddef.h>

#include "util/error.h"

struct tio_probe {
    double read_bw, write_bw; /* B/s, best of a few passes */
    double latency;           /* s: a dependent load (memory), a 4 KiB write made durable
                                 (storage), median */
    int direct;               /* storage: the read bypassed the page cache (O_DIRECT) */
};

/* buf: size bytes (>= 1 MiB) of the memory to measure; its content is overwritten. */
int tio_probe_memory(void *buf, size_t size, struct tio_probe *out, struct tio_err *err);

/* Writes, syncs and reads back a file of size bytes (a multiple of 1 MiB) in dir, named
 * .tierio-probe.<host>.<pid> and created exclusively, then removes it, also on error.
 * tio_probe_file_path is the probe file in use ("" when none), so that a signal handler
 * can remove it (unlink is async-signal-safe). */
int tio_probe_storage(const char *dir, size_t size, struct tio_probe *out, struct tio_err *err);
extern char tio_probe_file_path[4200];

#endif
