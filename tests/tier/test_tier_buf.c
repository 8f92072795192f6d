/* Buffers on every kind of tier with several processes (tio_buf_*): each process writes a
 * piece of every process's buffer (its own included), all read back everything, and every
 * byte is compared -- through tio_buf_read, in the owner's memory, and on storage tiers in
 * the owner's file, which must also be clean in the page cache after tio_buf_flush (on
 * storage, not just in memory). Then the files are gone after tio_buf_free, or kept with
 * their content with TIO_BUF_KEEP and found again by a new buffer.
 *
 * Tiers (one site file written here): dram (MPI's memory), near (DRAM bound to NUMA node 0
 * through the code path of HBM tiers, checked page by page with hwloc), local (node-local
 * storage) and shared (global storage). Sizes are odd, and with 3 processes or more the
 * last one holds nothing (it only writes into the others'). Run with any MPI:
 *   mpiexec -n 4 test_tier_buf [--expect-impl shared_memory|create] [tier ...]
 * --expect-impl: storage windows must report that tierio_window_impl. */
#include "../mpi/tio_test.h"

#include <hwloc.h>

#include "tierio.h"

static char local_dir[PATH_MAX], shared_dir[PATH_MAX], site_path[PATH_MAX];
static const char *expect_impl; /* --expect-impl: how storage windows must be made */

