/* A 4-byte lock per segment (a futex, as in the original's segment header), so that a
 * mapping of a million small segments does not carry a million pthread mutexes. */
#ifndef TIO_UMMAP_SEGLOCK_H
#define TIO_UMMAP_SEGLOCK_H

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline void tio_seglock(_Atomic uint32_t *f) {
    uint32_t c = 0;
    if (atomic_compare_exchange_strong(f, &c, 1)) return;
    if (c != 2) c = atomic_exchange(f, 2);
    while (c != 0) {
        syscall(SYS_futex, f, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange(f, 2);
    }
}

static inline int tio_segtrylock(_Atomic uint32_t *f) {
    uint32_t c = 0;
    return atomic_compare_exchange_strong(f, &c, 1) ? 0 : EBUSY;
}

static inline void tio_segunlock(_Atomic uint32_t *f) {
    if (atomic_fetch_sub(f, 1) != 1) {
        atomic_store(f, 0);
        syscall(SYS_futex, f, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

#endif
