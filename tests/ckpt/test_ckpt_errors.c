/* Errors of the checkpoint API: every bad input gets the right error class on every
 * process, a message naming the key, argument, path or rank and the reason, and leaves
 * nothing behind (no handle, no directory, no version). Also a drain that fails: commit
 * stands, wait/close report it, the torn global copy is removed. */
#include "../errors/errtest.h"

#include <tierio.h>

static char g_local[4096], g_global[4096], g_file[4200];

static MPI_Info info_of(const char *kv[][2], int n) { return et_info(kv, n); }

/* Open must fail on every process with ex and the message parts; nothing is made. */
static void open_fails(const char *name, MPI_Info info, struct et_expect ex, const char *s1,
                       const char *s2)
{
    struct et_snap sl = et_snap_take(g_local), sg = et_snap_take(g_global);
    tio_ckpt_t ck = (tio_ckpt_t)ET_SENTINEL;
    int rc = tio_ckpt_open(MPI_COMM_WORLD, name, info, &ck);
    et_check_error(rc, ex, s1, s2, NULL);
    CHECK(ck == NULL || ck == (tio_ckpt_t)ET_SENTINEL);
    et_snap_check(&sl, g_local, 1 << 20);
    et_snap_check(&sg, g_global, 1 << 20);
}

static void test_open_errors(void)
{
    CASE("no info");
    open_fails("s", MPI_INFO_NULL, EX_INFO_KEY, TIO_CKPT_HINT_LOCAL_DIR, TIO_CKPT_HINT_GLOBAL_DIR);

    struct { const char *kv[3][2]; int n; struct et_expect ex; const char *s1, *s2; } c[] = {
        {{{TIO_CKPT_HINT_KEEP, "2"}}, 1, EX_INFO_KEY, TIO_CKPT_HINT_LOCAL_DIR, "or both"},
        {{{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {"tierio_ckpt_lcoal_dir", "x"}}, 2, EX_INFO_KEY,
         "unknown info key", "tierio_ckpt_lcoal_dir"},
        {{{TIO_CKPT_HINT_GLOBAL_DIR, g_global}, {TIO_CKPT_HINT_KEEP, "0"}}, 2, EX_INFO_VALUE,
         TIO_CKPT_HINT_KEEP "=\"0\" is invalid", "expected an integer from 1 to 1000000"},
        {{{TIO_CKPT_HINT_GLOBAL_DIR, g_global}, {TIO_CKPT_HINT_KEEP, "two"}}, 2, EX_INFO_VALUE,
         TIO_CKPT_HINT_KEEP, "\"two\""},
        {{{TIO_CKPT_HINT_GLOBAL_DIR, g_global}, {TIO_CKPT_HINT_DRAIN_EVERY, "0"}}, 2, EX_INFO_VALUE,
         TIO_CKPT_HINT_DRAIN_EVERY, "from 1 to"},
        {{{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {TIO_CKPT_HINT_GLOBAL_DIR, g_global},
          {TIO_CKPT_HINT_DRAIN, "later"}}, 3, EX_INFO_VALUE, "\"later\" is invalid", "\"none\", \"async\" or \"sync\""},
        {{{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {TIO_CKPT_HINT_DRAIN, "async"}}, 2, EX_INFO_KEY,
         TIO_CKPT_HINT_DRAIN "=async needs both", TIO_CKPT_HINT_GLOBAL_DIR},
        {{{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {TIO_CKPT_HINT_PARTNER, "perhaps"}}, 2, EX_INFO_VALUE,
         TIO_CKPT_HINT_PARTNER, "\"perhaps\""},
        {{{TIO_CKPT_HINT_GLOBAL_DIR, g_global}, {TIO_CKPT_HINT_PARTNER, "true"}}, 2, EX_INFO_KEY,
         TIO_CKPT_HINT_PARTNER "=true needs", TIO_CKPT_HINT_LOCAL_DIR},
        /* one node: one storage neighbourhood, nowhere to put a partner copy */
        {{{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {TIO_CKPT_HINT_PARTNER, "true"}}, 2, EX_INFO_VALUE,
         "two storage neighbourhoods", g_local},
        {{{TIO_CKPT_HINT_LOCAL_DIR, "/nonexistent/tierio-ckpt"}}, 1, EX_NOENT, TIO_CKPT_HINT_LOCAL_DIR,
         "/nonexistent/tierio-ckpt"},
        {{{TIO_CKPT_HINT_GLOBAL_DIR, g_file}}, 1, EX_NOENT, g_file, "is not a directory"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char tag[32];
        snprintf(tag, sizeof tag, "open case %zu", i);
        CASE(tag);
        MPI_Info info = info_of(c[i].kv, c[i].n);
        open_fails("s", info, c[i].ex, c[i].s1, c[i].s2);
        MPI_Info_free(&info);
    }

    const char *kv[][2] = {{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {TIO_CKPT_HINT_GLOBAL_DIR, g_global}};
    MPI_Info info = info_of(kv, 2);
    CASE("bad names");
    open_fails("a/b", info, EX_ARG, "\"a/b\"", "letters, digits");
    open_fails(".hidden", info, EX_ARG, "\".hidden\"", "must not start with '.'");
    open_fails(NULL, info, EX_ARG, "name", "non-empty");
    CASE("names differ");
    open_fails(tt_rank == tt_size - 1 ? "other" : "s", info, EX_ARG, "different", "name=");
    MPI_Info_free(&info);

    /* A directory only some processes have: the lowest failing rank's reason, everywhere. */
    CASE("local directory missing on one process");
    char mine[4200];
    snprintf(mine, sizeof mine, "%s", g_local);
    if (tt_rank == tt_size - 1)
        snprintf(mine, sizeof mine, "%s/missing-here", g_local);
    const char *kv2[][2] = {{TIO_CKPT_HINT_LOCAL_DIR, mine}};
    info = info_of(kv2, 1);
    char who[32];
    snprintf(who, sizeof who, "rank %d:", tt_size - 1);
    open_fails("s", info, EX_NOENT, who, "missing-here");
    MPI_Info_free(&info);

    CASE("NULL handle pointer");
    const char *kv3[][2] = {{TIO_CKPT_HINT_GLOBAL_DIR, g_global}};
    info = info_of(kv3, 1);
    et_check_error(tio_ckpt_open(MPI_COMM_WORLD, "s", info, NULL), EX_ARG, "ckpt", NULL);
    MPI_Info_free(&info);
    CASE("NULL handles");
    et_check_error(tio_ckpt_close(NULL), EX_ARG, "NULL", NULL);
    tio_ckpt_t none = NULL;
    et_check_error(tio_ckpt_close(&none), EX_ARG, "NULL", NULL);
    et_check_error(tio_ckpt_begin(NULL, 1), EX_ARG, "NULL", NULL);
}

static void write_file(tio_ckpt_t ck, const char *file, int bytes)
{
    char path[4096];
    if (tio_ckpt_route(ck, file, path, sizeof path) != MPI_SUCCESS)
        FAIL_NOW("route %s", file);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int i = 0; i < bytes; i++)
        fputc('a' + (i + tt_rank) % 26, f);
    fclose(f);
}

static int exists_v(const char *dir, const char *name, long long v)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s/v%lld", dir, name, v);
    struct stat st;
    return stat(p, &st) == 0;
}

static void test_call_errors(void)
{
    const char *kv[][2] = {{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {TIO_CKPT_HINT_GLOBAL_DIR, g_global}};
    MPI_Info info = info_of(kv, 2);
    tio_ckpt_t ck;
    if (tio_ckpt_open(MPI_COMM_WORLD, "calls", info, &ck) != MPI_SUCCESS)
        FAIL_NOW("open");
    char path[4096];

    CASE("before begin");
    et_check_error(tio_ckpt_route(ck, "state", path, sizeof path), EX_ARG,
                   "no version begun or restarted", NULL);
    et_check_error(tio_ckpt_commit(ck), EX_ARG, "no version", "was begun", NULL);
    et_check_error(tio_ckpt_begin(ck, -3), EX_ARG, "-3", "negative", NULL);
    CASE("versions differ");
    et_check_error(tio_ckpt_begin(ck, tt_rank == 0 ? 1 : 2), EX_ARG,
                   "different versions (from 1 to 2)", NULL);
    CHECK(!exists_v(g_local, "calls", 1) && !exists_v(g_local, "calls", 2));

    CASE("route");
    if (tio_ckpt_begin(ck, 1) != MPI_SUCCESS)
        FAIL_NOW("begin 1");
    et_check_error(tio_ckpt_route(ck, "../escape", path, sizeof path), EX_ARG, "../escape",
                   NULL);
    et_check_error(tio_ckpt_route(ck, "state", NULL, 10), EX_ARG, "path", NULL);
    et_check_error(tio_ckpt_route(ck, "state", path, 4), EX_ARG, "len is 4", NULL);
    et_check_error(tio_ckpt_begin(ck, 2), EX_ARG, "still being written", NULL);
    long long v;
    int level;
    et_check_error(tio_ckpt_restart(ck, &v, &level), EX_ARG, "restart comes first", NULL);

    /* One process routes a file and never writes it: commit fails everywhere, naming
     * that process, and version 1 is gone. */
    CASE("file routed but not written");
    write_file(ck, "state", 1000);
    if (tt_rank == tt_size - 1 && tio_ckpt_route(ck, "forgotten", path, sizeof path))
        FAIL_NOW("route forgotten");
    char who[32];
    snprintf(who, sizeof who, "rank %d:", tt_size - 1);
    et_check_error(tio_ckpt_commit(ck), EX_NOENT, who, "\"forgotten\" was routed but not "
                   "written", NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(!exists_v(g_local, "calls", 1));
    CHECK(!exists_v(g_global, "calls", 1));
    et_check_error(tio_ckpt_begin(ck, 1), EX_ARG, "not larger", NULL);
    if (tio_ckpt_begin(ck, 2) != MPI_SUCCESS)
        FAIL_NOW("begin 2 after a failed commit");
    write_file(ck, "state", 1000);
    if (tio_ckpt_commit(ck) != MPI_SUCCESS || tio_ckpt_close(&ck) != MPI_SUCCESS)
        FAIL_NOW("commit 2");

    /* tio_ckpt_write: misuse, a failed write, and a file changed behind its back. */
    CASE("tio_ckpt_write");
    if (tio_ckpt_open(MPI_COMM_WORLD, "calls", info, &ck) != MPI_SUCCESS)
        FAIL_NOW("open");
    static const char data[] = "0123456789";
    et_check_error(tio_ckpt_write(ck, "w", data, 10), EX_ARG, "tio_ckpt_begin first", NULL);
    if (tio_ckpt_begin(ck, 3) != MPI_SUCCESS)
        FAIL_NOW("begin 3");
    et_check_error(tio_ckpt_write(ck, "w", NULL, 10), EX_ARG, "buf is NULL", NULL);
    et_check_error(tio_ckpt_write(ck, "a b", data, 10), EX_ARG, "\"a b\"", NULL);
    if (tio_ckpt_route(ck, "blocked", path, sizeof path) != MPI_SUCCESS)
        FAIL_NOW("route");
    CHECK(tt_rank != 0 || mkdir(path, 0755) == 0); /* a directory where the file goes */
    if (tt_rank == 0)
        et_check_error(tio_ckpt_write(ck, "blocked", data, 10), EX_ARG, path, NULL);
    else
        CHECK_EQ(tio_ckpt_write(ck, "blocked", data, 10), MPI_SUCCESS);
    et_check_error(tio_ckpt_commit(ck), EX_IO, "rank 0:", "tio_ckpt_write failed", NULL);
    CHECK(!exists_v(g_local, "calls", 3));
    if (tio_ckpt_begin(ck, 4) != MPI_SUCCESS)
        FAIL_NOW("begin 4");
    CHECK_EQ(tio_ckpt_write(ck, "w", data, 10), MPI_SUCCESS);
    if (tt_rank == tt_size - 1) {
        char p[4400];
        snprintf(p, sizeof p, "%s/calls/v4/r%d.w", g_local, tt_rank);
        CHECK(truncate(p, 4) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    et_check_error(tio_ckpt_commit(ck), EX_IO, "has 4 bytes, 10 were written", NULL);
    CHECK(!exists_v(g_local, "calls", 4));
    if (tio_ckpt_close(&ck) != MPI_SUCCESS)
        FAIL_NOW("close");

    /* Restart with a different number of processes: an error, not a silent skip. */
    CASE("restart on fewer processes");
    if (tt_rank == 0) {
        tio_ckpt_t one;
        if (tio_ckpt_open(MPI_COMM_SELF, "calls", info, &one) != MPI_SUCCESS)
            FAIL_NOW("open on MPI_COMM_SELF");
        char n[64];
        snprintf(n, sizeof n, "written by %d processes", tt_size);
        et_check_error(tio_ckpt_restart(one, &v, &level), EX_ARG, n,
                       "this communicator has 1", NULL);
        if (tio_ckpt_close(&one) != MPI_SUCCESS)
            FAIL_NOW("close");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info_free(&info);
}

/* The global version directory's name is taken by a file: the drain of that version
 * cannot make it. */
static void block_global(const char *name, long long v)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s/v%lld", g_global, name, v);
        FILE *f = fopen(p, "w");
        CHECK(f != NULL);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_drain_failure(const char *mode)
{
    char name[32];
    snprintf(name, sizeof name, "drainfail-%s", mode);
    const char *kv[][2] = {{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {TIO_CKPT_HINT_GLOBAL_DIR, g_global},
                           {TIO_CKPT_HINT_DRAIN, mode}};
    MPI_Info info = info_of(kv, 3);
    tio_ckpt_t ck;
    if (tio_ckpt_open(MPI_COMM_WORLD, name, info, &ck) != MPI_SUCCESS)
        FAIL_NOW("open");
    CASE("drain failure");
    if (tio_ckpt_begin(ck, 1) != MPI_SUCCESS)
        FAIL_NOW("begin");
    write_file(ck, "state", 5000);
    block_global(name, 1);
    int rc = tio_ckpt_commit(ck);
    long long lv, gv;
    if (!strcmp(mode, "sync")) {
        /* sync: the commit itself reports the drain failure, the local copy stands */
        et_check_error(rc, EX_NOENT, "draining checkpoint",
                       "is not a directory", NULL);
    } else {
        CHECK_EQ(rc, MPI_SUCCESS);
        et_check_error(tio_ckpt_wait(ck), EX_NOENT, "draining checkpoint",
                       "is not a directory", NULL);
        CHECK_EQ(tio_ckpt_wait(ck), MPI_SUCCESS); /* reported once */
    }
    tio_ckpt_status(ck, &lv, &gv);
    CHECK_EQ(lv, 1);
    CHECK_EQ(gv, -1);
    /* The next version drains; its failure in close is reported by close. */
    if (tio_ckpt_begin(ck, 2) != MPI_SUCCESS)
        FAIL_NOW("begin 2");
    write_file(ck, "state", 5000);
    if (!strcmp(mode, "sync")) {
        CHECK_EQ(tio_ckpt_commit(ck), MPI_SUCCESS);
        tio_ckpt_status(ck, &lv, &gv);
        CHECK_EQ(gv, 2);
        CHECK_EQ(tio_ckpt_close(&ck), MPI_SUCCESS);
    } else {
        block_global(name, 2);
        CHECK_EQ(tio_ckpt_commit(ck), MPI_SUCCESS);
        et_check_error(tio_ckpt_close(&ck), EX_NOENT, "version 2", "is not a directory", NULL);
        CHECK(ck == NULL);
    }
    /* The global set holds what we planted and, with sync, version 2: nothing torn. */
    MPI_Barrier(MPI_COMM_WORLD);
    char set[4200], p[4300];
    snprintf(set, sizeof set, "%s/%s", g_global, name);
    CHECK_EQ(tc_count_entries(set), 2);
    snprintf(p, sizeof p, "%s/v2/manifest", set);
    struct stat st;
    CHECK_EQ(stat(p, &st) == 0, !strcmp(mode, "sync"));
    MPI_Info_free(&info);
}

/* A version directory that is a symbolic link (planted, or left by someone else): begin
 * must refuse it with a clear error and never remove what the link points to; nor may a
 * commit's pruning of an older version that is a link. */
static void test_symlinked_version(void)
{
    CASE("version directory is a symbolic link");
    const char *kv[][2] = {{TIO_CKPT_HINT_LOCAL_DIR, g_local}, {TIO_CKPT_HINT_KEEP, "1"}};
    MPI_Info info = info_of(kv, 2);
    tio_ckpt_t ck;
    if (tio_ckpt_open(MPI_COMM_WORLD, "linked", info, &ck) != MPI_SUCCESS)
        FAIL_NOW("open");
    char target[4200], keep[4300], link5[4300], link1[4300];
    snprintf(target, sizeof target, "%s/not-a-version", et_root);
    snprintf(keep, sizeof keep, "%s/manifest", target);
    snprintf(link5, sizeof link5, "%s/linked/v5", g_local);
    snprintf(link1, sizeof link1, "%s/linked/v1", g_local);
    if (tt_rank == 0) {
        CHECK_OK(mkdir(target, 0755));
        static const char text[] = "not tierio's\n";
        tt_write_file(keep, text, sizeof text - 1);
        CHECK_OK(symlink(target, link5));
        CHECK_OK(symlink(target, link1));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = tio_ckpt_begin(ck, 5);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(tt_exists(keep));
    et_check_error(rc, EX_IO, link5, "symbolic link", NULL);
    /* Version 6 commits with keep=1: pruning meets the link named v1 and leaves its
     * target alone. */
    if (tio_ckpt_begin(ck, 6) != MPI_SUCCESS)
        FAIL_NOW("begin 6");
    write_file(ck, "state", 100);
    CHECK_EQ(tio_ckpt_commit(ck), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(tt_exists(keep));
    CHECK_EQ(tio_ckpt_close(&ck), MPI_SUCCESS);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "ckpt-errors");
    snprintf(g_local, sizeof g_local, "%s/local", et_root);
    snprintf(g_global, sizeof g_global, "%s/global", et_root);
    snprintf(g_file, sizeof g_file, "%s/plainfile", et_root);
    if (tt_rank == 0) {
        mkdir(g_local, 0755);
        mkdir(g_global, 0755);
        FILE *f = fopen(g_file, "w");
        if (f)
            fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    test_open_errors();
    test_call_errors();
    test_drain_failure("async");
    test_drain_failure("sync");
    test_symlinked_version();
    return et_finish();
}
