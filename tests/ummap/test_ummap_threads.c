/* Threads on one ummap mapping: 8 worker threads fault the same and different segments at
 * once (private segments per thread, segments whose bytes are interleaved among all
 * threads, cold read-only segments every thread reads), while another thread calls
 * umsync with and without evict and reads the statistics, the engine's I/O thread writes
 * dirty segments back on its own, and a memory limit of a third of the mapping forces
 * evictions all the time. The final content must be exact, in memory and in the file;
 * after the workers stop, the I/O thread alone must bring the file up to date (no
 * umsync). Then 4 threads create, use and release their own mappings concurrently.
 *
 *   test_ummap_threads [--seed N] [--flush 0|1]   (default: both flush intervals) */
#include "umtest.h"

#include <stdatomic.h>

#define NT 8          /* worker threads */
#define ROUNDS 24      /* at least; more until the sync thread has made MIN_SYNCS calls */
#define MAX_ROUNDS 20000
#define MIN_SYNCS 16
#define NSEG 40
#define PRIV 16       /* segments 0..15: thread t owns 2t and 2t+1 */
#define SHARED 4      /* segments 16..19: byte i belongs to thread i % NT */
#define LIMIT_SEGS 13 /* of 40 */

static size_t SEG, SIZE;
static unsigned char *map, *orig;
static pthread_barrier_t start;
static volatile int workers_done;
static atomic_uint sync_calls; /* the sync thread's calls so far */
static uint64_t seed;

static unsigned char priv_byte(int t, int r, size_t i) { return (unsigned char)(t * 31 + r * 7 + i * 13 + (i >> 11)); }
static unsigned char shared_byte(int t, int r, size_t i) { return (unsigned char)(t + r * 8 + (i >> 3) * 5); }

struct worker {
    int t, last; /* the last round written */
    char err[256];
};

#define WFAIL(w, ...)                                                                 \
    do {                                                                              \
        snprintf((w)->err, sizeof (w)->err, __VA_ARGS__);                             \
        return NULL;                                                                  \
    } while (0)

static void *worker(void *arg)
{
    struct worker *w = arg;
    const int t = w->t;
    uint64_t rng = seed + (uint64_t)t * 7919;
    pthread_barrier_wait(&start);
    for (int r = 0; r < MAX_ROUNDS && (r < ROUNDS || atomic_load(&sync_calls) < MIN_SYNCS); r++) {
        w->last = r;
        /* own segments: write, read back */
        for (int s = 2 * t; s < 2 * t + 2; s++) {
            unsigned char *p = map + (size_t)s * SEG;
            for (size_t i = 0; i < SEG; i++)
                p[i] = priv_byte(t, r, (size_t)s * SEG + i);
        }
        for (int s = 2 * t; s < 2 * t + 2; s++) {
            const unsigned char *p = map + (size_t)s * SEG;
            for (size_t i = 0; i < SEG; i++)
                if (p[i] != priv_byte(t, r, (size_t)s * SEG + i))
                    WFAIL(w, "thread %d round %d: own segment %d byte %zu is 0x%02x, "
                          "expected 0x%02x", t, r, s, i, p[i],
                          priv_byte(t, r, (size_t)s * SEG + i));
        }
        /* interleaved bytes of the shared segments, starting at a different segment */
        for (int k = 0; k < SHARED; k++) {
            size_t s = PRIV + (size_t)((k + t) % SHARED);
            unsigned char *p = map + s * SEG;
            for (size_t i = (size_t)t; i < SEG; i += NT)
                p[i] = shared_byte(t, r, s * SEG + i);
        }
        /* cold, never written segments: every thread reads some, often the same */
        for (int k = 0; k < 3; k++) {
            size_t s = PRIV + SHARED + um_below(&rng, NSEG - PRIV - SHARED);
            size_t a = um_below(&rng, SEG), n = 1 + um_below(&rng, 2 * SEG);
            if (s * SEG + a + n > SIZE)
                n = SIZE - s * SEG - a;
            long d = tt_first_diff(map + s * SEG + a, orig + s * SEG + a, n);
            if (d >= 0)
                WFAIL(w, "thread %d round %d: cold segment %zu byte %zu is 0x%02x, file has "
                      "0x%02x", t, r, s, a + (size_t)d, map[s * SEG + a + (size_t)d],
                      orig[s * SEG + a + (size_t)d]);
        }
    }
    return NULL;
}

struct syncer {
    unsigned calls, evicting;
    size_t max_resident;
    char err[256];
};

