/* A full file system under ummap: a 1 MiB tmpfs mounted in a private mount namespace of
 * this process (nothing leaks, even if the test dies). Write-back that finds no space
 * returns ENOSPC from umsync and leaves the data dirty in memory; once space is freed a
 * second umsync succeeds and the file is exact. umunmap(sync=1) that fails keeps the
 * mapping usable. With a memory limit of 2 segments, evictions that cannot write back
 * must not lose data either. A bulk write-back of a run longer than the posix driver's
 * chunks, on a disk and on a full 20 MiB tmpfs. sync_file mappings of one file whose group
 * write-back fails part-way. Both I/O drivers. Needs root (exit 77 if not). */
#include "umtest.h"
#include "../common/private_mount.h"

#include <sched.h>

#define NSEG 8

static size_t SEG, SIZE;
static const char *dir;

/* A new file mapped at offset 100; bulk: 1 coalesces runs (else UMMAP_BULK_SYNC decides). */
static void *map_file(const char *path, const char *driver, size_t size, int bulk, int *fd_out)
{
    int fd = um_open(path, O_RDWR | O_CREAT | O_TRUNC);
    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.size = size;
    if (bulk)
        o.bulk_sync = 1;
    o.seg_size = SEG;
    o.prot = PROT_READ | PROT_WRITE;
    o.fd = fd;
    o.offset = 100;
    o.driver = driver;
    void *p = NULL;
    CHECK_RC(tio_ummap_open(&o, &p), 0);
    *fd_out = fd;
    return p;
}

/* The disk is full: umsync fails with ENOSPC and keeps every byte dirty in memory, also
 * when asked to evict; once filler is removed it succeeds and the file is exact. (tmpfs
 * pages are never clean: no durability check.) */
static void enospc_then_room(unsigned char *p, const unsigned char *exp, size_t size,
                             const char *filler, const char *path)
{
    tio_ummap_stats_t st;
    CHECK_RC(umsync(p, 0), ENOSPC);
    um_stats(p, &st);
    CHECK(st.dirty > 0);
    CHECK_BYTES(p, exp, size);
    CHECK_RC(umsync(p, 1), ENOSPC); /* evict: nothing dirty may be dropped */
    um_stats(p, &st);
    CHECK(st.dirty > 0);
    CHECK_BYTES(p, exp, size);
    CHECK_OK(unlink(filler));
    CHECK_RC(umsync(p, 0), 0);
    um_stats(p, &st);
    CHECK_EQ(st.dirty, 0);
    CHECK_FILE(path, 100, exp, size);
}

/* Start a case on the small file system: its name, the data file's path and the filler's. */
static char case_name[128];
static void full_disk_case(const char *driver, const char *title, const char *file,
                           char path[4200], char filler[4200])
{
    snprintf(case_name, sizeof case_name, "%s: %s", driver, title);
    CASE(case_name);
    snprintf(path, 4200, "%s/%s", dir, file);
    snprintf(filler, 4200, "%s/filler", dir);
}

static void sync_fails_then_works(const char *driver)
{
    char what[96], path[4200], filler[4200];
    full_disk_case(driver, "umsync on a full disk, then after freeing space", "map.dat", path,
                   filler);
    int fd;
    unsigned char *p = map_file(path, driver, SIZE, 0, &fd);
    unsigned char *exp = malloc(SIZE);
    uint64_t rng = 5;
    CHECK(tc_fill_up(filler) >= 0);
    um_fill_rand(exp, SIZE, &rng);
    memcpy(p, exp, SIZE);
    enospc_then_room(p, exp, SIZE, filler, path);
    tio_ummap_stats_t st;

    snprintf(what, sizeof what, "%s: umunmap(sync=1) on a full disk keeps the mapping", driver);
    CASE(what);
    for (size_t i = 0; i < SIZE; i += 4096)
        p[i] = exp[i] = (unsigned char)(i >> 12);
    /* The file now has its blocks; dirty data of a fully allocated file can always be
     * written back. Punch it to make write-back need space again. */
    CHECK_OK(ftruncate(fd, 0));
    CHECK(tc_fill_up(filler) >= 0);
    CHECK_RC(umunmap(p, 1), ENOSPC);
    CHECK(tt_is_mapped(p, SIZE));
    CHECK_BYTES(p, exp, SIZE);
    um_stats(p, &st);
    CHECK(st.dirty > 0);
    CHECK_OK(unlink(filler));
    CHECK_RC(umunmap(p, 1), 0);
    CHECK(!tt_is_mapped(p, SIZE));
    CHECK_FILE(path, 100, exp, SIZE);
    close(fd);
    CHECK_OK(unlink(path));
    free(exp);
}

/* sync_file (one fdatasync for a file's mappings) on a full disk: B lies in blocks the file
 * already has, A in a hole. umsync(A) writes B first (it fits), then fails on A with
 * ENOSPC: A stays dirty, and B must not count as durable either (made dirty again, so that
 * it is written anew rather than trusted to a later fdatasync, which need not report the
 * error again). Once there is room, umsync(B) writes both and the file is exact. */
