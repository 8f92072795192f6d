/* The storage-window hints of the user-level engine, wrong: every process gets an MPI
 * error of the right class whose string names the hint, its value and the reason, on
 * MPI_Win_allocate and MPI_Alloc_mem, with each hint's storage_alloc_* name and its
 * swin_* alias; the tuning hints without storage_alloc_engine=ummap; a key and its alias
 * disagreeing; MPI_Win_allocate_shared refusing the engine; and a failure on one process
 * only after the others made their mappings (rank 1's file cannot be created). Nothing
 * may be left behind: no file, mapping, descriptor or engine thread. A valid ummap window
 * works afterwards. */
#include "../errors/errtest.h"

#include <ummap.h>

#define WIN_SIZE (8 << 20) /* a leaked window would show in the address space */

struct bad {
    const char *key, *val, *key2, *val2;
    struct et_expect ex;
    const char *says[3];
};

static int threads(void) { return tc_count_entries("/proc/self/task"); }

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_ummap_hints");
    char dir[4200], file[4400];
    et_subdir(dir, sizeof dir, "target");
    snprintf(file, sizeof file, "%s/win-%d.dat", dir, tt_rank);
    const char *E = "storage_alloc_engine", *A = "swin_impl";
    const struct bad cases[] = {
        {"storage_alloc_engine", "ummapp", NULL, NULL, EX_INFO_VALUE,
         {"storage_alloc_engine=\"ummapp\"", "\"mmap\" or \"ummap\"", NULL}},
        {"swin_impl", "UMMAP", NULL, NULL, EX_INFO_VALUE, {"swin_impl=\"UMMAP\"", NULL}},
        /* segment size: a power of two of at least a page */
        {"storage_alloc_segsize", "1000", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_segsize=\"1000\"", "power of two", NULL}},
        {"storage_alloc_segsize", "0", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_segsize=\"0\"", "power of two", NULL}},
        {"storage_alloc_segsize", "2048", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_segsize=\"2048\"", "at least", NULL}},
        {"storage_alloc_segsize", "12288", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_segsize=\"12288\"", NULL}},
        {"storage_alloc_segsize", "-4096", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_segsize=\"-4096\"", NULL}},
        {"storage_alloc_segsize", "big", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_segsize=\"big\"", NULL}},
        {"swin_segsize", "65535", A, "ummap", EX_INFO_VALUE,
         {"swin_segsize=\"65535\"", "power of two", NULL}},
        /* flush interval: seconds or never */
        {"storage_alloc_flush_interval", "-2", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_flush_interval=\"-2\"", "seconds", NULL}},
        {"storage_alloc_flush_interval", "1.5", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_flush_interval=\"1.5\"", NULL}},
        {"storage_alloc_flush_interval", "4294967296", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_flush_interval=\"4294967296\"", NULL}},
        {"swin_flushint", "soon", A, "ummap", EX_INFO_VALUE,
         {"swin_flushint=\"soon\"", "seconds", NULL}},
        /* read the file: true or false */
        {"storage_alloc_readfile", "maybe", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_readfile=\"maybe\"", "\"true\" or \"false\"", NULL}},
        {"swin_readfile", "yesno", A, "ummap", EX_INFO_VALUE, {"swin_readfile=\"yesno\"", NULL}},
        /* policy: a name or 0..5 */
        {"storage_alloc_policy", "lru", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_policy=\"lru\"", "fifo", NULL}},
        {"storage_alloc_policy", "6", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_policy=\"6\"", NULL}},
        {"storage_alloc_policy", "-1", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_policy=\"-1\"", NULL}},
        {"storage_alloc_policy", "01", E, "ummap", EX_INFO_VALUE,
         {"storage_alloc_policy=\"01\"", NULL}},
        {"swin_ptype", "7", A, "ummap", EX_INFO_VALUE, {"swin_ptype=\"7\"", "0..5", NULL}},
        /* tuning hints of the engine without it */
        {"storage_alloc_segsize", "65536", NULL, NULL, EX_INFO_VALUE,
         {"storage_alloc_segsize=\"65536\"", "storage_alloc_engine=ummap", NULL}},
        {"storage_alloc_policy", "fifo", E, "mmap", EX_INFO_VALUE,
         {"storage_alloc_policy=\"fifo\"", "storage_alloc_engine=ummap", NULL}},
        {"swin_flushint", "5", A, "mmap", EX_INFO_VALUE,
         {"swin_flushint=\"5\"", "ummap", NULL}},
        {"storage_alloc_readfile", "false", NULL, NULL, EX_INFO_VALUE,
         {"storage_alloc_readfile=\"false\"", "ummap", NULL}},
        /* a key and its alias disagreeing */
        {"storage_alloc_engine", "ummap", "swin_impl", "mmap", EX_INFO_KEY,
         {"storage_alloc_engine=\"ummap\"", "swin_impl=\"mmap\"", NULL}},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    const enum et_call calls[] = {ET_WIN_ALLOCATE, ET_ALLOC_MEM};
    int checked = 0;
    /* a process whose own part succeeded before another's failed stops the engine's
     * threads again: their stacks must come from the cache */
    CHECK(tc_warm_stack_cache() == 0);
    int threads0 = threads();

    for (int c = 0; c < 2; c++)
        for (int i = 0; i < ncases; i++) {
            const struct bad *b = &cases[i];
            char label[256];
            snprintf(label, sizeof label, "%s: %s=\"%s\"%s%s%s%s", et_call_name[calls[c]],
                     b->key, b->val, b->key2 ? " + " : "", b->key2 ? b->key2 : "",
                     b->key2 ? "=" : "", b->val2 ? b->val2 : "");
            CASE(label);
            const char *kv[4][2] = {{"alloc_type", "storage"},
                                    {"storage_alloc_filename", file},
                                    {b->key2, b->val2},
                                    {b->key, b->val}};
            MPI_Info info = et_info(kv, 4);
            struct et_snap s = et_snap_take(dir);
            MPI_Win win;
            void *base;
            int rc = et_call(calls[c], WIN_SIZE, info, 0, &win, &base);
            if (calls[c] == ET_ALLOC_MEM)
                et_check_error(rc, b->ex, b->says[0], b->says[1], b->says[2], NULL);
            else
                et_check_error(rc, b->ex, "rank 0: ", b->says[0], b->says[1], b->says[2], NULL);
            et_snap_check(&s, dir, WIN_SIZE / 1024);
            CHECK_EQ(threads(), threads0);
            MPI_Info_free(&info);
            checked++;
        }

    CASE("MPI_Win_allocate_shared refuses the user-level engine");
    {
        char shared[4400];
        snprintf(shared, sizeof shared, "%s/shared.dat", dir);
        const char *kv[][2] = {{"alloc_type", "storage"},
                               {"storage_alloc_filename", shared},
                               {"storage_alloc_engine", "ummap"}};
        MPI_Info info = et_info(kv, 3);
        struct et_snap s = et_snap_take(dir);
        MPI_Win win;
        void *base;
        int rc = et_call(ET_WIN_ALLOCATE_SHARED, WIN_SIZE, info, 0, &win, &base);
        et_check_error(rc, EX_UNSUPPORTED, "storage_alloc_engine=ummap", "not supported", NULL);
        et_snap_check(&s, dir, WIN_SIZE / 1024);
        CHECK_EQ(threads(), threads0);
        MPI_Info_free(&info);
        checked++;
    }

    CASE("MPI_Win_allocate: rank 1 cannot create its file after the others mapped theirs");
    if (tt_size > 1) {
        char bad[4400];
        snprintf(bad, sizeof bad, "%s/no-such-dir/win.dat", dir);
        const char *kv[][2] = {{"alloc_type", "storage"},
                               {"storage_alloc_filename", tt_rank == 1 ? bad : file},
                               {"storage_alloc_engine", "ummap"},
                               {"storage_alloc_segsize", "65536"}};
        MPI_Info info = et_info(kv, 4);
        struct et_snap s = et_snap_take(dir);
        MPI_Win win;
        void *base;
        int rc = et_call(ET_WIN_ALLOCATE, WIN_SIZE, info, 0, &win, &base);
        et_check_error(rc, EX_NOENT, "rank 1: ", "no-such-dir", NULL);
        et_snap_check(&s, dir, WIN_SIZE / 1024);
        CHECK_EQ(threads(), threads0);
        MPI_Info_free(&info);
        checked++;
    }

    CASE("a valid ummap window after the errors");
    {
        const char *kv[][2] = {{"alloc_type", "storage"},
                               {"storage_alloc_filename", file},
                               {"storage_alloc_engine", "ummap"},
                               {"storage_alloc_segsize", "65536"},
                               {"storage_alloc_unlink", "true"}};
        MPI_Info info = et_info(kv, 5);
        MPI_Win win = MPI_WIN_NULL;
        unsigned char *base = NULL;
        CHECK_EQ(et_call(ET_WIN_ALLOCATE, 300000, info, 1, &win, (void **)&base), MPI_SUCCESS);
        memset(base, 0x42, 300000);
        tio_ummap_stats_t st;
        CHECK_EQ(tio_ummap_stats(base, &st), 0);
        CHECK_EQ(st.write_faults, 5); /* 300000 bytes: 5 segments of 64 KiB */
        CHECK_EQ(MPI_Win_sync(win), MPI_SUCCESS);
        CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
        MPI_Info_free(&info);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(tc_count_entries(dir), 0); /* unlinked */
        CHECK_EQ(threads(), threads0);      /* the engine stopped with its last mapping */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (tt_rank == 0)
        printf("%d error cases checked per process\n", checked);
    return et_finish();
}
