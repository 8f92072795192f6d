/* Errors of the aggregation engine and of the MPI-IO route: each bad setting, argument or
 * situation gives the right error class on every process, a message naming the key,
 * argument or path and the reason, and leaves nothing behind (no file, no buffer file on
 * node-local storage, no mapping, no descriptor). Linked with libtierio-pmpi, so that
 * MPI_File_open is the route's. */
#include "../errors/errtest.h"

#include <tierio.h>

static char dir[4096], nodelocal[4096 + 16], site[4096 + 16];

static void write_site(const char *path, const char *ssd_capacity, int network)
{
    if (tt_rank == 0) {
        FILE *f = fopen(path, "w");
        if (!f)
            FAIL_NOW("cannot write %s", path);
        if (network)
            fprintf(f, "[network]\nlatency = 20us\nbandwidth = 2GB/s\n"
                       "node_latency = 1us\nnode_bandwidth = 10GB/s\n");
        fprintf(f, "[tier dram]\nkind = dram\nlatency = 100ns\nbandwidth = 20GB/s\n"
                   "[tier ssd]\nkind = node-local\npath = %s\nlatency = 50us\n"
                   "read_bandwidth = 2GB/s\nwrite_bandwidth = 1GB/s\ncapacity = %s\n",
                nodelocal, ssd_capacity);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static MPI_Info kv(const char *k1, const char *v1, const char *k2, const char *v2)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (k1)
        MPI_Info_set(info, k1, v1);
    if (k2)
        MPI_Info_set(info, k2, v2);
    return info;
}

/* tio_agg_open must fail with ex and the substrings, creating nothing. */
static void open_fails(const char *name, int amode, MPI_Info info, struct et_expect ex,
                       const char *s1, const char *s2)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CASE(name);
    struct et_snap snap = et_snap_take(dir), snl = et_snap_take(nodelocal);
    tio_agg_t a = (tio_agg_t)ET_SENTINEL;
    int rc = tio_agg_open(MPI_COMM_WORLD, path, amode, info, &a);
    et_check_error(rc, ex, s1, s2, NULL);
    CHECK(a == NULL);
    et_snap_check(&snap, dir, 4096);
    et_snap_check(&snl, nodelocal, 4096);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

static void test_open(void)
{
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
    open_fails("count1", amode, kv("tierio_agg_buffer_count", "1", NULL, NULL), EX_INFO_VALUE,
               "hint tierio_agg_buffer_count=\"1\" is invalid", "two at least");
    open_fails("strategy", amode, kv("tierio_agg_strategy", "nope", NULL, NULL),
               EX_INFO_VALUE, "tierio_agg_strategy=\"nope\" is invalid: no such strategy", "default, tapioca");
    setenv("TIERIO_AGG_BUFFER_SIZE", "0", 1);
    open_fails("envsize", amode, MPI_INFO_NULL, EX_INFO_VALUE,
               "environment variable TIERIO_AGG_BUFFER_SIZE=\"0\" is invalid", "buffer size");
    unsetenv("TIERIO_AGG_BUFFER_SIZE");
    open_fails("auto", amode, kv("tierio_agg_tier", "auto", NULL, NULL), EX_INFO_VALUE,
               "tierio_agg_tier = auto", "tierio_agg_strategy = tapioca");
    open_fails("notier", amode, kv("tierio_agg_tier", "nvram", NULL, NULL), EX_ARG,
               "no tier \"nvram\"", "aggregation buffers");
    open_fails("nosize", amode, kv("tierio_agg_tier", "ssd", "tierio_agg_buffer_size", "1Mi"),
               EX_NOSPACE, "tier \"ssd\"", "available");
    open_fails("persistence", amode, kv("tierio_agg_persistence", "job", NULL, NULL),
               EX_INFO_VALUE, "tier \"dram\" keeps data for \"none\" only",
               "tierio_agg_persistence = job");
    open_fails("subfiling", amode, kv("tierio_agg_subfiling", "2", NULL, NULL), EX_INFO_KEY,
               "tierio_agg_subfiling", "tierio_agg_target = subfiles");
    /* memory_conscious: its keys' values, its keys with another strategy, its tier. */
    open_fails("mc_per_node", amode,
               kv("tierio_agg_strategy", "memory_conscious", "tierio_agg_mc_per_node", "0"),
               EX_INFO_VALUE, "hint tierio_agg_mc_per_node=\"0\" is invalid", "1 to 64");
    open_fails("mc_share", amode,
               kv("tierio_agg_strategy", "memory_conscious", "tierio_agg_mc_memory_share",
                  "150"), EX_INFO_VALUE, "tierio_agg_mc_memory_share=\"150\"", "percentage");
    open_fails("mc_message", amode,
               kv("tierio_agg_strategy", "memory_conscious", "tierio_agg_mc_write_message",
                  "lots"), EX_INFO_VALUE, "tierio_agg_mc_write_message=\"lots\"", "message size");
    open_fails("mc_elsewhere", amode, kv("tierio_agg_mc_min_memory", "1Mi", NULL, NULL),
               EX_INFO_KEY, "tierio_agg_mc_min_memory", "tierio_agg_strategy = memory_conscious");
    setenv("TIERIO_AGG_MC_PER_NODE", "3", 1);
    open_fails("mc_env_elsewhere", amode, kv("tierio_agg_strategy", "tapioca", NULL, NULL),
               EX_INFO_KEY, "TIERIO_AGG_MC_PER_NODE", "but the strategy is tapioca");
    unsetenv("TIERIO_AGG_MC_PER_NODE");
    open_fails("mc_tier", amode,
               kv("tierio_agg_strategy", "memory_conscious", "tierio_agg_tier", "ssd"),
               EX_INFO_VALUE, "tierio_agg_tier=\"ssd\" is invalid", "each node's memory");
    open_fails("missing", MPI_MODE_RDONLY, MPI_INFO_NULL, EX_NOENT, "missing\"",
               "No such file");
    open_fails("append", MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, EX_ARG,
               "amode", "are supported");
    open_fails("twomodes", MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, EX_ARG,
               "amode", "exactly one");
    /* Settings that differ between processes. */
    open_fails("differ", amode, kv("tierio_agg_buffer_size", tt_rank ? "2Mi" : "1Mi", NULL, NULL),
               EX_INFO_VALUE, "differ from rank 0", NULL);

    /* No node-local tier in the site file: the node-local target cannot be. */
    unsetenv("TIERIO_SITE");
    open_fails("nonodelocal", amode, kv("tierio_agg_target", "node-local", NULL, NULL),
               EX_INFO_KEY, "no node-local tier", "site file");
    setenv("TIERIO_SITE", site, 1);

    /* MPI_MODE_EXCL on an existing file: the error, and the file left as it was. */
    CASE("excl");
    char path[4200];
    snprintf(path, sizeof path, "%s/exists", dir);
    if (tt_rank == 0) {
        FILE *f = fopen(path, "w");
        fputs("keep me", f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    struct et_snap snap = et_snap_take(dir);
    tio_agg_t a;
    int rc = tio_agg_open(MPI_COMM_WORLD, path, amode | MPI_MODE_EXCL, MPI_INFO_NULL, &a);
    et_check_error(rc, (struct et_expect){MPI_ERR_IO, "tierio: I/O error"}, "exists", NULL);
    et_snap_check(&snap, dir, 4096);
    if (tt_rank == 0) {
        char b[16] = "";
        FILE *f = fopen(path, "r");
        CHECK(f && fgets(b, sizeof b, f) && !strcmp(b, "keep me"));
        fclose(f);
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_tapioca(void)
{
    char path[4200];
    MPI_Offset off = (MPI_Offset)tt_rank << 20, len = 1 << 20;
    int id;
    tio_agg_t a;

    /* Persistence asked: DRAM does not qualify, node-local storage is too small. */
    CASE("tapioca-nospace");
    write_site(site, "1MiB", 1);
    snprintf(path, sizeof path, "%s/tap", dir);
    MPI_Info info = kv("tierio_agg_strategy", "tapioca", "tierio_agg_persistence", "job");
    struct et_snap snap = et_snap_take(dir), snl = et_snap_take(nodelocal);
    CHECK_EQ(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a),
             MPI_SUCCESS);
    et_check_error(tio_agg_declare(a, 1, &off, &len, &id), EX_NOSPACE, "no tier",
                   "persistence job", NULL);
    CHECK_EQ(tio_agg_close(&a), MPI_SUCCESS);
    if (tt_rank == 0)
        unlink(path);
    et_snap_check(&snap, dir, 4096);
    et_snap_check(&snl, nodelocal, 4096);
    MPI_Info_free(&info);

    /* No figures for the network: the cost model cannot run. */
    CASE("tapioca-figures");
    write_site(site, "1GiB", 0);
    info = kv("tierio_agg_strategy", "tapioca", NULL, NULL);
    snap = et_snap_take(dir);
    CHECK_EQ(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a),
             MPI_SUCCESS);
    et_check_error(tio_agg_declare(a, 1, &off, &len, &id), EX_ARG, "network", "unknown",
                   NULL);
    CHECK_EQ(tio_agg_close(&a), MPI_SUCCESS);
    if (tt_rank == 0)
        unlink(path);
    et_snap_check(&snap, dir, 4096);
    MPI_Info_free(&info);
    write_site(site, "1GiB", 1);
}

static void test_access(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/acc", dir);
    MPI_Info info = kv("tierio_agg_buffer_size", "4096", NULL, NULL);
    tio_agg_t a;
    int id, id2;
    char buf[8192];
    memset(buf, tt_rank + 1, sizeof buf);
    CHECK_EQ(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a),
             MPI_SUCCESS);

    CASE("declare-args");
    MPI_Offset off = tt_rank * 8192, len = 8192, neg = -1;
    et_check_error(tio_agg_declare(a, -1, &off, &len, &id), EX_ARG, "count -1", NULL);
    et_check_error(tio_agg_declare(a, 1, &off, NULL, &id), EX_ARG, "sizes is NULL", NULL);
    et_check_error(tio_agg_declare(a, 1, &neg, &len, &id), EX_ARG, "piece 0", NULL);
    /* One process wrong: it fails at once. The declaration is the node's (one node here,
     * the node regime), whose other processes learn it at the access's first call: all
     * fail there with its message. Failed declarations use their ids up alike (0-3). */
    int bad = tt_rank == tt_size - 1;
    int rc = tio_agg_declare(a, 1, bad ? &neg : &off, &len, &id);
    if (bad)
        et_check_error(rc, EX_ARG, "piece 0 (offset -1", NULL);
    else
        CHECK(rc == MPI_SUCCESS && id == 3);
    et_check_error(tio_agg_write(a, 3, buf), EX_ARG, "piece 0 (offset -1", NULL);
    CHECK_EQ(tio_agg_sync(a), MPI_SUCCESS); /* every process was told at the write */

    CASE("ids");
    CHECK_EQ(tio_agg_declare(a, 1, &off, &len, &id), MPI_SUCCESS);
    CHECK_EQ(tio_agg_declare(a, 1, &off, &len, &id2), MPI_SUCCESS);
    et_check_error(tio_agg_write(a, tt_rank ? id2 : id, buf), EX_ARG, "different accesses",
                   NULL);
    et_check_error(tio_agg_write(a, 7, buf), EX_ARG, "access 7 was not declared", NULL);
    et_check_error(tio_agg_write(a, id, NULL), EX_ARG, "buf is NULL", NULL);

    CASE("overlap");
    MPI_Offset same = 0;
    int ido;
    CHECK_EQ(tio_agg_declare(a, 1, &same, &len, &ido), MPI_SUCCESS);
    et_check_error(tio_agg_write(a, ido, buf), EX_ARG, "overlap", NULL);

    CASE("eof");
    CHECK_EQ(tio_agg_write(a, id, buf), MPI_SUCCESS);
    MPI_Offset far = ((MPI_Offset)tt_size + tt_rank) * 8192;
    int idf;
    CHECK_EQ(tio_agg_declare(a, 1, &far, &len, &idf), MPI_SUCCESS);
    et_check_error(tio_agg_read(a, idf, buf), (struct et_expect){MPI_ERR_IO, "tierio: I/O error"},
                   "the file ends at", NULL);
    /* The overlapping access can still be read (everybody gets the same bytes). */
    char got[8192];
    CHECK_EQ(tio_agg_read(a, ido, got), MPI_SUCCESS);
    for (int i = 0; i < 8192; i++)
        CHECK_EQ(got[i], 1);
    CHECK_EQ(tio_agg_close(&a), MPI_SUCCESS);

    CASE("readonly");
    CHECK_EQ(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &a), MPI_SUCCESS);
    CHECK_EQ(tio_agg_declare(a, 1, &off, &len, &id), MPI_SUCCESS);
    et_check_error(tio_agg_write(a, id, buf), EX_ACCESS, "read-only", NULL);
    memset(got, 0, sizeof got);
    CHECK_EQ(tio_agg_read(a, id, got), MPI_SUCCESS);
    for (int i = 0; i < 8192; i++)
        CHECK_EQ(got[i], tt_rank + 1);
    CHECK_EQ(tio_agg_close(&a), MPI_SUCCESS);

    /* A write-only handle cannot read, whether the read would be aggregated or made by
     * each process itself (these pieces do not interleave: tierio_agg_read=auto). */
    CASE("writeonly");
    CHECK_EQ(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, info, &a), MPI_SUCCESS);
    CHECK_EQ(tio_agg_declare(a, 1, &off, &len, &id), MPI_SUCCESS);
    et_check_error(tio_agg_read(a, id, got), EX_ACCESS, "opened write-only", NULL);
    CHECK_EQ(tio_agg_close(&a), MPI_SUCCESS);
    MPI_Info_set(info, "tierio_agg_read", "aggregate");
    CHECK_EQ(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, info, &a), MPI_SUCCESS);
    CHECK_EQ(tio_agg_declare(a, 1, &off, &len, &id), MPI_SUCCESS);
    et_check_error(tio_agg_read(a, id, got), EX_ACCESS, "opened write-only", NULL);
    CHECK_EQ(tio_agg_close(&a), MPI_SUCCESS);
    MPI_Info_delete(info, "tierio_agg_read");
    if (tt_rank == 0)
        unlink(path);

    /* Subfiles: bytes no extent holds were never written. */
    CASE("never-written");
    MPI_Info_set(info, "tierio_agg_target", "subfiles");
    CHECK_EQ(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a),
             MPI_SUCCESS);
    CHECK_EQ(tio_agg_declare(a, 1, &off, &len, &id), MPI_SUCCESS);
    CHECK_EQ(tio_agg_declare(a, 1, &far, &len, &idf), MPI_SUCCESS);
    CHECK_EQ(tio_agg_write(a, id, buf), MPI_SUCCESS);
    et_check_error(tio_agg_read(a, idf, buf), (struct et_expect){MPI_ERR_IO, "tierio: I/O error"},
                   "never written", NULL);
    CHECK_EQ(tio_agg_close(&a), MPI_SUCCESS);
    if (tt_rank == 0) {
        char p[4300];
        for (int k = 0; k < 4; k++) {
            snprintf(p, sizeof p, "%s.%d", path, k);
            unlink(p);
        }
        unlink(path);
    }
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_File_open through the route: bad settings are MPI_File_open errors, the file MPI
 * created is removed again, and the handle is MPI_FILE_NULL. */
