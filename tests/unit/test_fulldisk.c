/* A full disk: a 1 MiB tmpfs mounted in a private mount namespace of this process (so
 * nothing leaks, even when the test dies). A file map or region larger than the free
 * space fails at open with TIO_E_NOSPACE naming the path and the reservation, the file
 * it created is gone, nothing stays mapped; a region that fits is fully usable (no
 * SIGBUS) even after the rest of the file system filled up. Needs root (exit 77 if
 * not). */
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>

#include "check.h"
#include "../common/private_mount.h"
#include "tier/filemap.h"
#include "win/region.h"

static sigjmp_buf jb;
static volatile sig_atomic_t got_sigbus;

static void on_sigbus(int sig)
{
    (void)sig;
    got_sigbus = 1;
    siglongjmp(jb, 1);
}

/* Touch every byte of [p, p+n) with a pattern; 0 if no SIGBUS. */
static int write_all(char *p, size_t n, unsigned seed)
{
    struct sigaction sa = {.sa_handler = on_sigbus}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &old);
    got_sigbus = 0;
    if (sigsetjmp(jb, 1) == 0)
        tt_fill(p, n, seed);
    sigaction(SIGBUS, &old, NULL);
    return got_sigbus ? -1 : 0;
}

/* Fill the file system until it is full; returns the bytes written. */
static void check_clean(const char *dir, int entries, int maps0)
{
    CHECK_EQ(tc_count_entries(dir), entries);
    CHECK_EQ(tc_maps_count(dir), 0);
    CHECK_EQ(tc_maps_count(NULL), maps0);
}

int main(void)
{
    const char *dir = tt_tmpdir("fulldisk");
    char why[256];
    if (tc_private_tmpfs(dir, "size=1m,mode=0700", why, sizeof why) < 0) {
        printf("skipped: %s\n", why);
        return 77;
    }
    const size_t big = 4 << 20; /* more than the file system holds */
    char path[2048], filler[2048];
    struct tio_err err;
    struct tio_filemap fm;
    struct tio_filemap_opts o = {.perm = 0600};
    snprintf(path, sizeof path, "%s/win.dat", dir);
    snprintf(filler, sizeof filler, "%s/filler", dir);
    /* a first failure and a first use of the helpers, so that mappings made lazily on
     * first use (ASan's allocator maps a region per new size class: opendir's buffer, the
     * error path's strings) do not count as leaks of the ones we compare */
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, big, &o, &err), TIO_E_NOSPACE);
    tc_count_entries(dir);
    tc_count_entries("/proc/self/fd");
    tc_maps_count(dir);
    int maps0 = tc_maps_count(NULL);
    int fds0 = tc_count_entries("/proc/self/fd");

    CASE("filemap bigger than the disk");
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, big, &o, &err), TIO_E_NOSPACE);
    CHECK_EQ(err.cls, TIO_E_NOSPACE);
    CHECK_HAS(err.msg, path);
    CHECK_HAS(err.msg, "reserve");
    CHECK_HAS(err.msg, "No space left on device");
    check_clean(dir, 0, maps0);
    CHECK_EQ(tc_count_entries("/proc/self/fd"), fds0);

    const double factors[] = {1.0, 0.5, 0.75};
    for (int f = 0; f < 3; f++)
        for (int ord = 0; ord < 2; ord++) {
            char label[96];
            snprintf(label, sizeof label, "region bigger than the disk, factor %g, %s",
                     factors[f], ord ? "storage_first" : "memory_first");
            CASE(label);
            struct tio_hints h;
            tio_hints_default(&h);
            h.alloc_type = TIO_ALLOC_STORAGE;
            snprintf(h.filename, sizeof h.filename, "%s", path);
            h.factor = factors[f];
            h.order = ord ? TIO_ORDER_STORAGE_FIRST : TIO_ORDER_MEMORY_FIRST;
            h.discard = f == 2;
            struct tio_region r;
            tio_err_clear(&err);
            CHECK_EQ(tio_region_create(&r, 2 * big, &h, 0, &err), TIO_E_NOSPACE);
            CHECK_HAS(err.msg, path);
            CHECK_HAS(err.msg, "reserve");
            check_clean(dir, 0, maps0);
        }

    CASE("existing file on a full disk is kept");
    static unsigned char pat[100 * 1024], back[100 * 1024];
    tt_fill(pat, sizeof pat, 1);
    tt_write_file(path, pat, sizeof pat);
    tio_err_clear(&err);
    CHECK_EQ(tio_filemap_open(&fm, path, 0, big, &o, &err), TIO_E_NOSPACE);
    CHECK_HAS(err.msg, path);
    CHECK_EQ(tt_file_size(path), sizeof pat);
    CHECK(tt_pread_file(path, back, sizeof pat, 0) == (ssize_t)sizeof pat);
    CHECK_BYTES(back, pat, sizeof pat);
    unlink(path);
    check_clean(dir, 0, maps0);

    for (int discard = 0; discard < 2; discard++) {
        CASE(discard ? "reserved discard region survives a full disk"
                     : "reserved region survives a full disk");
        struct tio_hints h;
        tio_hints_default(&h);
        h.alloc_type = TIO_ALLOC_STORAGE;
        snprintf(h.filename, sizeof h.filename, "%s", path);
        h.offset = 100;
        h.discard = discard;
        h.unlink = 1;
        struct tio_region r;
        const size_t size = 512 * 1024;
        tio_err_clear(&err);
        CHECK_EQ(tio_region_create(&r, size, &h, 0, &err), TIO_OK);
        long long filled = tc_fill_up(filler);
        CHECK(filled >= 0);
        CHECK(filled < 1 << 20);
        CHECK_EQ(write_all(r.base, size, 7), 0); /* no SIGBUS */
        static unsigned char copy[512 * 1024], got[512 * 1024];
        memcpy(copy, r.base, size);
        CHECK_EQ(tio_region_sync(&r, &err), TIO_OK);
        CHECK(tt_pread_file(path, got, size, 100) == (ssize_t)size);
        CHECK_BYTES(got, copy, size);
        CHECK_EQ(tio_region_destroy(&r, &err), TIO_OK);
        CHECK_EQ(access(path, F_OK), -1);
        unlink(filler);
        check_clean(dir, 0, maps0);
    }
    CHECK_EQ(tc_count_entries("/proc/self/fd"), fds0);
    printf("test_fulldisk: all checks passed\n");
    return 0;
}
