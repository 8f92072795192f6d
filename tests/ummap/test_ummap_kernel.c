/* Accesses the kernel makes to ummap memory on the process's behalf, into cold segments
 * (never touched, or evicted), under a memory limit of 3 segments of 8: read(2) into a
 * mapping and write(2) from one (whole mapping, and pread/pwrite of ranges spanning
 * segments), readv/writev with iovecs across segments, a pipe and a socket between two
 * mappings, another process's process_vm_writev / process_vm_readv (what MPI libraries use
 * for single-copy transfers), and read(2) into a read-only mapping (EFAULT, as with the
 * kernel's mmap). Everything is compared byte for byte with what was written, in memory
 * and, after umsync, in the file. O_DIRECT (pinned pages) is test_ummap_direct_io.c. */
#include "umtest.h"

#include <sys/socket.h>
#include <sys/uio.h>

#define NSEG 8
static size_t SEG, SIZE;
static const off_t OFF = 4096 + 100; /* unaligned */
static const char *dir;
static uint64_t rng;

struct mapping {
    char path[4200];
    unsigned char *p;
    unsigned char *file; /* the file's content in the mapped range, as last written */
};

/* A file of random content and a cold mapping of it. */
static void open_mapping(struct mapping *m, const char *name, int prot)
{
    snprintf(m->path, sizeof m->path, "%s/%s", dir, name);
    unsigned char *all = malloc(OFF + SIZE + 500);
    um_fill_rand(all, OFF + SIZE + 500, &rng);
    tt_write_file(m->path, all, OFF + SIZE + 500);
    m->file = malloc(SIZE);
    memcpy(m->file, all + OFF, SIZE);
    free(all);
    int fd = um_open(m->path, prot & PROT_WRITE ? O_RDWR : O_RDONLY);
    void *p = NULL;
    CHECK_RC(ummap(SIZE, SEG, prot, fd, OFF, UMMAP_NO_FLUSH, 1, UMMAP_PTYPE_FIFO, &p), 0);
    close(fd);
    m->p = p;
}

static void close_mapping(struct mapping *m)
{
    CHECK_RC(umunmap(m->p, 1), 0);
    free(m->file);
}

/* The mapping holds exp; after umsync(evict=1) the file does and everything is cold. */
static void check_and_cool(struct mapping *m, const unsigned char *exp)
{
    CHECK_BYTES(m->p, exp, SIZE);
    CHECK_RC(umsync(m->p, 1), 0);
    CHECK_FILE(m->path, OFF, exp, SIZE);
    CHECK_CLEAN(m->path, OFF, SIZE);
    memcpy(m->file, exp, SIZE);
    tio_ummap_stats_t st;
    um_stats(m->p, &st);
    CHECK_EQ(st.resident, 0);
}

static int tmp_file(const char *name, const unsigned char *content, size_t n, char *path)
{
    snprintf(path, 4200, "%s/%s", dir, name);
    tt_write_file(path, content, n);
    return um_open(path, O_RDWR);
}

static void full_read(int fd, void *buf, size_t n, off_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
        if (r < 0) {
            fprintf(stderr, "[%s] pread into the mapping: %s\n", tt_current_case,
                    strerror(errno));
            exit(1);
        }
        CHECK(r > 0);
        got += (size_t)r;
    }
}

static void full_write(int fd, const void *buf, size_t n, off_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, (const char *)buf + done, n - done, off + (off_t)done);
        if (w < 0) {
            fprintf(stderr, "[%s] pwrite from the mapping: %s\n", tt_current_case,
                    strerror(errno));
            exit(1);
        }
        done += (size_t)w;
    }
}

struct pump {
    int fd;
    const unsigned char *src;
    size_t n;
    int err;
};

static void *pump_out(void *arg)
{
    struct pump *p = arg;
    size_t done = 0;
    while (done < p->n) {
        ssize_t w = write(p->fd, p->src + done, p->n - done);
        if (w < 0) {
            p->err = errno;
            return NULL;
        }
        done += (size_t)w;
    }
    return NULL;
}

/* The other end of a pipe or socket: one mapping is the source (written by the kernel
 * from cold segments), the other the destination (read into cold segments). */