static void route_fails(const char *name, MPI_Info info, struct et_expect ex, const char *s1)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CASE(name);
    struct et_snap snap = et_snap_take(dir);
    MPI_File fh = (MPI_File)ET_SENTINEL;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    et_check_error(rc, ex, s1, NULL);
    CHECK(fh == MPI_FILE_NULL);
    et_snap_check(&snap, dir, 4096);
    MPI_Info_free(&info);
}

static void test_route(void)
{
    /* The MPI library's own first file (MPICH keeps 16 MiB after it): before the snapshots. */
    char warm[4200];
    snprintf(warm, sizeof warm, "%s/warm", dir);
    for (int i = 0; i < 2; i++) {
        MPI_File fh;
        CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, warm, MPI_MODE_CREATE | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &fh), MPI_SUCCESS);
        CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
    }
    if (tt_rank == 0)
        unlink(warm);
    MPI_Barrier(MPI_COMM_WORLD);
    route_fails("route-value", kv("tierio_agg", "maybe", NULL, NULL), EX_INFO_VALUE,
                "hint tierio_agg=\"maybe\" is invalid");
    route_fails("route-subfiles", kv("tierio_agg", "enable", "tierio_agg_target", "subfiles"),
                EX_INFO_VALUE, "subfiles and node-local targets are for tio_agg_open");
    route_fails("route-some", kv("tierio_agg", tt_rank ? "enable" : "disable", NULL, NULL),
                EX_INFO_VALUE, "enabled on some processes only");
    route_fails("route-count", kv("tierio_agg", "enable", "tierio_agg_buffer_count", "0"),
                EX_INFO_VALUE, "tierio_agg_buffer_count");
    setenv("TIERIO_AGG", "yes", 1);
    route_fails("route-env", kv(NULL, NULL, NULL, NULL),
                EX_INFO_VALUE, "environment variable TIERIO_AGG=\"yes\" is invalid");
    unsetenv("TIERIO_AGG");
}

