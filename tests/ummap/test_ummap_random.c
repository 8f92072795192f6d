/* Random access sequences on ummap mappings, checked against a reference buffer under a
 * memory limit of 2-4 segments, so that segments are evicted and reloaded all the time.
 * No data may be lost, ever: after every operation that reads, the mapping must hold
 * exactly what the reference says; after every umsync, the file must too (bytes outside
 * the mapped range untouched); the engine's resident bytes (its statistics, and the
 * kernel's count of the range in /proc/self/smaps) never exceed the limit.
 *
 *   test_ummap_random --policy NAME|all --driver posix|uring|direct|all [--seed N] [--ops N]
 *                     [--only I]
 *
 * For the policy and driver asked, every geometry (page segments; 64 KiB segments with a
 * partial last segment at an unaligned offset; read_file=0; a mapping smaller than one
 * segment over a file shorter than the mapping) runs with individual and with bulk
 * synchronisation, each configuration in its own process (the engine reads its
 * environment once per process). Half the configurations set the driver and the bulk
 * mode through the environment and call ummap(); the other half pass them to
 * tio_ummap_open() with the environment saying the opposite (the options win); there the
 * direct driver gets memory congruent with the file (opts.congruent).
 *
 * Operations, mixed at random: memcpy into the mapping and memmove inside it (spanning
 * segment boundaries), single-byte stores, memset, reads compared with the reference,
 * umsync with and without evict, and umremap: to a new file or another region of the
 * same file, with and without sync, and right after an evicting umsync. The view never
 * changes on a remap; the new region is a complete copy after the next umsync (at once
 * when nothing is in memory); after a remap without sync the old region's segments
 * written since the last umsync may hold anything (evictions and the I/O thread write
 * them back); every other byte of every file must be as the model says.
 *
 * The seed is printed; --seed replays a run (with --only to run one configuration).
 * --ops (or TIERIO_TEST_OPS) sets the operations per configuration (default 100). */
#include "umtest.h"

#define NPOL 6
static const char *pol_names[NPOL] = {"fifo", "lifo", "plru", "prnd", "wiro_f", "wiro_l"};
#define NDRV 3
static const char *drv_names[NDRV] = {"posix", "uring", "direct"};

struct geom {
    const char *name;
    size_t seg, size;
    off_t offset;
    unsigned limit_segs;
    int read_file;
    size_t file_len; /* 0: offset + size + a tail; else a file shorter than the mapping */
};

struct config {
    int index, policy, bulk, via_env;
    const char *driver;
    const struct geom *g;
    unsigned flush;
    uint64_t seed;
    int ops;
};

/* ---- the model ---- */

#define MAXFILES 40
struct mfile {
    char path[4200];
    int fd;
    unsigned char *model; /* what the file must hold where known[] */
    unsigned char *known;
    size_t len;           /* bytes of the model (the file may be shorter: then zeros) */
    size_t valid;         /* the file's real length as far as the model knows */
};

static const struct config *C;
static size_t SEG, SIZE, NSEG, LIMIT;
static size_t LEAD; /* bytes of the first page before the mapping (opts.congruent), so that
                     * mapping byte i is in segment (LEAD + i) / SEG */
static unsigned char *map;     /* the mapping */
static unsigned char *ref;     /* what it must hold */
static unsigned char *wmask;   /* read_file=0: bytes written since the region was mapped */
static unsigned char *touched; /* per segment: written since the last successful umsync */
static struct mfile files[MAXFILES];
static int nfiles, cur;        /* files[cur] at cur_off is the mapped region */
static off_t cur_off;
static uint64_t rng;
static const char *dir;
static size_t max_resident, max_rss;
static int nsyncs, nremaps, late_faults; /* late_faults: see do_umsync */
static char where[160];        /* the operation being run, for messages */

#define FAIL(...)                                                                     \
    do {                                                                              \
        fprintf(stderr, "config %d (%s, %s, %s, %s sync, seed %" PRIu64 ") at %s: ",   \
                C->index, pol_names[C->policy], C->driver, C->g->name,                \
                C->bulk ? "bulk" : "individual", C->seed, where);                     \
        fprintf(stderr, __VA_ARGS__);                                                 \
        fprintf(stderr, "\n");                                                        \
        exit(1);                                                                      \
    } while (0)

