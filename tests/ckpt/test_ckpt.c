/* Multi-level checkpoints on one node (every process sees the same local directory; a
 * second directory plays the global tier).
 *
 *   test_ckpt levels --mode multi|sync|local|global [--threads multiple]
 *       five versions through every call; status after each commit; what each level
 *       holds (keep 2) and that global copies equal local ones byte for byte; restart in
 *       a new handle with every byte checked; route of a file never written; begin of an
 *       old version; an uncommitted version removed at close.
 *       --partner adds partner copies (needs several nodes): every process's files of
 *       the versions kept must be found, byte for byte, in the partner directory of one
 *       process of another node.
 *       --dirs-from-env: the local directory is $TIERIO_NODE_LOCAL/test_ckpt and the
 *       global one $TIERIO_PFS/test_ckpt (the emulated cluster sets both).
 *   test_ckpt torn [--threads multiple]
 *       damaged and torn checkpoints (truncated, flipped byte, missing file, missing or
 *       damaged manifest, a commit that never wrote its manifest, a wiped local level)
 *       are never used: restart picks the newest intact version at the right level. */
#include "tio_test.h"

#include "ckpt_data.h"

static char g_local[PATH_MAX], g_global[PATH_MAX];
static const char *g_mode = "multi";
static int g_partner;
static MPI_Comm g_node; /* processes of this node */
static int g_node_rank;

static MPI_Info mode_info(const char *keep)
{
    if (!strcmp(g_mode, "local"))
        return cd_info(g_local, NULL, NULL, keep, NULL, NULL);
    if (!strcmp(g_mode, "global"))
        return cd_info(NULL, g_global, NULL, keep, NULL, NULL);
    return cd_info(g_local, g_global, g_partner ? "true" : NULL, keep,
                   !strcmp(g_mode, "sync") ? "sync" : "async", NULL);
}

/* Partner copies of version v: the node's partner directories together hold, byte for
 * byte, every file of every process, each exactly once, on a node other than its own. */
static void check_partner_copies(const char *name, long long v)
{
    int held = 0, bad = 0;
    char pdir[PATH_MAX];
    snprintf(pdir, sizeof pdir, "%s/%s/v%lld/partner", g_local, name, v);
    if (g_node_rank == 0) {
        DIR *d = opendir(pdir);
        if (!d) {
            tt_fail("no partner directory %s", pdir);
            return;
        }
        int nlocal;
        MPI_Comm_size(g_node, &nlocal);
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            int r, f = -1;
            char fname[256];
            if (sscanf(e->d_name, "r%d.%255s", &r, fname) != 2)
                continue;
            for (int k = 0; k < CD_NFILES; k++)
                if (!strcmp(fname, cd_file[k]))
                    f = k;
            if (f < 0 || r < 0 || r >= tt_size) {
                tt_fail("unexpected partner file %s/%s", pdir, e->d_name);
                bad++;
                continue;
            }
            held++;
            size_t n = cd_size(r, v, f);
            uint8_t *exp = malloc(n ? n : 1);
            tt_fill(exp, n, cd_seed(r, v, f), 0);
            char p[PATH_MAX + 300], what[64];
            snprintf(p, sizeof p, "%s/%s", pdir, e->d_name);
            snprintf(what, sizeof what, "partner copy of rank %d's %s", r, fname);
            struct stat st;
            if (stat(p, &st) < 0 || (size_t)st.st_size != n)
                bad += 1, tt_fail("%s: %s has the wrong size", what, p);
            else
                bad += tt_check_file(p, 0, exp, n, what);
            /* never on the owner's own node: the owner is not among this node's ranks */
            int owner_here = 0, *ranks = malloc(sizeof(int) * (size_t)nlocal);
            MPI_Group gw, gn;
            MPI_Comm_group(MPI_COMM_WORLD, &gw);
            MPI_Comm_group(g_node, &gn);
            int *idx = malloc(sizeof(int) * (size_t)nlocal);
            for (int i = 0; i < nlocal; i++)
                idx[i] = i;
            MPI_Group_translate_ranks(gn, nlocal, idx, gw, ranks);
            for (int i = 0; i < nlocal; i++)
                owner_here |= ranks[i] == r;
            TT_CHECK(!owner_here, "rank %d's partner copy %s is on its own node", r, p);
            MPI_Group_free(&gw);
            MPI_Group_free(&gn);
            free(idx);
            free(ranks);
            free(exp);
        }
        closedir(d);
    }
    int total = 0;
    MPI_Allreduce(&held, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    TT_CHECK(total == tt_size * CD_NFILES, "version %lld: %d partner copies in all, expected "
             "%d", v, total, tt_size * CD_NFILES);
    (void)bad;
}

