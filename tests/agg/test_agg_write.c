/* The aggregation engine through its C API (seed 002 Algorithm 2): every strategy x target
 * x buffer count, with fixed, uniform-random and normal sizes per process (one process
 * with nothing), buffers alternately in DRAM and on node-local storage. Per case: a 1D
 * array (one piece per process) and a strided access (many pieces per process, holes
 * between), written, checked byte for byte in the target (the shared file, or the data
 * files its manifest names), read back, rewritten in place with other data, checked and
 * read again, and read by a second, read-only handle. Nothing may be left behind but the
 * data.
 *
 *   test_agg_write [--cluster] [--max BYTES] [--only STRATEGY]
 * --cluster: on the emulated cluster (node-local storage is $TIERIO_NODE_LOCAL, one
 * aggregator per node); else one node, two aggregators. */
#include "agg_test.h"

#include <getopt.h>

static int64_t g_max = 100 * 1000;
static int g_cluster;
static const char *g_only;
static char g_nodelocal[PATH_MAX];

/* Access B: every process has `k` pieces of 1..max/k bytes, interleaved with the others'
 * and with holes, starting at base. Fills offs/sizes of rank r; returns the extent end. */
static int64_t strided(int r, int n, int64_t max, int64_t base, uint64_t seed,
                       MPI_Offset *offs, MPI_Offset *sizes, int *k)
{
    const int pieces = 5;
    uint64_t s = seed;
    int64_t off = base;
    *k = 0;
    for (int j = 0; j < pieces; j++)
        for (int q = 0; q < n; q++) {
            int64_t len = (int64_t)(at_next(&s) % (uint64_t)(max / pieces + 1));
            int64_t hole = (int64_t)(at_next(&s) % 4096);
            if (q == 1 && n > 1)
                len = 0; /* the process with nothing */
            if (q == r && len > 0) {
                offs[*k] = off;
                sizes[*k] = len;
                (*k)++;
            }
            off += len + hole;
        }
    return off;
}

/* The bytes of rank r's buffer for version v of an access. */
static void fill(uint8_t *buf, int64_t len, int r, int access, int v)
{
    tt_fill(buf, (size_t)len, (uint64_t)(1000 * v + 10 * access + r) + 7, 0);
}

/* Put rank r's pieces into the image. */
static void paint(struct at_image *im, int r, const MPI_Offset *offs, const MPI_Offset *sizes,
                  int k, int access, int v)
{
    int64_t total = 0;
    for (int i = 0; i < k; i++)
        total += sizes[i];
    uint8_t *b = malloc((size_t)total + 1);
    fill(b, total, r, access, v);
    int64_t m = 0;
    for (int i = 0; i < k; i++) {
        memcpy(im->bytes + offs[i], b + m, (size_t)sizes[i]);
        memset(im->set + offs[i], 1, (size_t)sizes[i]);
        m += sizes[i];
    }
    free(b);
}

static void info_check(tio_agg_t a, const char *what, const char *strategy, const char *tier,
                       int naggs)
{
    MPI_Info used;
    TT_MPI(tio_agg_get_info(a, &used));
    const char *v = tt_info_get(used, "tierio_agg_strategy");
    TT_CHECK(v && !strcmp(v, strategy), "%s: strategy %s in effect, %s asked", what,
             v ? v : "(none)", strategy);
    v = tt_info_get(used, "tierio_agg_aggregator_ranks");
    int commas = 0;
    for (const char *c = v ? v : ""; *c; c++)
        commas += *c == ',';
    TT_CHECK(v && commas + 1 == naggs, "%s: aggregators \"%s\", %d expected", what,
             v ? v : "(none)", naggs);
    v = tt_info_get(used, "tierio_agg_aggregator_tiers");
    char want[256] = "";
    for (int i = 0; i < naggs; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "," : "", tier);
    TT_CHECK(v && !strcmp(v, want), "%s: aggregator tiers \"%s\", \"%s\" expected", what,
             v ? v : "(none)", want);
    MPI_Info_free(&used);
}

