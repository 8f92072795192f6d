/* tio_filemap_* (tier/filemap.c) on $TIERIO_TEST_TMPDIR: creating and reusing files,
 * unaligned offsets, space reservation, file modes, write-back through the mapping
 * (shared and private/discard mode), and that a failed open leaves nothing behind. */
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "check.h"
#include "tier/filemap.h"
#include "win/hints.h"

static size_t P; /* page size */

static struct tio_filemap_opts opts(mode_t perm, int private_map)
{
    struct tio_filemap_opts o = {.perm = perm, .private_map = private_map};
    return o;
}

static int open_fds(void)
{
    return tc_count_entries("/proc/self/fd");
}

/* syscw of /proc/self/io: write system calls made by this process. */
static long long write_syscalls(void)
{
    FILE *f = fopen("/proc/self/io", "re");
    char line[128];
    long long v = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "syscw: %lld", &v) == 1)
            break;
    fclose(f);
    return v;
}

/* Is the page-cache page behind addr dirty? -1 when the kernel does not tell us (not
 * root: no page frame numbers), -2 when the page is not present. */
static int page_dirty(const void *addr)
{
    uint64_t ent, flags;
    int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pm < 0)
        return -1;
    ssize_t r = pread(pm, &ent, 8, (off_t)((uintptr_t)addr / P * 8));
    close(pm);
    if (r != 8)
        return -1;
    if (!(ent >> 63 & 1))
        return -2;
    uint64_t pfn = ent & ((UINT64_C(1) << 55) - 1);
    if (!pfn)
        return -1;
    int kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
    if (kf < 0)
        return -1;
    r = pread(kf, &flags, 8, (off_t)(pfn * 8));
    close(kf);
    return r == 8 ? (int)(flags >> 4 & 1) : -1; /* KPF_DIRTY */
}

static void path_in(char *buf, size_t n, const char *dir, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
}

/* dir/name holds len bytes of pattern seed (also left in a), mapped in private mode. */
static void map_private_file(struct tio_filemap *fm, char *path, size_t n, const char *dir,
                             const char *name, unsigned char *a, size_t len, unsigned seed)
{
    struct tio_err err;
    struct tio_filemap_opts o = opts(0600, 1);
    path_in(path, n, dir, name);
    tt_fill(a, len, seed);
    tt_write_file(path, a, len);
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(fm, path, 0, len, &o, &err), TIO_OK);
    CHECK_EQ(tio_filemap_map(fm, NULL, &o, &err), TIO_OK);
}

static void test_create(const char *dir)
{
    struct tio_filemap fm;
    struct tio_err err;
    char path[4200];
    struct stat st;
    struct tio_filemap_opts o = opts(0600, 0);
    const size_t len = 3 * P + 100;

    CASE("create");
    path_in(path, sizeof path, dir, "create.dat");
    tio_err_clear(&err);
    int fds = open_fds();
    CHECK_EQ(tio_filemap_open(&fm, path, 0, len, &o, &err), TIO_OK);
    CHECK_EQ(err.cls, TIO_OK);
    CHECK_EQ(fm.created, 1);
    CHECK(fm.fd >= 0);
    CHECK_OK(stat(path, &st));
    CHECK_EQ(st.st_size, len);                    /* extended to the region's end */
    CHECK((size_t)st.st_blocks * 512 >= len);     /* and the blocks are allocated */
    CHECK_EQ(st.st_mode & 07777, 0600);
    CHECK_EQ(tio_filemap_map(&fm, NULL, &o, &err), TIO_OK);
    CHECK(fm.map != NULL && fm.addr == (char *)fm.map);
    CHECK_EQ(fm.map_len, 4 * P);
    CHECK_EQ(tc_maps_count(path), 1);
    for (size_t i = 0; i < len; i++) /* a new file reads as zeros */
        CHECK_EQ(fm.addr[i], 0);

    static unsigned char pat[64 * 1024], back[64 * 1024];
    tt_fill(pat, len, 1);
    memcpy(fm.addr, pat, len);
    if (page_dirty(fm.addr) >= 0)
        CHECK_EQ(page_dirty(fm.addr), 1);
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    /* durable: the page cache holds no dirty page of the region any more */
    for (size_t off = 0; off < len; off += P) {
        int d = page_dirty(fm.addr + off);
        CHECK(d == 0 || d == -1);
    }
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, pat, len);
    tio_filemap_close(&fm, 0, 0);
    CHECK_EQ(fm.fd, -1);
    CHECK_EQ(tc_maps_count(path), 0);
    CHECK_EQ(open_fds(), fds);
    CHECK_EQ(tt_file_size(path), len); /* not unlinked, same size */
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, pat, len);

    CASE("close with unlink");
    CHECK_EQ(tio_filemap_open(&fm, path, 0, len, &o, &err), TIO_OK);
    CHECK_EQ(fm.created, 0);
    tio_filemap_close(&fm, 1, 0);
    CHECK_EQ(access(path, F_OK), -1);

    CASE("zero length");
    path_in(path, sizeof path, dir, "empty.dat");
    CHECK_EQ(tio_filemap_open(&fm, path, 0, 0, &o, &err), TIO_OK);
    CHECK_EQ(tt_file_size(path), 0);
    CHECK_EQ(tio_filemap_map(&fm, NULL, &o, &err), TIO_OK);
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    tio_filemap_close(&fm, 1, 0);
    CHECK_EQ(access(path, F_OK), -1);
    CHECK_EQ(open_fds(), fds);
}

