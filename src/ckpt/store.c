#include "ckpt/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/crc32c.h"

#define IO_CHUNK (4u << 20) /* bytes per read/write: large enough for full device speed */

int tio_ckpt_check_name(const char *s, const char *what, struct tio_err *err)
{
    if (!s || !*s)
        return tio_err_set(err, TIO_E_ARG, "%s must be a non-empty name", what);
    size_t n = strlen(s);
    if (n > TIO_CKPT_NAME_MAX)
        return tio_err_set(err, TIO_E_ARG, "%s \"%.64s...\" is longer than %d bytes", what, s,
                           TIO_CKPT_NAME_MAX);
    if (s[0] == '.')
        return tio_err_set(err, TIO_E_ARG, "%s \"%s\" must not start with '.'", what, s);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok)
            return tio_err_set(err, TIO_E_ARG,
                               "%s \"%s\" may hold only letters, digits, '.', '_' and '-' "
                               "(character %zu is not one)", what, s, i + 1);
    }
    return TIO_OK;
}

void tio_ckpt_copy_name(char *dst, const char *name)
{
    size_t n = strnlen(name, TIO_CKPT_NAME_MAX);
    memcpy(dst, name, n);
    dst[n] = 0;
}

static int fits(int n, size_t len) { return n >= 0 && (size_t)n < len; }

int tio_ckpt_set_path(char *out, size_t len, const char *dir, const char *name)
{
    return fits(snprintf(out, len, "%s/%s", dir, name), len) ? 0 : -1;
}

int tio_ckpt_vdir(char *out, size_t len, const char *dir, const char *name, long long version)
{
    return fits(snprintf(out, len, "%s/%s/v%lld", dir, name, version), len) ? 0 : -1;
}

int tio_ckpt_file_path(char *out, size_t len, const char *vdir, int partner, int rank,
                       const char *file)
{
    int n = partner ? snprintf(out, len, "%s/" TIO_CKPT_PARTNER_DIR "/r%d.%s", vdir, rank, file)
                    : snprintf(out, len, "%s/r%d.%s", vdir, rank, file);
    return fits(n, len) ? 0 : -1;
}

int tio_ckpt_mkdirs(const char *path, struct tio_err *err)
{
    char p[PATH_MAX];
    if (!fits(snprintf(p, sizeof p, "%s", path), sizeof p))
        return tio_err_set(err, TIO_E_ARG, "path \"%.200s...\" is too long", path);
    /* Walk down: create each missing component and sync its parent. */
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != 0)
            continue;
        char save = *s;
        *s = 0;
        if (mkdir(p, 0755) == 0) {
            char *slash = strrchr(p, '/');
            int rc;
            if (slash == p) {
                rc = tio_fsync_dir("/", err);
            } else {
                *slash = 0;
                rc = tio_fsync_dir(p, err);
                *slash = '/';
            }
            if (rc)
                return rc;
        } else if (errno != EEXIST) {
            return tio_err_errno(err, errno, "cannot create directory \"%s\"", p);
        } else {
            struct stat st;
            if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode))
                return tio_err_set(err, TIO_E_NOENT, "\"%s\" exists and is not a directory", p);
        }
        *s = save;
        if (save == 0)
            break;
    }
    return TIO_OK;
}

/* "v<digits>" -> version, or -1. */
static long long parse_vname(const char *s)
{
    if (s[0] != 'v' || s[1] < '0' || s[1] > '9')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s + 1, &end, 10);
    if (errno || *end || v < 0)
        return -1;
    return v;
}

/* A version directory that is a symbolic link is never complete (nor used). */
static int has_manifest(const char *setdir, const char *vname)
{
    char p[PATH_MAX];
    if (!fits(snprintf(p, sizeof p, "%s/%s/" TIO_CKPT_MANIFEST, setdir, vname), sizeof p))
        return 0;
    struct stat st;
    char *slash = strrchr(p, '/');
    *slash = 0;
    int real_dir = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
    *slash = '/';
    return real_dir && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

struct vlist {
    long long *v; /* (version, complete) pairs, newest first */
    int n, cap;
};

static int by_version_desc(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x < y) - (x > y);
}

/* Every version directory of setdir, newest first, each with whether it has a manifest.
 * A missing setdir is an empty list. */
static int list_versions(const char *setdir, struct vlist *l, struct tio_err *err)
{
    memset(l, 0, sizeof *l);
    DIR *d = opendir(setdir);
    if (!d) {
        if (errno == ENOENT)
            return TIO_OK;
        return tio_err_errno(err, errno, "cannot list checkpoint directory \"%s\"", setdir);
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        long long v = parse_vname(e->d_name);
        if (v < 0)
            continue;
        if (l->n == l->cap) {
            int cap = l->cap ? 2 * l->cap : 16;
            long long *np = realloc(l->v, sizeof *l->v * 2 * (size_t)cap);
            if (!np) {
                closedir(d);
                free(l->v);
                memset(l, 0, sizeof *l);
                return tio_err_set(err, TIO_E_NOMEM, "out of memory listing \"%s\"", setdir);
            }
            l->v = np;
            l->cap = cap;
        }
        l->v[2 * l->n] = v;
        l->v[2 * l->n + 1] = has_manifest(setdir, e->d_name);
        l->n++;
    }
    closedir(d);
    if (l->n)
        qsort(l->v, (size_t)l->n, 2 * sizeof *l->v, by_version_desc);
    return TIO_OK;
}