static void run_case(const char *strategy, const char *target, int nbuf, enum at_dist dist,
                     const char *tier, int naggs, int case_no)
{
    char what[160], path[PATH_MAX];
    snprintf(what, sizeof what, "%s/%s/%d buffers/%s/%s", strategy, target, nbuf,
             at_dist_name[dist], tier);
    snprintf(path, sizeof path, "%s/case%d.dat", tt_dir, case_no);

    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, "tierio_agg_strategy", strategy);
    tt_info_set(info, "tierio_agg_target", target);
    tt_info_setf(info, "tierio_agg_buffer_count", "%d", nbuf);
    tt_info_set(info, "tierio_agg_buffer_size", "16384"); /* many rounds */
    tt_info_set(info, "tierio_agg_tier", tier);
    if (!strcmp(strategy, "memory_conscious")) { /* many file domains, many rounds, and
                                                     two aggregators per node */
        tt_info_set(info, "tierio_agg_mc_write_message", "16384");
        tt_info_set(info, "tierio_agg_mc_read_message", "32768");
        tt_info_set(info, "tierio_agg_mc_per_node", "2");
    }
    if (!g_cluster)
        tt_info_setf(info, "tierio_agg_aggregators", "%d", naggs);
    /* Reads: every other case aggregates them all; the others keep the default (auto),
     * where the 1D array, whose pieces do not interleave, is read by each process from the
     * shared file (target file) and the strided access is aggregated. */
    const int aggregate_reads = case_no % 2;
    if (aggregate_reads)
        tt_info_set(info, "tierio_agg_read", "aggregate");

    /* Access A: the 1D array. */
    int64_t *sz = calloc((size_t)tt_size, sizeof *sz);
    at_sizes(dist, g_max, tt_size, 1234 + (uint64_t)case_no, sz);
    MPI_Offset offA = 0, lenA = sz[tt_rank];
    int64_t extA = 0;
    for (int r = 0; r < tt_size; r++) {
        if (r == tt_rank)
            offA = extA;
        extA += sz[r];
    }
    /* Access B: strided, after A. */
    int maxk = 5 * tt_size;
    MPI_Offset *offB = malloc(sizeof *offB * (size_t)maxk),
               *lenB = malloc(sizeof *lenB * (size_t)maxk);
    int kB;
    int64_t extB = strided(tt_rank, tt_size, g_max, extA + 777, 99 + (uint64_t)case_no, offB,
                           lenB, &kB);
    int64_t myB = 0;
    for (int i = 0; i < kB; i++)
        myB += lenB[i];

    struct at_image im = {calloc((size_t)extB, 1), calloc((size_t)extB, 1), extB};
    for (int version = 1; version <= 2; version++) {
        memset(im.set, 0, (size_t)extB);
        for (int r = 0; r < tt_size; r++) {
            MPI_Offset o = 0, l = sz[r], ob[5 * 64], lb[5 * 64];
            for (int q = 0; q < r; q++)
                o += sz[q];
            paint(&im, r, &o, &l, 1, 0, version);
            int k;
            strided(r, tt_size, g_max, extA + 777, 99 + (uint64_t)case_no, ob, lb, &k);
            paint(&im, r, ob, lb, k, 1, version);
        }
    }

    tio_agg_t a;
    TT_MPI(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a));
    int idA, idB;
    TT_MPI(tio_agg_declare(a, lenA ? 1 : 0, &offA, &lenA, &idA));
    TT_MPI(tio_agg_declare(a, kB, offB, lenB, &idB));
    TT_CHECK(idA == 0 && idB == 1, "%s: ids %d %d", what, idA, idB);
    /* Subfiles and node-local storage: each node's group has its own aggregators. */
    /* memory_conscious on the cluster: the 2 per node asked (memory is plentiful). */
    int per_group = !strcmp(strategy, "memory_conscious") ? 2 : 1;
    int nnodes = g_cluster ? naggs : 1, ppn = tt_size / nnodes;
    int want = g_cluster && strcmp(target, "file") ? (per_group < ppn ? per_group : ppn)
               : g_cluster ? nnodes * (per_group < ppn ? per_group : ppn)
                           : naggs;
    info_check(a, what, strategy, tier[0] == 'a' ? "dram" : tier, want);

    uint8_t *bufA = malloc((size_t)lenA + 1), *bufB = malloc((size_t)myB + 1);
    uint8_t *inA = malloc((size_t)lenA + 1), *inB = malloc((size_t)myB + 1);
    for (int version = 1; version <= 2; version++) {
        fill(bufA, lenA, tt_rank, 0, version);
        fill(bufB, myB, tt_rank, 1, version);
        TT_MPI(tio_agg_write(a, idA, bufA));
        TT_MPI(tio_agg_write(a, idB, bufB));
        TT_MPI(tio_agg_sync(a));
        if (version == 2) { /* the image holds version 2 */
            int64_t want = 0, got;
            for (int64_t x = 0; x < extB; x++)
                want += im.set[x];
            got = at_check_target(path, target, g_nodelocal, &im, what);
            TT_CHECK(got == want, "%s: %lld bytes checked in the target, %lld written", what,
                     (long long)got, (long long)want);
        }
        memset(inA, 0, (size_t)lenA + 1);
        memset(inB, 0, (size_t)myB + 1);
        TT_MPI(tio_agg_read(a, idB, inB));
        TT_MPI(tio_agg_read(a, idA, inA));
        tt_compare(inA, bufA, (size_t)lenA, "%s: read of the 1D array, version %d", what,
                   version);
        tt_compare(inB, bufB, (size_t)myB, "%s: read of the strided access, version %d", what,
                   version);
    }
    MPI_Info used;
    TT_MPI(tio_agg_get_info(a, &used));
    const char *v = tt_info_get(used, "tierio_agg_independent_reads");
    /* A never interleaves; B does when two processes have pieces in it: with two
     * processes only rank 0 has (rank 1 is the process with nothing) */
    long own = v ? atol(v) : -1,
         want_own = !aggregate_reads && !strcmp(target, "file") ? 2 + 2 * (tt_size <= 2) : 0;
    TT_CHECK(own == want_own, "%s: %ld reads made by the processes themselves, %ld expected "
             "(tierio_agg_read=%s)", what, own, want_own, aggregate_reads ? "aggregate" : "auto");
    if (!strcmp(strategy, "memory_conscious")) {
        /* What it chose is reported: groups and file domains of the last access (B; none
         * when this process's group had no data in it), and every aggregator's buffers. */
        char groups[64] = "", doms[MPI_MAX_INFO_VAL] = "", bufs[MPI_MAX_INFO_VAL] = "";
        const char *g = tt_info_get(used, "tierio_agg_mc_groups");
        snprintf(groups, sizeof groups, "%s", g ? g : "");
        const char *d = tt_info_get(used, "tierio_agg_mc_domains");
        snprintf(doms, sizeof doms, "%s", d ? d : "");
        const char *b = tt_info_get(used, "tierio_agg_mc_buffers");
        snprintf(bufs, sizeof bufs, "%s", b ? b : "");
        TT_CHECK((atoi(groups) >= 1) == (strchr(doms, '@') != NULL) && strchr(bufs, ':') &&
                     (atoi(groups) >= 1 || (g_cluster && strcmp(target, "file"))),
                 "%s: groups '%s', domains '%s', buffers '%s'", what, groups, doms, bufs);
    }
    MPI_Info_free(&used);
    TT_MPI(tio_agg_close(&a));
    TT_CHECK(a == NULL, "%s: tio_agg_close left the handle", what);

    /* A second handle, read-only, finds the data (node-local: the same nodes). */
    MPI_Info_delete(info, "tierio_agg_buffer_count");
    TT_MPI(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &a));
    TT_MPI(tio_agg_declare(a, kB, offB, lenB, &idB));
    memset(inB, 0, (size_t)myB + 1);
    TT_MPI(tio_agg_read(a, idB, inB));
    tt_compare(inB, bufB, (size_t)myB, "%s: read by a new read-only handle", what);
    TT_MPI(tio_agg_close(&a));

    at_remove_data(path, target, g_nodelocal);
    /* Nothing else: no buffer file on node-local storage, no temporary manifest. */
    int left = tc_count_entries(g_nodelocal);
    TT_CHECK(left == 0, "%s: %d entries left in %s", what, left, g_nodelocal);
    if (tt_rank == 0) {
        int n = tc_count_entries(tt_dir);
        TT_CHECK(n == 1 + !g_cluster, "%s: %d entries in %s (site file%s expected)", what, n,
                 tt_dir, g_cluster ? "" : " and nodelocal");
    }
    MPI_Info_free(&info);
    free(sz);
    free(offB);
    free(lenB);
    free(im.bytes);
    free(im.set);
    free(bufA);
    free(bufB);
    free(inA);
    free(inB);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Subfiles are read by the groups that wrote them: a process asking for bytes another
 * node's group wrote gets an error (every process of its group), and nothing hangs. */