/* Handles made and freed again and again hold nothing afterwards (buffers, windows,
 * threads, descriptors): through tio_agg_open and through the route. */
static void test_no_leak(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/leak", dir);
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    MPI_Offset off = tt_rank * 4096, len = 4096;
    struct et_snap snap = {0}, snl = {0};
    CASE("no-leak");
    for (int i = 0; i < 6; i++) {
        if (i == 1) { /* after the first round of each: MPI's own first-use memory */
            snap = et_snap_take(dir);
            snl = et_snap_take(nodelocal);
        }
        MPI_Info info = kv("tierio_agg_tier", i % 2 ? "ssd" : "dram", "tierio_agg", "enable");
        tio_agg_t a;
        int id;
        CHECK_EQ(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a),
                 MPI_SUCCESS);
        CHECK_EQ(tio_agg_declare(a, 1, &off, &len, &id), MPI_SUCCESS);
        CHECK_EQ(tio_agg_write(a, id, buf), MPI_SUCCESS);
        CHECK_EQ(tio_agg_close(&a), MPI_SUCCESS);
        MPI_File fh;
        MPI_Status st;
        CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh), MPI_SUCCESS);
        CHECK_EQ(MPI_File_write_at_all(fh, off, buf, 4096, MPI_BYTE, &st), MPI_SUCCESS);
        CHECK_EQ(MPI_File_close(&fh), MPI_SUCCESS);
        MPI_Info_free(&info);
        MPI_Barrier(MPI_COMM_WORLD);
        if (tt_rank == 0)
            unlink(path);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* A leaked handle keeps 2 x 16 MiB of buffers: far above what allocator caches (and
     * ASan's quarantine) account for. */
    et_snap_check(&snap, dir, 16384);
    et_snap_check(&snl, nodelocal, 16384);
}

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "agg-errors");
    snprintf(dir, sizeof dir, "%s/files", et_root);
    snprintf(nodelocal, sizeof nodelocal, "%s/nodelocal", et_root);
    snprintf(site, sizeof site, "%s/site.conf", et_root);
    if (tt_rank == 0) {
        mkdir(dir, 0755);
        mkdir(nodelocal, 0755);
    }
    write_site(site, "1MiB", 1);
    setenv("TIERIO_SITE", site, 1);
    test_open();
    write_site(site, "1GiB", 1);
    test_tapioca();
    test_access();
    test_route();
    test_no_leak();
    return et_finish();
}