static void test_modes(const char *dir)
{
    static const mode_t perms[] = {0600, 0640, 0664, 0666, 0444, 0700};
    struct tio_filemap fm;
    struct tio_err err;
    char path[4200], label[64];
    struct stat st;
    mode_t old = umask(022);
    for (size_t i = 0; i < sizeof perms / sizeof perms[0]; i++) {
        struct tio_filemap_opts o = opts(perms[i], 0);
        snprintf(label, sizeof label, "file_perm 0%o under umask 022", (unsigned)perms[i]);
        CASE(label);
        snprintf(path, sizeof path, "%s/mode-%o.dat", dir, (unsigned)perms[i]);
        tio_err_clear(&err);
        CHECK_EQ(tio_filemap_open(&fm, path, 0, P, &o, &err), TIO_OK);
        CHECK_OK(stat(path, &st));
        CHECK_EQ(st.st_mode & 07777, perms[i]); /* the umask does not narrow it */
        tio_filemap_close(&fm, 1, 0);
    }
    /* an existing file keeps its mode */
    CASE("existing file keeps its mode");
    path_in(path, sizeof path, dir, "mode-existing.dat");
    tt_write_file(path, "x", 1);
    CHECK_OK(chmod(path, 0604));
    struct tio_filemap_opts o = opts(0600, 0);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, P, &o, &err), TIO_OK);
    CHECK_EQ(fm.created, 0);
    CHECK_OK(stat(path, &st));
    CHECK_EQ(st.st_mode & 07777, 0604);
    tio_filemap_close(&fm, 1, 0);
    umask(old);
}

