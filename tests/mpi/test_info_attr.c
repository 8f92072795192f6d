/* What a storage window tells about itself: MPI_Win_get_info reports the hints in effect
 * under their canonical names (swin_* aliases included), MPI_Win_get_attr answers the
 * flavor of the call the program made and the right base, size and displacement unit,
 * created files get the permissions asked for (0600 by default; umask 022 does not
 * narrow an explicit file_perm), and the MPI-4 large-count calls work (MPICH). */
#include "tio_test.h"

#include <math.h>

static size_t page;
static size_t round_up(size_t x, size_t p) { return (x + p - 1) / p * p; }

static void expect_info(MPI_Info info, const char *key, const char *want, const char *ctx)
{
    const char *v = tt_info_get(info, key);
    if (!v)
        tt_fail("%s: MPI_Win_get_info has no \"%s\" (expected \"%s\")", ctx, key, want);
    else if (strcmp(v, want))
        tt_fail("%s: MPI_Win_get_info reports %s=\"%s\", expected \"%s\"", ctx, key, v, want);
}

static void expect_factor(MPI_Info info, double want, const char *ctx)
{
    const char *v = tt_info_get(info, "storage_alloc_factor");
    if (!v)
        tt_fail("%s: MPI_Win_get_info has no storage_alloc_factor", ctx);
    else if (fabs(atof(v) - want) > 5e-6)
        tt_fail("%s: storage_alloc_factor reported as \"%s\", the fraction really on storage "
                "is %.6f", ctx, v, want);
}

static void expect_attrs(MPI_Win win, int flavor, void *base, MPI_Aint size, int disp_unit,
                         const char *ctx)
{
    int *fl = NULL, *du = NULL, flag = 0;
    MPI_Aint *sz = NULL;
    void *b = NULL;
    static const char *names[] = {"?", "MPI_WIN_FLAVOR_CREATE", "MPI_WIN_FLAVOR_ALLOCATE",
                                  "MPI_WIN_FLAVOR_DYNAMIC", "MPI_WIN_FLAVOR_SHARED"};
    int want_i = flavor == MPI_WIN_FLAVOR_CREATE     ? 1
               : flavor == MPI_WIN_FLAVOR_ALLOCATE ? 2
               : flavor == MPI_WIN_FLAVOR_DYNAMIC  ? 3
                                                   : 4;
    TT_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    if (!flag || !fl)
        tt_fail("%s: no MPI_WIN_CREATE_FLAVOR attribute", ctx);
    else if (*fl != flavor)
        tt_fail("%s: MPI_WIN_CREATE_FLAVOR is %d, expected %s (%d)", ctx, *fl, names[want_i],
                flavor);
    if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return; /* base and size of dynamic windows are MPI_BOTTOM and 0 */
    TT_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    TT_CHECK(flag && b == base, "%s: MPI_WIN_BASE %p, expected %p", ctx, b, base);
    TT_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    TT_CHECK(flag && sz && *sz == size, "%s: MPI_WIN_SIZE %ld, expected %ld", ctx,
             sz ? (long)*sz : -1L, (long)size);
    TT_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    TT_CHECK(flag && du && *du == disp_unit, "%s: MPI_WIN_DISP_UNIT %d, expected %d", ctx,
             du ? *du : -1, disp_unit);
}

/* A new info asking for a storage window: alloc_type=storage, the file and the offset
 * under <prefix>filename and <prefix>offset (prefix "storage_alloc_", or the alias
 * "swin_"), then the key/value pairs of more (NULL-terminated; NULL for none). */
static MPI_Info storage_hints(const char *prefix, const char *file, uint64_t off,
                              const char *const *more)
{
    MPI_Info info;
    char key[64];
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, "alloc_type", "storage");
    snprintf(key, sizeof key, "%sfilename", prefix);
    tt_info_set(info, key, file);
    snprintf(key, sizeof key, "%soffset", prefix);
    tt_info_setf(info, key, "%" PRIu64, off);
    for (; more && more[0]; more += 2)
        tt_info_set(info, more[0], more[1]);
    return info;
}

/* MPI_Win_allocate of size bytes (displacement unit du) on storage, asked for with
 * storage_hints(prefix, file, off, more); the window's base goes to *(void **)base. */
static MPI_Win allocate_on_storage(MPI_Aint size, int du, const char *prefix, const char *file,
                                   uint64_t off, const char *const *more, void *base)
{
    MPI_Info info = storage_hints(prefix, file, off, more);
    MPI_Win win;
    TT_MPI(MPI_Win_allocate(size, du, info, MPI_COMM_WORLD, base, &win));
    MPI_Info_free(&info);
    return win;
}

/* MPI_Win_get_info reports a storage window in file at off, the fraction `factor` of it
 * really on storage, and the key/value pairs of more (canonical names, NULL-terminated). */