static void write_site(void)
{
    snprintf(local_dir, sizeof local_dir, "%s/local", tt_dir);
    snprintf(shared_dir, sizeof shared_dir, "%s/shared", tt_dir);
    snprintf(site_path, sizeof site_path, "%s/site.conf", tt_dir);
    if (tt_rank == 0) {
        if (mkdir(local_dir, 0700) < 0 || mkdir(shared_dir, 0700) < 0)
            TT_DIE("mkdir: %s", strerror(errno));
        FILE *f = fopen(site_path, "w");
        if (!f)
            TT_DIE("cannot write %s", site_path);
        fprintf(f, "[tier near]\nkind = dram\nnuma = 0\n"
                   "[tier local]\nkind = node-local\npath = %s\n"
                   "[tier shared]\nkind = global\npath = %s\n",
                local_dir, shared_dir);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static MPI_Aint size_of(int r)
{
    if (tt_size >= 3 && r == tt_size - 1)
        return 0;
    return 3 * 4096 + 1000 * r + 13;
}

/* Writer w covers [w*chunk, (w+1)*chunk) of each buffer, the last writer up to the end. */
static void piece(int w, int target, MPI_Aint *off, MPI_Aint *len)
{
    MPI_Aint chunk = size_of(target) / tt_size;
    *off = w * chunk;
    *len = w == tt_size - 1 ? size_of(target) - *off : chunk;
}

/* What target's buffer must hold: seed picks the run. */
static void expected(uint8_t *buf, int target, uint64_t seed)
{
    for (int w = 0; w < tt_size; w++) {
        MPI_Aint off, len;
        piece(w, target, &off, &len);
        tt_fill(buf + off, (size_t)len, seed + (uint64_t)(w * 1000 + target), 0);
    }
}

static void fill_all(tio_buf_t b, uint64_t seed)
{
    for (int t = 0; t < tt_size; t++) {
        MPI_Aint off, len;
        piece(tt_rank, t, &off, &len);
        uint8_t *src = malloc((size_t)len + 1);
        tt_fill(src, (size_t)len, seed + (uint64_t)(tt_rank * 1000 + t), 0);
        TT_MPI(tio_buf_write(b, src, len, off, t));
        /* src may be reused at once: overwrite it before the flush */
        memset(src, 0xee, (size_t)len);
        free(src);
    }
    TT_MPI(tio_buf_flush(b));
    MPI_Barrier(MPI_COMM_WORLD);
    /* Owners flush too: storage is written back, memory sees the updates. */
    TT_MPI(tio_buf_flush(b));
}

static void check_all(tio_buf_t b, const char *tier, uint64_t seed)
{
    for (int t = 0; t < tt_size; t++) {
        MPI_Aint n = size_of(t);
        uint8_t *got = malloc((size_t)n + 1), *want = malloc((size_t)n + 1);
        expected(want, t, seed);
        memset(got, 0, (size_t)n);
        TT_MPI(tio_buf_read(b, got, n, 0, t));
        tt_compare(got, want, (size_t)n, "tier %s: rank %d's buffer read by rank %d", tier, t,
                   tt_rank);
        /* a read in the middle, crossing writers' pieces */
        if (n > 100) {
            memset(got, 0, 100);
            TT_MPI(tio_buf_read(b, got, 100, n / 2 - 50, t));
            tt_compare(got, want + n / 2 - 50, 100, "tier %s: middle of rank %d's buffer",
                       tier, t);
        }
        free(got);
        free(want);
    }
    void *base;
    MPI_Aint n;
    TT_MPI(tio_buf_local(b, &base, &n));
    TT_CHECK(n == size_of(tt_rank), "tier %s: local size %lld, want %lld", tier,
             (long long)n, (long long)size_of(tt_rank));
    uint8_t *want = malloc((size_t)n + 1);
    expected(want, tt_rank, seed);
    tt_compare(base, want, (size_t)n, "tier %s: rank %d's own memory", tier, tt_rank);
    free(want);
}

static void check_files(const char *dir, const char *name, uint64_t seed, const char *what)
{
    char path[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/%s.%d", dir, name, tt_rank);
    MPI_Aint n = size_of(tt_rank);
    if (n == 0) {
        TT_CHECK(!tt_exists(path), "%s: a process without a buffer made %s", what, path);
        return;
    }
    uint8_t *want = malloc((size_t)n);
    expected(want, tt_rank, seed);
    tt_check_file(path, 0, want, (size_t)n, what);
    tt_check_clean(path, 0, (size_t)n, what);
    free(want);
}

/* Every rank's pages of the bound buffer are on NUMA node 0. */
static void check_numa(tio_buf_t b)
{
    void *base;
    MPI_Aint n;
    TT_MPI(tio_buf_local(b, &base, &n));
    if (n == 0)
        return;
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    hwloc_bitmap_t where = hwloc_bitmap_alloc();
    if (hwloc_get_area_memlocation(topo, base, (size_t)n, where, HWLOC_MEMBIND_BYNODESET) < 0)
        tt_fail("hwloc_get_area_memlocation: %s", strerror(errno));
    else
        TT_CHECK(hwloc_bitmap_isset(where, 0) && hwloc_bitmap_weight(where) == 1,
                 "tier near: pages are not all on NUMA node 0");
    hwloc_bitmap_free(where);
    hwloc_topology_destroy(topo);
}

static void run(tio_tiers_t tiers, const char *tier)
{
    int idx;
    struct tio_tier_info info;
    TT_MPI(tio_tiers_find(tiers, tier, &idx));
    if (idx < 0)
        TT_DIE("no tier \"%s\"", tier);
    TT_MPI(tio_tiers_get(tiers, idx, &info));
    int storage = info.kind == TIO_TIER_NODE_LOCAL || info.kind == TIO_TIER_GLOBAL;
    const char *dir = info.path;
    uint64_t seed = (uint64_t)idx * 7919;

    tio_buf_t b;
    TT_MPI(tio_buf_alloc(tiers, tier, size_of(tt_rank), "tb", 0, MPI_COMM_WORLD, &b));
    MPI_Win win;
    TT_MPI(tio_buf_win(b, &win));
    int is_storage = 0;
    TT_MPI(tio_win_is_storage(win, &is_storage));
    TT_CHECK(is_storage == (storage && size_of(tt_rank) > 0),
             "tier %s: tio_win_is_storage says %d", tier, is_storage);
    if (storage && expect_impl) {
        MPI_Info used;
        TT_MPI(tio_win_get_info(win, &used));
        const char *impl = tt_info_get(used, "tierio_window_impl");
        TT_CHECK(impl && !strcmp(impl, expect_impl), "tier %s: window made by \"%s\", "
                 "expected \"%s\"", tier, impl ? impl : "(none)", expect_impl);
        MPI_Info_free(&used);
    }
    fill_all(b, seed);
    check_all(b, tier, seed);
    if (!strcmp(tier, "near")) /* now that every page has been touched */
        check_numa(b);
    if (storage)
        check_files(dir, "tb", seed, tier);
    /* A second round over the first: only the new bytes count. */
    MPI_Barrier(MPI_COMM_WORLD);
    fill_all(b, seed + 1);
    check_all(b, tier, seed + 1);
    if (storage)
        check_files(dir, "tb", seed + 1, tier);
    MPI_Barrier(MPI_COMM_WORLD);
    TT_MPI(tio_buf_free(&b));
    TT_CHECK(b == NULL, "tio_buf_free left the handle set");
    if (!storage)
        return;

    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0) {
        DIR *d = opendir(dir);
        int n = 0;
        for (struct dirent *e; d && (e = readdir(d)) != NULL;)
            n += e->d_name[0] != '.';
        if (d)
            closedir(d);
        TT_CHECK(n == 0, "tier %s: %d file(s) left in %s after tio_buf_free", tier, n, dir);
    }

    /* Kept: the files stay with their content, and a new buffer finds it. */
    TT_MPI(tio_buf_alloc(tiers, tier, size_of(tt_rank), "kept", TIO_BUF_KEEP, MPI_COMM_WORLD,
                         &b));
    fill_all(b, seed + 2);
    TT_MPI(tio_buf_free(&b));
    MPI_Barrier(MPI_COMM_WORLD);
    check_files(dir, "kept", seed + 2, "kept file after free");
    TT_MPI(tio_buf_alloc(tiers, tier, size_of(tt_rank), "kept", TIO_BUF_KEEP, MPI_COMM_WORLD,
                         &b));
    check_all(b, "kept (reopened)", seed + 2);
    MPI_Barrier(MPI_COMM_WORLD);
    TT_MPI(tio_buf_free(&b));
    MPI_Barrier(MPI_COMM_WORLD);
    char path[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/kept.%d", dir, tt_rank);
    if (size_of(tt_rank) > 0 && unlink(path) < 0)
        tt_fail("kept file %s: %s", path, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "test_tier_buf");
    write_site();
    tio_tiers_t tiers;
    TT_MPI(tio_tiers_open(MPI_COMM_WORLD, site_path, &tiers));
    static const char *all[] = {"dram", "near", "local", "shared"};
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "--expect-impl")) {
        expect_impl = argv[2];
        first = 3;
    }
    if (argc > first)
        for (int i = first; i < argc; i++)
            run(tiers, argv[i]);
    else
        for (int i = 0; i < 4; i++)
            run(tiers, all[i]);
    TT_MPI(tio_tiers_close(&tiers));
    TT_CHECK(tiers == NULL, "tio_tiers_close left the handle set");
    return tt_finish();
}