static void test_existing(const char *dir)
{
    struct tio_filemap fm;
    struct tio_err err;
    char path[4200];
    struct tio_filemap_opts o = opts(0600, 0);
    static unsigned char pat[16 * 4096], back[16 * 4096];
    const size_t flen = 2 * P + 77;

    CASE("existing file: content preserved");
    path_in(path, sizeof path, dir, "existing.dat");
    tt_fill(pat, flen, 2);
    tt_write_file(path, pat, flen);
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, flen, &o, &err), TIO_OK);
    CHECK_EQ(fm.created, 0);
    CHECK_EQ(tt_file_size(path), flen);
    CHECK_EQ(tio_filemap_map(&fm, NULL, &o, &err), TIO_OK);
    CHECK_BYTES(fm.addr, pat, flen);
    tio_filemap_close(&fm, 0, 0);
    CHECK(tt_pread_file(path, back, flen, 0) == (ssize_t)flen);
    CHECK_BYTES(back, pat, flen); /* opening and closing changed nothing */

    CASE("existing file: extended past its end");
    const uint64_t off = P + 5;
    const size_t len = 3 * P;
    CHECK_EQ(tio_filemap_open(&fm, path, off, len, &o, &err), TIO_OK);
    CHECK_EQ(fm.created, 0);
    CHECK_EQ(tt_file_size(path), off + len);
    struct stat st;
    CHECK_OK(stat(path, &st));
    CHECK((uint64_t)st.st_blocks * 512 >= off + len - P); /* the new part is reserved */
    CHECK_EQ(tio_filemap_map(&fm, NULL, &o, &err), TIO_OK);
    CHECK_EQ(fm.addr - (char *)fm.map, off % P);
    CHECK_BYTES(fm.addr, pat + off, flen - off); /* the old bytes in the region */
    for (size_t i = flen - off; i < len; i++)    /* the new ones are zeros */
        CHECK_EQ(fm.addr[i], 0);
    /* write the whole region, sync: the bytes before offset are untouched */
    tt_fill(fm.addr, len, 3);
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    CHECK(tt_pread_file(path, back, off, 0) == (ssize_t)off);
    CHECK_BYTES(back, pat, off);
    CHECK(tt_pread_file(path, back, len, (off_t)off) == (ssize_t)len);
    CHECK_BYTES(back, fm.addr, len);
    tio_filemap_close(&fm, 1, 0);
}

static void test_unaligned(const char *dir)
{
    const uint64_t offs[] = {1, 123, 4095, 4097, 5 * 4096 + 4000, 16, 8};
    struct tio_filemap fm;
    struct tio_err err;
    char path[4200], label[64];
    struct tio_filemap_opts o = opts(0600, 0);
    static unsigned char back[64 * 1024], zero[64 * 1024];
    const size_t len = 2 * P + 33;
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        const uint64_t off = offs[i];
        snprintf(label, sizeof label, "unaligned offset %llu", (unsigned long long)off);
        CASE(label);
        snprintf(path, sizeof path, "%s/unaligned-%zu.dat", dir, i);
        tio_err_clear(&err);
        CHECK_EQ(tio_filemap_open(&fm, path, off, len, &o, &err), TIO_OK);
        CHECK_EQ(tt_file_size(path), off + len);
        CHECK_EQ(tio_filemap_map(&fm, NULL, &o, &err), TIO_OK);
        CHECK_EQ((uintptr_t)fm.map % P, 0);
        CHECK_EQ(fm.addr - (char *)fm.map, off % P);
        CHECK_EQ(fm.map_len, (off % P + len + P - 1) / P * P);
        tt_fill(fm.addr, len, (unsigned)i + 10);
        CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
        CHECK(tt_pread_file(path, back, len, (off_t)off) == (ssize_t)len);
        CHECK_BYTES(back, fm.addr, len);
        CHECK(tt_pread_file(path, back, off, 0) == (ssize_t)off); /* before: zeros */
        CHECK_BYTES(back, zero, off);
        tio_filemap_close(&fm, 1, 0);
        CHECK_EQ(tc_maps_count(path), 0);
    }

    CASE("map at a fixed address");
    path_in(path, sizeof path, dir, "fixed.dat");
    const uint64_t off = 3 * P + 200;
    CHECK_EQ(tio_filemap_open(&fm, path, off, P, &o, &err), TIO_OK);
    char *res = mmap(NULL, 4 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(res != MAP_FAILED);
    CHECK_EQ(tio_filemap_map(&fm, res + P, &o, &err), TIO_OK);
    CHECK(fm.map == res + P && fm.addr == res + P + 200);
    memset(fm.addr, 0x5C, P);
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    CHECK(tt_pread_file(path, back, P, (off_t)off) == (ssize_t)P);
    CHECK_BYTES(back, fm.addr, P);
    tio_filemap_close(&fm, 1, 1); /* keep_mapping: the caller owns the range */
    CHECK_EQ(tt_is_mapped(res + P, P), 1);
    munmap(res, 4 * P);
}

