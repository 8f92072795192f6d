/* The engine's fallback where full userfaultfd is not allowed (docs/ummap.md, "Limits"): an
 * unprivileged process with vm.unprivileged_userfaultfd=0 gets UFFD_USER_MODE_ONLY. The
 * application's own loads and stores must still work, data must reach the file, and a
 * kernel access to a segment not in memory must fail with EFAULT (never hang, never lose
 * data); a warning says so once.
 *
 * Run as root, it re-executes itself as nobody (setresuid) in a directory nobody can
 * write; it skips (77) where that is not possible or where unprivileged userfaultfd is
 * allowed anyway (then the fallback is not taken). */
#include "umtest.h"

#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>

#define SIZE ((size_t)1 << 20)

static int run_unprivileged(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/usermode.dat", dir);
    int fd = um_open(path, O_RDWR | O_CREAT | O_TRUNC);
    unsigned char *p = NULL;
    CHECK_RC(ummap(SIZE, 64 << 10, PROT_READ | PROT_WRITE, fd, 0, UMMAP_NO_FLUSH, 0,
                   UMMAP_PTYPE_FIFO, (void **)&p), 0);

    CASE("application stores and loads");
    for (size_t i = 0; i < SIZE; i++)
        p[i] = (unsigned char)(i * 13 + 1);
    for (size_t i = 0; i < SIZE; i += 4093)
        CHECK_EQ(p[i], (unsigned char)(i * 13 + 1));
    CHECK_RC(umsync(p, 1), 0); /* durable, and nothing left in memory */

    CASE("kernel access to a segment not in memory fails with EFAULT");
    int src = um_open(path, O_RDONLY);
    errno = 0;
    ssize_t r = pread(src, p + 128 * 1024, 4096, 0);
    CHECK_EQ(r, -1);
    CHECK_EQ(errno, EFAULT);

    CASE("a clean segment in memory: kernel reads work, kernel writes fail with EFAULT");
    volatile unsigned char touch = p[128 * 1024]; /* loaded, write-protected */
    (void)touch;
    char other[4300];
    snprintf(other, sizeof other, "%s.other", path);
    int dst = um_open(other, O_RDWR | O_CREAT | O_TRUNC);
    CHECK_EQ(pwrite(dst, p + 128 * 1024, 16, 0), 16); /* the kernel reads it */
    close(dst);
    unlink(other);
    errno = 0;
    CHECK_EQ(pread(src, p + 128 * 1024, 4096, 0), -1);
    CHECK_EQ(errno, EFAULT);

    CASE("after the application wrote to it, the kernel can write into it too");
    ((volatile unsigned char *)p)[128 * 1024] = touch; /* dirty: no longer write-protected */
    CHECK_EQ(pread(src, p + 128 * 1024, 4096, 0), 4096);
    for (size_t i = 0; i < 4096; i++)
        CHECK_EQ(p[128 * 1024 + i], (unsigned char)(i * 13 + 1));
    close(src);

    CASE("the file holds what was stored");
    CHECK_RC(umunmap(p, 1), 0);
    close(fd);
    unsigned char *back = malloc(SIZE);
    int rfd = um_open(path, O_RDONLY);
    CHECK_EQ(pread(rfd, back, SIZE, 0), (ssize_t)SIZE);
    close(rfd);
    for (size_t i = 0; i < SIZE; i++)
        if (back[i] != (unsigned char)((i < 128 * 1024 || i >= 128 * 1024 + 4096 ? i : i - 128 * 1024) * 13 + 1)) {
            fprintf(stderr, "[%s] FAIL: file byte %zu\n", tt_current_case, i);
            return 1;
        }
    free(back);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--unprivileged"))
        return run_unprivileged(argv[2]);
    if (geteuid() != 0) {
        printf("skipped: needs root to start the unprivileged process\n");
        return 77;
    }
    FILE *f = fopen("/proc/sys/vm/unprivileged_userfaultfd", "r");
    int allowed = 1;
    if (f) {
        if (fscanf(f, "%d", &allowed) != 1)
            allowed = 1;
        fclose(f);
    }
    if (allowed) {
        printf("skipped: vm.unprivileged_userfaultfd=1, the fallback is not taken here\n");
        return 77;
    }
    struct passwd *pw = getpwnam("nobody");
    if (!pw) {
        printf("skipped: no user nobody\n");
        return 77;
    }
    const char *dir = tt_tmpdir("ummap-usermode");
    CHECK_OK(chown(dir, pw->pw_uid, pw->pw_gid));
    char why[128];
    pid_t pid = tt_fork(60);
    if (pid == 0) {
        if (setgroups(0, NULL) || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
            setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid))
            _exit(3);
        /* the same binary, as nobody, from the start (no root state inherited) */
        execl("/proc/self/exe", argv[0], "--unprivileged", dir, (char *)NULL);
        _exit(4);
    }
    if (!tt_wait(pid, why, sizeof why)) {
        fprintf(stderr, "FAIL: the unprivileged process: %s\n", why);
        return 1;
    }
    printf("user-mode-only fallback: ok\n");
    return 0;
}