/* rc must be an error whose message holds want. */
static void expect_error(int rc, const char *want, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int l;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &l);
    TT_CHECK(rc != MPI_SUCCESS && strstr(msg, want), "%s: rc %d, \"%s\" (\"%s\" expected)",
             what, rc, msg, want);
}

static void cross_group_read(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cross.dat", tt_dir);
    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, "tierio_agg_target", "subfiles");
    MPI_Comm node;
    int nsize;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    const MPI_Offset len = 4096;
    MPI_Offset mine = tt_rank * len, other = ((tt_rank + nsize) % tt_size) * len;
    uint8_t buf[4096];
    tt_fill(buf, sizeof buf, 5, 0);
    tio_agg_t a;
    int w, r;
    TT_MPI(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a));
    TT_MPI(tio_agg_declare(a, 1, &mine, &len, &w));
    TT_MPI(tio_agg_declare(a, 1, &other, &len, &r));
    TT_MPI(tio_agg_write(a, w, buf));
    /* Before a sync a group does not know what the others wrote: never written, to it. */
    expect_error(tio_agg_read(a, r, buf), "were never written",
                 "reading another node's subfile before a sync");
    TT_MPI(tio_agg_sync(a));
    expect_error(tio_agg_read(a, r, buf), "another group of nodes",
                 "reading another node's subfile");
    TT_MPI(tio_agg_read(a, w, buf)); /* the handle still works */
    TT_MPI(tio_agg_close(&a));
    at_remove_data(path, "subfiles", g_nodelocal);
    MPI_Info_free(&info);
}

