/* memory_conscious on an emulated cluster whose nodes have different memory limits
 * (tio-cluster --node-mem-limit with a list): every rank holds `--data` MiB, writes a
 * contiguous and an interleaved access through the C API and one collective call through
 * the MPI-IO route, and reads them back; the file and the reads are checked byte for byte.
 *
 *   -d MiB         data per rank (16)
 *   -m SIZE        tierio_agg_mc_min_memory (16Mi)
 *   -p BYTES       nodes whose memory cgroup limit is below BYTES must host no aggregator
 *                  (their data goes elsewhere), unless every node is below it: then exactly
 *                  one aggregator aggregates everything with the buffers its node affords
 *                  (tierio_agg_mc_short_of_memory says so).
 * Every rank's peak resident memory is printed next to its node's limit (a process over
 * the limit would have been killed: the run would fail). */
#include "agg_test.h"

#include <getopt.h>

/* This process's memory cgroup limit (v1 or v2), or INT64_MAX. */
static int64_t cgroup_limit(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[1024], path[1400];
    int64_t limit = INT64_MAX;
    while (f && fgets(line, sizeof line, f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        c2[strcspn(c2, "\n")] = 0;
        int v1 = strstr(c1, "memory") && strstr(c1, "memory") < c2;
        if (!v1 && strncmp(line, "0::", 3))
            continue;
        snprintf(path, sizeof path, v1 ? "/sys/fs/cgroup/memory%s/memory.limit_in_bytes"
                                       : "/sys/fs/cgroup%s/memory.max", c2 + 1);
        FILE *g = fopen(path, "re");
        long long v;
        if (g && fscanf(g, "%lld", &v) == 1 && v > 0 && v < limit)
            limit = v;
        if (g)
            fclose(g);
    }
    if (f)
        fclose(f);
    return limit;
}

/* The ranks listed in info key (a comma-separated list of "rank" or "rank:..."). */
static int listed(MPI_Info info, const char *key, int *ranks, int max)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0, n = 0;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
    for (const char *p = flag ? v : ""; *p && n < max;) {
        ranks[n++] = atoi(p);
        p = strchr(p, ',');
        p = p ? p + 1 : "";
    }
    return n;
}

static long info_long(MPI_Info info, const char *key)
{
    char v[64];
    int flag = 0;
    MPI_Info_get(info, key, sizeof v - 1, v, &flag);
    return flag ? atol(v) : -1;
}

