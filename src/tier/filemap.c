#include "tier/filemap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/log.h"

#define LUSTRE_SUPER_MAGIC 0x0BD00BD0

size_t tio_page_size(void)
{
    static size_t page;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

static int reserve_space(struct tio_filemap *fm, struct tio_err *err)
{
    struct stat st;
    if (fstat(fm->fd, &st) < 0)
        return tio_err_errno(err, errno, "storage_alloc_filename \"%s\": fstat", fm->path);
    if (S_ISBLK(st.st_mode)) {
        uint64_t devsize = 0;
        fm->is_blockdev = 1;
        if (ioctl(fm->fd, BLKGETSIZE64, &devsize) < 0)
            return tio_err_errno(err, errno, "storage_alloc_filename \"%s\": device size",
                                 fm->path);
        if (fm->offset + fm->length > devsize)
            return tio_err_set(err, TIO_E_NOSPACE,
                               "storage_alloc_filename \"%s\": block device holds %llu bytes, "
                               "the window needs offset %llu + %zu", fm->path,
                               (unsigned long long)devsize, (unsigned long long)fm->offset,
                               fm->length);
        return TIO_OK;
    }
    if (!S_ISREG(st.st_mode))
        return tio_err_set(err, TIO_E_ARG,
                           "storage_alloc_filename \"%s\" is neither a regular file nor a "
                           "block device", fm->path);
    if (fm->length == 0)
        return TIO_OK;
    /* Allocate the blocks now: a later page fault on a full disk would be a SIGBUS. */
    int rc = posix_fallocate(fm->fd, (off_t)fm->offset, (off_t)fm->length);
    if (rc)
        return tio_err_errno(err, rc,
                             "storage_alloc_filename \"%s\": cannot reserve %zu bytes at "
                             "offset %llu", fm->path, fm->length,
                             (unsigned long long)fm->offset);
    return TIO_OK;
}

static void check_striping(struct tio_filemap *fm, const struct tio_filemap_opts *o)
{
    struct statfs sf;
    if (!o->striping || fstatfs(fm->fd, &sf) < 0)
        return;
    /* Like ROMIO's generic driver: striping hints only mean something on a striped
     * parallel file system; elsewhere they are ignored, and we say so. */
    if ((unsigned long)sf.f_type == LUSTRE_SUPER_MAGIC)
        TIO_WARN("striping hints for \"%s\" are not applied: tierio does not set Lustre "
                 "layouts yet; use lfs setstripe on the directory", fm->path);
    else
        TIO_INFO("striping hints for \"%s\" ignored: not a striped file system", fm->path);
}

int tio_filemap_open(struct tio_filemap *fm, const char *path, uint64_t offset, size_t length,
                     const struct tio_filemap_opts *o, struct tio_err *err)
{
    memset(fm, 0, sizeof *fm);
    fm->fd = -1;
    fm->offset = offset;
    fm->length = length;
    fm->private_map = o->private_map;
    snprintf(fm->path, sizeof fm->path, "%s", path);

    /* Several processes may open one file at once, and the one that created it removes
     * it again if it fails (a full disk): then the others create it anew themselves. */
    for (int tries = 0; fm->fd < 0 && tries < 8; tries++) {
        fm->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, o->perm);
        if (fm->fd >= 0) {
            fm->created = 1;
            /* The umask must not narrow an explicit file_perm. */
            if (fchmod(fm->fd, o->perm) < 0)
                TIO_WARN("\"%s\": cannot set mode 0%o: %s", path, (unsigned)o->perm,
                         strerror(errno));
        } else if (errno == EEXIST) {
            fm->fd = open(path, O_RDWR | O_CLOEXEC);
            if (fm->fd < 0 && errno != ENOENT)
                break;
        } else {
            break;
        }
    }
    if (fm->fd < 0)
        return tio_err_errno(err, errno, "storage_alloc_filename \"%s\": cannot open", path);
    check_striping(fm, o);
    int rc = reserve_space(fm, err);
    if (rc) {
        tio_filemap_close(fm, fm->created, 0);
        return rc;
    }
    return TIO_OK;
}