/* The value of key in a's info, as a number (-1 when absent). */
static long info_num(tio_agg_t a, const char *key)
{
    MPI_Info info;
    char v[64];
    int flag = 0;
    TT_MPI(tio_agg_get_info(a, &info));
    MPI_Info_get(info, key, sizeof v - 1, v, &flag);
    MPI_Info_free(&info);
    return flag ? atol(v) : -1;
}

/* Bytes of rank r in local_domains' 1D array. */
static int64_t domains_len(int r)
{
    return r == 0 ? 30011 : 20011 + 1013 * (r % 3);
}

static const char *info_str(tio_agg_t a, const char *key, char *v, int len)
{
    MPI_Info info;
    int flag = 0;
    TT_MPI(tio_agg_get_info(a, &info));
    MPI_Info_get(info, key, len - 1, v, &flag);
    MPI_Info_free(&info);
    return flag ? v : "";
}

/* Write access id (k pieces) of version v and paint every process's into the image. */
static void write_version(tio_agg_t a, int id, struct at_image *im, int k_max,
                          void (*pieces)(int r, MPI_Offset *o, MPI_Offset *l, int *k),
                          int access, int v)
{
    MPI_Offset *o = malloc(sizeof *o * (size_t)k_max), *l = malloc(sizeof *l * (size_t)k_max);
    int k;
    int64_t mine = 0;
    pieces(tt_rank, o, l, &k);
    for (int i = 0; i < k; i++)
        mine += l[i];
    uint8_t *buf = malloc((size_t)mine + 1);
    fill(buf, mine, tt_rank, access, v);
    TT_MPI(tio_agg_write(a, id, buf));
    for (int r = 0; r < tt_size; r++) {
        pieces(r, o, l, &k);
        paint(im, r, o, l, k, access, v);
    }
    free(buf);
    free(o);
    free(l);
}

