/* Memory limits respected (seed 002 §3.2's capacity condition, §4.3 Table 7):
 *
 *   --rounds MiB   every process writes MiB of data through buffers of 1 MiB; an
 *                  aggregator's peak memory may grow by its buffers and MPI's own, never by
 *                  its domain (which is far larger). Run on the emulated cluster with a node
 *                  memory limit below data + one domain, staging a domain would be killed.
 *                  The file and a read back are checked byte for byte.
 *   --capacity     the site file gives DRAM 32 MiB: tapioca must place 2 x 32 MiB buffers on
 *                  node-local storage instead (Table 7, run 3), and with persistence=job
 *                  anyway; the data is checked; the default strategy on DRAM is refused. */
#include "agg_test.h"

#include <getopt.h>

static int is_aggregator(tio_agg_t a)
{
    MPI_Info used;
    TT_MPI(tio_agg_get_info(a, &used));
    const char *v = tt_info_get(used, "tierio_agg_aggregator_ranks");
    int mine = 0;
    for (const char *p = v; p && *p;) {
        if (atoi(p) == tt_rank)
            mine = 1;
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    MPI_Info_free(&used);
    return mine;
}

static void rounds(long mib)
{
    const int64_t per = (int64_t)mib << 20;
    char path[PATH_MAX];
    tt_path(path, sizeof path, "rounds.dat");
    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, "tierio_agg_buffer_size", "1Mi");
    tt_info_set(info, "tierio_agg_buffer_count", "2");
    uint8_t *data = malloc((size_t)per), *back = malloc((size_t)per);
    if (!data || !back)
        TT_DIE("out of memory for %ld MiB", mib);
    tt_fill(data, (size_t)per, (uint64_t)tt_rank + 5, 0);
    memset(back, 0, (size_t)per); /* touched: part of the baseline */
    tio_agg_t a;
    TT_MPI(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a));
    MPI_Offset off = (MPI_Offset)tt_rank * per, len = per;
    int id;
    TT_MPI(tio_agg_declare(a, 1, &off, &len, &id));
    int agg = is_aggregator(a);
    long before = at_status_kb("VmHWM");
    TT_MPI(tio_agg_write(a, id, data));
    TT_MPI(tio_agg_sync(a));
    TT_MPI(tio_agg_read(a, id, back));
    long grew = at_status_kb("VmHWM") - before;
    tt_compare(back, data, (size_t)per, "read back");
    /* A domain is (processes / aggregators) x per bytes; buffers are 2 MiB. */
    long limit = 24 * 1024;
    if (agg)
        TT_CHECK(grew < limit, "aggregator's peak memory grew by %ld kB during a %ld MiB "
                 "domain's write and read (buffers: 2 MiB; allowed %ld kB)", grew,
                 mib * tt_size, limit);
    if (agg)
        printf("[agg_memory rank %d] aggregator: peak memory grew by %ld kB\n", tt_rank, grew);
    TT_MPI(tio_agg_close(&a));
    free(data);
    free(back);
    if (tt_rank == 0) { /* in small pieces: the node's memory is limited */
        const int64_t piece = 4 << 20;
        int fd = open(path, O_RDONLY);
        uint8_t *chunk = malloc((size_t)piece), *want = malloc((size_t)per);
        for (int r = 0; r < tt_size && fd >= 0; r++) {
            tt_fill(want, (size_t)per, (uint64_t)r + 5, 0);
            for (int64_t o = 0; o < per; o += piece) {
                ssize_t n = pread(fd, chunk, (size_t)piece, (off_t)((int64_t)r * per + o));
                if (n != piece) {
                    tt_fail("file: rank %d's part is short at %lld", r, (long long)o);
                    break;
                }
                if (tt_compare(chunk, want + o, (size_t)piece, "file, rank %d's part at %lld",
                               r, (long long)o))
                    break;
            }
        }
        if (fd >= 0)
            close(fd);
        free(chunk);
        free(want);
        unlink(path);
    }
    MPI_Info_free(&info);
}