static void *syncer(void *arg)
{
    struct syncer *s = arg;
    pthread_barrier_wait(&start);
    while (!workers_done) {
        int evict = s->calls % 2;
        int rc = umsync(map + (s->calls % NSEG) * SEG, evict); /* any address inside */
        if (rc)
            WFAIL(s, "umsync(evict=%d) returned %d (%s)", evict, rc, strerror(rc));
        s->calls++;
        atomic_store(&sync_calls, s->calls);
        s->evicting += (unsigned)evict;
        tio_ummap_stats_t st;
        rc = tio_ummap_stats(map, &st);
        if (rc)
            WFAIL(s, "tio_ummap_stats returned %d (%s)", rc, strerror(rc));
        if (st.resident > s->max_resident)
            s->max_resident = st.resident;
    }
    return NULL;
}

static void expected(unsigned char *exp, const struct worker *w)
{
    memcpy(exp, orig, SIZE);
    for (int t = 0; t < NT; t++)
        for (size_t i = 2 * (size_t)t * SEG; i < (2 * (size_t)t + 2) * SEG; i++)
            exp[i] = priv_byte(t, w[t].last, i);
    for (size_t i = PRIV * SEG; i < (PRIV + SHARED) * SEG; i++)
        exp[i] = shared_byte((int)(i % NT), w[(int)(i % NT)].last, i);
}

static void run_shared_mapping(const char *dir, unsigned flush)
{
    char what[64], path[4200];
    snprintf(what, sizeof what, "8 threads, flush_interval %u", flush);
    CASE(what);
    snprintf(path, sizeof path, "%s/threads-%u.dat", dir, flush);
    uint64_t rng = seed;
    um_fill_rand(orig, SIZE, &rng);
    tt_write_file(path, orig, SIZE);
    int fd = um_open(path, O_RDWR);
    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.size = SIZE;
    o.seg_size = SEG;
    o.prot = PROT_READ | PROT_WRITE;
    o.fd = fd;
    o.flush_interval = flush;
    o.ptype = flush ? UMMAP_PTYPE_PLRU : UMMAP_PTYPE_WIRO_F;
    void *p = NULL;
    CHECK_RC(tio_ummap_open(&o, &p), 0);
    close(fd); /* the engine keeps its own descriptor */
    map = p;

    pthread_t th[NT + 1];
    struct worker w[NT];
    struct syncer sy = {0};
    workers_done = 0;
    atomic_store(&sync_calls, 0);
    CHECK(pthread_barrier_init(&start, NULL, NT + 1) == 0);
    for (int t = 0; t < NT; t++) {
        w[t].t = t;
        w[t].last = -1;
        w[t].err[0] = 0;
        CHECK(pthread_create(&th[t], NULL, worker, &w[t]) == 0);
    }
    CHECK(pthread_create(&th[NT], NULL, syncer, &sy) == 0);
    for (int t = 0; t < NT; t++)
        CHECK(pthread_join(th[t], NULL) == 0);
    workers_done = 1;
    CHECK(pthread_join(th[NT], NULL) == 0);
    pthread_barrier_destroy(&start);
    for (int t = 0; t < NT; t++)
        if (w[t].err[0]) {
            fprintf(stderr, "[%s] %s\n", what, w[t].err);
            exit(1);
        }
    if (sy.err[0]) {
        fprintf(stderr, "[%s] sync thread: %s\n", what, sy.err);
        exit(1);
    }
    CHECK(sy.calls >= MIN_SYNCS || w[0].last == MAX_ROUNDS - 1);

    unsigned char *exp = malloc(SIZE);
    expected(exp, w);
    CHECK_BYTES(map, exp, SIZE);
    tio_ummap_stats_t st;
    um_stats(map, &st);
    CHECK(st.evictions > 0);
    CHECK_LE(sy.max_resident, LIMIT_SEGS * SEG);

    /* The I/O thread alone: dirty a few segments, never call umsync, wait for the
     * statistics to show them written back, then the file must be exact. */
    um_stats(map, &st);
    uint64_t writes0 = st.seg_writes;
    unsigned flipped = 0;
    for (size_t s = 0; s < NSEG; s += 5, flipped++) {
        map[s * SEG + 3] ^= 0xff;
        exp[s * SEG + 3] ^= 0xff;
    }
    /* The file itself must come to hold everything (a segment being written counts as
     * clean already: "nothing dirty" alone does not mean "written"). */
    unsigned char *file = malloc(SIZE);
    struct timespec dl = um_deadline(10000);
    int same;
    do {
        CHECK(tt_pread_file(path, file, SIZE, 0) == (ssize_t)SIZE);
        same = !memcmp(file, exp, SIZE);
    } while (!same && !um_expired(&dl));
    um_stats(map, &st);
    if (!same) {
        long d = tt_first_diff(file, exp, SIZE);
        fprintf(stderr, "[%s] the I/O thread did not write back within 10 s: file byte %ld "
                "(segment %ld) differs; %zu bytes dirty, %" PRIu64 " segment writes since "
                "%u segments were dirtied\n", what, d, d / (long)SEG, st.dirty,
                st.seg_writes - writes0, flipped);
        exit(1);
    }
    free(file);
    CHECK_EQ(st.dirty, 0);
    CHECK(st.seg_writes - writes0 >= flipped);
    CHECK_BYTES(map, exp, SIZE);
    printf("%s: exact after %d rounds; %u umsync calls (%u evicting) meanwhile, %" PRIu64 " evictions, "
           "resident at most %zu of %zu\n", what, w[0].last + 1, sy.calls, sy.evicting, st.evictions,
           sy.max_resident, (size_t)LIMIT_SEGS * SEG);
    CHECK_RC(umunmap(map, 0), 0);
    CHECK_FILE(path, 0, exp, SIZE);
    CHECK(!tt_is_mapped(map, SIZE));
    CHECK_OK(unlink(path));
    free(exp);
}