/* Private (storage_alloc_discard) mode: only synced changes reach the file; a sync
 * writes only what changed since the last one. */
static void test_private(const char *dir)
{
    struct tio_filemap fm;
    struct tio_err err;
    char path[4200];
    static unsigned char a[8 * 4096], want[8 * 4096], back[8 * 4096];
    const size_t len = 4 * P;

    CASE("private: unsynced changes stay out of the file");
    map_private_file(&fm, path, sizeof path, dir, "private.dat", a, len, 4);
    memcpy(want, a, len);
    tio_err_clear(&err);
    CHECK_BYTES(fm.addr, a, len);
    memset(fm.addr + 10, 'B', 10);
    memset(fm.addr + 2 * P + 100, 'B', 100);
    memset(want + 10, 'B', 10);
    memset(want + 2 * P + 100, 'B', 100);
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, a, len); /* nothing reached the file yet */

    CASE("private: sync writes the changed pages");
    long long w0 = write_syscalls();
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    long long w1 = write_syscalls();
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, want, len);
    CHECK_BYTES(fm.addr, want, len); /* the mapping still shows the data */
    if (w0 >= 0)
        CHECK(w1 > w0 && w1 - w0 <= 2); /* two changed pages, not separate: at most 2 */
    for (size_t off = 0; off < len; off += P) {
        int d = page_dirty(fm.addr + off);
        CHECK(d != 1); /* fdatasync'ed */
    }

    CASE("private: a second sync writes nothing new");
    /* change the file behind the mapping: a sync that rewrote stale copies would undo it */
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    CHECK_OK(fd);
    CHECK(pwrite(fd, "ZZZZZZZZZZ", 10, 10) == 10);
    CHECK(pwrite(fd, "ZZZZ", 4, (off_t)(2 * P + 150)) == 4);
    close(fd);
    memcpy(want + 10, "ZZZZZZZZZZ", 10);
    memcpy(want + 2 * P + 150, "ZZZZ", 4);
    w0 = write_syscalls();
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    w1 = write_syscalls();
    if (w0 >= 0)
        CHECK_EQ(w1, w0);
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, want, len);
    CHECK_BYTES(fm.addr, want, len); /* the synced pages map the file again */

    CASE("private: a change after a sync is written by the next one only");
    fm.addr[3 * P + 7] = 'C';
    want[3 * P + 7] = 'C';
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK(back[3 * P + 7] != 'C');
    w0 = write_syscalls();
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    w1 = write_syscalls();
    if (w0 >= 0)
        CHECK_EQ(w1 - w0, 1);
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, want, len);

    CASE("private: a page-aligned sub-range");
    fm.addr[50] = 'D';
    fm.addr[P + 50] = 'D';
    CHECK_EQ(tio_filemap_sync_range(&fm, fm.addr + P, P, &err), TIO_OK);
    want[P + 50] = 'D';
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, want, len); /* page 0's change not written */
    CHECK_EQ(fm.addr[50], 'D');   /* and not lost from memory */
    want[50] = 'D';
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, want, len);

    CASE("private: unsynced changes are dropped at close");
    memset(fm.addr + P, 'E', P);
    tio_filemap_close(&fm, 0, 0);
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, want, len);
    CHECK_EQ(tc_maps_count(path), 0);
}

/* A sync of a range that starts or ends inside a page must not throw away the process's
 * changes to the rest of that page (they are not synced, but they are its memory). */
static void test_private_partial_page(const char *dir)
{
    struct tio_filemap fm;
    struct tio_err err;
    char path[4200];
    static unsigned char a[4 * 4096], back[4 * 4096];
    const size_t len = 3 * P;

    CASE("private: sync of a range inside a page keeps the rest of the page");
    map_private_file(&fm, path, sizeof path, dir, "private-partial.dat", a, len, 5);
    tio_err_clear(&err);
    fm.addr[P + 10] = 'E';   /* outside the synced range, same page */
    fm.addr[P + 2000] = 'F'; /* inside */
    CHECK_EQ(tio_filemap_sync_range(&fm, fm.addr + P + 1000, 2000, &err), TIO_OK);
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_EQ(back[P + 2000], 'F');
    CHECK_EQ(back[P + 10], a[P + 10]); /* not synced */
    CHECK_EQ(fm.addr[P + 2000], 'F');
    CHECK_EQ(fm.addr[P + 10], 'E'); /* still the process's value */
    tio_filemap_close(&fm, 1, 0);
}

