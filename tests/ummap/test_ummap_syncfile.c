/* sync_file (tio_ummap_opts_t): umsync of one mapping writes back this process's other
 * sync_file mappings of the same file and makes them durable with one fdatasync.
 *
 * Three sync_file mappings A, B, C of one file at unaligned offsets, a fourth mapping D of
 * the same file without sync_file, and E, a sync_file mapping of another file. After
 * every byte of all five is written and only A is synced:
 *   - A, B and C are in the file, byte for byte, and written back (clean page cache, root
 *     only), and B and C count no dirty bytes; their own umsyncs then write nothing;
 *   - D and E still hold all their bytes dirty, and the file has none of them.
 * A store into B after that is B's again: the next umsync of any of A, B, C writes it. A
 * umunmap with write-back of a member writes the others too; the file finally holds
 * everything (D and E after their own umsyncs). Individual and bulk write-back, and the
 * posix and direct drivers (the latter mixed within the group: one fdatasync covers both). */
#include "umtest.h"

#define SEG ((size_t)65536)

struct map {
    const char *name;
    int file;        /* 0: the shared file, 1: the other */
    off_t off;
    size_t size;
    int sync_file;
    const char *driver;
    unsigned char *p;
    unsigned char *data;
};

static void *open_map(struct map *m, int fd, int bulk)
{
    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.size = m->size;
    o.seg_size = SEG;
    o.prot = PROT_READ | PROT_WRITE;
    o.fd = fd;
    o.offset = m->off;
    o.read_file = 0;
    o.driver = m->driver;
    o.bulk_sync = bulk;
    o.congruent = m->driver && !strcmp(m->driver, "direct");
    o.sync_file = m->sync_file;
    void *p = NULL;
    CHECK_RC(tio_ummap_open(&o, &p), 0);
    return p;
}

static uint64_t seg_writes(void *p)
{
    tio_ummap_stats_t st;
    um_stats(p, &st);
    return st.seg_writes;
}

static size_t dirty(void *p)
{
    tio_ummap_stats_t st;
    um_stats(p, &st);
    return st.dirty;
}

