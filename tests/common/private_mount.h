/* Small file systems of a test's own: a tmpfs mounted in a private mount namespace of the
 * process (nothing outside it sees the mount, and it goes with the process), and filling
 * one up. Needs root; callers skip (exit 77) when tc_private_tmpfs says no. */
#ifndef TIO_TEST_PRIVATE_MOUNT_H
#define TIO_TEST_PRIVATE_MOUNT_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

/* Mount a tmpfs with opts ("size=1m,mode=0700") at dir, in a mount namespace of this
 * process's own. 0, or -1 with the reason in why. */
static inline int tc_private_tmpfs(const char *dir, const char *opts, char *why, size_t n)
{
    if (geteuid() != 0)
        return snprintf(why, n, "mounting a tmpfs needs root"), -1;
    if (unshare(CLONE_NEWNS) < 0)
        return snprintf(why, n, "unshare(CLONE_NEWNS): %s", strerror(errno)), -1;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return snprintf(why, n, "making / private: %s", strerror(errno)), -1;
    if (mount("tierio-test", dir, "tmpfs", 0, opts) < 0)
        return snprintf(why, n, "cannot mount a tmpfs at %s: %s", dir, strerror(errno)), -1;
    return 0;
}

/* Fill the file system of path with junk until it is full; the bytes written (-1: error
 * other than ENOSPC). */
static inline long long tc_fill_up(const char *path)
{
    static char junk[64 * 1024];
    memset(junk, 'j', sizeof junk);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    long long total = 0;
    for (size_t chunk = sizeof junk; chunk > 0;) {
        ssize_t w = write(fd, junk, chunk);
        if (w > 0) {
            total += w;
            continue;
        }
        if (w < 0 && errno != ENOSPC) {
            close(fd);
            return -1;
        }
        chunk /= 2;
    }
    close(fd);
    return total;
}

#endif