/* ---- own mappings, made and released concurrently ---- */

struct own {
    int t;
    const char *dir;
    char err[256];
};

static void *own_mappings(void *arg)
{
    struct own *w = arg;
    const size_t n = 3 * SEG + 100;
    unsigned char *pat = malloc(n), *back = malloc(n);
    uint64_t rng = seed ^ (uint64_t)(w->t + 1) << 32;
    for (int it = 0; it < 12; it++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/own-%d-%d.dat", w->dir, w->t, it);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
            WFAIL(w, "open %s: %s", path, strerror(errno));
        void *p = NULL;
        off_t off = (off_t)it * 1001;
        int rc = ummap(n, SEG, PROT_READ | PROT_WRITE, fd, off, UMMAP_NO_FLUSH, it % 2,
                       it % 6, &p);
        close(fd);
        if (rc)
            WFAIL(w, "thread %d: ummap returned %d (%s)", w->t, rc, strerror(rc));
        um_fill_rand(pat, n, &rng);
        memcpy(p, pat, n);
        if (it % 3 == 0 && (rc = umsync(p, it % 2)) != 0)
            WFAIL(w, "thread %d: umsync returned %d (%s)", w->t, rc, strerror(rc));
        if (memcmp(p, pat, n))
            WFAIL(w, "thread %d iteration %d: the mapping lost data", w->t, it);
        if ((rc = umunmap(p, 1)) != 0)
            WFAIL(w, "thread %d: umunmap returned %d (%s)", w->t, rc, strerror(rc));
        if (tt_pread_file(path, back, n, off) != (ssize_t)n || memcmp(back, pat, n))
            WFAIL(w, "thread %d iteration %d: %s does not hold the data", w->t, it, path);
        unlink(path);
    }
    free(pat);
    free(back);
    return NULL;
}

int main(int argc, char **argv)
{
    int only_flush = -1;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--flush"))
            only_flush = atoi(argv[i + 1]);
    seed = um_seed(argc, argv);
    printf("seed %" PRIu64 " (replay: --seed %" PRIu64 ")\n", seed, seed);
    SEG = 4 * um_page();
    SIZE = NSEG * SEG;
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", (size_t)LIMIT_SEGS * SEG);
    setenv("UMMAP_MEM_LIMIT", lim, 1);
    setenv("UMMAP_MEMCONFIG", "static", 1);
    um_private_node("threads", 1);
    alarm(120);
    const char *dir = tt_tmpdir("ummap-threads");
    orig = malloc(SIZE);
    for (unsigned flush = 0; flush < 2; flush++)
        if (only_flush < 0 || (unsigned)only_flush == flush)
            run_shared_mapping(dir, flush);

    CASE("4 threads making their own mappings");
    pthread_t th[4];
    struct own w[4];
    for (int t = 0; t < 4; t++) {
        w[t] = (struct own){t, dir, ""};
        CHECK(pthread_create(&th[t], NULL, own_mappings, &w[t]) == 0);
    }
    for (int t = 0; t < 4; t++)
        CHECK(pthread_join(th[t], NULL) == 0);
    for (int t = 0; t < 4; t++)
        if (w[t].err[0]) {
            fprintf(stderr, "[%s] %s\n", tt_current_case, w[t].err);
            return 1;
        }
    CHECK_EQ(tc_count_entries(dir), 0);
    printf("test_ummap_threads: all checks passed\n");
    return 0;
}