static tio_ckpt_t open_set(const char *name, MPI_Info info)
{
    tio_ckpt_t ck = NULL;
    TT_MPI(tio_ckpt_open(MPI_COMM_WORLD, name, info, &ck));
    TT_CHECK(ck != NULL, "open returned no handle");
    return ck;
}

static int rc_class_is_noent(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
#ifdef OPEN_MPI
    return cls == MPI_ERR_NO_SUCH_FILE;
#else
    char s[MPI_MAX_ERROR_STRING];
    int l = 0;
    MPI_Error_string(cls, s, &l);
    return strcmp(s, "tierio: no such file or directory") == 0;
#endif
}

static int error_has(int rc, const char *sub)
{
    char s[MPI_MAX_ERROR_STRING];
    int l = 0;
    MPI_Error_string(rc, s, &l);
    if (!strstr(s, sub)) {
        tt_fail("error \"%s\" should mention \"%s\"", s, sub);
        return 0;
    }
    return 1;
}

/* Version directories in dir/name: a bit per version 0..62, -1 for "no directory". */
static long long listing(const char *dir, const char *name)
{
    char set[PATH_MAX];
    snprintf(set, sizeof set, "%s/%s", dir, name);
    DIR *d = opendir(set);
    if (!d)
        return -1;
    long long bits = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        long long v;
        char extra;
        if (sscanf(e->d_name, "v%lld%c", &v, &extra) == 1 && v >= 0 && v < 63)
            bits |= 1ll << v;
    }
    closedir(d);
    return bits;
}

static int has_manifest(const char *dir, const char *name, long long v)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s/v%lld/manifest", dir, name, v);
    return tt_exists(p);
}

static void vpath(char *out, size_t n, const char *dir, const char *name, long long v,
                  int rank, const char *file)
{
    if (file)
        snprintf(out, n, "%s/%s/v%lld/r%d.%s", dir, name, v, rank, file);
    else
        snprintf(out, n, "%s/%s/v%lld/manifest", dir, name, v);
}

static void restart_expect(const char *name, MPI_Info info, long long want_v, int want_level)
{
    tio_ckpt_t ck = open_set(name, info);
    long long v = -2;
    int level = -2;
    TT_MPI(tio_ckpt_restart(ck, &v, &level));
    TT_CHECK(v == want_v && level == want_level,
             "%s: restart gave version %lld level %s, expected version %lld level %s", name, v,
             cd_level_name(level), want_v, cd_level_name(want_level));
    if (v >= 0 && v == want_v)
        cd_verify_all(ck, v);
    if (v < 0) {
        char p[PATH_MAX];
        TT_CHECK(tio_ckpt_route(ck, "state", p, sizeof p) != MPI_SUCCESS,
                 "route with nothing restarted must fail");
    }
    TT_MPI(tio_ckpt_close(&ck));
    TT_CHECK(ck == NULL, "close must set the handle to NULL");
}