static void one_capacity(const char *what, const char *persistence, const char *want_tier)
{
    char path[PATH_MAX];
    tt_path(path, sizeof path, "capacity.dat");
    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, "tierio_agg_strategy", "tapioca");
    tt_info_set(info, "tierio_agg_buffer_size", "32Mi");
    tt_info_set(info, "tierio_agg_persistence", persistence);
    const int64_t per = 3 << 20;
    uint8_t *data = malloc(per), *back = calloc(1, per);
    tt_fill(data, per, (uint64_t)tt_rank + 11, 0);
    tio_agg_t a;
    TT_MPI(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a));
    MPI_Offset off = (MPI_Offset)tt_rank * per, len = per;
    int id;
    TT_MPI(tio_agg_declare(a, 1, &off, &len, &id));
    MPI_Info used;
    TT_MPI(tio_agg_get_info(a, &used));
    const char *tiers = tt_info_get(used, "tierio_agg_aggregator_tiers");
    TT_CHECK(tiers && !strcmp(tiers, want_tier), "%s: aggregation on \"%s\", \"%s\" expected",
             what, tiers ? tiers : "(none)", want_tier);
    MPI_Info_free(&used);
    TT_MPI(tio_agg_write(a, id, data));
    TT_MPI(tio_agg_read(a, id, back));
    tt_compare(back, data, per, "%s: read back", what);
    TT_MPI(tio_agg_close(&a));
    if (tt_rank == 0)
        unlink(path);
    free(data);
    free(back);
    MPI_Info_free(&info);
}

static void capacity(void)
{
    char nl[PATH_MAX], site[PATH_MAX];
    tt_path(nl, sizeof nl, "nodelocal");
    if (tt_rank == 0)
        mkdir(nl, 0755);
    snprintf(site, sizeof site, "%s/site.conf", tt_dir);
    if (tt_rank == 0) {
        FILE *f = fopen(site, "w");
        fprintf(f, "[network]\nlatency = 20us\nbandwidth = 2GB/s\nnode_latency = 1us\n"
                   "node_bandwidth = 10GB/s\n[tier dram]\nkind = dram\nlatency = 100ns\n"
                   "bandwidth = 20GB/s\ncapacity = 32MiB\n[tier ssd]\nkind = node-local\n"
                   "path = %s\nlatency = 50us\nread_bandwidth = 2GB/s\n"
                   "write_bandwidth = 1GB/s\ncapacity = 1GiB\n", nl);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    setenv("TIERIO_SITE", site, 1);
    /* 2 x 32 MiB do not fit in 32 MiB of DRAM: node-local storage. */
    one_capacity("capacity", "none", "ssd");
    /* Persistence: DRAM never qualifies. */
    one_capacity("persistence", "job", "ssd");
    /* The default strategy on DRAM: refused, nothing left. */
    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, "tierio_agg_buffer_size", "32Mi");
    char path[PATH_MAX];
    tt_path(path, sizeof path, "refused.dat");
    tio_agg_t a;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a);
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len;
    MPI_Error_string(rc, msg, &len);
    TT_CHECK(rc != MPI_SUCCESS && strstr(msg, "tier \"dram\"") && strstr(msg, "available"),
             "64 MiB of buffers in 32 MiB of DRAM: rc %d, \"%s\"", rc, msg);
    TT_CHECK(!tt_exists(path), "the failed open left %s", path);
    TT_CHECK(tc_count_entries(nl) == 0, "the failed open left files in %s", nl);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0) {
        rmdir(nl);
        unlink(site);
    }
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "agg_memory");
    static const struct option opts[] = {{"rounds", required_argument, NULL, 'r'},
                                         {"capacity", no_argument, NULL, 'c'},
                                         {NULL, 0, NULL, 0}};
    int did = 0;
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1; did++) {
        if (c == 'r')
            rounds(atol(optarg));
        else if (c == 'c')
            capacity();
        else
            TT_DIE("usage: test_agg_memory [--rounds MiB] [--capacity]");
    }
    if (!did)
        TT_DIE("usage: test_agg_memory [--rounds MiB] [--capacity]");
    return tt_finish();
}