/* Access A: the 1D array of domains_len; C: three 1000-byte blocks per process after it,
 * round robin over the processes (every node's data interleave with the others'). */
static void pieces_a(int r, MPI_Offset *o, MPI_Offset *l, int *k)
{
    o[0] = 0;
    for (int q = 0; q < r; q++)
        o[0] += domains_len(q);
    l[0] = domains_len(r);
    *k = 1;
}

static int64_t total_a(void)
{
    int64_t t = 0;
    for (int r = 0; r < tt_size; r++)
        t += domains_len(r);
    return t;
}

static void pieces_c(int r, MPI_Offset *o, MPI_Offset *l, int *k)
{
    for (int j = 0; j < 3; j++) {
        o[j] = total_a() + ((int64_t)j * tt_size + r) * 1000;
        l[j] = 1000;
    }
    *k = 3;
}

/* Domains and synchronisation on the emulated cluster. A (a 1D array whose node totals put
 * balanced boundaries inside nodes) and B (the same bytes in equal shares) are declared
 * with tierio_agg_domains = local (the default) and = balanced, and A written three times,
 * byte for byte. local: both have domains by node (nothing crosses between nodes), are
 * declared within the nodes and checked among all in the background, and the calls
 * synchronise within nodes; balanced: a round crosses nodes, calls synchronise among all.
 * Between the versions processes pass different accesses: (v 1) the first node's
 * processes B, the others A; (v 2) rank 1 alone B. balanced: every process gets the error
 * at once. local: the processes of a node whose processes differ get it at once (v 2,
 * when rank 1 has a neighbour), every other process at the next tio_agg_sync. None hangs,
 * and the handle still writes. Then (local) an access C whose nodes' data interleave is
 * declared: its first write is made within the nodes (right, byte for byte), its check
 * finds the interleaving at the next call, and from then on the calls synchronise among
 * all: A and C again, byte for byte. */