static void run(const char *dir, int bulk, const char *other_driver, uint64_t *rng)
{
    char path[2][4200];
    snprintf(path[0], sizeof path[0], "%s/shared.%d.dat", dir, bulk);
    snprintf(path[1], sizeof path[1], "%s/other.%d.dat", dir, bulk);
    const size_t fsize = 1200000;
    unsigned char *zero = calloc(1, fsize);
    CHECK(zero != NULL);
    int fd[2];
    for (int f = 0; f < 2; f++) {
        tt_write_file(path[f], zero, fsize);
        fd[f] = um_open(path[f], O_RDWR);
    }
    struct map maps[] = {
        {"A", 0, 100, 150000, 1, NULL, NULL, NULL},
        {"B", 0, 300001, 3 * SEG + 17, 1, other_driver, NULL, NULL},
        {"C", 0, 600000, 200000, 1, NULL, NULL, NULL},
        {"D", 0, 900000, 100000, 0, NULL, NULL, NULL},
        {"E", 1, 4096, 200000, 1, NULL, NULL, NULL},
    };
    enum { A, B, C, D, E, N };
    for (int k = 0; k < N; k++) {
        struct map *m = &maps[k];
        m->p = open_map(m, fd[m->file], bulk);
        m->data = malloc(m->size);
        CHECK(m->data != NULL);
        um_fill_rand(m->data, m->size, rng);
        memcpy(m->p, m->data, m->size);
        CHECK_EQ(dirty(m->p), m->size);
    }

    CASE("one umsync makes the file's sync_file mappings durable");
    CHECK_RC(umsync(maps[A].p, 0), 0);
    for (int k = A; k <= C; k++) {
        CHECK_EQ(dirty(maps[k].p), 0);
        CHECK_FILE(path[0], maps[k].off, maps[k].data, maps[k].size);
        CHECK_CLEAN(path[0], maps[k].off, maps[k].size);
    }
    CASE("other mappings are left alone");
    CHECK_EQ(dirty(maps[D].p), maps[D].size);
    CHECK_EQ(dirty(maps[E].p), maps[E].size);
    CHECK_FILE(path[0], maps[D].off, zero, maps[D].size);
    CHECK_FILE(path[1], maps[E].off, zero, maps[E].size);

    CASE("a member's own umsync then writes nothing");
    uint64_t wb = seg_writes(maps[B].p), wc = seg_writes(maps[C].p);
    CHECK_RC(umsync(maps[B].p, 0), 0);
    CHECK_RC(umsync(maps[C].p, 0), 0);
    CHECK_EQ(seg_writes(maps[B].p), wb);
    CHECK_EQ(seg_writes(maps[C].p), wc);

    CASE("a later store into a member is written by the next umsync of any member");
    /* bytes SEG + 100 .. SEG + 2100 of B lie in one segment, whether segments start at B
     * (posix) or at B's page (direct: congruent, 993 bytes before B) */
    um_fill_rand(maps[B].data + SEG + 100, 2000, rng);
    memcpy(maps[B].p + SEG + 100, maps[B].data + SEG + 100, 2000);
    CHECK_EQ(dirty(maps[B].p), SEG);
    CHECK_RC(umsync(maps[C].p, 0), 0);
    CHECK_EQ(dirty(maps[B].p), 0);
    CHECK_EQ(seg_writes(maps[B].p), wb + 1);
    CHECK_FILE(path[0], maps[B].off, maps[B].data, maps[B].size);
    CHECK_CLEAN(path[0], maps[B].off, maps[B].size);

    CASE("umunmap with write-back of a member writes the others");
    um_fill_rand(maps[A].data, 5000, rng);
    memcpy(maps[A].p, maps[A].data, 5000);
    um_fill_rand(maps[C].data + 100000, 3000, rng);
    memcpy(maps[C].p + 100000, maps[C].data + 100000, 3000);
    CHECK_RC(umunmap(maps[B].p, 1), 0);
    CHECK_EQ(dirty(maps[A].p), 0);
    CHECK_EQ(dirty(maps[C].p), 0);
    CHECK_FILE(path[0], maps[A].off, maps[A].data, maps[A].size);
    CHECK_FILE(path[0], maps[C].off, maps[C].data, maps[C].size);
    CHECK_RC(umunmap(maps[A].p, 1), 0);
    CHECK_RC(umunmap(maps[C].p, 1), 0);

    CASE("the rest by their own umsyncs");
    CHECK_RC(umsync(maps[D].p, 0), 0);
    CHECK_RC(umsync(maps[E].p, 0), 0);
    CHECK_FILE(path[0], maps[D].off, maps[D].data, maps[D].size);
    CHECK_FILE(path[1], maps[E].off, maps[E].data, maps[E].size);
    CHECK_RC(umunmap(maps[D].p, 1), 0);
    CHECK_RC(umunmap(maps[E].p, 1), 0);
    /* nothing outside the mappings was touched */
    CHECK_FILE(path[0], 0, zero, 100);
    CHECK_FILE(path[0], 250100, zero, 300001 - 250100);
    CHECK_FILE(path[1], 0, zero, 4096);
    for (int k = 0; k < N; k++)
        free(maps[k].data);
    for (int f = 0; f < 2; f++)
        close(fd[f]);
    free(zero);
}

int main(int argc, char **argv)
{
    uint64_t rng = um_seed(argc, argv);
    printf("seed %llu (--seed N replays)\n", (unsigned long long)rng);
    um_private_node("syncfile", 1);
    alarm(100);
    const char *dir = tt_tmpdir("ummap-syncfile");
    for (int bulk = 0; bulk <= 1; bulk++) {
        run(dir, bulk, NULL, &rng);
        run(dir, bulk, "direct", &rng);
    }
    printf("ummap sync_file: ok\n");
    return 0;
}
