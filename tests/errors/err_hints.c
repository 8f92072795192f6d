/* Invalid storage hints on MPI_Win_allocate, MPI_Win_allocate_shared and MPI_Alloc_mem:
 * a missing filename, an invalid value of every hint and alias, the user-level mmap
 * engine and its tuning hints (unsupported), key/alias conflicts. Every process gets an
 * error of the right class whose string names the hint and the value; nothing is left
 * behind; afterwards a valid allocation still works. */
#include "errtest.h"
#include "tierio/win.h"

#define WIN_SIZE (8 << 20) /* a leaked window would show in the address space */

struct bad {
    const char *key, *val;   /* NULL key: no extra hint */
    const char *key2, *val2; /* a second extra hint (conflicts) */
    int no_filename;
    int mpich_only;          /* Open MPI's MPI_Info_set refuses empty values */
    struct et_expect ex;
    const char *says[3];
};

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_hints");
    char dir[4200], file[4400], shared_file[4400];
    et_subdir(dir, sizeof dir, "target");
    snprintf(file, sizeof file, "%s/win-%d.dat", dir, tt_rank);
    snprintf(shared_file, sizeof shared_file, "%s/shared.dat", dir);

    const struct bad cases[] = {
        {NULL, NULL, NULL, NULL, 1, 0, EX_INFO_KEY,
         {"alloc_type=storage needs the hint storage_alloc_filename", NULL}},
        {"alloc_type", "disk", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"alloc_type=\"disk\"", "expected \"memory\" or \"storage\"", NULL}},
        {"storage_alloc_filename", "", NULL, NULL, 0, 1, EX_INFO_VALUE,
         {"storage_alloc_filename=\"\"", "empty path", NULL}},
        {"swin_filename", "", NULL, NULL, 0, 1, EX_INFO_VALUE,
         {"swin_filename=\"\"", "empty path", NULL}},
        {"storage_alloc_offset", "-1", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_offset=\"-1\"", "non-negative byte offset", NULL}},
        {"storage_alloc_offset", "18446744073709551616", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_offset=\"18446744073709551616\"", NULL}},
        {"swin_offset", "4k", NULL, NULL, 0, 0, EX_INFO_VALUE, {"swin_offset=\"4k\"", NULL}},
        {"storage_alloc_factor", "1.5", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_factor=\"1.5\"", "[0, 1]", NULL}},
        {"storage_alloc_factor", "half", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_factor=\"half\"", NULL}},
        {"swin_factor", "-0.5", NULL, NULL, 0, 0, EX_INFO_VALUE, {"swin_factor=\"-0.5\"", NULL}},
        {"storage_alloc_order", "sideways", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_order=\"sideways\"", "memory_first", NULL}},
        {"swin_order", "first", NULL, NULL, 0, 0, EX_INFO_VALUE, {"swin_order=\"first\"", NULL}},
        {"storage_alloc_unlink", "maybe", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_unlink=\"maybe\"", "\"true\" or \"false\"", NULL}},
        {"swin_unlink", "2", NULL, NULL, 0, 0, EX_INFO_VALUE, {"swin_unlink=\"2\"", NULL}},
        {"storage_alloc_discard", "perhaps", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_discard=\"perhaps\"", NULL}},
        {"file_perm", "rw-------", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"file_perm=\"rw-------\"", "file mode bits", NULL}},
        {"file_perm", "0999", NULL, NULL, 0, 0, EX_INFO_VALUE, {"file_perm=\"0999\"", NULL}},
        {"access_style", "fast", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"access_style=\"fast\"", "read_once", NULL}},
        {"access_style", "sequential,random", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"access_style=\"sequential,random\"", "exclude each other", NULL}},
        {"striping_factor", "0", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"striping_factor=\"0\"", "positive integer", NULL}},
        {"striping_factor", "many", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"striping_factor=\"many\"", NULL}},
        {"striping_unit", "-1", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"striping_unit=\"-1\"", "positive integer", NULL}},
        {"storage_alloc_engine", "posix", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_engine=\"posix\"", "expected \"mmap\" or \"ummap\"", NULL}},
        {"swin_impl", "bogus", NULL, NULL, 0, 0, EX_INFO_VALUE, {"swin_impl=\"bogus\"", NULL}},
        {"storage_alloc_segsize", "4096", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_segsize=\"4096\"", "only together with storage_alloc_engine=ummap", NULL}},
        {"swin_segsize", "4096", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"swin_segsize=\"4096\"", "user-level engine", NULL}},
        {"storage_alloc_flush_interval", "5", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_flush_interval=\"5\"", NULL}},
        {"swin_flushint", "5", NULL, NULL, 0, 0, EX_INFO_VALUE, {"swin_flushint=\"5\"", NULL}},
        {"storage_alloc_readfile", "1", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_readfile=\"1\"", NULL}},
        {"swin_readfile", "1", NULL, NULL, 0, 0, EX_INFO_VALUE, {"swin_readfile=\"1\"", NULL}},
        {"storage_alloc_policy", "2", NULL, NULL, 0, 0, EX_INFO_VALUE,
         {"storage_alloc_policy=\"2\"", NULL}},
        {"swin_ptype", "2", NULL, NULL, 0, 0, EX_INFO_VALUE, {"swin_ptype=\"2\"", NULL}},
        {"swin_segsize", "3000", "swin_impl", "ummap", 0, 0, EX_INFO_VALUE,
         {"swin_segsize=\"3000\"", "power of two", NULL}},
        {"storage_alloc_policy", "lru", "storage_alloc_engine", "ummap", 0, 0, EX_INFO_VALUE,
         {"storage_alloc_policy=\"lru\"", "wiro_f", NULL}},
        {"storage_alloc_flush_interval", "often", "swin_impl", "ummap", 0, 0, EX_INFO_VALUE,
         {"storage_alloc_flush_interval=\"often\"", "seconds", NULL}},
        {"swin_readfile", "2", "swin_impl", "ummap", 0, 0, EX_INFO_VALUE,
         {"swin_readfile=\"2\"", "true", NULL}},
        {"storage_alloc_offset", "0", "swin_offset", "4096", 0, 0, EX_INFO_KEY,
         {"storage_alloc_offset=\"0\"", "swin_offset=\"4096\"", "conflict"}},
        {"storage_alloc_factor", "1", "swin_factor", "0.5", 0, 0, EX_INFO_KEY,
         {"storage_alloc_factor=\"1\"", "swin_factor=\"0.5\"", NULL}},
        {"storage_alloc_unlink", "true", "swin_unlink", "false", 0, 0, EX_INFO_KEY,
         {"storage_alloc_unlink", "swin_unlink", NULL}},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    int checked = 0;

    for (int c = 0; c < ET_NCALLS; c++) {
        for (int i = 0; i < ncases; i++) {
            const struct bad *b = &cases[i];
            char label[256];
#ifdef OPEN_MPI
            if (b->mpich_only)
                continue;
#endif
            snprintf(label, sizeof label, "%s: %s=\"%s\"%s%s", et_call_name[c],
                     b->key ? b->key : (b->no_filename ? "(no filename)" : ""),
                     b->val ? b->val : "", b->key2 ? " + " : "", b->key2 ? b->key2 : "");
            CASE(label);
            const char *fn = c == ET_WIN_ALLOCATE_SHARED ? shared_file : file;
            /* a bad filename replaces the good one */
            int bad_fn = b->key && strstr(b->key, "filename");
            const char *kv[4][2] = {{"alloc_type", "storage"},
                                    {b->no_filename || bad_fn ? NULL : "storage_alloc_filename",
                                     fn},
                                    {b->key, b->val},
                                    {b->key2, b->val2}};
            if (b->key && !strcmp(b->key, "alloc_type"))
                kv[0][0] = NULL;
            MPI_Info info = et_info(kv, 4);
            struct et_snap s = et_snap_take(dir);
            MPI_Win win;
            void *base;
            int rc = et_call((enum et_call)c, WIN_SIZE, info, 0, &win, &base);
            if (c == ET_ALLOC_MEM)
                et_check_error(rc, b->ex, b->says[0], b->says[1], b->says[2], NULL);
            else /* collective: every process names the lowest failing rank */
                et_check_error(rc, b->ex, "rank 0: ", b->says[0], b->says[1], b->says[2],
                               NULL);
            et_snap_check(&s, dir, WIN_SIZE / 1024);
            MPI_Info_free(&info);
            checked++;
        }
    }

    /* a valid allocation still works after all those errors */
    for (int c = 0; c < ET_NCALLS; c++) {
        char label[128];
        snprintf(label, sizeof label, "%s: valid storage hints after errors", et_call_name[c]);
        CASE(label);
        const char *fn = c == ET_WIN_ALLOCATE_SHARED ? shared_file : file;
        const char *kv[][2] = {{"alloc_type", "storage"}, {"storage_alloc_filename", fn},
                               {"storage_alloc_unlink", "true"}};
        MPI_Info info = et_info(kv, 3);
        MPI_Win win = MPI_WIN_NULL;
        void *base = NULL;
        CHECK_EQ(et_call((enum et_call)c, 4096, info, 1, &win, &base), MPI_SUCCESS);
        memset(base, 0x42, 4096);
        if (c == ET_ALLOC_MEM) {
            CHECK_EQ(MPI_Free_mem(base), MPI_SUCCESS);
        } else {
            int flag = 0;
            tio_win_is_storage(win, &flag);
            CHECK_EQ(flag, 1);
            CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
            CHECK(win == MPI_WIN_NULL);
        }
        MPI_Info_free(&info);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(tc_count_entries(dir), 0); /* unlink */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (tt_rank == 0)
        printf("%d error cases checked per process\n", checked);
    return et_finish();
}
