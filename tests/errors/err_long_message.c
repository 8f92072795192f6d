/* Error messages longer than the MPI library's MPI_MAX_ERROR_STRING (256 on Open MPI:
 * a long path is enough) must still reach the application, cut to fit, with the right
 * class, and must not show an older message of a recycled error code. Also run after
 * several errors of the same class so that tierio's ring of codes wraps. */
#include "errtest.h"

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_long_message");
    char dir[4200], path[4400], longpath[4400], label[128];
    et_subdir(dir, sizeof dir, "target");
    /* a long path in a directory that does not exist */
    /* 240 characters: within MPI_MAX_INFO_VAL (256 on Open MPI), but the message that
     * names it is longer than MPI_MAX_ERROR_STRING (256 on Open MPI) */
    snprintf(longpath, sizeof longpath, "%s/missing/", dir);
    size_t l = strlen(longpath);
    CHECK(l < 200);
    memset(longpath + l, 'L', 240 - l);
    longpath[240] = 0;
    for (int round = 0; round < 12; round++) {
        const int is_long = round % 4 == 3; /* rounds 3, 7 and 11 */
        snprintf(label, sizeof label, "round %d (%s message)", round, is_long ? "long" : "short");
        CASE(label);
        snprintf(path, sizeof path, "%s/missing/short-%d.dat", dir, round);
        const char *fn = is_long ? longpath : path;
        const char *kv[][2] = {{"alloc_type", "storage"}, {"storage_alloc_filename", fn}};
        MPI_Info info = et_info(kv, 2);
        struct et_snap s = et_snap_take(dir);
        MPI_Win win;
        void *base;
        int rc = et_call(ET_WIN_ALLOCATE, 4096, info, 0, &win, &base);
        MPI_Info_free(&info);
        /* what fits of the message: its start, with as much of the path as fits */
        char head[120];
        snprintf(head, sizeof head, "rank 0: storage_alloc_filename \"%.80s", fn);
        et_check_error(rc, EX_NOENT, head, NULL);
        if (!is_long)
            et_check_error(rc, EX_NOENT, "No such file or directory", NULL);
        et_snap_check(&s, dir, 1 << 20);
    }
    return et_finish();
}
