/* Kernel transfers that pin the pages of ummap memory (get_user_pages) and fill them
 * later: an O_DIRECT read into a mapping (the device writes the pinned pages) and another
 * process's process_vm_writev (the kernel pins a batch of the target's pages, then copies;
 * MPI libraries use it for single-copy transfers between ranks). Loading the later
 * segments of such a transfer must not evict the earlier ones while they are pinned, or
 * the data lands in pages that are no longer the mapping's and is lost, while the call
 * reports success. Under a process limit of 3 segments, each transfer covers 3 segments:
 *   alone:         nothing else is resident: no eviction is needed;
 *   two mappings:  another mapping of the process holds 2 segments, so the transfer's
 *                  later segments need room: the engine may evict anything but the
 *                  segments pinned for the transfer.
 * Also the O_DIRECT write from cold segments (pages read while pinned). Data is compared
 * byte for byte in the mapping and, after umsync, in its file. Needs O_DIRECT on the file
 * system under $TIERIO_TEST_TMPDIR (ext4, tmpfs); otherwise skipped (77). */
#include "umtest.h"

#include <sys/uio.h>

#define NSEG 8
static size_t SEG, SIZE;
static const char *dir;

static unsigned char *aligned_buf(size_t n)
{
    void *p = NULL;
    CHECK(posix_memalign(&p, 4096, n) == 0);
    return p;
}

static unsigned char *map_file(const char *name, const unsigned char *content, int *fd_out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tt_write_file(path, content, SIZE);
    int fd = um_open(path, O_RDWR);
    void *p = NULL;
    CHECK_RC(ummap(SIZE, SEG, PROT_READ | PROT_WRITE, fd, 0, UMMAP_NO_FLUSH, 1,
                   UMMAP_PTYPE_FIFO, &p), 0);
    *fd_out = fd;
    return p;
}

/* Another process writes n bytes of src at dst in this process. */
static void remote_write(void *dst, const void *src, size_t n)
{
    pid_t pid = tt_fork(30);
    if (pid == 0) {
        /* only the parent's memory is touched, by the kernel (mappings are not inherited) */
        struct iovec l = {(void *)src, n}, r = {dst, n};
        ssize_t w = process_vm_writev(getppid(), &l, 1, &r, 1, 0);
        if (w != (ssize_t)n) {
            fprintf(stderr, "process_vm_writev: %zd of %zu (%s)\n", w, n, strerror(errno));
            _exit(1);
        }
        _exit(0);
    }
    char why[128];
    if (!tt_wait(pid, why, sizeof why)) {
        fprintf(stderr, "[%s] the writing process failed: %s\n", tt_current_case, why);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    uint64_t rng = um_seed(argc, argv);
    printf("seed %" PRIu64 "\n", rng);
    SEG = 4 * um_page();
    SIZE = NSEG * SEG;
    um_static_limit("pinned", 3 * SEG);
    alarm(60);
    dir = tt_tmpdir("ummap-pinned");
    char dpath[4200], apath[4200], out[4200];
    snprintf(dpath, sizeof dpath, "%s/direct.dat", dir);
    snprintf(apath, sizeof apath, "%s/a.dat", dir);
    snprintf(out, sizeof out, "%s/out.dat", dir);
    int dfd = open(dpath, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
    if (dfd < 0 && errno == EINVAL) {
        printf("skipped: the file system of %s refuses O_DIRECT\n", dir);
        return 77;
    }
    CHECK_OK(dfd);
    unsigned char *a = aligned_buf(SIZE), *x = aligned_buf(SIZE), *exp = aligned_buf(SIZE);
    um_fill_rand(a, SIZE, &rng);
    um_fill_rand(x, SIZE, &rng);
    CHECK_EQ(pwrite(dfd, x, SIZE, 0), (ssize_t)SIZE); /* the O_DIRECT file holds x */
    int fa, fb, failed = 0;
    unsigned char *pa = map_file("a.dat", a, &fa);
    memcpy(exp, a, SIZE);

    CASE("O_DIRECT write from cold segments");
    int ofd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600);
    CHECK_OK(ofd);
    CHECK_EQ(pwrite(ofd, pa + SEG, 3 * SEG, 0), (ssize_t)(3 * SEG));
    close(ofd);
    CHECK_FILE(out, 0, a + SEG, 3 * SEG);

    CASE("alone: O_DIRECT read into 3 cold segments");
    CHECK_RC(umsync(pa, 1), 0);
    CHECK_EQ(pread(dfd, pa + 4 * SEG, 3 * SEG, 0), (ssize_t)(3 * SEG));
    memcpy(exp + 4 * SEG, x, 3 * SEG);
    CHECK_BYTES(pa, exp, SIZE);
    CHECK_RC(umsync(pa, 1), 0);
    CHECK_FILE(apath, 0, exp, SIZE);

    CASE("alone: process_vm_writev into 3 cold segments");
    remote_write(pa + SEG + 5, x + 100, 2 * SEG + 77);
    memcpy(exp + SEG + 5, x + 100, 2 * SEG + 77);
    CHECK_BYTES(pa, exp, SIZE);
    CHECK_RC(umsync(pa, 1), 0);
    CHECK_FILE(apath, 0, exp, SIZE);

    /* the same with another mapping holding 2 segments; failures are counted, so that
     * both transfers are reported */
    unsigned char *pb = map_file("b.dat", x, &fb);
    const char *cases[] = {"two mappings: O_DIRECT read into 3 cold segments",
                           "two mappings: process_vm_writev into 3 cold segments"};
    for (int c = 0; c < 2; c++) {
        CASE(cases[c]);
        CHECK_RC(umsync(pa, 1), 0);
        CHECK_EQ(pb[0], x[0]); /* B holds 2 segments */
        CHECK_EQ(pb[SEG], x[SEG]);
        if (c == 0) {
            CHECK_EQ(pread(dfd, pa + SEG, 3 * SEG, 4 * SEG), (ssize_t)(3 * SEG));
            memcpy(exp + SEG, x + 4 * SEG, 3 * SEG);
        } else {
            remote_write(pa + 4 * SEG + 9, x + 333, 2 * SEG + 100);
            memcpy(exp + 4 * SEG + 9, x + 333, 2 * SEG + 100);
        }
        tio_ummap_stats_t st;
        um_stats(pa, &st);
        long d = tt_first_diff(pa, exp, SIZE), nd = 0;
        for (size_t i = 0; i < SIZE; i++)
            nd += pa[i] != exp[i];
        if (d >= 0) {
            fprintf(stderr, "[%s] FAIL: %ld bytes of the transfer are missing from the mapping "
                    "(first at byte %ld, segment %ld); the mapping has had %" PRIu64
                    " evictions\n", tt_current_case, nd, d, d / (long)SEG, st.evictions);
            failed++;
            memcpy(pa, exp, SIZE); /* repair, so that the next case starts right */
        }
        CHECK_RC(umsync(pa, 1), 0);
        CHECK_FILE(apath, 0, exp, SIZE);
    }
    CHECK_RC(umunmap(pb, 0), 0);
    CHECK_RC(umunmap(pa, 0), 0);
    close(fa);
    close(fb);
    close(dfd);
    if (failed)
        return 1;
    printf("test_ummap_pinned: all checks passed\n");
    return 0;
}