static void expect_storage_info(MPI_Win win, const char *file, uint64_t off, double factor,
                                const char *const *more, const char *ctx)
{
    MPI_Info used;
    TT_MPI(MPI_Win_get_info(win, &used));
    expect_info(used, "alloc_type", "storage", ctx);
    expect_info(used, "storage_alloc_filename", file, ctx);
    char offs[32];
    snprintf(offs, sizeof offs, "%" PRIu64, off);
    expect_info(used, "storage_alloc_offset", offs, ctx);
    expect_factor(used, factor, ctx);
    for (; more && more[0]; more += 2)
        expect_info(used, more[0], more[1], ctx);
    MPI_Info_free(&used);
}

/* Free a window whose file was asked for with storage_alloc_unlink=true: it must be gone
 * once every rank has freed the window. */
static void free_expect_unlinked(MPI_Win *win, const char *file, const char *ctx)
{
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_free(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_CHECK(!tt_exists(file), "%s: storage_alloc_unlink=true left \"%s\"", ctx, file);
}

static void expect_mode(const char *file, mode_t want, const char *ctx)
{
    struct stat st;
    if (stat(file, &st) < 0)
        tt_fail("%s: stat \"%s\": %s", ctx, file, strerror(errno));
    else if ((st.st_mode & 07777) != want)
        tt_fail("%s: \"%s\" has mode 0%o, expected 0%o", ctx, file,
                (unsigned)(st.st_mode & 07777), (unsigned)want);
}

/* Canonical hint names: a combined window, storage_first, unlink=true. */
static void case_canonical(void)
{
    const char *ctx = "canonical hints";
    const MPI_Aint S = 20000; /* a multiple of 16 */
    char file[PATH_MAX];
    tt_path(file, sizeof file, "canonical.dat");
    const uint64_t off = 48 + (uint64_t)tt_rank * 32768;
    const char *const hints[] = {"storage_alloc_factor", "0.5",
                                 "storage_alloc_order", "storage_first",
                                 "storage_alloc_unlink", "true",
                                 "storage_alloc_discard", "false",
                                 "access_style", "random", NULL};
    void *base;
    MPI_Win win = allocate_on_storage(S, 4, "storage_alloc_", file, off, hints, &base);

    /* storage_first: the storage part ends on a page boundary of the file */
    size_t delta = off % page, want = (size_t)S / 2;
    size_t sto = round_up(delta + want, page) - delta;
    const char *const reported[] = {"storage_alloc_order", "storage_first",
                                    /* auto, access_style=random: */
                                    "storage_alloc_hugepages", "false",
                                    "storage_alloc_unlink", "true",
                                    "storage_alloc_discard", "false",
                                    "file_perm", "0600",
                                    "access_style", "random", NULL};
    expect_storage_info(win, file, off, (double)sto / (double)S, reported, ctx);
    expect_attrs(win, MPI_WIN_FLAVOR_ALLOCATE, base, S, 4, ctx);
    expect_mode(file, 0600, "default file_perm under umask 022");
    free_expect_unlinked(&win, file, ctx);
}

/* The swin_* aliases, reported under the canonical names; memory_first; file_perm. */
static void case_aliases(void)
{
    const char *ctx = "swin_* aliases";
    const MPI_Aint S = 4 * 4096 + 512;
    char file[PATH_MAX];
    tt_path(file, sizeof file, "aliases.dat");
    const uint64_t off = (uint64_t)tt_rank * 8 * page; /* memory_first: page-aligned */
    const char *const hints[] = {"swin_factor", "0.25",
                                 "swin_order", "memory_first",
                                 "swin_unlink", "false",
                                 "swin_impl", "mmap",
                                 "storage_alloc_discard", "true",
                                 "file_perm", "0640", NULL};
    void *base;
    MPI_Win win = allocate_on_storage(S, 1, "swin_", file, off, hints, &base);

    size_t mem = ((size_t)S - (size_t)S / 4) / page * page; /* memory rounds down */
    const char *const reported[] = {"storage_alloc_order", "memory_first",
                                    "storage_alloc_unlink", "false",
                                    "storage_alloc_discard", "true",
                                    "storage_alloc_engine", "mmap",
                                    "file_perm", "0640", NULL};
    expect_storage_info(win, file, off, (double)((size_t)S - mem) / (double)S, reported, ctx);
    expect_attrs(win, MPI_WIN_FLAVOR_ALLOCATE, base, S, 1, ctx);
    expect_mode(file, 0640, "file_perm=0640");
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_CHECK(tt_exists(file), "%s: swin_unlink=false, yet \"%s\" is gone", ctx, file);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (tt_rank == 0)
        unlink(file);
}

/* Shared window on storage; file_perm=0660, which umask 022 would narrow to 0640. */
static void case_shared(void)
{
    const char *ctx = "MPI_Win_allocate_shared on storage";
    const MPI_Aint S = 4096 + 16 * (MPI_Aint)(tt_rank + 1);
    char file[PATH_MAX];
    tt_path(file, sizeof file, "shared.dat");
    const char *const hints[] = {"storage_alloc_unlink", "true", "file_perm", "0660", NULL};
    MPI_Info info = storage_hints("storage_alloc_", file, 64, hints);
    void *base;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate_shared(S, 8, info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    expect_storage_info(win, file, 64, 1.0, hints, ctx); /* both reported as given */
    expect_attrs(win, MPI_WIN_FLAVOR_SHARED, base, S, 8, ctx);
    expect_mode(file, 0660, "file_perm=0660 under umask 022");
    free_expect_unlinked(&win, file, ctx);
}

/* Flavors of the other calls: dynamic (with storage attached), memory allocate, create. */
static void case_flavors(void)
{
    char file[PATH_MAX];
    tt_path(file, sizeof file, "dyn.dat");
    const char *const unlink_hint[] = {"storage_alloc_unlink", "true", NULL};
    MPI_Info info = storage_hints("storage_alloc_", file, 16 + (uint64_t)tt_rank * 8192,
                                  unlink_hint);
    void *buf;
    TT_MPI(MPI_Alloc_mem(4096, info, &buf));
    MPI_Info_free(&info);
    MPI_Win win;
    TT_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    expect_attrs(win, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, "dynamic window, nothing attached");
    TT_MPI(MPI_Win_attach(win, buf, 4096));
    expect_attrs(win, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, "dynamic window with storage");
    TT_MPI(MPI_Win_detach(win, buf));
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Free_mem(buf));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_CHECK(!tt_exists(file), "MPI_Free_mem with storage_alloc_unlink=true left \"%s\"", file);

    void *base;
    TT_MPI(MPI_Win_allocate(1024, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    expect_attrs(win, MPI_WIN_FLAVOR_ALLOCATE, base, 1024, 2, "memory window (no hints)");
    MPI_Info used;
    TT_MPI(MPI_Win_get_info(win, &used));
    const char *v = tt_info_get(used, "alloc_type");
    TT_CHECK(!v || !strcmp(v, "memory"), "memory window reports alloc_type=%s", v);
    TT_CHECK(!tt_info_get(used, "storage_alloc_filename"),
             "memory window reports a storage_alloc_filename");
    MPI_Info_free(&used);
    TT_MPI(MPI_Win_free(&win));

    static char mem[256];
    TT_MPI(MPI_Win_create(mem, sizeof mem, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    expect_attrs(win, MPI_WIN_FLAVOR_CREATE, mem, sizeof mem, 1, "MPI_Win_create window");
    TT_MPI(MPI_Win_free(&win));
}

/* A storage window where one rank's part is empty: it is a window all the same, and
 * MPI_WIN_BASE is the baseptr MPI_Win_allocate returned (MPICH answers NULL for an empty
 * MPI_Win_create window, where tierio hands out a mapped address). */
static void case_zero_size(void)
{
    const char *ctx = "storage window with an empty part on rank 1";
    char file[PATH_MAX];
    tt_path(file, sizeof file, "zero.dat");
    const MPI_Aint S = tt_rank == 1 ? 0 : 4096 + 16;
    const uint64_t off = 16 + (uint64_t)tt_rank * 8192;
    const char *const unlink_hint[] = {"storage_alloc_unlink", "true", NULL};
    uint8_t *base;
    MPI_Win win = allocate_on_storage(S, 1, "storage_alloc_", file, off, unlink_hint, &base);
    expect_attrs(win, MPI_WIN_FLAVOR_ALLOCATE, base, S, 1, ctx);
    uint8_t *exp = malloc((size_t)S + 1);
    TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tt_rank, 0, win));
    tt_fill(base, (size_t)S, 50 + (uint64_t)tt_rank, 0);
    TT_MPI(MPI_Win_unlock(tt_rank, win));
    tt_fill(exp, (size_t)S, 50 + (uint64_t)tt_rank, 0);
    TT_MPI(MPI_Win_sync(win));
    if (S)
        tt_check_file(file, off, exp, (size_t)S, ctx);
    free_expect_unlinked(&win, file, ctx);
    free(exp);
}

#if MPI_VERSION >= 4
/* MPI-4 large-count calls (mpi4py uses them on MPICH). */
static void case_large_count(void)
{
    const int n = tt_size, me = tt_rank;
    char file[PATH_MAX];
    tt_path(file, sizeof file, "large.dat");
    const MPI_Aint S = 8192 + 32;
    const uint64_t off = 16 + (uint64_t)me * 16384;
    MPI_Info info = storage_hints("storage_alloc_", file, off, NULL);
    uint8_t *base;
    MPI_Win win;
    TT_MPI(MPI_Win_allocate_c(S, (MPI_Aint)8, info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    TT_CHECK(tt_exists(file), "MPI_Win_allocate_c did not create \"%s\"", file);
    expect_attrs(win, MPI_WIN_FLAVOR_ALLOCATE, base, S, 8, "MPI_Win_allocate_c");
    MPI_Info used;
    TT_MPI(MPI_Win_get_info(win, &used));
    expect_info(used, "alloc_type", "storage", "MPI_Win_allocate_c");
    MPI_Info_free(&used);
    /* a put from the left neighbour, synced, in the file */
    uint8_t *exp = malloc((size_t)S), src[1000];
    TT_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    tt_fill(base, (size_t)S, 20 + (uint64_t)me, 0);
    TT_MPI(MPI_Win_unlock(me, win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_fill(src, sizeof src, 30 + (uint64_t)me, 0);
    TT_MPI(MPI_Win_lock(MPI_LOCK_SHARED, (me + 1) % n, 0, win));
    TT_MPI(MPI_Put_c(src, 1000, MPI_BYTE, (me + 1) % n, 512, 1000, MPI_BYTE, win));
    TT_MPI(MPI_Win_unlock((me + 1) % n, win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_sync(win));
    tt_fill(exp, (size_t)S, 20 + (uint64_t)me, 0);
    tt_fill(exp + 8 * 512, 1000, 30 + (uint64_t)((me + n - 1) % n), 0);
    tt_compare(base, exp, (size_t)S, "MPI_Win_allocate_c: window of rank %d", me);
    tt_check_file(file, off, exp, (size_t)S, "MPI_Win_allocate_c: file after MPI_Win_sync");
    TT_MPI(MPI_Win_free(&win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(file, off, exp, (size_t)S, "MPI_Win_allocate_c: file after MPI_Win_free");
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        unlink(file);
    free(exp);

    /* shared, large-count allocation and query */
    tt_path(file, sizeof file, "large_shared.dat");
    const char *const unlink_hint[] = {"storage_alloc_unlink", "true", NULL};
    info = storage_hints("storage_alloc_", file, 32, unlink_hint);
    const MPI_Aint P = 3008 + 16 * (MPI_Aint)me; /* multiples of 16 */
    TT_MPI(MPI_Win_allocate_shared_c(P, (MPI_Aint)4, info, MPI_COMM_WORLD, &base, &win));
    MPI_Info_free(&info);
    expect_attrs(win, MPI_WIN_FLAVOR_SHARED, base, P, 4, "MPI_Win_allocate_shared_c");
    size_t total = 0, mine_at = 0;
    uint8_t *first = NULL;
    for (int r = 0; r < n; r++) {
        MPI_Aint sz, du;
        uint8_t *p;
        TT_MPI(MPI_Win_shared_query_c(win, r, &sz, &du, &p));
        TT_CHECK(sz == 3008 + 16 * r, "MPI_Win_shared_query_c(%d): size %ld", r, (long)sz);
        TT_CHECK(du == 4, "MPI_Win_shared_query_c(%d): disp_unit %ld", r, (long)du);
        if (r == 0)
            first = p;
        TT_CHECK(p == first + total, "MPI_Win_shared_query_c(%d): base %p, expected %p", r,
                 (void *)p, (void *)(first + total));
        if (r == me)
            mine_at = total;
        total += (size_t)sz;
    }
    TT_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    tt_fill(base, (size_t)P, 40, mine_at);
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_sync(win));
    uint8_t *img = malloc(total);
    tt_fill(img, total, 40, 0);
    tt_compare(first, img, total, "MPI_Win_allocate_shared_c: all pieces seen by rank %d", me);
    TT_MPI(MPI_Win_unlock_all(win));
    TT_MPI(MPI_Win_sync(win));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(file, 32, img, total, "MPI_Win_allocate_shared_c: file after MPI_Win_sync");
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_Win_free(&win));
    free(img);
}
#endif

int main(int argc, char **argv)
{
    /* --only zero_size: just that case (its own CTest entry); by default all the others */
    int zero_only = argc > 2 && !strcmp(argv[1], "--only") && !strcmp(argv[2], "zero_size");
    umask(022);
    tt_init(&argc, &argv, zero_only ? "info_attr_zero_size" : "info_attr");
    page = (size_t)sysconf(_SC_PAGESIZE);
    if (zero_only) {
        case_zero_size();
        return tt_finish();
    }
    case_canonical();
    case_aliases();
    case_shared();
    case_flavors();
#if MPI_VERSION >= 4
    case_large_count();
#else
    if (tt_rank == 0)
        printf("[info_attr] MPI %d.%d: no large-count calls to test\n", MPI_VERSION,
               MPI_SUBVERSION);
#endif
    return tt_finish();
}
