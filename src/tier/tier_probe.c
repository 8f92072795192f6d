#include "tier/tier_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/fileio.h"

char tio_probe_file_path[4200];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A random cycle through the cache lines of buf (Sattolo's shuffle): each line holds the
 * address of the next, so every load depends on the one before and prefetchers cannot
 * guess. Returns ns per load. */
static double chase(char *buf, size_t size)
{
    const size_t line = 64, n = size / line;
    size_t *order = malloc(n * sizeof *order);
    if (!order)
        return 0;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = n - 1; i > 0; i--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t j = (size_t)(x % i);
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(char **)(buf + order[i] * line) = buf + order[(i + 1) % n] * line;
    free(order);
    char **p = (char **)buf;
    const size_t steps = n < 2000000 ? 2 * n : 4000000;
    for (size_t i = 0; i < steps / 4; i++) /* warm the TLB and caches up */
        p = (char **)*p;
    double t = now();
    for (size_t i = 0; i < steps; i++)
        p = (char **)*p;
    t = now() - t;
    __asm__ volatile("" : : "r"(p));
    return t / (double)steps;
}

int tio_probe_memory(void *buf, size_t size, struct tio_probe *out, struct tio_err *err)
{
    if (!buf || size < (1u << 20))
        return tio_err_set(err, TIO_E_ARG, "memory probe: want at least 1 MiB, not %zu bytes",
                           size);
    memset(out, 0, sizeof *out);
    memset(buf, 1, size); /* first touch: page faults are not bandwidth */
    uint64_t *w = buf;
    size_t nw = size / sizeof *w;
    for (int pass = 0; pass < 3; pass++) {
        double t = now();
        memset(buf, pass + 2, size);
        __asm__ volatile("" : : "r"(buf) : "memory");
        t = now() - t;
        if (t > 0 && size / t > out->write_bw)
            out->write_bw = (double)size / t;
        t = now();
        uint64_t sum = 0;
        for (size_t i = 0; i < nw; i++)
            sum += w[i];
        t = now() - t;
        __asm__ volatile("" : : "r"(sum));
        if (t > 0 && size / t > out->read_bw)
            out->read_bw = (double)size / t;
    }
    out->latency = chase(buf, size);
    return TIO_OK;
}

int tio_probe_storage(const char *dir, size_t size, struct tio_probe *out, struct tio_err *err)
{
    const size_t chunk = 4u << 20;
    if (size < chunk || size % (1u << 20))
        return tio_err_set(err, TIO_E_ARG, "storage probe: size %zu is not a multiple of "
                           "1 MiB of at least 4 MiB", size);
    memset(out, 0, sizeof *out);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    char path[sizeof tio_probe_file_path];
    snprintf(path, sizeof path, "%s/.tierio-probe.%.40s.%ld", dir, host, (long)getpid());
    char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, chunk))
        return tio_err_set(err, TIO_E_NOMEM, "storage probe: out of memory");
    for (size_t i = 0; i < chunk; i++)
        buf[i] = (char)(i * 131 + 7);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        free(buf);
        return tio_err_errno(err, errno, "storage probe: cannot create \"%s\"", path);
    }
    memcpy(tio_probe_file_path, path, sizeof path);
    int rc = TIO_OK;

    /* Write then make durable: what a flush of a storage window does. */
    double t = now();
    for (size_t off = 0; off < size && !rc; off += chunk)
        if (tio_pwrite_full(fd, buf, chunk, off) < 0)
            rc = tio_err_errno(err, errno, "storage probe: write to \"%s\"", path);
    if (!rc && fdatasync(fd) < 0)
        rc = tio_err_errno(err, errno, "storage probe: fdatasync \"%s\"", path);
    t = now() - t;
    if (!rc)
        out->write_bw = (double)size / t;

    /* Read from the device: O_DIRECT where the file system takes it, else after asking
     * the kernel to drop the cached pages. */
    if (!rc) {
        int rfd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
        out->direct = rfd >= 0;
        if (rfd < 0) {
            rfd = open(path, O_RDONLY | O_CLOEXEC);
            posix_fadvise(fd, 0, (off_t)size, POSIX_FADV_DONTNEED);
        }
        if (rfd < 0)
            rc = tio_err_errno(err, errno, "storage probe: cannot reopen \"%s\"", path);
        t = now();
        for (size_t off = 0; off < size && !rc; off += chunk) {
            ssize_t r = tio_pread_full(rfd, buf, chunk, off);
            if (r != (ssize_t)chunk) /* an early end of the file we wrote: an I/O error */
                rc = tio_err_errno(err, r < 0 ? errno : EIO, "storage probe: read \"%s\"", path);
        }
        t = now() - t;
        if (!rc)
            out->read_bw = (double)size / t;
        if (rfd >= 0)
            close(rfd);
    }

    /* Latency: a 4 KiB write made durable, the median of 31. */
    double lat[31];
    for (int i = 0; i < 31 && !rc; i++) {
        t = now();
        if (tio_pwrite_full(fd, buf, 4096, (uint64_t)(i % 16) * 4096) < 0 || fdatasync(fd) < 0)
            rc = tio_err_errno(err, errno, "storage probe: small write to \"%s\"", path);
        lat[i] = now() - t;
    }
    if (!rc) {
        qsort(lat, 31, sizeof lat[0], cmp_double);
        out->latency = lat[15];
    }
    close(fd);
    if (unlink(path) < 0 && !rc)
        rc = tio_err_errno(err, errno, "storage probe: cannot remove \"%s\"", path);
    tio_probe_file_path[0] = 0;
    free(buf);
    return rc;
}