static void test_levels(void)
{
    const char *name = "lv";
    const int has_local = strcmp(g_mode, "global") != 0;
    const int has_global = strcmp(g_mode, "local") != 0;
    const int drains = has_local && has_global;
    MPI_Info info = mode_info("2");
    tio_ckpt_t ck = open_set(name, info);
    for (long long v = 1; v <= 5; v++) {
        TT_MPI(tio_ckpt_begin(ck, v));
        cd_write_all(ck, v);
        TT_MPI(tio_ckpt_commit(ck));
        long long lv = -2, gv = -2;
        TT_MPI(tio_ckpt_status(ck, &lv, &gv));
        if (has_local)
            TT_CHECK(lv == v, "after commit %lld: local status %lld", v, lv);
        if (!has_local)
            TT_CHECK(gv == v, "after commit %lld: global status %lld", v, gv);
        if (!strcmp(g_mode, "sync")) {
            TT_CHECK(gv == v, "sync drain: after commit %lld global status is %lld", v, gv);
            TT_CHECK(has_manifest(g_global, name, v), "sync drain: no global manifest of %lld",
                     v);
        }
        if (drains)
            TT_CHECK(gv <= v && gv >= v - 1 - (strcmp(g_mode, "sync") ? 1 : 0),
                     "after commit %lld global status %lld", v, gv);
    }
    TT_MPI(tio_ckpt_wait(ck));
    long long lv, gv;
    TT_MPI(tio_ckpt_status(ck, &lv, &gv));
    TT_CHECK(gv == (has_global ? 5 : -1), "after wait: global status %lld", gv);
    MPI_Barrier(MPI_COMM_WORLD);

    /* keep = 2 at each level */
    long long want = (1ll << 4) | (1ll << 5);
    if (has_local)
        TT_CHECK(listing(g_local, name) == want, "local level holds versions %llx, expected "
                 "%llx", (unsigned long long)listing(g_local, name), (unsigned long long)want);
    if (has_global)
        TT_CHECK(listing(g_global, name) == want, "global level holds versions %llx, expected "
                 "%llx", (unsigned long long)listing(g_global, name), (unsigned long long)want);
    else
        TT_CHECK(listing(g_global, name) == -1, "nothing may go to the global directory");
    for (long long v = 4; v <= 5; v++) {
        if (has_local)
            TT_CHECK(has_manifest(g_local, name, v), "no local manifest of %lld", v);
        if (has_global)
            TT_CHECK(has_manifest(g_global, name, v), "no global manifest of %lld", v);
        if (g_partner)
            check_partner_copies(name, v);
        if (drains) {
            /* The drained copy is the local one, byte for byte (and the manifest too). */
            for (int f = -1; f < CD_NFILES; f++) {
                char a[PATH_MAX], b[PATH_MAX];
                vpath(a, sizeof a, g_local, name, v, tt_rank, f < 0 ? NULL : cd_file[f]);
                vpath(b, sizeof b, g_global, name, v, tt_rank, f < 0 ? NULL : cd_file[f]);
                struct stat st;
                if (stat(a, &st) < 0) {
                    tt_fail("%s missing", a);
                    continue;
                }
                uint8_t *buf = malloc((size_t)st.st_size + 1);
                int fd = open(a, O_RDONLY);
                TT_CHECK(fd >= 0 && read(fd, buf, (size_t)st.st_size) == st.st_size,
                         "read %s", a);
                if (fd >= 0)
                    close(fd);
                tt_check_file(b, 0, buf, (size_t)st.st_size, "drained copy");
                free(buf);
            }
        }
    }
    TT_MPI(tio_ckpt_close(&ck));

    /* A new handle finds version 5 at the first level. */
    ck = open_set(name, info);
    long long v;
    int level;
    TT_MPI(tio_ckpt_restart(ck, &v, &level));
    int want_level = has_local ? TIO_CKPT_LEVEL_LOCAL : TIO_CKPT_LEVEL_GLOBAL;
    TT_CHECK(v == 5 && level == want_level, "restart gave version %lld level %s", v,
             cd_level_name(level));
    cd_verify_all(ck, 5);
    TT_MPI(tio_ckpt_status(ck, &lv, &gv));
    TT_CHECK(lv == (has_local ? 5 : -1) && gv == (has_global ? 5 : -1),
             "status after restart: local %lld global %lld", lv, gv);

    char path[PATH_MAX];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = tio_ckpt_route(ck, "never-written", path, sizeof path);
    TT_CHECK(rc != MPI_SUCCESS && rc_class_is_noent(rc), "route of a file never written");
    if (rc != MPI_SUCCESS)
        error_has(rc, "never-written");
    rc = tio_ckpt_route(ck, "state", path, 8);
    TT_CHECK(rc != MPI_SUCCESS, "route into a too small buffer must fail");
    rc = tio_ckpt_begin(ck, 5);
    TT_CHECK(rc != MPI_SUCCESS, "begin of the restarted version must fail");
    if (rc != MPI_SUCCESS)
        error_has(rc, "not larger");

    /* Version 6 begun and written but never committed: gone at close. */
    TT_MPI(tio_ckpt_begin(ck, 6));
    cd_write_all(ck, 6);
    TT_MPI(tio_ckpt_close(&ck));
    MPI_Barrier(MPI_COMM_WORLD);
    TT_CHECK(!(listing(has_local ? g_local : g_global, name) & (1ll << 6)),
             "the uncommitted version 6 is still there");
    restart_expect(name, info, 5, want_level);
    MPI_Info_free(&info);
}

/* ---- torn and damaged checkpoints ---- */