static void through(int wfd, int rfd, struct mapping *from, struct mapping *to, size_t a,
                    size_t b, size_t n)
{
    struct pump pm = {wfd, from->p + a, n, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, pump_out, &pm) == 0);
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(rfd, to->p + b + got, n - got);
        if (r < 0) {
            fprintf(stderr, "[%s] read into the mapping: %s\n", tt_current_case,
                    strerror(errno));
            exit(1);
        }
        CHECK(r > 0);
        got += (size_t)r;
    }
    CHECK(pthread_join(th, NULL) == 0);
    if (pm.err) {
        fprintf(stderr, "[%s] write from the mapping: %s\n", tt_current_case,
                strerror(pm.err));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = um_seed(argc, argv);
    printf("seed %" PRIu64 "\n", seed);
    rng = seed;
    SEG = 4 * um_page();
    SIZE = NSEG * SEG;
    um_static_limit("kernel", 3 * SEG);
    alarm(100);
    dir = tt_tmpdir("ummap-kernel");
    unsigned char *x = malloc(SIZE), *exp = malloc(SIZE), *buf = malloc(SIZE);
    char path[4200];
    struct mapping m, m2;

    CASE("read(2) of the whole mapping into cold segments");
    open_mapping(&m, "m.dat", PROT_READ | PROT_WRITE);
    um_fill_rand(x, SIZE, &rng);
    int sfd = tmp_file("src.dat", x, SIZE, path);
    size_t got = 0;
    while (got < SIZE) {
        ssize_t r = read(sfd, m.p + got, SIZE - got);
        if (r < 0) {
            fprintf(stderr, "[%s] read: %s\n", tt_current_case, strerror(errno));
            return 1;
        }
        CHECK(r > 0);
        got += (size_t)r;
    }
    close(sfd);
    check_and_cool(&m, x);

    CASE("pread of a range spanning segments into cold segments");
    um_fill_rand(x, SIZE, &rng);
    sfd = tmp_file("src2.dat", x, SIZE, path);
    memcpy(exp, m.file, SIZE);
    full_read(sfd, m.p + SEG - 1000, 2 * SEG + 2000, 777);
    memcpy(exp + SEG - 1000, x + 777, 2 * SEG + 2000);
    close(sfd);
    check_and_cool(&m, exp);

    CASE("readv into iovecs scattered over cold segments");
    um_fill_rand(x, SIZE, &rng);
    sfd = tmp_file("src3.dat", x, SIZE, path);
    struct iovec iov[4] = {{m.p + 7 * SEG - 5, 10},
                           {m.p + 100, SEG},
                           {m.p + 4 * SEG + 1, 2 * SEG - 2},
                           {m.p + 3 * SEG - 1, 2}};
    size_t total = 10 + SEG + 2 * SEG - 2 + 2, at = 0;
    CHECK_EQ(preadv(sfd, iov, 4, 5), (ssize_t)total);
    for (int i = 0; i < 4; i++) {
        memcpy(exp + ((unsigned char *)iov[i].iov_base - m.p), x + 5 + at, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    close(sfd);
    check_and_cool(&m, exp);

    CASE("write(2) of the whole mapping from cold segments");
    int dfd = tmp_file("dst.dat", x, 10, path);
    size_t done = 0;
    while (done < SIZE) {
        ssize_t w = write(dfd, m.p + done, SIZE - done);
        if (w < 0) {
            fprintf(stderr, "[%s] write: %s\n", tt_current_case, strerror(errno));
            return 1;
        }
        done += (size_t)w;
    }
    close(dfd);
    CHECK_EQ(tt_file_size(path), SIZE);
    CHECK_FILE(path, 0, exp, SIZE);

    CASE("pwrite and writev of ranges spanning cold segments");
    CHECK_RC(umsync(m.p, 1), 0);
    dfd = tmp_file("dst2.dat", x, 10, path);
    full_write(dfd, m.p + 2 * SEG - 3, 3 * SEG + 6, 1);
    CHECK_FILE(path, 1, exp + 2 * SEG - 3, 3 * SEG + 6);
    CHECK_RC(umsync(m.p, 1), 0);
    struct iovec ov[3] = {{m.p + 6 * SEG + 7, SEG + 9}, {m.p + 1, 3}, {m.p + SEG - 2, 4}};
    CHECK_EQ(pwritev(dfd, ov, 3, 0), (ssize_t)(SEG + 9 + 3 + 4));
    memcpy(buf, exp + 6 * SEG + 7, SEG + 9);
    memcpy(buf + SEG + 9, exp + 1, 3);
    memcpy(buf + SEG + 12, exp + SEG - 2, 4);
    CHECK_FILE(path, 0, buf, SEG + 16);
    close(dfd);

    CASE("a pipe from one mapping into another, both cold");
    open_mapping(&m2, "m2.dat", PROT_READ | PROT_WRITE);
    CHECK_RC(umsync(m.p, 1), 0);
    int pfd[2];
    CHECK_OK(pipe(pfd));
    through(pfd[1], pfd[0], &m, &m2, SEG / 2, 3 * SEG + 11, 4 * SEG);
    close(pfd[0]);
    close(pfd[1]);
    memcpy(buf, m2.file, SIZE);
    memcpy(buf + 3 * SEG + 11, exp + SEG / 2, 4 * SEG);
    check_and_cool(&m2, buf);

    CASE("a socket from one mapping into another, both cold");
    int sv[2];
    CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
    CHECK_RC(umsync(m.p, 1), 0);
    through(sv[0], sv[1], &m2, &m, 0, 1, SIZE - 1);
    close(sv[0]);
    close(sv[1]);
    memcpy(exp + 1, buf, SIZE - 1);
    check_and_cool(&m, exp);

    CASE("another process's process_vm_writev and process_vm_readv");
    /* m alone, 3 segments written at once: within the limit (a transfer that must evict
     * segments the kernel has pinned is test_ummap_pinned.c) */
    close_mapping(&m2);
    CHECK_RC(umsync(m.p, 1), 0);
    um_fill_rand(x, SIZE, &rng);
    int ready[2];
    CHECK_OK(pipe(ready));
    pid_t child = tt_fork(30);
    if (child == 0) {
        /* Our copy of the mapping is not the engine's (fork does not carry the fault
         * handling along): only the parent's address space is touched, by the kernel. */
        struct iovec l = {x, 2 * SEG + 77}, r = {m.p + SEG + 5, 2 * SEG + 77};
        ssize_t w = process_vm_writev(getppid(), &l, 1, &r, 1, 0);
        if (w != (ssize_t)(2 * SEG + 77)) {
            fprintf(stderr, "process_vm_writev into the parent's mapping: %zd (%s)\n", w,
                    strerror(errno));
            _exit(1);
        }
        unsigned char *rb = malloc(3 * SEG);
        struct iovec l2 = {rb, 3 * SEG}, r2 = {m.p + 4 * SEG + 9, 3 * SEG};
        ssize_t n = process_vm_readv(getppid(), &l2, 1, &r2, 1, 0);
        if (n != (ssize_t)(3 * SEG)) {
            fprintf(stderr, "process_vm_readv from the parent's mapping: %zd (%s)\n", n,
                    strerror(errno));
            _exit(1);
        }
        if (write(ready[1], rb, 3 * SEG) != (ssize_t)(3 * SEG))
            _exit(1);
        _exit(0);
    }
    close(ready[1]);
    /* read what the child read while it runs: the pipe holds 3 segments of data */
    unsigned char *seen = malloc(3 * SEG);
    size_t sgot = 0;
    for (ssize_t r; sgot < 3 * SEG && (r = read(ready[0], seen + sgot, 3 * SEG - sgot)) > 0;)
        sgot += (size_t)r;
    close(ready[0]);
    char why[128];
    if (!tt_wait(child, why, sizeof why)) {
        fprintf(stderr, "[%s] the child failed: %s\n", tt_current_case, why);
        return 1;
    }
    CHECK_EQ(sgot, 3 * SEG);
    memcpy(exp + SEG + 5, x, 2 * SEG + 77);
    CHECK_BYTES(seen, exp + 4 * SEG + 9, 3 * SEG);
    check_and_cool(&m, exp);
    free(seen);

    CASE("read(2) into a read-only mapping fails with EFAULT");
    struct mapping ro;
    open_mapping(&ro, "ro.dat", PROT_READ);
    sfd = tmp_file("src4.dat", x, SIZE, path);
    errno = 0;
    CHECK_EQ(read(sfd, ro.p + 10, 100), -1);
    CHECK_EQ(errno, EFAULT);
    close(sfd);
    CHECK_BYTES(ro.p, ro.file, SIZE); /* unchanged, and readable */
    CHECK_RC(umunmap(ro.p, 0), 0);
    CHECK_FILE(ro.path, OFF, ro.file, SIZE);
    free(ro.file);

    tio_ummap_stats_t st;
    um_stats(m.p, &st);
    CHECK(st.evictions > 0);
    close_mapping(&m);
    printf("test_ummap_kernel: all checks passed\n");
    return 0;
}
