/* Bad paths on MPI_Win_allocate, MPI_Win_allocate_shared and MPI_Alloc_mem, the same on
 * every process: a nonexistent directory, a directory that is not writable, a path in
 * sysfs, a path that is a directory, a file that cannot grow (RLIMIT_FSIZE), and an
 * existing file that cannot grow (it must be kept unchanged). Each time: the error class,
 * a message naming the path and the reason, and nothing left behind.
 *
 * "Not writable" as root: the permission bits do not stop root, so the call is made
 * with the file-system uid of nobody (setfsuid: this thread only, and it drops
 * CAP_DAC_OVERRIDE for file access), which is what an unprivileged user sees. Not root:
 * the 0500 directory stops us anyway. */
#include <signal.h>
#include <sys/fsuid.h>
#include <sys/resource.h>

#include "errtest.h"

#define WIN_SIZE (8 << 20)

static struct rlimit old_fsize;

static void limit_file_size(rlim_t bytes)
{
    struct rlimit l;
    getrlimit(RLIMIT_FSIZE, &old_fsize);
    l = old_fsize;
    l.rlim_cur = bytes;
    signal(SIGXFSZ, SIG_IGN);
    CHECK_EQ(setrlimit(RLIMIT_FSIZE, &l), 0);
}

static void unlimit_file_size(void)
{
    CHECK_EQ(setrlimit(RLIMIT_FSIZE, &old_fsize), 0);
}

/* The path as the message names it: for a collective call every process reports the
 * lowest failing rank, rank 0, so its path (fmt has one %d for the rank). */
static const char *reported(char *buf, size_t n, int coll, const char *fmt, const char *dir)
{
    snprintf(buf, n, fmt, dir, coll ? 0 : tt_rank);
    return buf;
}

static int run(enum et_call c, const char *fn)
{
    const char *kv[][2] = {{"alloc_type", "storage"}, {"storage_alloc_filename", fn}};
    MPI_Info info = et_info(kv, 2);
    MPI_Win win;
    void *base;
    int rc = et_call(c, WIN_SIZE, info, 0, &win, &base);
    MPI_Info_free(&info);
    return rc;
}

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_paths");
    char dir[4200], ro[4200], path[4400], rpath[4400], label[256];
    et_subdir(dir, sizeof dir, "target");
    et_subdir(ro, sizeof ro, "readonly");
    if (tt_rank == 0)
        CHECK_EQ(chmod(ro, 0500), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    const int root = geteuid() == 0;

    for (int c = 0; c < ET_NCALLS; c++) {
        const int shared = c == ET_WIN_ALLOCATE_SHARED, coll = c != ET_ALLOC_MEM;
        const char *rk = coll ? "rank 0: " : "";
        struct et_snap s;
        int rc;

        /* a nonexistent directory */
        snprintf(label, sizeof label, "%s: nonexistent directory", et_call_name[c]);
        CASE(label);
        if (shared)
            snprintf(path, sizeof path, "%s/no/such/dir/shared.dat", dir);
        else
            snprintf(path, sizeof path, "%s/no/such/dir/win-%d.dat", dir, tt_rank);
        s = et_snap_take(dir);
        rc = run(c, path);
        if (!shared)
            reported(rpath, sizeof rpath, coll, "%s/no/such/dir/win-%d.dat", dir);
        et_check_error(rc, EX_NOENT, rk, shared ? path : rpath, "No such file or directory",
                       NULL);
        et_snap_check(&s, dir, WIN_SIZE / 1024);

        /* a directory where we may not create files */
        snprintf(label, sizeof label, "%s: directory not writable", et_call_name[c]);
        CASE(label);
        if (shared)
            snprintf(path, sizeof path, "%s/shared.dat", ro);
        else
            snprintf(path, sizeof path, "%s/win-%d.dat", ro, tt_rank);
        s = et_snap_take(ro);
        if (root)
            setfsuid(65534);
        rc = run(c, path);
        if (root)
            setfsuid(0);
        if (!shared)
            reported(rpath, sizeof rpath, coll, "%s/win-%d.dat", ro);
        et_check_error(rc, EX_ACCESS, rk, shared ? path : rpath, "Permission denied", NULL);
        et_snap_check(&s, ro, WIN_SIZE / 1024);

        /* sysfs does not let anyone create files */
        snprintf(label, sizeof label, "%s: path in /sys", et_call_name[c]);
        CASE(label);
        snprintf(path, sizeof path, "/sys/tierio-test-%d.dat", shared ? 0 : tt_rank);
        s = et_snap_take(dir);
        rc = run(c, path);
        snprintf(rpath, sizeof rpath, "/sys/tierio-test-%d.dat", shared || coll ? 0 : tt_rank);
        et_check_error(rc, EX_ACCESS, rk, rpath, "Permission denied", NULL);
        et_snap_check(&s, dir, WIN_SIZE / 1024);
        CHECK(access(path, F_OK) != 0);

        /* a directory given as the file */
        snprintf(label, sizeof label, "%s: path is a directory", et_call_name[c]);
        CASE(label);
        s = et_snap_take(dir);
        rc = run(c, dir);
        et_check_error(rc, EX_ARG, rk, dir, "Is a directory", NULL);
        et_snap_check(&s, dir, WIN_SIZE / 1024);

        /* the file cannot grow to the window's size */
        snprintf(label, sizeof label, "%s: file cannot grow (RLIMIT_FSIZE)", et_call_name[c]);
        CASE(label);
        if (shared)
            snprintf(path, sizeof path, "%s/shared.dat", dir);
        else
            snprintf(path, sizeof path, "%s/win-%d.dat", dir, tt_rank);
        s = et_snap_take(dir);
        limit_file_size(1 << 20);
        rc = run(c, path);
        unlimit_file_size();
        if (!shared)
            reported(rpath, sizeof rpath, coll, "%s/win-%d.dat", dir);
        et_check_error(rc, EX_NOSPACE, rk, shared ? path : rpath, "reserve", "File too large",
                       NULL);
        et_snap_check(&s, dir, WIN_SIZE / 1024);

        /* an existing file that cannot grow is kept as it was */
        snprintf(label, sizeof label, "%s: existing file cannot grow", et_call_name[c]);
        CASE(label);
        static char pat[65536], back[65536];
        for (size_t i = 0; i < sizeof pat; i++)
            pat[i] = (char)(i * 7 + 3);
        if (!shared || tt_rank == 0) {
            FILE *f = fopen(path, "w");
            CHECK(f && fwrite(pat, 1, sizeof pat, f) == sizeof pat);
            fclose(f);
        }
        s = et_snap_take(dir);
        limit_file_size(1 << 20);
        rc = run(c, path);
        unlimit_file_size();
        et_check_error(rc, EX_NOSPACE, rk, shared ? path : rpath, "reserve", NULL);
        et_snap_check(&s, dir, WIN_SIZE / 1024);
        struct stat st;
        CHECK_EQ(stat(path, &st), 0);
        CHECK_EQ(st.st_size, sizeof pat);
        FILE *f = fopen(path, "r");
        CHECK(f && fread(back, 1, sizeof back, f) == sizeof back);
        fclose(f);
        CHECK(memcmp(back, pat, sizeof pat) == 0);
        MPI_Barrier(MPI_COMM_WORLD);
        if (!shared || tt_rank == 0)
            unlink(path);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return et_finish();
}