static void write_versions(const char *name, MPI_Info info, long long last)
{
    tio_ckpt_t ck = open_set(name, info);
    for (long long v = 1; v <= last; v++) {
        TT_MPI(tio_ckpt_begin(ck, v));
        cd_write_all(ck, v);
        TT_MPI(tio_ckpt_commit(ck));
        TT_MPI(tio_ckpt_wait(ck));
    }
    TT_MPI(tio_ckpt_close(&ck));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void must(int ok, const char *what, const char *path)
{
    if (!ok)
        tt_fail("cannot %s %s: %s", what, path, strerror(errno));
}

static void flip_byte(const char *path, off_t at)
{
    int fd = open(path, O_RDWR);
    uint8_t b = 0;
    must(fd >= 0 && pread(fd, &b, 1, at) == 1, "read", path);
    b ^= 0x10;
    must(pwrite(fd, &b, 1, at) == 1, "write", path);
    close(fd);
}

/* Run damage() on rank 0 between barriers. */
#define ON_RANK0(stmt)                                                                   \
    do {                                                                                 \
        MPI_Barrier(MPI_COMM_WORLD);                                                     \
        if (tt_rank == 0) {                                                              \
            stmt;                                                                        \
        }                                                                                \
        MPI_Barrier(MPI_COMM_WORLD);                                                     \
    } while (0)

static void test_torn(void)
{
    MPI_Info info = cd_info(g_local, g_global, NULL, "3", NULL, NULL);
    char p[PATH_MAX], q[PATH_MAX];
    const int last = tt_size - 1;

    /* A truncated local file: that process reads the global copy. */
    write_versions("trunc", info, 3);
    vpath(p, sizeof p, g_local, "trunc", 3, last, "state");
    ON_RANK0(must(truncate(p, 5000) == 0, "truncate", p));
    restart_expect("trunc", info, 3, TIO_CKPT_LEVEL_GLOBAL);

    /* A flipped byte in both copies of version 3: version 2. */
    write_versions("flip", info, 3);
    vpath(p, sizeof p, g_local, "flip", 3, 0, "state");
    vpath(q, sizeof q, g_global, "flip", 3, 0, "state");
    ON_RANK0(flip_byte(p, 77777); flip_byte(q, 12));
    restart_expect("flip", info, 2, TIO_CKPT_LEVEL_LOCAL);

    /* A missing (empty) file: rank 1's meta.txt has no bytes but must exist. */
    write_versions("missing", info, 3);
    vpath(p, sizeof p, g_local, "missing", 3, 1 % tt_size, "meta.txt");
    vpath(q, sizeof q, g_global, "missing", 3, 1 % tt_size, "meta.txt");
    ON_RANK0(must(unlink(p) == 0, "remove", p); must(unlink(q) == 0, "remove", q));
    restart_expect("missing", info, 2, TIO_CKPT_LEVEL_LOCAL);

    /* No manifest for version 3 anywhere: a torn commit, never used. */
    write_versions("noman", info, 3);
    vpath(p, sizeof p, g_local, "noman", 3, 0, NULL);
    vpath(q, sizeof q, g_global, "noman", 3, 0, NULL);
    ON_RANK0(must(unlink(p) == 0, "remove", p); must(unlink(q) == 0, "remove", q));
    restart_expect("noman", info, 2, TIO_CKPT_LEVEL_LOCAL);

    /* A damaged local manifest: the global copy serves version 3. */
    write_versions("badman", info, 3);
    vpath(p, sizeof p, g_local, "badman", 3, 0, NULL);
    ON_RANK0(flip_byte(p, 30));
    restart_expect("badman", info, 3, TIO_CKPT_LEVEL_GLOBAL);

    /* A commit that died before its manifest (files, a temporary manifest, a drain
     * that copied files): version 3; then begin(4) clears it and a real 4 wins. */
    write_versions("torn4", info, 3);
    ON_RANK0({
        for (int lvl = 0; lvl < 2; lvl++) {
            char cmd[3 * PATH_MAX];
            snprintf(cmd, sizeof cmd, "d=%s/torn4 && mkdir $d/v4 && cp $d/v3/r*.* $d/v4/ && "
                     "cp $d/v3/manifest $d/v4/.manifest.99.tmp", lvl ? g_global : g_local);
            must(system(cmd) == 0, "fake a torn version 4 in", lvl ? g_global : g_local);
        }
    });
    restart_expect("torn4", info, 3, TIO_CKPT_LEVEL_LOCAL);
    {
        tio_ckpt_t ck = open_set("torn4", info);
        long long v;
        int level;
        TT_MPI(tio_ckpt_restart(ck, &v, &level));
        TT_MPI(tio_ckpt_begin(ck, 4));
        MPI_Barrier(MPI_COMM_WORLD);
        vpath(p, sizeof p, g_local, "torn4", 4, 0, NULL);
        snprintf(q, sizeof q, "%.*s/.manifest.99.tmp", (int)(strrchr(p, '/') - p), p);
        TT_CHECK(!tt_exists(q), "begin(4) left the torn version's %s", q);
        vpath(q, sizeof q, g_global, "torn4", 4, 0, "state");
        TT_CHECK(!tt_exists(q), "begin(4) left the torn global copy %s", q);
        MPI_Barrier(MPI_COMM_WORLD);
        cd_write_all(ck, 4);
        TT_MPI(tio_ckpt_commit(ck));
        TT_MPI(tio_ckpt_close(&ck));
    }
    restart_expect("torn4", info, 4, TIO_CKPT_LEVEL_LOCAL);

    /* The local level wiped (a node lost): the global copies; then without version 3's
     * global manifest, version 2; without anything, none. */
    write_versions("wiped", info, 3);
    snprintf(p, sizeof p, "rm -rf %s/wiped", g_local);
    ON_RANK0(must(system(p) == 0, "wipe", g_local));
    restart_expect("wiped", info, 3, TIO_CKPT_LEVEL_GLOBAL);
    vpath(q, sizeof q, g_global, "wiped", 3, 0, NULL);
    ON_RANK0(must(unlink(q) == 0, "remove", q));
    restart_expect("wiped", info, 2, TIO_CKPT_LEVEL_GLOBAL);
    snprintf(p, sizeof p, "rm -rf %s/wiped", g_global);
    ON_RANK0(must(system(p) == 0, "wipe", g_global));
    restart_expect("wiped", info, -1, TIO_CKPT_LEVEL_NONE);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    int threads = 0, from_env = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--mode") && i + 1 < argc)
            g_mode = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = !strcmp(argv[++i], "multiple");
        else if (!strcmp(argv[i], "--partner"))
            g_partner = 1;
        else if (!strcmp(argv[i], "--dirs-from-env"))
            from_env = 1;
    }
    if (threads) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        tt_setup("test_ckpt");
        TT_CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)",
                 provided);
    } else {
        tt_init(&argc, &argv, "test_ckpt");
    }
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &g_node);
    MPI_Comm_rank(g_node, &g_node_rank);
    if (from_env) {
        const char *nl = getenv("TIERIO_NODE_LOCAL"), *pfs = getenv("TIERIO_PFS");
        if (!nl || !pfs)
            TT_DIE("--dirs-from-env needs TIERIO_NODE_LOCAL and TIERIO_PFS (tio-cluster)");
        snprintf(g_local, sizeof g_local, "%s/test_ckpt.%s", nl, strrchr(tt_dir, '.') + 1);
        snprintf(g_global, sizeof g_global, "%s/test_ckpt.%s", pfs, strrchr(tt_dir, '.') + 1);
    } else {
        snprintf(g_local, sizeof g_local, "%s/local", tt_dir);
        snprintf(g_global, sizeof g_global, "%s/global", tt_dir);
    }
    if (g_node_rank == 0)
        mkdir(g_local, 0755);
    if (tt_rank == 0)
        mkdir(g_global, 0755);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(what, "levels"))
        test_levels();
    else if (!strcmp(what, "torn"))
        test_torn();
    else
        TT_DIE("usage: test_ckpt levels|torn [--mode multi|sync|local|global] "
               "[--threads multiple]");
    /* tt_finish removes one level of tt_dir; clear ours first. */
    MPI_Barrier(MPI_COMM_WORLD);
    char cmd[2 * PATH_MAX];
    if (g_node_rank == 0) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", g_local);
        if (system(cmd) != 0)
            tt_fail("cannot remove %s", g_local);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0 && tt_exists(g_global)) {
        snprintf(cmd, sizeof cmd, "rm -rf %s", g_global);
        if (system(cmd) != 0)
            tt_fail("cannot remove %s", g_global);
    }
    MPI_Comm_free(&g_node);
    return tt_finish();
}
