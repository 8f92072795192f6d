/* Every EINVAL / EBADF / ENOMEM case of ummap.h, with no side effect: no thread, mapping
 * or descriptor left behind, the output pointer untouched; calls on addresses that are
 * not mappings; umremap failures that leave the mapping on its old file; a write to a
 * read-only mapping (SIGSEGV, file unchanged); bad environment values (each in a fresh
 * process, since the engine reads its environment at the first ummap of a process). */
#include "umtest.h"

#include <setjmp.h>

static size_t PG;
static const char *dir;
static void *fixed_range; /* an anonymous range of ours, for tio_ummap_open's fixed_addr */

struct snap {
    int threads, maps, fds;
    char *maps_text;
};

static char *maps_text(void)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    char line[8192];
    CHECK(f && m);
    while (fgets(line, sizeof line, f))
        fputs(line, m);
    fclose(f);
    fclose(m);
    return buf;
}

static struct snap snap_take(void)
{
    struct snap s = {um_threads(), tc_maps_count(NULL), um_fds(), maps_text()};
    return s;
}

/* Nothing new: threads, mappings (the new ones are printed), descriptors. */
static void snap_check(struct snap *s)
{
    CHECK_EQ(um_threads(), s->threads);
    if (tc_maps_count(NULL) != s->maps) {
        char *now = maps_text(), *save = NULL;
        fprintf(stderr, "[%s] mappings before: %d, after: %d; new or changed:\n",
                tt_current_case, s->maps, tc_maps_count(NULL));
        for (char *l = strtok_r(now, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            if (!strstr(s->maps_text, l))
                fprintf(stderr, "  %s\n", l);
        exit(1);
    }
    CHECK_EQ(um_fds(), s->fds);
    free(s->maps_text);
    s->maps_text = NULL;
}

#define SENTINEL ((void *)(uintptr_t)0x5e1f)

/* ummap with one argument wrong: the error, and nothing changed. */
static void bad_ummap(const char *what, int want, size_t size, size_t seg, int prot, int fd,
                      off_t off, int ptype)
{
    CASE(what);
    struct snap s = snap_take();
    void *p = SENTINEL;
    CHECK_RC(ummap(size, seg, prot, fd, off, UMMAP_NO_FLUSH, 1, ptype, &p), want);
    CHECK(p == SENTINEL);
    snap_check(&s);
}

static void bad_open(const char *what, int want, const tio_ummap_opts_t *o)
{
    CASE(what);
    struct snap s = snap_take();
    void *p = SENTINEL;
    CHECK_RC(tio_ummap_open(o, &p), want);
    CHECK(p == SENTINEL);
    snap_check(&s);
}

static void argument_errors(int rw, int ro, int wo)
{
    const int RW = PROT_READ | PROT_WRITE;
    const size_t S = 4 * PG;
    bad_ummap("size 0", EINVAL, 0, PG, RW, rw, 0, 0);
    bad_ummap("seg_size 0", EINVAL, S, 0, RW, rw, 0, 0);
    bad_ummap("seg_size not a power of two", EINVAL, S, 3 * PG, RW, rw, 0, 0);
    bad_ummap("seg_size page + 1", EINVAL, S, PG + 1, RW, rw, 0, 0);
    bad_ummap("seg_size below the page size", EINVAL, S, PG / 2, RW, rw, 0, 0);
    bad_ummap("seg_size 1", EINVAL, S, 1, RW, rw, 0, 0);
    bad_ummap("prot 0", EINVAL, S, PG, 0, rw, 0, 0);
    bad_ummap("prot PROT_EXEC", EINVAL, S, PG, PROT_EXEC, rw, 0, 0);
    bad_ummap("prot with PROT_EXEC", EINVAL, S, PG, RW | PROT_EXEC, rw, 0, 0);
    bad_ummap("prot with an unknown bit", EINVAL, S, PG, RW | 0x100, rw, 0, 0);
    bad_ummap("ptype -1", EINVAL, S, PG, RW, rw, 0, -1);
    bad_ummap("ptype 6", EINVAL, S, PG, RW, rw, 0, 6);
    bad_ummap("ptype 1000", EINVAL, S, PG, RW, rw, 0, 1000);
    bad_ummap("offset -1", EINVAL, S, PG, RW, rw, -1, 0);
    bad_ummap("offset -4096", EINVAL, S, PG, RW, rw, -4096, 0);
    bad_ummap("fd -1", EBADF, S, PG, RW, -1, 0, 0);
    bad_ummap("fd beyond any open descriptor", EBADF, S, PG, RW, 1 << 20, 0, 0);
    int closed = dup(rw);
    CHECK_OK(closed);
    close(closed);
    bad_ummap("a closed descriptor", EBADF, S, PG, RW, closed, 0, 0);
    bad_ummap("read-only descriptor with PROT_WRITE", EACCES, S, PG, RW, ro, 0, 0);
    bad_ummap("read-only descriptor with PROT_WRITE only", EACCES, S, PG, PROT_WRITE, ro, 0, 0);
    bad_ummap("write-only descriptor", EACCES, S, PG, RW, wo, 0, 0);
    bad_ummap("write-only descriptor with PROT_READ", EACCES, S, PG, PROT_READ, wo, 0, 0);
    int dev = um_open("/dev/null", O_RDWR), pfd[2];
    bad_ummap("a character device", ENODEV, S, PG, RW, dev, 0, 0);
    close(dev);
    CHECK_OK(pipe(pfd));
    bad_ummap("a pipe", ENODEV, S, PG, PROT_READ, pfd[0], 0, 0);
    close(pfd[0]);
    close(pfd[1]);
    int dfd = um_open(dir, O_RDONLY);
    bad_ummap("a directory", ENODEV, S, PG, PROT_READ, dfd, 0, 0);
    close(dfd);
    bad_ummap("size beyond the address space", ENOMEM, (size_t)1 << 47, (size_t)1 << 30, RW,
              rw, 0, 0);
    bad_ummap("offset + size beyond the largest file offset", EINVAL, S, PG, RW, rw,
              INT64_MAX - 100, 0);

    CASE("ptr NULL");
    struct snap s = snap_take();
    CHECK_RC(ummap(S, PG, RW, rw, 0, UMMAP_NO_FLUSH, 1, 0, NULL), EINVAL);
    snap_check(&s);

    tio_ummap_opts_t o = TIO_UMMAP_OPTS_INIT;
    o.size = S;
    o.seg_size = PG;
    o.prot = RW;
    o.fd = rw;
    o.driver = "bogus";
    bad_open("tio_ummap_open: driver \"bogus\"", EINVAL, &o);
    o.driver = "Posix";
    bad_open("tio_ummap_open: driver \"Posix\"", EINVAL, &o);
    o.driver = NULL;
    o.seg_size = 3 * PG;
    bad_open("tio_ummap_open: seg_size", EINVAL, &o);
    o.seg_size = PG;
    o.fd = ro;
    bad_open("tio_ummap_open: read-only descriptor", EACCES, &o);
    o.fd = rw;
    o.ptype = 6;
    bad_open("tio_ummap_open: ptype 6", EINVAL, &o);
    o.ptype = 0;
    o.fixed_addr = (char *)fixed_range + 1;
    bad_open("tio_ummap_open: fixed_addr not page-aligned", EINVAL, &o);
    o.fixed_addr = NULL;
    CASE("tio_ummap_open: opts NULL / ptr NULL");
    s = snap_take();
    void *p = SENTINEL;
    CHECK_RC(tio_ummap_open(NULL, &p), EINVAL);
    CHECK(p == SENTINEL);
    o.ptype = 0;
    CHECK_RC(tio_ummap_open(&o, NULL), EINVAL);
    snap_check(&s);
}

/* Calls on addresses that are not (or no longer) mappings. */
static void not_a_mapping(void *gone)
{
    int local = 0;
    void *heap = malloc(64), *np = SENTINEL;
    void *addrs[] = {NULL, &local, heap, gone, (void *)argument_errors};
    const char *names[] = {"NULL", "a stack address", "a heap address",
                           "a released mapping", "a function's address"};
    char path[4200];
    snprintf(path, sizeof path, "%s/f.dat", dir);
    int fd = um_open(path, O_RDWR);
    for (int i = 0; i < 5; i++) {
        char what[96];
        snprintf(what, sizeof what, "calls on %s", names[i]);
        CASE(what);
        struct snap s = snap_take();
        tio_ummap_stats_t st;
        CHECK_RC(umsync(addrs[i], 0), EINVAL);
        CHECK_RC(umsync(addrs[i], 1), EINVAL);
        CHECK_RC(umunmap(addrs[i], 0), EINVAL);
        CHECK_RC(umunmap(addrs[i], 1), EINVAL);
        CHECK_RC(umremap(addrs[i], fd, 0, 0, &np), EINVAL);
        CHECK(np == SENTINEL);
        CHECK_RC(tio_ummap_stats(addrs[i], &st), EINVAL);
        snap_check(&s);
    }
    close(fd);
    free(heap);
}

static int env_case(void *arg)
{
    const char **kv = arg;
    char path[4200];
    setenv(kv[0], kv[1], 1);
    snprintf(path, sizeof path, "%s/env.dat", dir);
    int fd = um_open(path, O_RDWR | O_CREAT);
    struct snap s = snap_take();
    void *p = SENTINEL;
    int rc = ummap(4 * PG, PG, PROT_READ | PROT_WRITE, fd, 0, UMMAP_NO_FLUSH, 1, 0, &p);
    if (rc != EINVAL) {
        fprintf(stderr, "%s=\"%s\": ummap returned %d (%s), expected EINVAL\n", kv[0], kv[1],
                rc, strerror(rc));
        return 1;
    }
    CHECK(p == SENTINEL);
    snap_check(&s);
    return 0;
}

static sigjmp_buf segv_jb;
static void on_segv(int sig)
{
    (void)sig;
    siglongjmp(segv_jb, 1);
}

/* Does a store to p raise SIGSEGV (in this process, where the engine runs)? */
static int write_faults(volatile unsigned char *p)
{
    struct sigaction sa = {.sa_handler = on_segv}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old);
    int faulted = 1;
    if (sigsetjmp(segv_jb, 1) == 0) {
        *p = 1;
        faulted = 0;
    }
    sigaction(SIGSEGV, &old, NULL);
    return faulted;
}

int main(void)
{
    PG = um_page();
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", 64 * PG);
    setenv("UMMAP_MEM_LIMIT", lim, 1);
    um_private_node("errors", 1);
    alarm(100);
    dir = tt_tmpdir("ummap-errors");
    char path[4200];
    snprintf(path, sizeof path, "%s/f.dat", dir);
    static unsigned char content[65536];
    uint64_t rng = 99;
    um_fill_rand(content, sizeof content, &rng);
    tt_write_file(path, content, sizeof content);
    int rw = um_open(path, O_RDWR), ro = um_open(path, O_RDONLY), wo = um_open(path, O_WRONLY);

    /* first: the engine reads its environment at the first mapping of a process, and
     * the children must be forked from a process that never had one */
    char why[128];
    CASE("bad environment values");
    /* (an empty value counts as unset, as with `VAR= prog` in a shell) */
    const char *envs[][2] = {
        {"UMMAP_MEMCONFIG", "bogus"},  {"UMMAP_MEMCONFIG", "statics"},
        {"UMMAP_MEM_LIMIT", "lots"},   {"UMMAP_MEM_LIMIT", "-4096"},
        {"UMMAP_MEM_LIMIT", "0"},      {"UMMAP_MEM_LIMIT", "12abc"},
        {"UMMAP_MEM_FACTOR", "2.5"},   {"UMMAP_MEM_FACTOR", "-0.5"},
        {"UMMAP_MEM_FACTOR", "half"},  {"UMMAP_MEM_FACTOR", "0"},
        {"UMMAP_BULK_SYNC", "maybe"},  {"UMMAP_DRIVER", "bogus"},
        {"UMMAP_DRIVER", "POSIX"},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        if (!strcmp(envs[i][0], "UMMAP_MEM_FACTOR"))
            unsetenv("UMMAP_MEM_LIMIT"); /* the factor applies only without a limit */
        if (!tt_in_child(env_case, envs[i], 20, why, sizeof why)) {
            fprintf(stderr, "[%s] %s=\"%s\": the child failed: %s\n", tt_current_case,
                    envs[i][0], envs[i][1], why);
            bad++;
        }
        setenv("UMMAP_MEM_LIMIT", lim, 1);
    }

    CHECK(tc_warm_stack_cache() == 0);
    fixed_range = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(fixed_range != MAP_FAILED);
    /* before any mapping exists: no engine thread may be started by a failing call */
    argument_errors(rw, ro, wo);

    CASE("a valid mapping");
    void *p = NULL;
    CHECK_RC(ummap(4 * PG, PG, PROT_READ | PROT_WRITE, rw, 100, UMMAP_NO_FLUSH, 1, 0, &p), 0);
    CHECK_BYTES(p, content + 100, 4 * PG);
    /* with a mapping (and the engine's threads) alive, the same cases */
    argument_errors(rw, ro, wo);

    CASE("umremap with bad arguments keeps the mapping on its file");
    struct snap s = snap_take();
    void *np = SENTINEL;
    CHECK_RC(umremap(p, -1, 0, 1, &np), EBADF);
    CHECK_RC(umremap(p, 1 << 20, 0, 1, &np), EBADF);
    CHECK_RC(umremap(p, ro, 0, 1, &np), EACCES);
    CHECK_RC(umremap(p, rw, -1, 1, &np), EINVAL);
    CHECK(np == SENTINEL);
    CHECK_RC(umremap(p, rw, 0, 1, NULL), EINVAL);
    snap_check(&s);
    memset(p, 0x77, 10);
    CHECK_RC(umsync(p, 1), 0);
    memset(content + 100, 0x77, 10);
    CHECK_FILE(path, 0, content, sizeof content);
    CHECK_BYTES(p, content + 100, 4 * PG);

    CASE("umsync on an address inside the mapping");
    ((unsigned char *)p)[3 * PG + 1] = 0x12;
    content[100 + 3 * PG + 1] = 0x12;
    CHECK_RC(umsync((unsigned char *)p + 3 * PG + 5, 0), 0);
    CHECK_FILE(path, 0, content, sizeof content);

    CASE("umstats with NULL arguments");
    unsigned r = 0, w = 0;
    CHECK_RC(umstats(&r, &w), 0);
    CHECK(w >= 2);
    CHECK_RC(umstats(NULL, &w), EINVAL);
    CHECK_RC(umstats(&r, NULL), EINVAL);
    CHECK_RC(tio_ummap_stats(p, NULL), EINVAL);

    CASE("umremap onto a range overlapping the mapping's own");
    int rw2 = um_open(path, O_RDWR); /* the same file through another descriptor */
    s = snap_take();
    np = SENTINEL;
    CHECK_RC(umremap(p, rw2, 100 + 3 * (off_t)PG, 0, &np), EINVAL);
    CHECK_RC(umremap(p, rw, 99, 1, &np), EINVAL);
    CHECK(np == SENTINEL);
    snap_check(&s);
    CHECK_RC(umremap(p, rw2, 100, 0, &np), 0); /* the same place: nothing to do */
    CHECK(np == p);
    close(rw2);
    CHECK_BYTES(p, content + 100, 4 * PG);

    CASE("umunmap twice");
    CHECK_RC(umunmap(p, 1), 0);
    CHECK(!tt_is_mapped(p, 4 * PG));
    not_a_mapping(p);

    CASE("a mapping over a range of the caller's (fixed_addr)");
    tio_ummap_opts_t fo = TIO_UMMAP_OPTS_INIT;
    fo.size = 8 * PG;
    fo.seg_size = 2 * PG;
    fo.prot = PROT_READ | PROT_WRITE;
    fo.fd = rw;
    fo.offset = 1;
    fo.fixed_addr = fixed_range;
    void *fp = NULL;
    CHECK_RC(tio_ummap_open(&fo, &fp), 0);
    CHECK(fp == fixed_range);
    CHECK_BYTES(fp, content + 1, 3 * PG);
    memset((char *)fp + PG, 0x31, 3 * PG);
    memset(content + 1 + PG, 0x31, 3 * PG);
    CHECK_RC(umunmap(fp, 1), 0);
    CHECK_FILE(path, 0, content, sizeof content);
    CHECK(tt_is_mapped(fixed_range, 8 * PG)); /* left to its owner */
    CHECK_RC(umsync(fixed_range, 0), EINVAL);  /* and no longer the engine's */
    CHECK_OK(munmap(fixed_range, 8 * PG));

    CASE("a write to a read-only mapping");
    void *rop = NULL;
    CHECK_RC(ummap(4 * PG, PG, PROT_READ, ro, 0, UMMAP_NO_FLUSH, 1, 0, &rop), 0);
    CHECK_BYTES(rop, content, 4 * PG);
    CHECK(write_faults((unsigned char *)rop + PG + 5)); /* a segment in memory */
    CHECK(write_faults((unsigned char *)rop + 3 * PG)); /* and one never touched */
    CHECK_RC(umsync(rop, 0), 0);
    CHECK_BYTES(rop, content, 4 * PG);
    CHECK_RC(umunmap(rop, 1), 0);
    CHECK_FILE(path, 0, content, sizeof content);

    close(rw);
    close(ro);
    close(wo);
    if (bad) {
        fprintf(stderr, "%d bad environment value(s) were not refused\n", bad);
        return 1;
    }
    printf("test_ummap_errors: all checks passed\n");
    return 0;
}