#define RC(call, want)                                                                \
    do {                                                                              \
        int rc_ = (call);                                                             \
        if (rc_ != (want))                                                            \
            FAIL("%s returned %d (%s), expected %d", #call, rc_, strerror(rc_), (want)); \
    } while (0)

static void check_range(size_t start, size_t len, const char *what)
{
    for (size_t i = start; i < start + len; i++)
        if (map[i] != ref[i]) {
            size_t last = i;
            for (size_t j = i; j < start + len; j++)
                if (map[j] != ref[j])
                    last = j;
            FAIL("%s: mapping byte %zu (segment %zu, +%zu) is 0x%02x, expected 0x%02x "
                 "(differences up to byte %zu of the range %zu..%zu)",
                 what, i, (LEAD + i) / SEG, (LEAD + i) % SEG, map[i], ref[i], last, start,
                 start + len);
        }
}

/* A file as the model says: known bytes equal, and never longer than the model allows. */
static void check_file(int f, const char *what)
{
    struct mfile *m = &files[f];
    off_t real = tt_file_size(m->path);
    if (real < 0)
        FAIL("%s: stat %s: %s", what, m->path, strerror(errno));
    if ((size_t)real > m->len)
        FAIL("%s: %s has %lld bytes, more than the %zu it may have", what, m->path,
             (long long)real, m->len);
    unsigned char *b = calloc(m->len, 1);
    size_t got = 0;
    while (got < (size_t)real) {
        ssize_t r = pread(m->fd, b + got, (size_t)real - got, (off_t)got);
        if (r <= 0)
            FAIL("%s: pread %s: %s", what, m->path, r < 0 ? strerror(errno) : "EOF");
        got += (size_t)r;
    }
    for (size_t i = 0; i < m->len; i++)
        if (m->known[i] && b[i] != m->model[i]) {
            const char *part = "outside any mapped region";
            if (f == cur && (off_t)i >= cur_off && i < (size_t)cur_off + SIZE)
                part = "in the mapped region";
            FAIL("%s: %s byte %zu (%s%s) is 0x%02x, expected 0x%02x", what, m->path, i,
                 part, i >= (size_t)real ? ", beyond the end of the file" : "", b[i],
                 m->model[i]);
        }
    free(b);
}

/* A file of len bytes (0 to valid of them written) with random content. */
static int new_file(size_t len, size_t valid)
{
    if (nfiles == MAXFILES)
        FAIL("too many files");
    struct mfile *m = &files[nfiles];
    snprintf(m->path, sizeof m->path, "%s/f%d.dat", dir, nfiles);
    m->fd = open(m->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (m->fd < 0)
        FAIL("open %s: %s", m->path, strerror(errno));
    m->len = len;
    m->valid = valid;
    m->model = calloc(len, 1);
    m->known = malloc(len);
    memset(m->known, 1, len);
    um_fill_rand(m->model, valid, &rng);
    if (pwrite(m->fd, m->model, valid, 0) != (ssize_t)valid)
        FAIL("pwrite %s: %s", m->path, strerror(errno));
    return nfiles++;
}

/* Write bytes into a file and its model (outside the engine). */
static void put_file(int f, off_t off, const unsigned char *src, size_t n)
{
    struct mfile *m = &files[f];
    if (pwrite(m->fd, src, n, off) != (ssize_t)n)
        FAIL("pwrite %s: %s", m->path, strerror(errno));
    memcpy(m->model + off, src, n);
    memset(m->known + off, 1, n);
    if ((size_t)off + n > m->valid)
        m->valid = (size_t)off + n;
}

/* After a successful umsync: the mapped region of the file holds the reference (with
 * read_file=0, bytes never written hold their old content or zeros, depending on
 * whether the engine wrote their segment). */
static void synced(void)
{
    struct mfile *m = &files[cur];
    for (size_t i = 0; i < SIZE; i++) {
        size_t at = (size_t)cur_off + i;
        if (C->g->read_file || wmask[i]) {
            m->model[at] = ref[i];
            m->known[at] = 1;
        } else if (ref[i] != m->model[at] || at >= m->valid) {
            m->known[at] = 0; /* never written here: old byte or a zero */
        }
    }
    memset(touched, 0, NSEG);
}

static void check_limits(void)
{
    tio_ummap_stats_t st;
    RC(tio_ummap_stats(map, &st), 0);
    if (st.resident > LIMIT)
        FAIL("%zu bytes resident, more than the limit of %zu", st.resident, LIMIT);
    if (st.dirty > st.resident)
        FAIL("%zu bytes dirty but only %zu resident", st.dirty, st.resident);
    size_t rss = um_rss(map, SIZE);
    size_t lim_pages = (LIMIT + um_page() - 1) / um_page() * um_page();
    if (rss > lim_pages)
        FAIL("the kernel counts %zu bytes of the mapping resident, more than the limit of "
             "%zu (statistics say %zu)", rss, LIMIT, st.resident);
    if (st.resident > max_resident)
        max_resident = st.resident;
    if (rss > max_rss)
        max_rss = rss;
}

/* A random range, often starting just before a segment boundary. */
static void pick(size_t *start, size_t *len, size_t maxlen)
{
    size_t s;
    if (um_below(&rng, 2)) {
        size_t b = um_below(&rng, NSEG) * SEG; /* a segment boundary, as a mapping byte */
        b = b > LEAD ? b - LEAD : 0;
        size_t back = um_below(&rng, 100);
        s = b > back ? b - back : 0;
    } else {
        s = um_below(&rng, SIZE);
    }
    if (s >= SIZE)
        s = SIZE - 1;
    size_t room = SIZE - s, most = maxlen < room ? maxlen : room;
    *start = s;
    *len = 1 + um_below(&rng, most);
}

static void mark_written(size_t start, size_t len)
{
    memset(wmask + start, 1, len);
    for (size_t s = (LEAD + start) / SEG; s <= (LEAD + start + len - 1) / SEG; s++)
        touched[s] = 1;
}

static void do_umsync(int evict)
{
    snprintf(where + strlen(where), sizeof where - strlen(where), " umsync(evict=%d)", evict);
    tio_ummap_stats_t st0, st;
    RC(tio_ummap_stats(map, &st0), 0);
    RC(umsync(map, evict), 0);
    nsyncs++;
    synced();
    RC(tio_ummap_stats(map, &st), 0);
    /* A fault handled while umsync ran may leave a segment dirty (or, after evict=1, in
     * memory): a thread that faulted can be woken by the wake for another fault on the
     * same segment, retry and succeed; the message of its second fault is then handled
     * late, after umsync wrote the segment (an extra write or load, no data lost). Only
     * then, one more umsync, which must leave everything clean. */
    if ((st.dirty || (evict && st.resident)) &&
        st.write_faults + st.read_faults != st0.write_faults + st0.read_faults) {
        late_faults++;
        RC(umsync(map, evict), 0);
        RC(tio_ummap_stats(map, &st), 0);
    }
    if (st.dirty != 0)
        FAIL("%zu bytes still dirty after umsync (write faults %" PRIu64 " -> %" PRIu64
             ", read faults %" PRIu64 " -> %" PRIu64 ", evictions %" PRIu64 " -> %" PRIu64
             ", segment writes %" PRIu64 " -> %" PRIu64 ")", st.dirty, st0.write_faults,
             st.write_faults, st0.read_faults, st.read_faults, st0.evictions, st.evictions,
             st0.seg_writes, st.seg_writes);
    if (evict) {
        if (st.resident != 0)
            FAIL("%zu bytes still resident after umsync(evict=1)", st.resident);
        size_t rss = um_rss(map, SIZE);
        if (rss != 0)
            FAIL("the kernel still counts %zu bytes of the mapping resident after "
                 "umsync(evict=1)", rss);
    }
    for (int f = 0; f < nfiles; f++)
        check_file(f, "file after umsync");
}

/* umremap (docs/ummap.md: the view never changes; the next umsync makes the new region a
 * complete copy, segments not in memory are copied right away; with sync, the old region
 * is made complete first). The new region holds other bytes before, so that a copy the
 * engine forgot shows. Variant 0: sync; 1: no sync; 2: after umsync(evict=1), when
 * nothing is in memory and the new region must be complete on return. */
static void do_remap(void)
{
    int variant = (int)um_below(&rng, 3);
    /* the target: another region of the same file when the file has room, else a new file */
    int tf;
    off_t toff;
    size_t need = SIZE + 3000;
    struct mfile *m = &files[cur];
    if (um_below(&rng, 2) && (size_t)cur_off >= need) {
        tf = cur;
        toff = (off_t)um_below(&rng, (size_t)cur_off - SIZE);
    } else if (um_below(&rng, 2) && m->len >= (size_t)cur_off + SIZE + need) {
        tf = cur;
        toff = cur_off + (off_t)SIZE + (off_t)um_below(&rng, m->len - (size_t)cur_off - SIZE - SIZE);
    } else {
        toff = (off_t)um_below(&rng, 5000);
        tf = new_file((size_t)toff + SIZE + 777, (size_t)toff + SIZE + 777);
    }
    int sync = variant == 0 ? 1 : variant == 1 ? 0 : (int)um_below(&rng, 2);
    snprintf(where + strlen(where), sizeof where - strlen(where),
             " umremap(variant %d, sync %d, to %s at %lld)", variant, sync, files[tf].path,
             (long long)toff);
    unsigned char *junk = malloc(SIZE);
    um_fill_rand(junk, SIZE, &rng);
    put_file(tf, toff, junk, SIZE);
    free(junk);
    if (variant == 2) {
        RC(umsync(map, 1), 0);
        synced();
    }
    void *newp = (void *)0x1;
    RC(umremap(map, files[tf].fd, toff, sync, &newp), 0);
    if (newp != map)
        FAIL("umremap returned %p, not the mapping's base %p", newp, (void *)map);
    if (sync) {
        synced(); /* the old region is complete */
    } else {
        /* segments written since the last umsync may hold anything between old and new */
        for (size_t s = 0; s < NSEG; s++)
            if (touched[s]) {
                /* mapping bytes [s*SEG - LEAD, (s+1)*SEG - LEAD) within [0, SIZE) */
                size_t lo = s * SEG > LEAD ? s * SEG - LEAD : 0;
                size_t hi = (s + 1) * SEG - LEAD < SIZE ? (s + 1) * SEG - LEAD : SIZE;
                memset(m->known + (size_t)cur_off + lo, 0, hi - lo);
            }
    }
    struct mfile *t = &files[tf];
    for (size_t i = 0; i < SIZE; i++) {
        size_t at = (size_t)toff + i;
        /* nothing in memory: every segment whose content is on storage was copied */
        if (variant == 2 && (C->g->read_file || wmask[i])) {
            t->model[at] = ref[i];
            t->known[at] = 1;
        } else {
            t->known[at] = 0; /* complete at the next umsync */
        }
    }
    for (int f = 0; f < nfiles; f++)
        check_file(f, variant == 2 ? "files right after umremap of a mapping with nothing in "
                                     "memory" : "files right after umremap");
    cur = tf;
    cur_off = toff;
    nremaps++;
    check_range(0, SIZE, "whole mapping after umremap");
}

static void one_op(int k)
{
    size_t start, len;
    int op = (int)um_below(&rng, 100);
    unsigned char buf[4 * 65536];
    snprintf(where, sizeof where, "op %d", k);
    if (op < 30) { /* memcpy in */
        pick(&start, &len, 3 * SEG < sizeof buf ? 3 * SEG : sizeof buf);
        snprintf(where + strlen(where), sizeof where - strlen(where), " memcpy to %zu+%zu",
                 start, len);
        um_fill_rand(buf, len, &rng);
        memcpy(map + start, buf, len);
        memcpy(ref + start, buf, len);
        mark_written(start, len);
    } else if (op < 38) { /* single-byte stores, a stride over segments */
        pick(&start, &len, 2 * SEG);
        size_t stride = 1 + um_below(&rng, 700);
        snprintf(where + strlen(where), sizeof where - strlen(where),
                 " byte stores %zu+%zu step %zu", start, len, stride);
        for (size_t i = start; i < start + len; i += stride) {
            unsigned char v = (unsigned char)um_rand(&rng);
            ((volatile unsigned char *)map)[i] = v;
            ref[i] = v;
            mark_written(i, 1);
        }
    } else if (op < 44) { /* memset */
        pick(&start, &len, 2 * SEG);
        int v = (int)um_below(&rng, 256);
        snprintf(where + strlen(where), sizeof where - strlen(where), " memset %zu+%zu", start,
                 len);
        memset(map + start, v, len);
        memset(ref + start, v, len);
        mark_written(start, len);
    } else if (op < 50) { /* memmove inside the mapping, ranges may overlap */
        size_t dst;
        pick(&start, &len, 2 * SEG);
        dst = um_below(&rng, SIZE - len + 1);
        snprintf(where + strlen(where), sizeof where - strlen(where), " memmove %zu+%zu to %zu",
                 start, len, dst);
        memmove(map + dst, map + start, len);
        memmove(ref + dst, ref + start, len);
        mark_written(dst, len);
    } else if (op < 88) { /* reads */
        pick(&start, &len, 4 * SEG);
        snprintf(where + strlen(where), sizeof where - strlen(where), " read %zu+%zu", start,
                 len);
        if (um_below(&rng, 2)) {
            check_range(start, len, "read in place");
        } else {
            unsigned char *copy = malloc(len);
            memcpy(copy, map + start, len);
            long d = tt_first_diff(copy, ref + start, len);
            if (d >= 0)
                FAIL("memcpy out of the mapping: byte %zu is 0x%02x, expected 0x%02x",
                     start + (size_t)d, copy[d], ref[start + (size_t)d]);
            free(copy);
        }
    } else if (op < 97) {
        do_umsync((int)um_below(&rng, 2));
    } else {
        do_remap();
    }
    check_limits();
}

static void bulk_check(void)
{
    /* A second mapping: two contiguous dirty segments are one write in bulk mode, two
     * otherwise; two separated ones are two writes either way. */
    snprintf(where, sizeof where, "write-call count");
    int f = new_file(4 * SEG, 4 * SEG);
    void *p = NULL;
    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.size = 4 * SEG;
    o.seg_size = SEG;
    o.prot = PROT_READ | PROT_WRITE;
    o.fd = files[f].fd;
    o.ptype = C->policy;
    o.driver = C->driver;
    o.bulk_sync = C->bulk;
    RC(tio_ummap_open(&o, &p), 0);
    unsigned char *q = p;
    tio_ummap_stats_t a, b;
    q[SEG - 1] = 1;
    q[SEG] = 2;
    RC(tio_ummap_stats(p, &a), 0);
    RC(umsync(p, 0), 0);
    RC(tio_ummap_stats(p, &b), 0);
    if (b.seg_writes - a.seg_writes != 2)
        FAIL("two dirty segments: %" PRIu64 " segment writes (%" PRIu64 " evictions, %" PRIu64
             " write faults, %" PRIu64 " before)", b.seg_writes - a.seg_writes,
             b.evictions, b.write_faults, a.seg_writes);
    if (b.write_ops - a.write_ops != (C->bulk ? 1u : 2u))
        FAIL("two contiguous dirty segments, %s sync: %" PRIu64 " write calls, expected %d",
             C->bulk ? "bulk" : "individual", b.write_ops - a.write_ops, C->bulk ? 1 : 2);
    q[0] = 3;
    q[3 * SEG] = 4;
    RC(umsync(p, 0), 0);
    tio_ummap_stats_t c;
    RC(tio_ummap_stats(p, &c), 0);
    if (c.seg_writes - b.seg_writes != 2 || c.write_ops - b.write_ops != 2)
        FAIL("two separate dirty segments: %" PRIu64 " segment writes in %" PRIu64
             " calls, expected 2 in 2", c.seg_writes - b.seg_writes, c.write_ops - b.write_ops);
    files[f].model[SEG - 1] = 1;
    files[f].model[SEG] = 2;
    files[f].model[0] = 3;
    files[f].model[3 * SEG] = 4;
    check_file(f, "write-call count file");
    RC(umunmap(p, 0), 0);
}

static int run_config(void *arg)
{
    C = arg;
    const struct geom *g = C->g;
    rng = C->seed * 1000003u + (uint64_t)C->index;
    SEG = g->seg;
    SIZE = g->size;
    NSEG = (SIZE + SEG - 1) / SEG;
    LIMIT = g->limit_segs * SEG;
    char v[64];
    snprintf(v, sizeof v, "%zu", LIMIT);
    setenv("UMMAP_MEM_LIMIT", v, 1);
    setenv("UMMAP_MEMCONFIG", "static", 1);
    um_private_node("random", 1);
    /* the environment says one thing; with tio_ummap_open the options say the other */
    const char *other = !strcmp(C->driver, "posix") ? "uring" : "posix";
    setenv("UMMAP_DRIVER", C->via_env ? C->driver : other, 1);
    setenv("UMMAP_BULK_SYNC", C->via_env ? (C->bulk ? "1" : "0") : (C->bulk ? "0" : "1"), 1);
    dir = tt_tmpdir("ummap-random");

    size_t len = g->file_len ? g->file_len : (size_t)g->offset + SIZE + 4096 + 13;
    size_t model_len = (size_t)g->offset + SIZE + 4096 + 13;
    if (model_len < len)
        model_len = len;
    cur = new_file(model_len, len);
    cur_off = g->offset;
    ref = calloc(SIZE, 1);
    wmask = calloc(SIZE, 1);
    touched = calloc(NSEG, 1);
    for (size_t i = 0; i < SIZE; i++)
        if (g->read_file && (size_t)cur_off + i < len)
            ref[i] = files[cur].model[(size_t)cur_off + i];

    snprintf(where, sizeof where, "ummap");
    void *p = NULL;
    if (C->via_env) {
        RC(ummap(SIZE, SEG, PROT_READ | PROT_WRITE, files[cur].fd, g->offset, C->flush,
                 g->read_file, C->policy, &p), 0);
    } else {
        tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
        o.size = SIZE;
        o.seg_size = SEG;
        o.prot = PROT_READ | PROT_WRITE;
        o.fd = files[cur].fd;
        o.offset = g->offset;
        o.flush_interval = C->flush;
        o.read_file = g->read_file;
        o.ptype = C->policy;
        o.driver = C->driver;
        o.bulk_sync = C->bulk;
        /* the direct driver through the options: memory congruent with the file, so that
         * write-back bypasses the page cache at this offset too */
        o.congruent = !strcmp(C->driver, "direct");
        RC(tio_ummap_open(&o, &p), 0);
    }
    map = p;
    size_t want_mod = C->via_env || strcmp(C->driver, "direct") ? 0 : (size_t)g->offset % um_page();
    if ((uintptr_t)map % um_page() != want_mod)
        FAIL("the mapping %p is %zu bytes into a page, expected %zu", p,
             (size_t)((uintptr_t)map % um_page()), want_mod);
    LEAD = want_mod;
    NSEG = (LEAD + SIZE + SEG - 1) / SEG;
    free(touched);
    touched = calloc(NSEG, 1);

    const int phases = 5;
    for (int ph = 0; ph < phases; ph++) {
        for (int k = 0; k < C->ops / phases; k++)
            one_op(ph * 1000 + k);
        snprintf(where, sizeof where, "end of phase %d", ph);
        check_range(0, SIZE, "whole mapping");
        check_limits();
        do_umsync(ph % 2);
        check_range(0, SIZE, "whole mapping after umsync");
    }
    snprintf(where, sizeof where, "end");
    tio_ummap_stats_t st;
    RC(tio_ummap_stats(map, &st), 0);
    unsigned nr = 0, nw = 0;
    RC(umstats(&nr, &nw), 0);
    if (nr != st.seg_reads || nw != st.seg_writes)
        FAIL("umstats says %u reads and %u writes, the mapping's statistics %" PRIu64
             " and %" PRIu64, nr, nw, st.seg_reads, st.seg_writes);
    if (st.evictions == 0)
        FAIL("no eviction with %zu segments under a limit of %u", NSEG, g->limit_segs);
    if (!C->bulk && st.write_ops != st.seg_writes)
        FAIL("individual sync: %" PRIu64 " write calls for %" PRIu64 " segments",
             st.write_ops, st.seg_writes);
    if (st.write_ops > st.seg_writes)
        FAIL("%" PRIu64 " write calls for %" PRIu64 " segments", st.write_ops, st.seg_writes);
    if (g->read_file && st.seg_reads == 0)
        FAIL("read_file=1 but no segment was read");
    if (st.bytes_written > st.seg_writes * SEG || st.bytes_read > st.seg_reads * SEG)
        FAIL("bytes read/written (%" PRIu64 "/%" PRIu64 ") exceed segments x segment size",
             st.bytes_read, st.bytes_written);

    /* modify once more and let umunmap(sync=1) write it back */
    memset(map + SIZE / 3, 0x5a, SIZE / 3);
    memset(ref + SIZE / 3, 0x5a, SIZE / 3);
    mark_written(SIZE / 3, SIZE / 3);
    RC(umunmap(map, 1), 0);
    synced();
    if (tt_is_mapped(map, SIZE))
        FAIL("the range is still mapped after umunmap");
    for (int f = 0; f < nfiles; f++)
        check_file(f, "file after umunmap(sync=1)");

    bulk_check();
    printf("config %d ok: %s, %s driver, %s sync, %s: %" PRIu64 " evictions, %" PRIu64
           " segment reads, %" PRIu64 " writes in %" PRIu64 " calls, %d umsync (%d with late "
           "faults), %d umremap, resident at most %zu (kernel %zu) of %zu\n",
           C->index, pol_names[C->policy], C->driver, C->bulk ? "bulk" : "individual",
           g->name, st.evictions, st.seg_reads, st.seg_writes, st.write_ops, nsyncs, late_faults,
           nremaps, max_resident, max_rss, LIMIT);
    return 0;
}

int main(int argc, char **argv)
{
    const char *pol = "all", *drv = "all";
    int only = -1, ops = 100;
    if (getenv("TIERIO_TEST_OPS")) /* longer runs than CI's, e.g. nightly */
        ops = atoi(getenv("TIERIO_TEST_OPS"));
    uint64_t seed = um_seed(argc, argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "usage: %s [--policy P|all] [--driver D|all] [--seed N] [--ops N] "
                    "[--only I]\n", argv[0]);
            return 2;
        }
        if (!strcmp(a, "--policy"))
            pol = v;
        else if (!strcmp(a, "--driver"))
            drv = v;
        else if (!strcmp(a, "--ops"))
            ops = atoi(v);
        else if (!strcmp(a, "--only"))
            only = atoi(v);
        else if (strcmp(a, "--seed")) {
            fprintf(stderr, "unknown argument %s\n", a);
            return 2;
        }
        i++;
    }
    const size_t pg = um_page();
    const struct geom geoms[] = {
        {"page segments", pg, 24 * pg, 0, 3, 1, 0},
        {"64 KiB segments, partial last, unaligned offset", 65536, 6 * 65536 + 12345, 12289,
         2, 1, 0},
        {"4-page segments, partial last, read_file=0", 4 * pg, 10 * 4 * pg + 100, 1000003, 4,
         0, 0},
        {"one partial segment over a short file", 65536, 5000, 7, 2, 1, 3007},
    };
    const int ngeom = (int)(sizeof geoms / sizeof geoms[0]);
    printf("seed %" PRIu64 " (replay: --seed %" PRIu64 ")\n", seed, seed);
    int failed = 0, ran = 0;
    for (int p = 0; p < NPOL; p++) {
        if (strcmp(pol, "all") && strcmp(pol, pol_names[p]))
            continue;
        for (int d = 0; d < NDRV; d++) {
            const char *dn = drv_names[d];
            if (strcmp(drv, "all") && strcmp(drv, dn))
                continue;
            for (int gi = 0; gi < ngeom; gi++)
                for (int bulk = 0; bulk < 2; bulk++) {
                    /* the same number whatever --policy and --driver select */
                    int index = ((p * NDRV + d) * ngeom + gi) * 2 + bulk;
                    if (only >= 0 && index != only)
                        continue;
                    struct config c = {index, p, bulk, (gi + p + d) % 2 == 0, dn, &geoms[gi],
                                       bulk ? 1u : UMMAP_NO_FLUSH, seed, ops};
                    char why[128];
                    ran++;
                    if (!tt_in_child(run_config, &c, 120, why, sizeof why)) {
                        fprintf(stderr, "FAIL: config %d (%s, %s driver via %s, %s, %s sync): "
                                "%s; replay: %s --policy %s --driver %s --seed %" PRIu64
                                " --only %d\n", index, pol_names[p], dn,
                                c.via_env ? "environment" : "options", geoms[gi].name,
                                bulk ? "bulk" : "individual", why, argv[0], pol_names[p], dn,
                                seed, index);
                        failed++;
                    }
                }
        }
    }
    if (ran == 0) {
        fprintf(stderr, "no configuration matches --policy %s --driver %s --only %d\n", pol,
                drv, only);
        return 2;
    }
    printf("%d of %d configurations passed (seed %" PRIu64 ")\n", ran - failed, ran, seed);
    return failed ? 1 : 0;
}
