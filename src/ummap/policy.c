/* Evict policies (seed 000 §6.2). Resident segments sit in a queue in the order they were
 * loaded; PLRU also moves a segment to the back when it faults again (its first write), the
 * only accesses a user-level engine sees. FIFO and PLRU take victims from the front, LIFO
 * from the back, PRND at random; WIRO (writes in, reads out) takes clean segments first
 * (evicting them costs no write), front first (WIRO_F) or back first (WIRO_L). */
#include "ummap/engine.h"
#include "ummap/keys.h"

static void append_locked(struct tio_umap *m, size_t i) {
    m->seg[i].next = -1;
    m->seg[i].prev = m->qtail;
    if (m->qtail >= 0) m->seg[m->qtail].next = (int32_t)i;
    else m->qhead = (int32_t)i;
    m->qtail = (int32_t)i;
}

void tio_um_queue_push(struct tio_umap *m, size_t i) {
    pthread_mutex_lock(&m->qlock);
    append_locked(m, i);
    pthread_mutex_unlock(&m->qlock);
}

static void unlink_locked(struct tio_umap *m, size_t i) {
    struct tio_umseg *s = &m->seg[i];
    if (s->prev >= 0) m->seg[s->prev].next = s->next;
    else m->qhead = s->next;
    if (s->next >= 0) m->seg[s->next].prev = s->prev;
    else m->qtail = s->prev;
    s->prev = s->next = -1;
}

void tio_um_queue_remove(struct tio_umap *m, size_t i) {
    pthread_mutex_lock(&m->qlock);
    unlink_locked(m, i);
    pthread_mutex_unlock(&m->qlock);
}

void tio_um_queue_touch(struct tio_umap *m, size_t i) {
    pthread_mutex_lock(&m->qlock);
    if (m->qtail != (int32_t)i) {
        unlink_locked(m, i);
        append_locked(m, i);
    }
    pthread_mutex_unlock(&m->qlock);
}

/* Walk the queue from the front (dir 0) or the back (dir 1), taking segments for which
 * want_clean says yes (-1: any). */
static size_t walk(struct tio_umap *m, int back, int want_clean, size_t *out, size_t n,
                   size_t max, size_t skip) {
    for (int32_t j = back ? m->qtail : m->qhead; j >= 0 && n < max;
         j = back ? m->seg[j].prev : m->seg[j].next) {
        if ((size_t)j == skip) continue;
        if (want_clean >= 0 &&
            (atomic_load(&m->seg[j].state) == TIO_SEG_CLEAN) != want_clean) continue;
        out[n++] = (size_t)j;
    }
    return n;
}

static uint64_t next_random(struct tio_umap *m) { /* xorshift64 */
    uint64_t x = m->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return m->rng = x;
}

size_t tio_um_victims(struct tio_umap *m, size_t *out, size_t max, size_t skip) {
    size_t n = 0;
    pthread_mutex_lock(&m->qlock);
    switch (m->ptype) {
    case UMMAP_PTYPE_LIFO:
        n = walk(m, 1, -1, out, 0, max, skip);
        break;
    case UMMAP_PTYPE_PRND:
        /* Random resident segments: a random starting segment, then the next resident
         * ones in address order (wrapping). */
        if (m->qhead >= 0) {
            size_t start = (size_t)(next_random(m) % m->nseg);
            for (size_t k = 0; k < m->nseg && n < max; k++) {
                size_t j = (start + k) % m->nseg;
                if (j != skip && atomic_load(&m->seg[j].state) != TIO_SEG_ABSENT) out[n++] = j;
            }
        }
        break;
    case UMMAP_PTYPE_WIRO_F:
    case UMMAP_PTYPE_WIRO_L: {
        int back = m->ptype == UMMAP_PTYPE_WIRO_L;
        n = walk(m, back, 1, out, 0, max, skip);
        n = walk(m, back, 0, out, n, max, skip);
        break;
    }
    default: /* FIFO, PLRU */
        n = walk(m, 0, -1, out, 0, max, skip);
        break;
    }
    pthread_mutex_unlock(&m->qlock);
    return n;
}

/* The policies' names, by UMMAP_PTYPE_* value, for the storage-window hint that picks one
 * (win/hints.c) and its reference; the original library's numbers are accepted too. */
const struct tio_key_word tio_um_policy_words[] = {
    {"fifo", UMMAP_PTYPE_FIFO}, {"lifo", UMMAP_PTYPE_LIFO},     {"plru", UMMAP_PTYPE_PLRU},
    {"prnd", UMMAP_PTYPE_PRND}, {"wiro_f", UMMAP_PTYPE_WIRO_F}, {"wiro_l", UMMAP_PTYPE_WIRO_L},
    {"0", UMMAP_PTYPE_FIFO},    {"1", UMMAP_PTYPE_LIFO},        {"2", UMMAP_PTYPE_PLRU},
    {"3", UMMAP_PTYPE_PRND},    {"4", UMMAP_PTYPE_WIRO_F},      {"5", UMMAP_PTYPE_WIRO_L},
    {NULL, 0}};