/* A sync holds the runs it wrote in a fixed batch and makes a full batch durable before
 * it goes on: many separate runs (every other page changed) must all reach the file, and
 * every copy must be dropped (the mapping shows the file again). */
static void test_private_many_runs(const char *dir)
{
    struct tio_filemap fm;
    struct tio_err err;
    char path[4200];
    enum { NP = 301 }; /* 151 changed runs: more than two batches */
    static unsigned char a[NP * 4096], want[NP * 4096], back[NP * 4096];
    const size_t len = NP * P;

    CASE("private: a sync of more separate runs than one batch");
    map_private_file(&fm, path, sizeof path, dir, "private-runs.dat", a, len, 6);
    memcpy(want, a, len);
    tio_err_clear(&err);
    for (size_t pg = 0; pg < NP; pg += 2) {
        fm.addr[pg * P + pg % 97] = (char)('a' + pg % 26);
        want[pg * P + pg % 97] = (unsigned char)('a' + pg % 26);
    }
    CHECK_EQ(tio_filemap_sync(&fm, &err), TIO_OK);
    CHECK(tt_pread_file(path, back, len, 0) == (ssize_t)len);
    CHECK_BYTES(back, want, len);
    CHECK_BYTES(fm.addr, want, len);
    /* every copy dropped: a change made to the file behind the mapping shows through */
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    CHECK_OK(fd);
    for (size_t pg = 0; pg < NP; pg += 2) {
        char c = 'Z';
        CHECK(pwrite(fd, &c, 1, (off_t)(pg * P + 3000)) == 1);
        want[pg * P + 3000] = 'Z';
    }
    close(fd);
    CHECK_BYTES(fm.addr, want, len);
    tio_filemap_close(&fm, 1, 0); /* and unlink */
    CHECK_EQ(access(path, F_OK), -1);
}