/* Large folios mapped by PMD (ext4 and others, Linux >= 6.x): a fault maps 2 MiB instead
 * of 4 KiB, so filling a window and writing it again after a sync cost ~400x fewer faults
 * (measured: a 38 MiB refill after msync, 9734 faults / 30 ms vs 25 faults / 7 ms). Only
 * where whole 2 MiB pieces of the mapping line up with 2 MiB pieces of the file: a large
 * folio mapped page by page costs ext4 a walk over all its blocks at every write fault
 * (measured: 4.5 MiB in 9 unaligned windows filled 4x slower). The price: write-back is
 * per folio, so scattered small writes write more. A no-op where the kernel cannot. */
static void advise_huge(char *p, size_t len, uint64_t file_off)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (((uintptr_t)p - file_off) % huge)
        return;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t b = ((uintptr_t)p + len) & ~(huge - 1);
    if (b > a)
        madvise((void *)a, b - a, MADV_HUGEPAGE);
}

int tio_filemap_map(struct tio_filemap *fm, void *fixed, const struct tio_filemap_opts *o,
                    struct tio_err *err)
{
    size_t page = tio_page_size();
    size_t delta = fm->offset % page;
    fm->map_len = (delta + fm->length + page - 1) / page * page;
    if (fm->map_len == 0)
        fm->map_len = page;
    int flags = (fm->private_map ? MAP_PRIVATE : MAP_SHARED) | (fixed ? MAP_FIXED : 0);
    void *p = mmap(fixed, fm->map_len, PROT_READ | PROT_WRITE, flags, fm->fd,
                   (off_t)(fm->offset - delta));
    if (p == MAP_FAILED)
        return tio_err_errno(err, errno, "storage_alloc_filename \"%s\": mmap of %zu bytes",
                             fm->path, fm->map_len);
    fm->map = p;
    fm->addr = (char *)p + delta;
    int advice = (o->access_style & TIO_ACCESS_SEQUENTIAL) ? MADV_SEQUENTIAL
               : (o->access_style & TIO_ACCESS_RANDOM)     ? MADV_RANDOM
                                                           : MADV_NORMAL;
    if (advice != MADV_NORMAL)
        madvise(p, fm->map_len, advice);
    if (o->hugepages && !fm->private_map)
        advise_huge(p, fm->map_len, fm->offset - delta);
    return TIO_OK;
}

/* Drop the private copies of [a, b) where all of the region's bytes in the page were
 * just written: a page straddling the synced range [lo, hi) keeps changes that are not on
 * storage yet. */
static void drop_copies(struct tio_filemap *fm, char *a, char *b, char *lo, char *hi)
{
    size_t page = tio_page_size();
    for (char *q = a; q < b; q += page) {
        char *rlo = q < fm->addr ? fm->addr : q;
        char *rhi = q + page > fm->addr + fm->length ? fm->addr + fm->length : q + page;
        if (rlo >= lo && rhi <= hi)
            madvise(q, page, MADV_DONTNEED);
    }
}

/* One fdatasync for the runs just written, then drop their copies (only once they are
 * durable: a failed fdatasync keeps them, so the next sync writes them again). */
static int durable_then_drop(struct tio_filemap *fm, char *runs[][2], size_t nruns, char *lo,
                             char *hi, struct tio_err *err)
{
    if (!nruns)
        return TIO_OK;
    if (fdatasync(fm->fd) < 0)
        return tio_err_errno(err, errno, "\"%s\": fdatasync", fm->path);
    for (size_t k = 0; k < nruns; k++)
        drop_copies(fm, runs[k][0], runs[k][1], lo, hi);
    return TIO_OK;
}

/* Private mode: write the pages this process changed (they are anonymous copies, which
 * /proc/self/pagemap tells apart from file pages), make them durable with one fdatasync,
 * then drop the copies so the mapping sees the file again and the next sync writes only
 * what changes after this one. */
