/* kill -9 after umsync: a child process writes a pattern A over a mapping, calls umsync,
 * writes a pattern B over part of it without syncing, tells the parent, and is killed
 * with SIGKILL (no umunmap, no exit handlers). The file must hold what umsync made
 * durable, written back (clean pages in the page cache, root only), and nothing written
 * without a sync: with no memory pressure and the I/O thread off, exactly A; under a
 * limit of 2 segments, evictions write dirty segments back (docs/ummap.md), so each
 * segment of the file is A or B as a whole, B exactly as many times as the child's
 * statistics counted segment writes since its umsync. The bytes of the file around the
 * mapped range are never touched.
 *
 * Afterwards this process joins the same node-memory group the dead child left behind
 * (its shared object stays in /dev/shm: nobody was alive to remove it) and leaves it
 * again: the stale group must be taken over and removed, leaving /dev/shm as before. The
 * test runs in a private mount namespace with its own /dev/shm when it can (root), so
 * that other jobs' objects do not count. */
#include "umtest.h"
#include "../common/private_mount.h"

#include <sched.h>

#define NSEG 8

static size_t SEG, SIZE;
static const off_t OFF = 3000;
static const char *dir;

static unsigned char pat_a(size_t i) { return (unsigned char)(i * 7 + (i >> 10) + 1); }
static unsigned char pat_b(size_t i) { return (unsigned char)(~pat_a(i) ^ 0x5c); }

struct report {
    uint64_t writes_after_sync, evictions;
};

/* The child: never returns. */
static void child(const char *path, int limit_segs, int out)
{
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", limit_segs * SEG);
    setenv("UMMAP_MEM_LIMIT", lim, 1);
    int fd = um_open(path, O_RDWR);
    void *p = NULL;
    CHECK_RC(ummap(SIZE, SEG, PROT_READ | PROT_WRITE, fd, OFF, UMMAP_NO_FLUSH, 1,
                   UMMAP_PTYPE_FIFO, &p), 0);
    close(fd);
    unsigned char *m = p;
    for (size_t i = 0; i < SIZE; i++)
        m[i] = pat_a(i);
    CHECK_RC(umsync(p, 0), 0);
    tio_ummap_stats_t s0, s1;
    um_stats(p, &s0);
    /* B over segments 1..6 entirely, in order (each written once, then left alone) */
    for (size_t i = SEG; i < 7 * SEG; i++)
        m[i] = pat_b(i);
    um_stats(p, &s1);
    struct report r = {s1.seg_writes - s0.seg_writes, s1.evictions};
    CHECK(write(out, &r, sizeof r) == (ssize_t)sizeof r);
    for (;;)
        pause();
}