static void group_on_full_disk(const char *driver)
{
    char path[4200], filler[4200];
    full_disk_case(driver, "sync_file mappings on a full disk", "group.dat", path, filler);
    const size_t bsize = SEG + 1000, asize = 2 * SEG;
    const off_t boff = 100, aoff = (off_t)(4 * SEG + 300);
    unsigned char *old = calloc(1, 2 * SEG);
    CHECK(old != NULL);
    tt_write_file(path, old, 2 * SEG); /* B's blocks exist; A's range is past the end */
    int fd = um_open(path, O_RDWR);
    void *pa = NULL, *pb = NULL;
    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.seg_size = SEG;
    o.prot = PROT_READ | PROT_WRITE;
    o.fd = fd;
    o.driver = driver;
    o.sync_file = 1;
    o.size = asize;
    o.offset = aoff;
    CHECK_RC(tio_ummap_open(&o, &pa), 0);
    o.size = bsize;
    o.offset = boff;
    CHECK_RC(tio_ummap_open(&o, &pb), 0);
    unsigned char *ea = malloc(asize), *eb = malloc(bsize);
    uint64_t rng = 11;
    um_fill_rand(ea, asize, &rng);
    um_fill_rand(eb, bsize, &rng);
    memcpy(pa, ea, asize);
    memcpy(pb, eb, bsize);
    CHECK(tc_fill_up(filler) >= 0);
    tio_ummap_stats_t st;
    CHECK_RC(umsync(pa, 0), ENOSPC);
    um_stats(pa, &st);
    CHECK(st.dirty > 0);
    um_stats(pb, &st);
    CHECK_EQ(st.dirty, bsize); /* written, but not durable: dirty again */
    CHECK_BYTES(pa, ea, asize);
    CHECK_BYTES(pb, eb, bsize);
    CHECK_OK(unlink(filler));
    CHECK_RC(umsync(pb, 0), 0);
    um_stats(pa, &st);
    CHECK_EQ(st.dirty, 0);
    um_stats(pb, &st);
    CHECK_EQ(st.dirty, 0);
    CHECK_FILE(path, aoff, ea, asize);
    CHECK_FILE(path, boff, eb, bsize);
    CHECK_RC(umunmap(pa, 1), 0);
    CHECK_RC(umunmap(pb, 1), 0);
    close(fd);
    CHECK_OK(unlink(path));
    free(ea);
    free(eb);
    free(old);
}

/* A bulk write-back of one long run of dirty segments: the posix driver writes it in
 * chunks and starts each chunk's write-back early. Every byte must reach the file, durably,
 * with the run's unaligned start and its partial last chunk; on a full disk the sync fails
 * part-way, keeps everything dirty, and succeeds once there is room. in_dir: a directory
 * on a disk (durability checked); full_dir: a private tmpfs of LONG_FS bytes. */
#define LONG_SIZE ((size_t)13 << 20 | 8192) /* > 3 chunks of 4 MiB, not a multiple */
#define LONG_FS "size=20m,mode=0700"

static void long_run(const char *driver, const char *disk_dir, const char *full_dir)
{
    char what[96], path[4200], filler[4200];
    snprintf(what, sizeof what, "%s: bulk write-back of a %zu-byte run", driver, LONG_SIZE);
    CASE(what);
    snprintf(path, sizeof path, "%s/long.dat", disk_dir);
    int fd;
    unsigned char *p = map_file(path, driver, LONG_SIZE, 1, &fd);
    unsigned char *exp = malloc(LONG_SIZE);
    CHECK(exp != NULL);
    uint64_t rng = 11;
    um_fill_rand(exp, LONG_SIZE, &rng);
    memcpy(p, exp, LONG_SIZE);
    tio_ummap_stats_t st0, st;
    um_stats(p, &st0);
    CHECK_RC(umsync(p, 0), 0);
    um_stats(p, &st);
    CHECK_EQ(st.dirty, 0);
    CHECK_EQ(st.write_ops - st0.write_ops, 1); /* one run, one coalesced write */
    CHECK_FILE(path, 100, exp, LONG_SIZE);
    CHECK_CLEAN(path, 100, LONG_SIZE);
    /* again over part of it: a run that starts and ends inside segments' chunks */
    um_fill_rand(exp + SEG + 5, 9 * (1 << 20) + 77, &rng);
    memcpy(p + SEG + 5, exp + SEG + 5, 9 * (1 << 20) + 77);
    CHECK_RC(umsync(p, 0), 0);
    CHECK_FILE(path, 100, exp, LONG_SIZE);
    CHECK_CLEAN(path, 100, LONG_SIZE);
    CHECK_RC(umunmap(p, 0), 0);
    close(fd);
    CHECK_OK(unlink(path));

    snprintf(what, sizeof what, "%s: bulk write-back of a long run on a full disk", driver);
    CASE(what);
    snprintf(path, sizeof path, "%s/long.dat", full_dir);
    snprintf(filler, sizeof filler, "%s/filler", full_dir);
    p = map_file(path, driver, LONG_SIZE, 1, &fd);
    rng = 12;
    um_fill_rand(exp, LONG_SIZE, &rng);
    memcpy(p, exp, LONG_SIZE);
    /* room for some chunks, not all: the write fails part-way */
    CHECK(tc_fill_up(filler) >= 0);
    CHECK_OK(truncate(filler, tt_file_size(filler) - (6 << 20)));
    enospc_then_room(p, exp, LONG_SIZE, filler, path);
    CHECK_RC(umunmap(p, 0), 0);
    close(fd);
    CHECK_OK(unlink(path));
    free(exp);
}

