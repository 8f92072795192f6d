#include "topo/probe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "util/fileio.h"

int topo_token_random(uint32_t raw[4], struct tio_err *err)
{
    size_t got = 0, want = 4 * sizeof *raw;
    while (got < want) {
        ssize_t n = getrandom((char *)raw + got, want - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return tio_err_errno(err, n < 0 ? errno : EIO,
                                 "cannot draw a random name for the probe files");
        got += (size_t)n;
    }
    return TIO_OK;
}

void topo_token_hex(const uint32_t raw[4], char *token)
{
    for (int i = 0; i < 4; i++)
        snprintf(token + 8 * i, 9, "%08x", (unsigned)raw[i]);
}

void topo_probe_path(char *out, size_t len, const char *dir, const char *token, int rank)
{
    /* "dir/" and "dir" name the same directory; avoid a double slash in messages. */
    size_t dl = strlen(dir);
    const char *sep = dl && dir[dl - 1] == '/' ? "" : "/";
    if (rank >= 0)
        snprintf(out, len, "%s%s%s%s.%d", dir, sep, TOPO_PROBE_PREFIX, token, rank);
    else
        snprintf(out, len, "%s%s%s%s", dir, sep, TOPO_PROBE_PREFIX, token);
}

/* The reason before the directory: MPI cuts error strings at MPI_MAX_ERROR_STRING (256
 * bytes in Open MPI), and a long path must not push the reason out. */
static int fail(struct tio_err *err, int errnum, const char *what, const char *dir)
{
    char buf[128];
    const char *reason = strerror_r(errnum, buf, sizeof buf); /* GNU: the message */
    return tio_err_set(err, tio_errclass_from_errno(errnum),
                       "nbhd_common_dirname: cannot %s: %s (directory \"%s\")", what, reason, dir);
}

enum topo_probe topo_probe_create(const char *dir, const char *path, const char *content,
                                  struct topo_ops *ops, struct tio_err *err)
{
    ops->creates++;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return TOPO_PROBE_EXISTS;
        if (errno == ENOENT)
            return TOPO_PROBE_NODIR;
        fail(err, errno, "create a probe file", dir);
        return TOPO_PROBE_ERROR;
    }
    /* The content must be readable by other nodes once we report success: written and
     * closed first (close-to-open consistency of network file systems). */
    int e = content && tio_write_full(fd, content, strlen(content)) < 0 ? errno : 0;
    if (close(fd) < 0 && !e)
        e = errno;
    if (e) {
        fail(err, e, "write a probe file", dir);
        if (unlink(path) == 0)
            ops->removals++;
        return TOPO_PROBE_ERROR;
    }
    return TOPO_PROBE_DONE;
}

enum topo_probe topo_probe_writable(const char *dir, struct topo_ops *ops,
                                    struct tio_err *err)
{
    ops->checks++;
    /* "dir/." fails as creating a file in dir would: ENOTDIR for a regular file. */
    char here[PATH_MAX];
    snprintf(here, sizeof here, "%s/.", dir);
    if (faccessat(AT_FDCWD, here, W_OK | X_OK, AT_EACCESS) == 0)
        return TOPO_PROBE_DONE;
    if (errno == ENOENT)
        return TOPO_PROBE_NODIR;
    fail(err, errno, "write in the directory", dir);
    return TOPO_PROBE_ERROR;
}

int topo_probe_taken(const char *path, struct tio_err *err)
{
    return tio_err_set(err, TIO_E_IO, "nbhd_common_dirname: this call's probe file exists "
                       "already (made by another program?): \"%s\"", path);
}

enum topo_probe topo_probe_read(const char *dir, const char *path, char *buf, size_t len,
                                struct topo_ops *ops, struct tio_err *err)
{
    ops->lookups++;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return TOPO_PROBE_NODIR;
        fail(err, errno, "open a probe file", dir);
        return TOPO_PROBE_ERROR;
    }
    int e = 0;
    if (buf && len) {
        size_t got = 0;
        while (got + 1 < len) {
            ssize_t r = read(fd, buf + got, len - 1 - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                e = errno;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        buf[got] = 0;
    }
    close(fd);
    if (e) {
        fail(err, e, "read a probe file", dir);
        return TOPO_PROBE_ERROR;
    }
    return TOPO_PROBE_DONE;
}

int topo_probe_remove(const char *dir, const char *path, struct topo_ops *ops,
                      struct tio_err *err)
{
    if (unlink(path) < 0)
        return fail(err, errno, "remove a probe file", dir);
    ops->removals++;
    return TIO_OK;
}

int topo_probe_entry_rank(const char *name, const char *token, int nprocs)
{
    size_t pl = strlen(TOPO_PROBE_PREFIX), tl = strlen(token);
    if (strncmp(name, TOPO_PROBE_PREFIX, pl) != 0 || strncmp(name + pl, token, tl) != 0 ||
        name[pl + tl] != '.')
        return -1;
    const char *digits = name + pl + tl + 1;
    /* Plain decimal only, as topo_probe_path writes it: no sign, no leading zero. */
    if (digits[0] < '0' || digits[0] > '9' || (digits[0] == '0' && digits[1]))
        return -1;
    long r = 0;
    for (const char *p = digits; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        r = r * 10 + (*p - '0');
        if (r >= nprocs)
            return -1;
    }
    return (int)r;
}

int topo_probe_list(const char *dir, const char *token, int nprocs, unsigned char *seen,
                    struct topo_ops *ops, struct tio_err *err)
{
    ops->listings++;
    DIR *d = opendir(dir);
    if (!d)
        return fail(err, errno, "list the directory", dir);
    errno = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL; errno = 0) {
        int r = topo_probe_entry_rank(e->d_name, token, nprocs);
        if (r >= 0)
            seen[r] = 1;
    }
    int e = errno;
    closedir(d);
    if (e)
        return fail(err, e, "list the directory", dir);
    return TIO_OK;
}
