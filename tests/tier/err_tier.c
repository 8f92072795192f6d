/* Errors of the tiers API, with several processes: a site file that describes tiers this
 * machine cannot have (HBM where there is none, a NUMA node that does not exist), a bad
 * site file on one process only, buffers on a tier that does not exist, that is too
 * small, with flags that do not apply, names that differ between processes, a file that
 * would be overwritten, reads and writes out of bounds, and a placement nothing can hold.
 * Each time: the error class (Open MPI) or tierio's class string (MPICH), a message naming
 * the file, line, tier or argument and the reason, the same on every process, and nothing
 * left behind (no file, mapping or descriptor; errtest.h). */
#include "../errors/errtest.h"
#include "tierio.h"

static char dir[4200], store[4400];

/* Rank 0 writes a site file; returns its path (static). */
static const char *site(const char *name, const char *fmt, ...)
{
    static char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (tt_rank == 0) {
        FILE *f = fopen(path, "w");
        if (!f)
            FAIL_NOW("cannot write %s", path);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return path;
}

static void open_fails(const char *path, struct et_expect ex, const char *what,
                       const char *reason)
{
    CASE(what);
    struct et_snap s = et_snap_take(store);
    tio_tiers_t t = (tio_tiers_t)(uintptr_t)0x5e1f;
    int rc = tio_tiers_open(MPI_COMM_WORLD, path, &t);
    et_check_error(rc, ex, reason, NULL);
    CHECK(t == NULL);
    et_snap_check(&s, store, 1024);
}

static void opening(void)
{
    open_fails(site("hbm99.conf", "[tier hbm]\nkind = hbm\nnuma = 99\n"), EX_ARG,
               "HBM on NUMA node 99", "hbm99.conf:1: tier \"hbm\": NUMA node 99 does not exist");
    open_fails(site("nohbm.conf", "[tier fast]\nkind = hbm\n"), EX_UNSUPPORTED,
               "HBM on a machine without", "no HBM on this node");
    open_fails(site("typo.conf", "[tier x]\nkind = dram\nbandwith = 1GB/s\n"), EX_ARG,
               "a misspelt key", "typo.conf:3: unknown key \"bandwith\"");

    /* One process names a file that does not exist: all fail with its reason. */
    char good[4400], missing[4400];
    snprintf(good, sizeof good, "%s", site("good.conf", "[tier x]\nkind = dram\n"));
    snprintf(missing, sizeof missing, "%s/missing.conf", dir);
    CASE("one process's site file is missing");
    struct et_snap s = et_snap_take(store);
    tio_tiers_t t;
    int bad = tt_size - 1;
    int rc = tio_tiers_open(MPI_COMM_WORLD, tt_rank == bad ? missing : good, &t);
    char who[32];
    snprintf(who, sizeof who, "rank %d: ", bad);
    et_check_error(rc, EX_NOENT, who, "missing.conf", "No such file or directory", NULL);
    et_snap_check(&s, store, 1024);
}

static void buffers(tio_tiers_t t)
{
    tio_buf_t b = (tio_buf_t)(uintptr_t)0x5e1f;
    struct et_snap s;
    int rc;

    CASE("a tier this node does not have");
    s = et_snap_take(store);
    rc = tio_buf_alloc(t, "nvme", 4096, NULL, 0, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "has no tier \"nvme\" (it has dram, small, ssd)", NULL);
    CHECK(b == NULL);
    et_snap_check(&s, store, 1024);

    CASE("more than the tier holds");
    s = et_snap_take(store);
    rc = tio_buf_alloc(t, "small", 1 << 20, "big", 0, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_NOSPACE, "tier \"small\"", "65536 bytes available, 1048576 asked",
                   NULL);
    et_snap_check(&s, store, 1024);

    CASE("TIO_BUF_KEEP on memory");
    rc = tio_buf_alloc(t, "dram", 4096, "k", TIO_BUF_KEEP, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "TIO_BUF_KEEP on tier \"dram\"", "nothing outlives", NULL);
    CASE("TIO_BUF_KEEP without a name");
    rc = tio_buf_alloc(t, "ssd", 4096, NULL, TIO_BUF_KEEP, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "TIO_BUF_KEEP needs a name", NULL);
    CASE("a name with a slash");
    rc = tio_buf_alloc(t, "ssd", 4096, "../escape", 0, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "name \"../escape\"", NULL);
    CASE("unknown flags");
    rc = tio_buf_alloc(t, "ssd", 4096, "x", 0x10, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "unknown flags 0x10", NULL);
    CASE("negative size");
    rc = tio_buf_alloc(t, "ssd", -1, "x", 0, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "size -1 is negative", NULL);

    CASE("processes name different tiers");
    s = et_snap_take(store);
    rc = tio_buf_alloc(t, tt_rank == 1 ? "dram" : "ssd", 4096, "x", 0, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "rank 1: ", "rank 0 passes \"ssd\"", "all must be the same",
                   NULL);
    et_snap_check(&s, store, 1024);

    /* A scratch buffer would remove this file at free: refused, the file unchanged. */
    CASE("an existing file without TIO_BUF_KEEP");
    char path[4500];
    snprintf(path, sizeof path, "%s/data.%d", store, tt_rank);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fprintf(f, "precious %d\n", tt_rank);
    fclose(f);
    s = et_snap_take(store);
    rc = tio_buf_alloc(t, "ssd", 4096, "data", 0, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "data.0\" exists", "TIO_BUF_KEEP", NULL);
    et_snap_check(&s, store, 1024);
    char line[64] = "", want[64];
    f = fopen(path, "r");
    CHECK(f && fgets(line, sizeof line, f));
    fclose(f);
    snprintf(want, sizeof want, "precious %d\n", tt_rank);
    CHECK(!strcmp(line, want));
    CHECK_EQ(unlink(path), 0);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Out of bounds: local errors, raised on the buffer's communicator. */
    s = et_snap_take(store);
    CHECK_EQ(tio_buf_alloc(t, "ssd", 4096 + 100 * tt_rank, "oob", 0, MPI_COMM_WORLD, &b),
             MPI_SUCCESS);
    char buf[8192] = {0};
    CASE("a write beyond the target's buffer");
    rc = tio_buf_write(b, buf, 200, 4000, 0);
    et_check_error(rc, EX_ARG, "bytes 4000..4200 are beyond rank 0's buffer of 4096 bytes",
                   "tier \"ssd\"", NULL);
    CASE("a read beyond");
    rc = tio_buf_read(b, buf, 1, 4096 + 100, 1);
    et_check_error(rc, EX_ARG, "beyond rank 1's buffer of 4196 bytes", NULL);
    CASE("a rank that is not there");
    rc = tio_buf_read(b, buf, 1, 0, tt_size);
    et_check_error(rc, EX_ARG, "is not in the buffer's communicator", NULL);
    CASE("a negative offset");
    rc = tio_buf_write(b, buf, 1, -5, 0);
    et_check_error(rc, EX_ARG, "negative offset -5", NULL);
    CASE("from NULL");
    rc = tio_buf_write(b, NULL, 8, 0, 0);
    et_check_error(rc, EX_ARG, "8 bytes from a NULL pointer", NULL);
    /* the buffer still works after the errors */
    CASE("after the errors");
    memset(buf, 'a' + tt_rank, 64);
    CHECK_EQ(tio_buf_write(b, buf, 64, 64 * tt_rank, 0), MPI_SUCCESS);
    CHECK_EQ(tio_buf_flush(b), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(tio_buf_read(b, buf, 64 * tt_size, 0, 0), MPI_SUCCESS);
    for (int r = 0; r < tt_size; r++)
        for (int i = 0; i < 64; i++)
            CHECK(buf[64 * r + i] == 'a' + r);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(tio_buf_free(&b), MPI_SUCCESS);
    et_snap_check(&s, store, 1024);
}

static void placement(tio_tiers_t t, tio_tiers_t nonet)
{
    struct tio_placement p;
    struct tio_cost_opts o = {.persistence = TIO_PERSIST_NONE, .nbuf = 2, .bufsize = 1 << 20};
    int rc;

    CASE("placement without network figures");
    rc = tio_cost_place(nonet, MPI_COMM_WORLD, 1 << 20, 1, &o, &p);
    et_check_error(rc, EX_ARG, "network's latency is unknown", "tierio probe", NULL);

    CASE("placement where no tier is persistent enough");
    o.persistence = TIO_PERSIST_PERMANENT;
    rc = tio_cost_place(t, MPI_COMM_WORLD, 1 << 20, 1, &o, &p);
    et_check_error(rc, EX_NOSPACE, "none of the", "has persistence permanent or more", NULL);

    CASE("placement where nothing is large enough");
    o.persistence = TIO_PERSIST_JOB; /* small and ssd keep data for the job */
    rc = tio_cost_place(t, MPI_COMM_WORLD, 1ull << 60, 1, &o, &p);
    et_check_error(rc, EX_NOSPACE, "no tier can hold the", "all the data, persistent",
                   "the largest with persistence job or more has", NULL);

    CASE("placement with nobody eligible");
    o.persistence = TIO_PERSIST_NONE;
    rc = tio_cost_place(t, MPI_COMM_WORLD, 1 << 20, 0, &o, &p);
    et_check_error(rc, EX_ARG, "no process is eligible", NULL);

    CASE("placement with a tier whose figures are unknown");
    o.nbuf = 1; /* small (64 KiB, no latency given) now qualifies */
    o.bufsize = 4096;
    rc = tio_cost_place(t, MPI_COMM_WORLD, 1 << 20, 1, &o, &p);
    et_check_error(rc, EX_ARG, "tier \"small\": latency unknown", NULL);
}

int main(int argc, char **argv)
{
    et_init(&argc, &argv, "err_tier");
    et_subdir(dir, sizeof dir, "sites");
    et_subdir(store, sizeof store, "store");
    char small[4500];
    snprintf(small, sizeof small, "%s/small", dir);
    if (tt_rank == 0)
        CHECK_EQ(mkdir(small, 0700), 0);
    opening();

    tio_tiers_t t, nonet;
    const char *path = site("ok.conf",
                            "[network]\nlatency = 5us\nbandwidth = 5GB/s\n"
                            "[tier dram]\nkind = dram\nlatency = 100ns\nbandwidth = 10GB/s\n"
                            "[tier small]\nkind = node-local\npath = %s\ncapacity = 64KiB\n"
                            "[tier ssd]\nkind = node-local\npath = %s\nlatency = 1ms\n"
                            "bandwidth = 1GB/s\n",
                            small, store);
    CHECK_EQ(tio_tiers_open(MPI_COMM_WORLD, path, &t), MPI_SUCCESS);
    path = site("nonet.conf", "[tier dram]\nkind = dram\nlatency = 100ns\nbandwidth = 10GB/s\n");
    CHECK_EQ(tio_tiers_open(MPI_COMM_WORLD, path, &nonet), MPI_SUCCESS);
    buffers(t);
    placement(t, nonet);

    /* Each process reads its own site file: a tier may be storage on one process's node
     * and memory on another's. One buffer cannot span both. */
    CASE("a tier that is storage here and memory there");
    char mixed[4400];
    snprintf(mixed, sizeof mixed, "%s", site("mix-storage.conf",
             "[tier mix]\nkind = node-local\npath = %s\n", store));
    const char *mem = site("mix-memory.conf", "[tier mix]\nkind = dram\nnuma = 0\n");
    tio_tiers_t mix;
    CHECK_EQ(tio_tiers_open(MPI_COMM_WORLD, tt_rank == 1 ? mem : mixed, &mix), MPI_SUCCESS);
    struct et_snap s = et_snap_take(store);
    tio_buf_t b;
    int rc = tio_buf_alloc(mix, "mix", 4096, "mix", 0, MPI_COMM_WORLD, &b);
    et_check_error(rc, EX_ARG, "tier \"mix\" is storage on some", "NUMA-bound memory on "
                   "others'", NULL);
    et_snap_check(&s, store, 1024);
    CHECK_EQ(tio_tiers_close(&mix), MPI_SUCCESS);

    CASE("tio_tiers_get out of range");
    int n;
    struct tio_tier_info info;
    CHECK_EQ(tio_tiers_count(t, &n), MPI_SUCCESS);
    CHECK_EQ(n, 3);
    et_check_error(tio_tiers_get(t, n, &info), EX_ARG, "index 3 is not a tier of this node",
                   NULL);
    CHECK_EQ(tio_tiers_close(&nonet), MPI_SUCCESS);
    CHECK_EQ(tio_tiers_close(&t), MPI_SUCCESS);
    CHECK(t == NULL);
    return et_finish();
}