static void test_errors(const char *dir)
{
    struct tio_filemap fm;
    struct tio_err err;
    char path[4200];
    struct tio_filemap_opts o = opts(0600, 0);
    int fds = open_fds();

    CASE("nonexistent directory");
    path_in(path, sizeof path, dir, "no/such/dir/f.dat");
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, P, &o, &err), TIO_E_NOENT);
    CHECK_EQ(err.cls, TIO_E_NOENT);
    CHECK_HAS(err.msg, path);
    CHECK_HAS(err.msg, "No such file or directory");
    CHECK_EQ(fm.fd, -1);

    CASE("parent is a file");
    path_in(path, sizeof path, dir, "plain");
    tt_write_file(path, "x", 1);
    path_in(path, sizeof path, dir, "plain/f.dat");
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, P, &o, &err), TIO_E_NOENT);
    CHECK_HAS(err.msg, path);
    path_in(path, sizeof path, dir, "plain");
    unlink(path);

    CASE("path is a directory");
    path_in(path, sizeof path, dir, "adir");
    CHECK_OK(mkdir(path, 0700));
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, P, &o, &err), TIO_E_ARG);
    CHECK_HAS(err.msg, path);
    CHECK_HAS(err.msg, "Is a directory");
    struct stat st;
    CHECK_OK(stat(path, &st));
    CHECK(S_ISDIR(st.st_mode));
    rmdir(path);

    CASE("path is a FIFO");
    path_in(path, sizeof path, dir, "fifo");
    CHECK_OK(mkfifo(path, 0600));
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, P, &o, &err), TIO_E_ARG);
    CHECK_HAS(err.msg, path);
    CHECK_HAS(err.msg, "neither a regular file nor a block device");
    CHECK_OK(stat(path, &st)); /* not ours: not removed */
    CHECK(S_ISFIFO(st.st_mode));
    unlink(path);

    CASE("reservation beyond the file system's maximum file size");
    path_in(path, sizeof path, dir, "huge.dat");
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, (size_t)1 << 50, &o, &err), TIO_E_NOSPACE);
    CHECK_HAS(err.msg, path);
    CHECK_HAS(err.msg, "reserve");
    CHECK_EQ(access(path, F_OK), -1); /* the file it created is gone */
    CHECK_EQ(fm.fd, -1);

    CASE("file cannot grow (RLIMIT_FSIZE)");
    struct rlimit old, lim;
    CHECK_OK(getrlimit(RLIMIT_FSIZE, &old));
    lim = old;
    lim.rlim_cur = 64 * 1024;
    void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK_OK(setrlimit(RLIMIT_FSIZE, &lim));
    path_in(path, sizeof path, dir, "rlimit.dat");
    tio_err_clear(&err);
    int rc = tio_filemap_open(&fm, path, 0, 1 << 20, &o, &err);
    CHECK_OK(setrlimit(RLIMIT_FSIZE, &old));
    CHECK_EQ(rc, TIO_E_NOSPACE);
    CHECK_HAS(err.msg, path);
    CHECK_HAS(err.msg, "reserve");
    CHECK_HAS(err.msg, "File too large");
    CHECK_EQ(access(path, F_OK), -1);

    CASE("existing file cannot grow: it is kept as it was");
    static unsigned char pat[8192], back[8192];
    tt_fill(pat, sizeof pat, 6);
    tt_write_file(path, pat, sizeof pat);
    CHECK_OK(setrlimit(RLIMIT_FSIZE, &lim));
    tio_err_clear(&err);
    rc = tio_filemap_open(&fm, path, 4096, 1 << 20, &o, &err);
    CHECK_OK(setrlimit(RLIMIT_FSIZE, &old));
    signal(SIGXFSZ, oldsig);
    CHECK_EQ(rc, TIO_E_NOSPACE);
    CHECK_EQ(tt_file_size(path), sizeof pat);
    CHECK(tt_pread_file(path, back, sizeof pat, 0) == (ssize_t)sizeof pat);
    CHECK_BYTES(back, pat, sizeof pat);
    unlink(path);

    CASE("directory not writable");
    {
        /* root is not stopped by permission bits: make the call with the file-system uid
         * of nobody (this thread only; it drops CAP_DAC_OVERRIDE for file access) */
        const int root = geteuid() == 0;
        char sub[4200];
        path_in(sub, sizeof sub, dir, "ro");
        CHECK_OK(mkdir(sub, 0500));
        path_in(path, sizeof path, dir, "ro/f.dat");
        tio_err_clear(&err);
        if (root)
            setfsuid(65534);
        rc = tio_filemap_open(&fm, path, 0, P, &o, &err);
        if (root)
            setfsuid(0);
        CHECK_EQ(rc, TIO_E_ACCESS);
        CHECK_HAS(err.msg, path);
        CHECK_HAS(err.msg, "Permission denied");
        CHECK_EQ(tc_count_entries(sub), 0);
        rmdir(sub);
    }
    CHECK_EQ(open_fds(), fds); /* no descriptor leaked by the failures */
    CHECK_EQ(tc_maps_count(dir), 0);
}

int main(int argc, char **argv)
{
    P = tio_page_size();
    CHECK_EQ(P, (size_t)sysconf(_SC_PAGESIZE));
    const char *dir = tt_tmpdir("filemap");
    /* its own CTest entry (it found a bug: a failure here must not hide the rest) */
    if (argc > 1 && !strcmp(argv[1], "private-partial-page")) {
        test_private_partial_page(dir);
        printf("test_filemap private-partial-page: all checks passed\n");
        return 0;
    }
    test_create(dir);
    test_modes(dir);
    test_existing(dir);
    test_unaligned(dir);
    test_private(dir);
    test_private_many_runs(dir);
    test_errors(dir);
    CHECK_EQ(tc_count_entries(dir), 1); /* private.dat is all that is left */
    printf("test_filemap: all checks passed\n");
    return 0;
}
