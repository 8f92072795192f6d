/* Hints that must agree across the processes of MPI_Win_allocate_shared (alloc_type,
 * filename, offset) or that it cannot honour (discard): an error on
 * every process naming the reason, and nothing left behind.
 * And the counterpart: MPI_Win_allocate lets every process choose, so a window where some
 * processes are on storage and others in memory must work, byte for byte. */
#include "errtest.h"
#include "tierio/win.h"

#define WIN_SIZE (4 << 20)

struct shared_case {
    const char *name;
    const char *k1, *v1;          /* extra hint on every process */
    const char *r1k, *r1v;        /* extra hint on rank 1 only */
    int r1_memory;                /* rank 1: no storage hints at all */
    int per_rank_file;            /* rank r names shared-r.dat */
    struct et_expect ex;
    const char *says[4];
};

/* The filenames are relative to dir (the processes chdir there), so that the messages,
 * which name two of them, stay short (long ones: err_long_message). */
static void shared_cases(const char *dir)
{
    char fn[4400], fn0[64], fn1[64], at1[32];
    CHECK_EQ(chdir(dir), 0);
    snprintf(fn0, sizeof fn0, "\"shared-0.dat\"");
    snprintf(fn1, sizeof fn1, "\"shared-1.dat\"");
    snprintf(at1, sizeof at1, "@4096");
    const struct shared_case cases[] = {
        {"rank 1 has no storage hints", NULL, NULL, NULL, NULL, 1, 0, EX_INFO_VALUE,
         {"rank 0: ", "alloc_type must be the same on every process", NULL}},
        {"rank 1 asks for alloc_type=memory", NULL, NULL, "alloc_type", "memory", 0, 0,
         EX_INFO_VALUE, {"rank 0: ", "alloc_type must be the same on every process", NULL}},
        {"different offsets", NULL, NULL, "storage_alloc_offset", "4096", 0, 0, EX_INFO_VALUE,
         {"rank 1: ", "storage_alloc_filename/offset must be the same", at1, NULL}},
        {"discard", "storage_alloc_discard", "true", NULL, NULL, 0, 0, EX_UNSUPPORTED,
         {"rank 0: ", "storage_alloc_discard=true is not supported", NULL}},
        {"different filenames", NULL, NULL, NULL, NULL, 0, 1, EX_INFO_VALUE,
         {"rank 1: ", "must be the same on every process", fn1, fn0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct shared_case *c = &cases[i];
        char label[160];
        snprintf(label, sizeof label, "MPI_Win_allocate_shared: %s", c->name);
        CASE(label);
        if (c->per_rank_file)
            snprintf(fn, sizeof fn, "shared-%d.dat", tt_rank);
        else
            snprintf(fn, sizeof fn, "shared.dat");
        const char *kv[4][2] = {{"alloc_type", "storage"}, {"storage_alloc_filename", fn},
                                {c->k1, c->v1}, {NULL, NULL}};
        if (tt_rank == 1) {
            if (c->r1_memory)
                kv[0][0] = kv[1][0] = NULL;
            if (c->r1k && !strcmp(c->r1k, "alloc_type"))
                kv[0][1] = c->r1v;
            else if (c->r1k)
                kv[3][0] = c->r1k, kv[3][1] = c->r1v;
        }
        MPI_Info info = et_info(kv, 4);
        struct et_snap s = et_snap_take(dir);
        MPI_Win win;
        void *base;
        int rc = et_call(ET_WIN_ALLOCATE_SHARED, WIN_SIZE, info, 0, &win, &base);
        et_check_error(rc, c->ex, c->says[0], c->says[1], c->says[2], c->says[3], NULL);
        et_snap_check(&s, dir, WIN_SIZE / 1024);
        MPI_Info_free(&info);
    }
    CHECK_EQ(chdir("/"), 0);
}

/* MPI_Win_allocate: even ranks on storage (rank 2 with the swin_ spelling), odd ranks in
 * memory (rank 1 without hints, rank 3 with storage hints but alloc_type=memory). */
static void mixed_allocate(const char *dir)
{
    const MPI_Aint n = 64 * 1024 + 24;
    char fn[4400];
    CASE("MPI_Win_allocate: storage on some processes, memory on others");
    snprintf(fn, sizeof fn, "%s/mixed-%d.dat", dir, tt_rank);
    const int storage = tt_rank % 2 == 0;
    const char *kv[3][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
    if (storage) {
        kv[0][0] = "alloc_type", kv[0][1] = "storage";
        kv[1][0] = tt_rank == 2 ? "swin_filename" : "storage_alloc_filename", kv[1][1] = fn;
    } else if (tt_rank == 3) {
        kv[0][0] = "alloc_type", kv[0][1] = "memory";
        kv[1][0] = "storage_alloc_filename", kv[1][1] = fn;
    }
    MPI_Info info = et_info(kv, 3);
    MPI_Win win = MPI_WIN_NULL;
    char *base = NULL;
    int rc = MPI_Win_allocate(n, 1, info, MPI_COMM_WORLD, &base, &win);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        FAIL_NOW("MPI_Win_allocate failed: %s", msg);
    }
    MPI_Info_free(&info);
    int flag = -1;
    tio_win_is_storage(win, &flag);
    CHECK_EQ(flag, storage);
    CHECK_EQ(access(fn, F_OK) == 0, storage);

    /* every process puts a pattern into its right neighbour's window */
    static unsigned char mine[64 * 1024 + 24], want[64 * 1024 + 24];
    const int right = (tt_rank + 1) % tt_size, left = (tt_rank + tt_size - 1) % tt_size;
    for (MPI_Aint i = 0; i < n; i++) {
        mine[i] = (unsigned char)(i * 13 + tt_rank * 31 + 1);
        want[i] = (unsigned char)(i * 13 + left * 31 + 1);
    }
    MPI_Win_fence(0, win);
    MPI_Put(mine, (int)n, MPI_BYTE, right, 0, (int)n, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    CHECK(memcmp(base, want, (size_t)n) == 0);
    CHECK_EQ(MPI_Win_sync(win), MPI_SUCCESS);
    if (storage) { /* synced: the file holds it */
        static unsigned char back[64 * 1024 + 24];
        FILE *f = fopen(fn, "r");
        CHECK(f && fread(back, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
        CHECK(memcmp(back, want, (size_t)n) == 0);
    }
    CHECK_EQ(MPI_Win_free(&win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (storage)
        unlink(fn);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(tc_count_entries(dir), 0);
}

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_consistency");
    if (tt_size < 2) {
        if (tt_rank == 0)
            printf("skipped: needs at least 2 processes\n");
        MPI_Finalize();
        return 77;
    }
    char dir[4200];
    et_subdir(dir, sizeof dir, "target");
    const char *part = argc > 1 ? argv[1] : "all";
    if (strcmp(part, "mixed") != 0)
        shared_cases(dir);
    if (strcmp(part, "shared") != 0)
        mixed_allocate(dir);
    return et_finish();
}