static void run(int limit_segs)
{
    char path[4200], what[64];
    snprintf(what, sizeof what, "kill -9, limit %d segments", limit_segs);
    CASE(what);
    snprintf(path, sizeof path, "%s/kill9-%d.dat", dir, limit_segs);
    size_t flen = OFF + SIZE + 1234;
    unsigned char *before = malloc(flen), *exp = malloc(flen), *got = malloc(flen);
    uint64_t rng = (uint64_t)limit_segs * 1234567;
    um_fill_rand(before, flen, &rng);
    tt_write_file(path, before, flen);
    int pfd[2];
    CHECK_OK(pipe(pfd));
    pid_t pid = tt_fork(60);
    if (pid == 0) {
        close(pfd[0]);
        child(path, limit_segs, pfd[1]);
    }
    close(pfd[1]);
    struct report r;
    ssize_t n = read(pfd[0], &r, sizeof r);
    close(pfd[0]);
    if (n != (ssize_t)sizeof r) {
        char why[128];
        kill(pid, SIGKILL);
        tt_wait(pid, why, sizeof why);
        fprintf(stderr, "[%s] the child did not report (%s)\n", what, why);
        exit(1);
    }
    CHECK_OK(kill(pid, SIGKILL));
    int st;
    CHECK_OK(waitpid(pid, &st, 0));
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

    CHECK_EQ(tt_file_size(path), flen);
    CHECK(tt_pread_file(path, got, flen, 0) == (ssize_t)flen);
    CHECK_BYTES(got, before, OFF);                                   /* before the range */
    CHECK_BYTES(got + OFF + SIZE, before + OFF + SIZE, flen - OFF - SIZE); /* after it */
    unsigned nb = 0;
    for (size_t s = 0; s < NSEG; s++) {
        int is_a = 1, is_b = s >= 1 && s < 7;
        for (size_t i = s * SEG; i < (s + 1) * SEG; i++) {
            is_a &= got[OFF + i] == pat_a(i);
            is_b &= got[OFF + i] == pat_b(i);
        }
        if (!is_a && !is_b) {
            for (size_t i = s * SEG; i < (s + 1) * SEG; i++)
                exp[i] = pat_a(i);
            long d = tt_first_diff(got + OFF + s * SEG, exp + s * SEG, SEG);
            fprintf(stderr, "[%s] segment %zu of the file is neither the synced data nor a "
                    "whole written-back segment (first difference from the synced data at "
                    "byte %ld of the segment)\n", what, s, d);
            exit(1);
        }
        nb += (unsigned)is_b;
    }
    if (limit_segs >= NSEG && nb != 0) {
        fprintf(stderr, "[%s] %u segment(s) of unsynced data reached the file without a "
                "sync, an eviction or the I/O thread\n", what, nb);
        exit(1);
    }
    if (nb != r.writes_after_sync) {
        fprintf(stderr, "[%s] %u segment(s) of unsynced data are in the file, but the child "
                "counted %" PRIu64 " segment write(s) after its umsync\n", what, nb,
                r.writes_after_sync);
        exit(1);
    }
    if (limit_segs < NSEG)
        CHECK(r.evictions > 0);
    /* What umsync wrote is durable. Checked where no unsynced write-back reached the file:
     * page flags cannot tell one segment from its neighbour when the page cache holds the
     * file in large folios (ext4), and evicted segments are written without a sync. */
    if (nb == 0)
        CHECK_CLEAN(path, OFF, SIZE);
    printf("%s: the file holds the synced data; %u evicted segment(s) of unsynced data "
           "were written back, as counted\n", what, nb);
    free(before);
    free(exp);
    free(got);
}

/* /dev/shm entries (all of them in a private /dev/shm; else those naming our key). */
static int shm_entries(int private_shm)
{
    if (private_shm)
        return tc_count_entries("/dev/shm");
    const char *key = getenv("UMMAP_NODE_KEY");
    DIR *d = opendir("/dev/shm");
    int n = 0;
    CHECK(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strstr(e->d_name, key))
            n++;
    closedir(d);
    return n;
}

int main(void)
{
    int private_shm = 0;
    char why[256];
    if (tc_private_tmpfs("/dev/shm", "size=16m,mode=1777", why, sizeof why) == 0)
        private_shm = 1;
    else
        printf("note: no private /dev/shm (needs root): counting only the entries that "
               "name this test's node key\n");
    SEG = 4 * um_page();
    SIZE = NSEG * SEG;
    setenv("UMMAP_MEMCONFIG", "static", 1);
    um_private_node("kill9", 1);
    alarm(100);
    dir = tt_tmpdir("ummap-kill9");
    int shm0 = shm_entries(private_shm);
    run(64); /* no memory pressure */
    run(2);  /* evictions write back */

    CASE("the dead processes' node-memory group is taken over and removed");
    char lim[32], path[4200];
    snprintf(lim, sizeof lim, "%zu", 64 * SEG);
    setenv("UMMAP_MEM_LIMIT", lim, 1);
    snprintf(path, sizeof path, "%s/after.dat", dir);
    int fd = um_open(path, O_RDWR | O_CREAT);
    void *p = NULL;
    CHECK_RC(ummap(SIZE, SEG, PROT_READ | PROT_WRITE, fd, 0, UMMAP_NO_FLUSH, 1,
                   UMMAP_PTYPE_FIFO, &p), 0);
    close(fd);
    memset(p, 0x42, SIZE);
    tio_ummap_stats_t st;
    um_stats(p, &st);
    CHECK_EQ(st.resident, SIZE); /* this process's limit, not a dead one's, applies */
    CHECK_EQ(st.evictions, 0);
    CHECK_RC(umunmap(p, 1), 0);
    int shm1 = shm_entries(private_shm);
    if (shm1 != shm0) {
        fprintf(stderr, "[%s] /dev/shm had %d entr%s before the test and has %d after\n",
                tt_current_case, shm0, shm0 == 1 ? "y" : "ies", shm1);
        return 1;
    }
    printf("test_ummap_kill9: all checks passed\n");
    return 0;
}