/* The aggregators of handle a (or file fh) sit on nodes above `poor`, or are one. */
static void check_placement(MPI_Info used, const int64_t *limit, int64_t poor, int all_poor,
                            const char *what)
{
    int ranks[256], n = listed(used, "tierio_agg_mc_buffers", ranks, 256);
    if (tt_rank == 0) { /* what it measured and chose, for the log */
        char v[MPI_MAX_INFO_VAL + 1] = "", b[MPI_MAX_INFO_VAL + 1] = "";
        int flag;
        MPI_Info_get(used, "tierio_agg_mc_node_memory", MPI_MAX_INFO_VAL, v, &flag);
        MPI_Info_get(used, "tierio_agg_mc_buffers", MPI_MAX_INFO_VAL, b, &flag);
        printf("%s: node memory for aggregation/available %s; buffers %s\n", what, v, b);
    }
    TT_CHECK(n >= 1, "%s: no aggregator reported", what);
    if (all_poor) {
        TT_CHECK(n == 1, "%s: every node short of memory, %d aggregators (1 expected)", what, n);
        TT_CHECK(info_long(used, "tierio_agg_mc_short_of_memory") >= 1,
                 "%s: tierio_agg_mc_short_of_memory does not say so", what);
    }
    for (int i = 0; i < n && !all_poor; i++)
        TT_CHECK(limit[ranks[i]] >= poor, "%s: rank %d aggregates on a node limited to %lld "
                 "bytes (below %lld)", what, ranks[i], (long long)limit[ranks[i]],
                 (long long)poor);
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "agg_mc_nodes");
    long mib = 16;
    int64_t poor = 0;
    const char *min_memory = "16Mi";
    int opt;
    while ((opt = getopt(argc, argv, "d:m:p:")) != -1)
        if (opt == 'd')
            mib = atol(optarg);
        else if (opt == 'm')
            min_memory = optarg;
        else if (opt == 'p')
            poor = atoll(optarg);
    const int64_t per = (int64_t)mib << 20;
    int64_t mine = cgroup_limit(), *limit = malloc(sizeof *limit * (size_t)tt_size);
    MPI_Allgather(&mine, 1, MPI_INT64_T, limit, 1, MPI_INT64_T, MPI_COMM_WORLD);
    int all_poor = 1;
    for (int r = 0; r < tt_size; r++)
        all_poor &= limit[r] < poor;

    /* Access 1: rank r's block at r * per. Access 2: 64 KiB pieces, round robin. */
    uint8_t *data = malloc((size_t)per), *back = malloc((size_t)per);
    if (!data || !back)
        TT_DIE("out of memory for %ld MiB", mib);
    const int64_t piece = 64 << 10, npieces = per / piece;
    MPI_Offset off1 = tt_rank * per, len1 = per;
    MPI_Offset *off2 = malloc(sizeof *off2 * (size_t)npieces),
               *len2 = malloc(sizeof *len2 * (size_t)npieces);
    for (int64_t i = 0; i < npieces; i++) {
        off2[i] = (int64_t)tt_size * per + (i * tt_size + tt_rank) * piece;
        len2[i] = piece;
    }
    char path[PATH_MAX];
    tt_path(path, sizeof path, "mc_nodes.dat");
    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, "tierio_agg_strategy", "memory_conscious");
    tt_info_set(info, "tierio_agg_mc_write_message", "8Mi");
    tt_info_set(info, "tierio_agg_mc_read_message", "8Mi");
    tt_info_set(info, "tierio_agg_mc_min_memory", min_memory);
    tio_agg_t a;
    TT_MPI(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a));
    int id1, id2;
    TT_MPI(tio_agg_declare(a, 1, &off1, &len1, &id1));
    TT_MPI(tio_agg_declare(a, (int)npieces, off2, len2, &id2));
    for (int pass = 0; pass < 2; pass++) {
        tt_fill(data, (size_t)per, (uint64_t)tt_rank * 2 + (uint64_t)pass + 11, 0);
        TT_MPI(tio_agg_write(a, pass ? id2 : id1, data));
        TT_MPI(tio_agg_sync(a));
        memset(back, 0, (size_t)per);
        TT_MPI(tio_agg_read(a, pass ? id2 : id1, back));
        tt_compare(back, data, (size_t)per, "read back of access %d", pass + 1);
    }
    MPI_Info used;
    TT_MPI(tio_agg_get_info(a, &used));
    check_placement(used, limit, poor, all_poor, "C API");
    MPI_Info_free(&used);
    TT_MPI(tio_agg_close(&a));
    /* The file, byte for byte: every rank checks its two accesses (the second pass of
     * each rank wrote access 2 with seed rank * 2 + 12; access 1 holds the first pass). */
    tt_fill(data, (size_t)per, (uint64_t)tt_rank * 2 + 11, 0);
    tt_check_file(path, (uint64_t)off1, data, (size_t)per, "access 1 in the file");
    tt_fill(data, (size_t)per, (uint64_t)tt_rank * 2 + 12, 0);
    int fd = open(path, O_RDONLY);
    for (int64_t i = 0; fd >= 0 && i < npieces; i++)
        if (pread(fd, back + i * piece, (size_t)piece, off2[i]) != piece)
            TT_CHECK(0, "short read of access 2's piece %lld", (long long)i);
    if (fd >= 0)
        close(fd);
    tt_compare(back, data, (size_t)per, "access 2 in the file");

    /* The MPI-IO route: one collective write and read of access 1 again. */
    MPI_File fh;
    tt_info_set(info, "tierio_agg", "enable");
    TT_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
    tt_fill(data, (size_t)per, (uint64_t)tt_rank + 99, 0);
    TT_MPI(MPI_File_write_at_all(fh, off1, data, (int)per, MPI_BYTE, MPI_STATUS_IGNORE));
    TT_MPI(MPI_File_sync(fh));
    memset(back, 0, (size_t)per);
    TT_MPI(MPI_File_read_at_all(fh, off1, back, (int)per, MPI_BYTE, MPI_STATUS_IGNORE));
    tt_compare(back, data, (size_t)per, "MPI-IO route read back");
    TT_MPI(MPI_File_get_info(fh, &used));
    TT_CHECK(info_long(used, "tierio_agg_collective_calls") >= 1,
             "the MPI-IO route served no call: libtierio-pmpi not loaded?");
    check_placement(used, limit, poor, all_poor, "MPI-IO route");
    MPI_Info_free(&used);
    TT_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);

    long kb = at_status_kb("VmHWM"), most = 0;
    MPI_Reduce(&kb, &most, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    printf("rank %d: peak resident %ld KiB, node limit %lld bytes%s\n", tt_rank, kb,
           (long long)mine, mine < poor ? " (short of memory)" : "");
    if (tt_rank == 0)
        printf("largest peak resident: %ld KiB\n", most);
    free(data);
    free(back);
    free(off2);
    free(len2);
    free(limit);
    return tt_finish();
}
