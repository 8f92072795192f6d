#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One loop for both writers: at = NULL writes at the file offset, else at *at, which
 * moves on with the data. */
static int write_loop(int fd, const char *p, size_t len, uint64_t *at)
{
    while (len) {
        ssize_t w = at ? pwrite(fd, p, len, (off_t)*at) : write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        p += w;
        len -= (size_t)w;
        if (at)
            *at += (uint64_t)w;
    }
    return 0;
}

int tio_write_full(int fd, const void *buf, size_t len)
{
    return write_loop(fd, buf, len, NULL);
}

int tio_pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
    return write_loop(fd, buf, len, &off);
}

ssize_t tio_pread_full(int fd, void *buf, size_t len, uint64_t off)
{
    char *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t r = pread(fd, p + done, len - done, (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

int tio_fsync_dir(const char *path, struct tio_err *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return tio_err_errno(err, errno, "cannot open directory \"%s\" to sync it", path);
    int rc = TIO_OK;
    if (fsync(fd) < 0 && errno != EINVAL)
        rc = tio_err_errno(err, errno, "fsync of directory \"%s\" failed", path);
    close(fd);
    return rc;
}

int tio_dirname_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    int n = !slash ? snprintf(dir, len, ".")
            : slash == path ? snprintf(dir, len, "/")
                            : snprintf(dir, len, "%.*s", (int)(slash - path), path);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

int tio_create_new(const char *path, mode_t mode)
{
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}

/* A temporary name beside path that another process cannot guess ahead of time (the pid
 * alone is guessable): pid, time and a counter, tried again on a collision. It starts with
 * a dot, so that whoever lists the directory (a restart looking for versions, a user)
 * passes over it. */
static int make_temp(const char *path, const char *dir, mode_t mode, char *tmp, size_t len)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    static unsigned long counter;
    for (int attempt = 0; attempt < 64; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long salt = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 2654435761ul ^
                             (unsigned long)ts.tv_nsec;
        int n = snprintf(tmp, len, "%s/.%s.tmp.%ld.%lx", dir, base, (long)getpid(), salt);
        if (n < 0 || (size_t)n >= len) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = tio_create_new(tmp, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

int tio_replace_file(const char *path, const void *data, size_t len, mode_t mode,
                     struct tio_err *err)
{
    char tmp[PATH_MAX + 64], dir[PATH_MAX];
    if (tio_dirname_of(path, dir, sizeof dir) < 0)
        return tio_err_set(err, TIO_E_ARG, "path \"%.200s...\" is too long", path);
    int fd = make_temp(path, dir, mode, tmp, sizeof tmp);
    if (fd < 0)
        return tio_err_errno(err, errno, "cannot create a temporary file beside \"%s\"", path);
    int rc = TIO_OK;
    if (tio_write_full(fd, data, len) < 0)
        rc = tio_err_errno(err, errno, "cannot write \"%s\"", tmp);
    else if (fdatasync(fd) < 0)
        rc = tio_err_errno(err, errno, "fdatasync of \"%s\" failed", tmp);
    if (close(fd) < 0 && rc == TIO_OK)
        rc = tio_err_errno(err, errno, "closing \"%s\" failed", tmp);
    if (rc == TIO_OK && rename(tmp, path) < 0)
        rc = tio_err_errno(err, errno, "cannot rename \"%s\" to \"%s\"", tmp, path);
    if (rc != TIO_OK) {
        unlink(tmp);
        return rc;
    }
    return tio_fsync_dir(dir, err);
}