static void local_domains(void)
{
    /* tio-cluster places ranks in blocks of a node's */
    MPI_Comm node;
    int nsize;
    char v1[128], v2[128], v3[128];
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    const char *modes[] = {"local", "balanced"};
    for (int m = 0; m < 2; m++) {
        const int local = m == 0;
        char path[PATH_MAX], what[64];
        snprintf(path, sizeof path, "%s/domains_%s.dat", tt_dir, modes[m]);
        snprintf(what, sizeof what, "domains %s", modes[m]);
        int64_t total = total_a(), extent = total + 3 * 1000 * (int64_t)tt_size;
        MPI_Offset off, len;
        int k;
        pieces_a(tt_rank, &off, &len, &k);
        /* Access B: the same bytes in equal shares (another plan), to be passed wrongly. */
        MPI_Offset share = total / tt_size, boff = share * tt_rank,
                   blen = tt_rank == tt_size - 1 ? total - boff : share;
        MPI_Info info;
        TT_MPI(MPI_Info_create(&info));
        tt_info_set(info, "tierio_agg_domains", modes[m]);
        struct at_image im = {calloc((size_t)extent, 1), calloc((size_t)extent, 1), extent};
        tio_agg_t a;
        int A, B, C;
        TT_MPI(tio_agg_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &a));
        TT_MPI(tio_agg_declare(a, 1, &boff, &blen, &B));
        TT_MPI(tio_agg_declare(a, 1, &off, &len, &A));
        long cross = info_num(a, "tierio_agg_cross_node_rounds");
        info_str(a, "tierio_agg_domains_by_node", v1, sizeof v1);
        info_str(a, "tierio_agg_sync_scope", v2, sizeof v2);
        info_str(a, "tierio_agg_declared_within", v3, sizeof v3);
        if (local)
            TT_CHECK(cross == 0 && !strcmp(v1, "true") && !strcmp(v2, "node") &&
                     !strncmp(v3, "node", 4), "%s: %ld rounds cross nodes, by node %s, "
                     "synchronised within %s, declared within %s (0, true, node, node "
                     "expected)", what, cross, v1, v2, v3);
        else
            TT_CHECK(cross == 1 && !strcmp(v1, "false") && !strcmp(v2, "all") &&
                     !strcmp(v3, "all"), "%s: %ld rounds cross nodes, by node %s, "
                     "synchronised within %s, declared within %s (1, false, all, all "
                     "expected)", what, cross, v1, v2, v3);
        uint8_t *junk = calloc((size_t)blen + 1, 1), *bufa = malloc((size_t)len + 1);
        for (int v = 1; v <= 3; v++) {
            write_version(a, A, &im, 1, pieces_a, 7, v);
            TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
            TT_CHECK(at_check_target(path, "file", NULL, &im, what) == total,
                     "%s: version %d not all checked", what, v);
            if (v == 3)
                break;
            /* Different accesses (v 1: the first node's processes B; v 2: rank 1 alone, a
             * neighbour of rank 0 when nodes have two). */
            int other = v == 1 ? tt_rank < nsize : tt_rank == 1;
            fill(bufa, len, tt_rank, 7, v);
            int rc = tio_agg_write(a, other ? B : A, other ? junk : bufa);
            int at_once = !local || (v == 2 && nsize > 1 && tt_rank < nsize);
            if (at_once)
                expect_error(rc, "different accesses", what);
            else
                TT_CHECK(rc == MPI_SUCCESS, "%s: version %d: the processes of this node "
                         "passed the same access, rc %d", what, v, rc);
            rc = tio_agg_sync(a);
            if (at_once)
                TT_CHECK(rc == MPI_SUCCESS, "%s: version %d: sync after a failure seen, rc "
                         "%d", what, v, rc);
            else
                expect_error(rc, "different accesses", what);
        }
        free(junk);
        if (local) {
            /* A declaration with a bad argument on the second node's first process: it gets
             * the error at once, every other process an id (a declaration within the node
             * is local until the access's first call); the check (at the second call
             * after) fails the access everywhere, ids stay alike. */
            MPI_Offset doff = tt_rank == nsize ? -1 : off, dlen = len;
            int D = -1;
            int rc = tio_agg_declare(a, 1, &doff, &dlen, &D);
            if (tt_rank == nsize)
                expect_error(rc, "not a range of a file", what);
            else
                TT_CHECK(rc == MPI_SUCCESS && D == 2, "%s: declaration on a good process: rc %d, "
                         "id %d (2 expected)", what, rc, D);
            write_version(a, A, &im, 1, pieces_a, 7, 11);
            write_version(a, A, &im, 1, pieces_a, 7, 12);
            fill(bufa, len, tt_rank, 7, 12);
            expect_error(tio_agg_write(a, 2, bufa), "declar", what);
            TT_CHECK(tio_agg_sync(a) == MPI_SUCCESS, "%s: sync after failures seen", what);
            info_str(a, "tierio_agg_declared_within", v3, sizeof v3);
            TT_CHECK(!strcmp(v3, "all"), "%s: the last access checked among all after a "
                     "sync: declared within \"%s\"", what, v3);
            MPI_Offset co[3], cl[3];
            pieces_c(tt_rank, co, cl, &k);
            TT_MPI(tio_agg_declare(a, 3, co, cl, &C));
            /* Its first write: within the nodes (its check is not concluded yet). */
            write_version(a, C, &im, 3, pieces_c, 8, 1);
            info_str(a, "tierio_agg_sync_scope", v2, sizeof v2);
            TT_CHECK(!strcmp(v2, "node"), "%s: synchronised within %s before C's check", what,
                     v2);
            TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
            TT_CHECK(at_check_target(path, "file", NULL, &im, what) == extent,
                     "%s: C's first version not all checked", what);
            /* The next call concludes C's check: calls among all from then on. */
            write_version(a, A, &im, 1, pieces_a, 7, 4);
            info_str(a, "tierio_agg_domains_by_node", v1, sizeof v1);
            info_str(a, "tierio_agg_sync_scope", v2, sizeof v2);
            cross = info_num(a, "tierio_agg_cross_node_rounds");
            TT_CHECK(!strcmp(v1, "false") && !strcmp(v2, "all") && cross > 0,
                     "%s: C after its check: by node %s, synchronised within %s, %ld rounds "
                     "cross nodes (false, all, > 0 expected)", what, v1, v2, cross);
            write_version(a, C, &im, 3, pieces_c, 8, 2);
            TT_MPI(tio_agg_sync(a));
            TT_CHECK(at_check_target(path, "file", NULL, &im, what) == extent,
                     "%s: A and C among all not all checked", what);
        }
        free(bufa);
        TT_MPI(tio_agg_close(&a));
        TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
        if (tt_rank == 0)
            unlink(path);
        free(im.bytes);
        free(im.set);
        MPI_Info_free(&info);
    }
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "agg_write");
    static const struct option opts[] = {{"cluster", no_argument, NULL, 'c'},
                                         {"max", required_argument, NULL, 'm'},
                                         {"only", required_argument, NULL, 'o'},
                                         {NULL, 0, NULL, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == 'c')
            g_cluster = 1;
        else if (c == 'm')
            g_max = atoll(optarg);
        else if (c == 'o')
            g_only = optarg;
        else
            TT_DIE("usage: test_agg_write [--cluster] [--max BYTES] [--only STRATEGY]");
    }
    if (g_cluster) {
        const char *nl = getenv("TIERIO_NODE_LOCAL");
        if (!nl)
            TT_DIE("--cluster needs TIERIO_NODE_LOCAL (run it with tio-cluster)");
        snprintf(g_nodelocal, sizeof g_nodelocal, "%s", nl);
    } else {
        snprintf(g_nodelocal, sizeof g_nodelocal, "%s/nodelocal", tt_dir);
        if (tt_rank == 0)
            mkdir(g_nodelocal, 0755);
    }
    setenv("TIERIO_SITE", at_site(tt_dir, g_nodelocal, "1GiB"), 1);
    int nnodes = 1;
    {
        MPI_Comm node;
        int nr;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &nr);
        MPI_Comm_free(&node);
        int lead = nr == 0;
        MPI_Allreduce(&lead, &nnodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    int naggs = g_cluster ? nnodes : (tt_size > 1 ? 2 : 1);

    const char *strategies[] = {"default", "tapioca", "memory_conscious"};
    const char *targets[] = {"file", "subfiles", "node-local"};
    int counts[] = {2, 3};
    int case_no = 0;
    for (int s = 0; s < 3; s++) {
        if (g_only && strcmp(g_only, strategies[s]))
            continue;
        for (int t = 0; t < 3; t++)
            for (int b = 0; b < 2; b++)
                for (int d = 0; d < AT_NDIST; d++) {
                    /* DRAM and node-local storage in turn; tapioca chooses;
                     * memory_conscious aggregates in DRAM. */
                    const char *tier = s == 1 ? "auto" : s == 2 || (b + d) % 2 ? "dram" : "ssd";
                    run_case(strategies[s], targets[t], counts[b], (enum at_dist)d, tier,
                             naggs, case_no++);
                }
    }
    if (g_cluster && (!g_only || !strcmp(g_only, "none"))) {
        cross_group_read();
        local_domains();
    }
    if (tt_rank == 0)
        rmdir(g_nodelocal);
    return tt_finish();
}
