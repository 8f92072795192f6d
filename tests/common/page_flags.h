/* Durability as the kernel sees it: are the page-cache pages of a file range written back?
 * A content check cannot tell (pread reads the page cache, which holds unsynced data too);
 * the kernel's page flags can. Shared by the MPI tests (tests/mpi/tio_test.h) and the
 * ummap tests (tests/ummap/umtest.h), which report the answer each in their own way. */
#ifndef TIO_TEST_PAGE_FLAGS_H
#define TIO_TEST_PAGE_FLAGS_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

/* Pages of [off, off+len) of path (the whole pages around it, *pages of them when pages
 * is not NULL) that are dirty or under writeback in the page cache; *first (when not NULL
 * and some are) is the file offset of the first one. -1 when this process cannot tell: it
 * needs root (/proc/kpageflags and the PFNs of /proc/self/pagemap). Call it only when no
 * process writes the range. */
static inline long tc_dirty_pages(const char *path, uint64_t off, size_t len, uint64_t *first,
                                  size_t *pages)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    int kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
    int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    long dirty = -1, n = 0;
    uint64_t a = off / pg * pg;
    size_t mlen = (size_t)((off + len - a + pg - 1) / pg * pg);
    unsigned char *m = MAP_FAILED;
    if (pages)
        *pages = mlen / pg;
    if (kf < 0 || pm < 0 || fd < 0 || len == 0)
        goto out;
    m = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fd, (off_t)a);
    if (m == MAP_FAILED)
        goto out;
    for (size_t i = 0; i < mlen / pg; i++) {
        volatile unsigned char touch = m[i * pg]; /* fault the page-cache page in (a read) */
        (void)touch;
        uint64_t ent = 0, flags = 0;
        if (pread(pm, &ent, 8, (off_t)(((uintptr_t)m / pg + i) * 8)) != 8 || !(ent >> 63 & 1))
            goto out;
        uint64_t pfn = ent & ((1ull << 55) - 1);
        if (pfn == 0) /* PFNs hidden: not privileged */
            goto out;
        if (pread(kf, &flags, 8, (off_t)(pfn * 8)) != 8)
            goto out;
        if (flags >> 4 & 1 || flags >> 8 & 1) { /* KPF_DIRTY, KPF_WRITEBACK */
            if (n == 0 && first)
                *first = a + i * pg;
            n++;
        }
    }
    dirty = n;
out:
    if (m != MAP_FAILED)
        munmap(m, mlen);
    if (kf >= 0)
        close(kf);
    if (pm >= 0)
        close(pm);
    if (fd >= 0)
        close(fd);
    return dirty;
}

#endif
