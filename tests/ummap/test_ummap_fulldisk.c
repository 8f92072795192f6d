/* A full file system under ummap: a 1 MiB tmpfs mounted in a private mount namespace of
 * this process (nothing leaks, even if the test dies). Write-back that finds no space
 * returns ENOSPC from umsync and leaves the data dirty in memory; once space is freed a
 * second umsync succeeds and the file is exact. umunmap(sync=1) that fails keeps the
 * mapping usable. With a memory limit of 2 segments, evictions that cannot write back
 * must not lose data either. Both I/O drivers. Needs root (exit 77 if not). */
#include "umtest.h"
#include "../common/private_mount.h"

#include <sched.h>

#define NSEG 8

static size_t SEG, SIZE;
static const char *dir;

/* Fill the file system with a file of junk until it is full; the bytes written. */
static void *map_file(const char *path, const char *driver, int *fd_out)
{
    int fd = um_open(path, O_RDWR | O_CREAT | O_TRUNC);
    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.size = SIZE;
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

static void sync_fails_then_works(const char *driver)
{
    char what[96], path[4200], filler[4200];
    snprintf(what, sizeof what, "%s: umsync on a full disk, then after freeing space", driver);
    CASE(what);
    snprintf(path, sizeof path, "%s/map.dat", dir);
    snprintf(filler, sizeof filler, "%s/filler", dir);
    int fd;
    unsigned char *p = map_file(path, driver, &fd);
    unsigned char *exp = malloc(SIZE);
    uint64_t rng = 5;
    CHECK(tc_fill_up(filler) >= 0);
    um_fill_rand(exp, SIZE, &rng);
    memcpy(p, exp, SIZE);
    CHECK_RC(umsync(p, 0), ENOSPC);
    tio_ummap_stats_t st;
    um_stats(p, &st);
    CHECK(st.dirty > 0);
    CHECK_BYTES(p, exp, SIZE);
    CHECK_RC(umsync(p, 1), ENOSPC); /* evict: nothing dirty may be dropped */
    um_stats(p, &st);
    CHECK(st.dirty > 0);
    CHECK_BYTES(p, exp, SIZE);
    CHECK_OK(unlink(filler));
    CHECK_RC(umsync(p, 0), 0);
    um_stats(p, &st);
    CHECK_EQ(st.dirty, 0);
    CHECK_FILE(path, 100, exp, SIZE); /* (tmpfs pages are never clean: no durability check) */

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
    unsigned char *p = map_file(path, a->driver, &fd);
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
    snprintf(lim, sizeof lim, "%zu", 64 * SEG);
    setenv("UMMAP_MEM_LIMIT", lim, 1);
    um_private_node("fulldisk", 1);
    alarm(100);
    const char *drivers[] = {"posix", "uring"};
    for (int d = 0; d < 2; d++) {
        sync_fails_then_works(drivers[d]);
        CHECK_EQ(tc_count_entries(dir), 0);
        struct evict_arg a = {drivers[d]};
        char why[128];
        CASE("evictions on a full disk");
        if (!um_in_child(evictions_on_full_disk, &a, 60, why, sizeof why)) {
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