static int sync_private(struct tio_filemap *fm, char *lo, char *hi, struct tio_err *err)
{
    size_t page = tio_page_size();
    char *p0 = (char *)((uintptr_t)lo / page * page);
    int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (pm < 0)
        return tio_err_errno(err, errno, "\"%s\": cannot read /proc/self/pagemap", fm->path);
    int rc = TIO_OK;
    /* written runs, [runs[k][0], runs[k][1]); a fixed array, so that a sync allocates
     * nothing: when it is full, those runs are made durable and dropped first */
    char *runs[64][2];
    size_t nruns = 0;
    for (char *pg = p0; pg < hi && !rc;) {
        uint64_t ent[512];
        size_t n = (size_t)((hi - pg + (ptrdiff_t)page - 1) / (ptrdiff_t)page);
        if (n > 512)
            n = 512;
        ssize_t got = pread(pm, ent, n * 8, (off_t)((uintptr_t)pg / page * 8));
        if (got < (ssize_t)(n * 8)) {
            rc = tio_err_errno(err, got < 0 ? errno : EIO, "\"%s\": pagemap", fm->path);
            break;
        }
        for (size_t i = 0; i < n && !rc;) {
            int dirty = (ent[i] >> 63 & 1) && !(ent[i] >> 61 & 1);
            if (!dirty) {
                i++;
                continue;
            }
            size_t j = i;
            while (j < n && (ent[j] >> 63 & 1) && !(ent[j] >> 61 & 1))
                j++;
            char *a = pg + i * page, *b = pg + j * page;
            char *wa = a < lo ? lo : a, *wb = b > hi ? hi : b;
            off_t fo = (off_t)(fm->offset + (uint64_t)(wa - fm->addr));
            for (size_t done = 0; done < (size_t)(wb - wa);) {
                ssize_t w = pwrite(fm->fd, wa + done, (size_t)(wb - wa) - done,
                                   fo + (off_t)done);
                if (w < 0) {
                    rc = tio_err_errno(err, errno, "\"%s\": write-back", fm->path);
                    break;
                }
                done += (size_t)w;
            }
            if (!rc && nruns == sizeof runs / sizeof runs[0]) {
                rc = durable_then_drop(fm, runs, nruns, lo, hi, err);
                nruns = 0;
            }
            if (!rc) {
                runs[nruns][0] = a;
                runs[nruns][1] = b;
                nruns++;
            }
            i = j;
        }
        pg += n * page;
    }
    close(pm);
    if (!rc)
        rc = durable_then_drop(fm, runs, nruns, lo, hi, err);
    return rc;
}

int tio_filemap_sync_range(struct tio_filemap *fm, char *addr, size_t len, struct tio_err *err)
{
    if (!fm->map || len == 0)
        return TIO_OK;
    if (fm->private_map)
        return sync_private(fm, addr, addr + len, err);
    size_t page = tio_page_size();
    char *a = (char *)((uintptr_t)addr / page * page);
    /* MS_SYNC writes the dirty pages of the range and waits for them (fdatasync level). */
    if (msync(a, (size_t)(addr + len - a), MS_SYNC) < 0)
        return tio_err_errno(err, errno, "storage window \"%s\": msync", fm->path);
    return TIO_OK;
}

int tio_filemap_sync(struct tio_filemap *fm, struct tio_err *err)
{
    return tio_filemap_sync_range(fm, fm->addr, fm->length, err);
}

void tio_filemap_close(struct tio_filemap *fm, int unlink_file, int keep_mapping)
{
    if (fm->map && !keep_mapping)
        munmap(fm->map, fm->map_len);
    fm->map = NULL;
    if (fm->fd >= 0)
        close(fm->fd);
    fm->fd = -1;
    if (unlink_file && !fm->is_blockdev && fm->path[0] && unlink(fm->path) < 0 &&
        errno != ENOENT)
        TIO_WARN("cannot remove \"%s\": %s", fm->path, strerror(errno));
}
