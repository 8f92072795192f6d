/* util/fileio.h: whole transfers, safe creation and the durable atomic replace that every
 * manifest and site file is written with. The full-disk cases mount a 1 MiB tmpfs in a
 * private mount namespace (root only; skipped otherwise, the rest still runs). */
#include <sys/stat.h>

#include "check.h"
#include "../common/private_mount.h"
#include "util/fileio.h"

static void check_content(const char *path, const char *want)
{
    char got[256] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    ssize_t n = tio_pread_full(fd, got, sizeof got - 1, 0);
    close(fd);
    CHECK_EQ(n, (ssize_t)strlen(want));
    CHECK(memcmp(got, want, (size_t)n) == 0);
}

static void whole_transfers(const char *dir)
{
    CASE("whole transfers");
    char path[4200];
    snprintf(path, sizeof path, "%s/data", dir);
    size_t n = 3 << 20;
    char *a = malloc(n), *b = malloc(n);
    CHECK(a && b);
    tt_fill(a, n, 7);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK_EQ(tio_write_full(fd, a, n / 2), 0);
    CHECK_EQ(tio_pwrite_full(fd, a + n / 2, n - n / 2, n / 2), 0);
    CHECK_EQ(tio_pread_full(fd, b, n, 0), (ssize_t)n);
    CHECK_BYTES(a, b, n);
    /* At the end of the file: the count read, not an error. */
    CHECK_EQ(tio_pread_full(fd, b, 4096, n - 100), 100);
    CHECK_EQ(tio_pread_full(fd, b, 4096, n + 5), 0);
    close(fd);
    CHECK_EQ(tio_pread_full(-1, b, 10, 0), -1);
    CHECK_EQ(errno, EBADF);
    free(a);
    free(b);
}

static void dirnames(void)
{
    CASE("dirname");
    char d[64];
    CHECK_EQ(tio_dirname_of("/a/b/c", d, sizeof d), 0);
    CHECK(!strcmp(d, "/a/b"));
    CHECK_EQ(tio_dirname_of("/c", d, sizeof d), 0);
    CHECK(!strcmp(d, "/"));
    CHECK_EQ(tio_dirname_of("c", d, sizeof d), 0);
    CHECK(!strcmp(d, "."));
    CHECK_EQ(tio_dirname_of("/a/b/c", d, 3), -1);
}

static void replace(const char *dir)
{
    CASE("replace");
    char path[4200];
    struct tio_err err = {0};
    snprintf(path, sizeof path, "%s/manifest", dir);
    int before = tc_count_entries(dir);
    CHECK_EQ(tio_replace_file(path, "first\n", 6, 0640, &err), TIO_OK);
    check_content(path, "first\n");
    struct stat st;
    CHECK_EQ(stat(path, &st), 0);
    CHECK_EQ(st.st_mode & 0777 & ~0640, 0);
    CHECK_EQ(tio_replace_file(path, "second\n", 7, 0640, &err), TIO_OK);
    check_content(path, "second\n");
    CHECK_EQ(tc_count_entries(dir), before + 1); /* no temporary left behind */

    CASE("replace in a missing directory");
    char missing[4300];
    snprintf(missing, sizeof missing, "%s/nope/manifest", dir);
    CHECK_EQ(tio_replace_file(missing, "x", 1, 0600, &err), TIO_E_NOENT);
    CHECK_HAS(err.msg, "nope");

    CASE("replace a symbolic link");
    /* The link is replaced; the file it pointed to is left alone. */
    char target[4300], link[4300];
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    tt_write_file(target, "keep", 4);
    CHECK_EQ(symlink(target, link), 0);
    memset(&err, 0, sizeof err);
    CHECK_EQ(tio_replace_file(link, "new", 3, 0600, &err), TIO_OK);
    check_content(target, "keep");
    CHECK_EQ(lstat(link, &st), 0);
    CHECK(S_ISREG(st.st_mode));
    check_content(link, "new");
}

static void create_new(const char *dir)
{
    CASE("create without following links");
    char target[4300], link[4300];
    snprintf(target, sizeof target, "%s/victim", dir);
    snprintf(link, sizeof link, "%s/planted", dir);
    tt_write_file(target, "precious", 8);
    CHECK_EQ(symlink(target, link), 0);
    CHECK_EQ(tio_create_new(link, 0600), -1);
    CHECK(errno == EEXIST || errno == ELOOP);
    check_content(target, "precious");
    CHECK_EQ(tio_create_new(target, 0600), -1);
    CHECK_EQ(errno, EEXIST);
}

static void full_disk(const char *dir)
{
    char why[256];
    if (tc_private_tmpfs(dir, "size=1m,mode=0700", why, sizeof why) < 0) {
        printf("full-disk cases skipped: %s\n", why);
        return;
    }
    CASE("write to a full disk");
    char path[4200], big_path[4200];
    snprintf(path, sizeof path, "%s/site", dir);
    snprintf(big_path, sizeof big_path, "%s/big", dir);
    size_t n = 2 << 20;
    char *a = malloc(n);
    CHECK(a);
    tt_fill(a, n, 3);
    int fd = open(big_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK_EQ(tio_write_full(fd, a, n), -1);
    CHECK_EQ(errno, ENOSPC);
    close(fd);

    CASE("replace on a full disk keeps the old content");
    unlink(big_path);
    struct tio_err err = {0};
    CHECK_EQ(tio_replace_file(path, "old\n", 4, 0600, &err), TIO_OK);
    int entries = tc_count_entries(dir);
    tc_fill_up(big_path);
    CHECK_EQ(tio_replace_file(path, a, n, 0600, &err), TIO_E_NOSPACE);
    CHECK_HAS(err.msg, "site");
    check_content(path, "old\n");
    CHECK_EQ(tc_count_entries(dir), entries + 1); /* the filler; no temporary */
    free(a);
}

int main(void)
{
    const char *dir = tt_tmpdir("fileio");
    whole_transfers(dir);
    dirnames();
    replace(dir);
    create_new(dir);
    full_disk(tt_tmpdir("fileio-full"));
    printf("test_fileio: ok\n");
    return 0;
}
