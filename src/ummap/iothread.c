/* The I/O thread of the process (seed 000 §6.1.1, like the kernel's flusher threads): writes
 * back segments that have been dirty for longer than their mapping's flush_interval, and
 * gives memory back when the node's budget asks for it (dynamic mode). */
#include <errno.h>
#include <string.h>

#include "ummap/engine.h"
#include "ummap/memnode.h"
#include "util/log.h"

static struct {
    pthread_t thread;
    int running;
    atomic_int stop;
} T;

/* How long to wait before the next pass: half the shortest flush interval, so a segment is
 * written within 1.5 intervals of its first write; between 10 ms and 1 s. */
static int shortest_cb(struct tio_umap *m, void *p) {
    unsigned *ms = p;
    if (m->flush_interval != UMMAP_NO_FLUSH) {
        unsigned half = m->flush_interval > 2000 ? 1000 : m->flush_interval * 500;
        if (half < *ms) *ms = half;
    }
    return 0;
}

static int flush_cb(struct tio_umap *m, void *p) {
    (void)p;
    if (m->flush_interval == UMMAP_NO_FLUSH || !atomic_load(&m->dirty)) return 0;
    int rc = tio_um_writeback(m, (uint64_t)m->flush_interval * 1000000000u, 0);
    if (rc) TIO_WARN("ummap: implicit write-back failed: %s (the data stays dirty)", strerror(rc));
    return atomic_load(&T.stop);
}

static void *io_main(void *unused) {
    (void)unused;
    while (!atomic_load(&T.stop)) {
        unsigned ms = 1000;
        tio_um_each(shortest_cb, &ms);
        if (ms < 10) ms = 10;
        size_t give = tio_memnode_reclaim_wait(tio_um_memnode(), ms);
        if (atomic_load(&T.stop)) break;
        if (give) tio_um_evict(NULL, (size_t)-1, give);
        tio_um_each(flush_cb, NULL);
    }
    return NULL;
}

int tio_um_iothread_start(void) {
    atomic_store(&T.stop, 0);
    int rc = pthread_create(&T.thread, NULL, io_main, NULL);
    T.running = rc == 0;
    return rc;
}

void tio_um_iothread_kick(void) { tio_memnode_wake(tio_um_memnode()); }

void tio_um_iothread_stop(void) {
    if (!T.running) return;
    atomic_store(&T.stop, 1);
    tio_memnode_wake(tio_um_memnode());
    pthread_join(T.thread, NULL);
    T.running = 0;
}