long long tio_ckpt_newest_version(const char *setdir, long long bound)
{
    struct vlist l;
    struct tio_err e;
    tio_err_clear(&e);
    if (list_versions(setdir, &l, &e) != TIO_OK)
        return -1;
    long long best = -1;
    for (int i = 0; i < l.n && best < 0; i++)
        if (l.v[2 * i] < bound && l.v[2 * i + 1])
            best = l.v[2 * i];
    free(l.v);
    return best;
}

/* Remove everything inside directory dfd (path names it in messages), then close dfd.
 * Nothing is followed: entries are unlinked by name relative to dfd, and a subdirectory
 * is entered only through openat(O_NOFOLLOW | O_DIRECTORY). */
static int rm_contents(int dfd, const char *path, struct tio_err *err)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        int e = errno;
        close(dfd);
        return tio_err_errno(err, e, "cannot list \"%s\"", path);
    }
    int rc = TIO_OK;
    for (struct dirent *e; rc == TIO_OK && (errno = 0, e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[PATH_MAX];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (unlinkat(dfd, e->d_name, 0) == 0 || errno == ENOENT)
            continue;
        if (errno != EISDIR && errno != EPERM) {
            rc = tio_err_errno(err, errno, "cannot remove \"%s\"", sub);
            break;
        }
        int sfd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0)
            rc = tio_err_errno(err, errno, "cannot remove \"%s\"", sub);
        else
            rc = rm_contents(sfd, sub, err);
        if (rc == TIO_OK && unlinkat(dfd, e->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
            rc = tio_err_errno(err, errno, "cannot remove directory \"%s\"", sub);
    }
    if (rc == TIO_OK && errno)
        rc = tio_err_errno(err, errno, "cannot list \"%s\"", path);
    closedir(d);
    return rc;
}

/* The version directory vname of the set directory setfd, opened without following a
 * link: -1 with errno ENOENT when there is none, -1 with err set on anything else. */
static int open_version(int setfd, const char *vname, const char *vdir, struct tio_err *err)
{
    int vfd = openat(setfd, vname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (vfd >= 0 || errno == ENOENT)
        return vfd;
    int e = errno;
    struct stat st;
    if (fstatat(setfd, vname, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        tio_err_set(err, TIO_E_IO, "checkpoint version directory \"%s\" is a symbolic link: "
                    "refusing to use or remove it (remove the link yourself)", vdir);
    else
        tio_err_errno(err, e, "cannot open checkpoint version directory \"%s\"", vdir);
    errno = e;
    return -1;
}

int tio_ckpt_remove_version(const char *setdir, long long version, struct tio_err *err)
{
    char vname[32], vdir[PATH_MAX];
    snprintf(vname, sizeof vname, "v%lld", version);
    if (!fits(snprintf(vdir, sizeof vdir, "%s/%s", setdir, vname), sizeof vdir))
        return tio_err_set(err, TIO_E_ARG, "path of version %lld in \"%.200s\" is too long",
                           version, setdir);
    int setfd = open(setdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (setfd < 0)
        return errno == ENOENT ? TIO_OK
                               : tio_err_errno(err, errno, "cannot open \"%s\"", setdir);
    int vfd = open_version(setfd, vname, vdir, err);
    if (vfd < 0) {
        close(setfd);
        return errno == ENOENT && err->cls == TIO_OK ? TIO_OK : err->cls;
    }
    /* The manifest first, durably: from here on the version is incomplete, whatever
     * happens to the rest of the removal. */
    int rc = TIO_OK;
    if (unlinkat(vfd, TIO_CKPT_MANIFEST, 0) == 0) {
        if (fsync(vfd) < 0)
            rc = tio_err_errno(err, errno, "fsync of \"%s\" failed", vdir);
    } else if (errno != ENOENT) {
        rc = tio_err_errno(err, errno, "cannot remove manifest \"%s/" TIO_CKPT_MANIFEST "\"",
                           vdir);
    }
    if (rc == TIO_OK)
        rc = rm_contents(vfd, vdir, err); /* closes vfd */
    else
        close(vfd);
    if (rc == TIO_OK && unlinkat(setfd, vname, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = tio_err_errno(err, errno, "cannot remove checkpoint directory \"%s\"", vdir);
    if (rc == TIO_OK && fsync(setfd) < 0)
        rc = tio_err_errno(err, errno, "fsync of \"%s\" failed", setdir);
    close(setfd);
    return rc;
}

int tio_ckpt_remove_from(const char *setdir, long long from, struct tio_err *err)
{
    struct vlist l;
    int rc = list_versions(setdir, &l, err);
    if (rc)
        return rc;
    for (int i = 0; i < l.n; i++)
        if (l.v[2 * i] >= from) {
            int r = tio_ckpt_remove_version(setdir, l.v[2 * i], err);
            if (r && !rc)
                rc = r;
        }
    free(l.v);
    return rc;
}

int tio_ckpt_prune(const char *setdir, int keep, long long protect, struct tio_err *err)
{
    struct vlist l;
    int rc = list_versions(setdir, &l, err);
    if (rc)
        return rc;
    int kept = 0, seen_complete = 0;
    for (int i = 0; i < l.n; i++) {
        long long v = l.v[2 * i];
        int drop;
        if (l.v[2 * i + 1]) {
            seen_complete = 1;
            drop = ++kept > keep;
        } else {
            /* Incomplete and older than a complete one: a torn attempt nobody resumes. */
            drop = seen_complete;
        }
        if (drop && v != protect) {
            int r = tio_ckpt_remove_version(setdir, v, err);
            if (r && !rc)
                rc = r;
        }
    }
    free(l.v);
    return rc;
}

/* Read fd to its end, summing (and copying to out when out >= 0); *bytes is what was read. */
static int sum_fd(int fd, const char *path, int out, const char *outpath, uint64_t *bytes,
                  uint32_t *crc, struct tio_err *err)
{
    char *buf = malloc(IO_CHUNK);
    if (!buf)
        return tio_err_set(err, TIO_E_NOMEM, "out of memory reading \"%s\"", path);
    uint64_t n = 0;
    uint32_t c = 0;
    int rc = TIO_OK;
    for (;;) {
        ssize_t r = read(fd, buf, IO_CHUNK);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = tio_err_errno(err, errno, "cannot read \"%s\"", path);
            break;
        }
        if (r == 0)
            break;
        c = tio_crc32c(c, buf, (size_t)r);
        n += (uint64_t)r;
        if (out >= 0 && tio_write_full(out, buf, (size_t)r) < 0) {
            rc = tio_err_errno(err, errno, "cannot write \"%s\"", outpath);
            break;
        }
    }
    free(buf);
    *bytes = n;
    *crc = c;
    return rc;
}

int tio_ckpt_file_sum(const char *path, int sync, uint64_t *size, uint32_t *crc,
                      struct tio_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tio_err_errno(err, errno, "cannot open \"%s\"", path);
    int rc = sum_fd(fd, path, -1, NULL, size, crc, err);
    if (!rc && sync && fsync(fd) < 0)
        rc = tio_err_errno(err, errno, "fsync of \"%s\" failed", path);
    close(fd);
    return rc;
}

int tio_ckpt_file_sync(const char *path, uint64_t size, struct tio_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tio_err_errno(err, errno, "cannot open \"%s\"", path);
    struct stat st;
    int rc = TIO_OK;
    if (fstat(fd, &st) < 0)
        rc = tio_err_errno(err, errno, "cannot stat \"%s\"", path);
    else if ((uint64_t)st.st_size != size)
        rc = tio_err_set(err, TIO_E_IO, "\"%s\" has %lld bytes, %llu were written to it",
                         path, (long long)st.st_size, (unsigned long long)size);
    else if (fsync(fd) < 0)
        rc = tio_err_errno(err, errno, "fsync of \"%s\" failed", path);
    close(fd);
    return rc;
}

int tio_ckpt_file_matches(const char *path, uint64_t size, uint32_t crc, struct tio_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tio_err_errno(err, errno, "cannot open \"%s\"", path);
        return 0;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != size) {
        tio_err_set(err, TIO_E_IO, "\"%s\" has %lld bytes, the manifest says %llu", path,
                    (long long)st.st_size, (unsigned long long)size);
        close(fd);
        return 0;
    }
    uint64_t n;
    uint32_t c;
    int rc = sum_fd(fd, path, -1, NULL, &n, &c, err);
    close(fd);
    if (rc)
        return 0;
    if (n != size || c != crc) {
        tio_err_set(err, TIO_E_IO,
                    "\"%s\" does not match the manifest: %llu bytes with CRC-32C %08x, "
                    "expected %llu bytes with %08x", path, (unsigned long long)n, c,
                    (unsigned long long)size, crc);
        return 0;
    }
    return 1;
}

int tio_ckpt_copy_file(const char *src, const char *dst, uint64_t size, uint32_t crc,
                       struct tio_err *err)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return tio_err_errno(err, errno, "cannot open \"%s\"", src);
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        return tio_err_errno(err, e, "cannot create \"%s\"", dst);
    }
    uint64_t n;
    uint32_t c;
    int rc = sum_fd(in, src, out, dst, &n, &c, err);
    if (!rc && (n != size || c != crc))
        rc = tio_err_set(err, TIO_E_IO,
                         "\"%s\" changed since it was checkpointed: %llu bytes with CRC-32C "
                         "%08x, the manifest says %llu bytes with %08x", src,
                         (unsigned long long)n, c, (unsigned long long)size, crc);
    if (!rc && fsync(out) < 0)
        rc = tio_err_errno(err, errno, "fsync of \"%s\" failed", dst);
    if (close(out) < 0 && !rc)
        rc = tio_err_errno(err, errno, "closing \"%s\" failed", dst);
    close(in);
    if (rc)
        unlink(dst);
    return rc;
}