struct evict_arg {
    const char *driver;
};

/* In a child (its own memory limit): write more segments than the limit on a full disk. */
static int evictions_on_full_disk(void *arg)
{
    const struct evict_arg *a = arg;
    char lim[32], path[4200], filler[4200];
    snprintf(lim, sizeof lim, "%zu", 2 * SEG);
    setenv("UMMAP_MEM_LIMIT", lim, 1);
    snprintf(path, sizeof path, "%s/evict.dat", dir);
    snprintf(filler, sizeof filler, "%s/filler", dir);
    int fd;
    unsigned char *p = map_file(path, a->driver, SIZE, 0, &fd);
    unsigned char *exp = malloc(SIZE);
    uint64_t rng = 6;
    um_fill_rand(exp, SIZE, &rng);
    CHECK(tc_fill_up(filler) >= 0);
    for (size_t s = 0; s < NSEG; s++)
        memcpy(p + s * SEG, exp + s * SEG, SEG); /* every segment past the second evicts */
    CHECK_BYTES(p, exp, SIZE);                  /* nothing lost */
    CHECK_RC(umsync(p, 0), ENOSPC);
    CHECK_BYTES(p, exp, SIZE);
    CHECK_OK(unlink(filler));
    CHECK_RC(umsync(p, 0), 0);
    CHECK_FILE(path, 100, exp, SIZE);
    CHECK_BYTES(p, exp, SIZE);
    tio_ummap_stats_t st;
    um_stats(p, &st);
    CHECK_EQ(st.dirty, 0);
    CHECK_RC(umunmap(p, 0), 0);
    close(fd);
    CHECK_OK(unlink(path));
    printf("%s: writing %d segments under a limit of 2 on a full disk lost nothing "
           "(resident %zu after the sync)\n", a->driver, NSEG, st.resident);
    return 0;
}

int main(void)
{
    dir = tt_tmpdir("ummap-fulldisk");
    char why[256];
    if (tc_private_tmpfs(dir, "size=1m,mode=0700", why, sizeof why) < 0) {
        printf("skipped: %s\n", why);
        return 77;
    }
    SEG = 16 * um_page(); /* 64 KiB */
    SIZE = NSEG * SEG;    /* half the file system */
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", 512 * SEG); /* the long runs fit: nothing evicted */
    setenv("UMMAP_MEM_LIMIT", lim, 1);
    um_private_node("fulldisk", 1);
    alarm(100);
    const char *drivers[] = {"posix", "uring"};
    /* the long-run cases: a directory on the test's disk, and a larger private tmpfs */
    const char *disk_dir = tt_tmpdir("ummap-long"), *full_dir = tt_tmpdir("ummap-longfs");
    if (tc_private_tmpfs(full_dir, LONG_FS, why, sizeof why) < 0) {
        fprintf(stderr, "a second private tmpfs: %s\n", why);
        return 1;
    }
    for (int d = 0; d < 2; d++) {
        long_run(drivers[d], disk_dir, full_dir);
        CHECK_EQ(tc_count_entries(full_dir), 0);
        sync_fails_then_works(drivers[d]);
        CHECK_EQ(tc_count_entries(dir), 0);
        group_on_full_disk(drivers[d]);
        CHECK_EQ(tc_count_entries(dir), 0);
        struct evict_arg a = {drivers[d]};
        char why[128];
        CASE("evictions on a full disk");
        if (!tt_in_child(evictions_on_full_disk, &a, 60, why, sizeof why)) {
            fprintf(stderr, "[%s, %s driver] the child failed: %s\n", tt_current_case,
                    drivers[d], why);
            return 1;
        }
        char f[4200];
        snprintf(f, sizeof f, "%s/filler", dir);
        unlink(f);
        snprintf(f, sizeof f, "%s/evict.dat", dir);
        unlink(f);
        CHECK_EQ(tc_count_entries(dir), 0);
    }
    printf("test_ummap_fulldisk: all checks passed\n");
    return 0;
}
