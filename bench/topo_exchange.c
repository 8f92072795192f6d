#define _POSIX_C_SOURCE 200809L
/* Dynamic data exchange through storage (seed 003 §4.4): in every round each process
 * produces one block for a consumer chosen at random (a different one each round), writes
 * it to a file and makes it durable; after a barrier every consumer reads the blocks
 * meant for it, checks every byte, and removes the files.
 *   global           every block goes through the parallel file system (the baseline);
 *   topology_aware   a block whose consumer shares the producer's node-local storage
 *                    (same storage neighbourhood, tio_comm_split_neighborhood) goes
 *                    through that directory, the others through the parallel file system.
 * Both runs use the same producer -> consumer choices: with probability -f the consumer
 * is another process of the producer's neighbourhood, else a process of another one.
 *
 * Output (JSON, rank 0): per method the median round time of the slowest process (the
 * exchange only: making and checking the data and removing the files are not timed), and
 * the ratio to the global run; then the mean time per block exchanged through node-local
 * storage and through the parallel file system (write + fsync by the producer, read by
 * the consumer), measured in the topology-aware run: "exchange time local vs global".
 *
 * Run on the emulated cluster with the shared directory throttled, e.g.
 *   tools/cluster/tio-cluster run --nodes 4 --np 8 --ppn 2 --mpi openmpi \
 *       --pfs-write-bps 200000000 -- build/openmpi/bench/tio-bench-topo-exchange */
#include "bench_common.h"

#include <fcntl.h>
#include <limits.h>
#include <tierio.h>

typedef struct {
    size_t block;
    int rounds;
    double local_fraction;
    const char *pfs, *local;
    unsigned long long seed;
} options;

enum method { M_GLOBAL, M_TOPO, NMETHODS };
static const char *const method_name[NMETHODS] = {"global", "topology_aware"};

static int g_rank, g_size;
static int *g_group;  /* storage neighbourhood (its leader's rank) of every process */
static int *g_choice; /* consumer of every producer in the current round */

static const char *env_or(const char *var, const char *dflt)
{
    const char *v = getenv(var);
    return v && *v ? v : dflt;
}

static options parse(int argc, char **argv)
{
    options o = {.block = 16u << 20, .rounds = 5, .local_fraction = 0.5,
                 .pfs = env_or("TIERIO_PFS", bench_default_dir()),
                 .local = env_or("TIERIO_NODE_LOCAL", "/tmp"), .seed = 42};
    int c;
    while ((c = getopt(argc, argv, "b:R:f:g:l:s:h")) != -1) {
        switch (c) {
        case 'b': o.block = (size_t)bench_parse_u64("-b", optarg); break;
        case 'R': o.rounds = (int)bench_parse_u64("-R", optarg); break;
        case 'f': o.local_fraction = bench_parse_double("-f", optarg); break;
        case 'g': o.pfs = optarg; break;
        case 'l': o.local = optarg; break;
        case 's': o.seed = bench_parse_u64("-s", optarg); break;
        default:
            if (g_rank == 0)
                fprintf(stderr, "usage: %s [-b block bytes] [-R rounds] [-f local fraction] "
                        "[-g pfs dir] [-l node-local dir] [-s seed]\n", argv[0]);
            MPI_Finalize();
            exit(c == 'h' ? 0 : 2);
        }
    }
    if (o.block == 0 || o.rounds < 1 || o.local_fraction < 0 || o.local_fraction > 1)
        bench_die("-b must be > 0, -R >= 1, -f in 0..1");
    return o;
}

/* Every process computes the same choices from (seed, round). */
static void choose(const options *o, int round)
{
    for (int p = 0; p < g_size; p++) {
        uint64_t h = bench_mix64(o->seed * 1000003u + (uint64_t)round * 7919u + (uint64_t)p);
        int same = 0, other = 0;
        for (int q = 0; q < g_size; q++) {
            if (q == p)
                continue;
            if (g_group[q] == g_group[p])
                same++;
            else
                other++;
        }
        int want_local = (double)(h >> 11) / 9007199254740992.0 < o->local_fraction;
        if (!same)
            want_local = 0;
        if (!other)
            want_local = 1;
        int k = (int)((h >> 3) % (uint64_t)(want_local ? same : other));
        for (int q = 0; q < g_size; q++) {
            if (q == p || (g_group[q] == g_group[p]) != want_local)
                continue;
            if (k-- == 0) {
                g_choice[p] = q;
                break;
            }
        }
    }
}

static void block_path(char *out, size_t len, const options *o, int method, int round, int p)
{
    int local = method == M_TOPO && g_group[g_choice[p]] == g_group[p];
    snprintf(out, len, "%s/topo_exchange.r%d.p%d.dat", local ? o->local : o->pfs, round, p);
}

static void fill(unsigned char *b, size_t n, int round, int p)
{
    uint64_t base = bench_mix64(((uint64_t)round << 32) ^ (uint64_t)p);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = bench_mix64(base + i);
        memcpy(b + i, &w, n - i < 8 ? n - i : 8);
    }
}

struct timing {
    double round;        /* slowest process, this round */
    double t[2];         /* this process's seconds on [local, global] blocks */
    long long count[2];  /* blocks written + read */
};

static double now(void) { return MPI_Wtime(); }

/* A round: producers write and sync their blocks, a barrier, consumers read theirs.
 * Timed: that exchange; not timed: making the data, checking it, removing the files. */
static bool one_round(const options *o, int method, int round, unsigned char *buf,
                      unsigned char *want, struct timing *tm)
{
    bool ok = true;
    char path[PATH_MAX];
    choose(o, round);
    int local = method == M_TOPO && g_group[g_choice[g_rank]] == g_group[g_rank];
    block_path(path, sizeof path, o, method, round, g_rank);
    fill(buf, o->block, round, g_rank);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now(), untimed = 0;
    /* produce */
    double a = now();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    SYS_CHECK(fd >= 0, path);
    for (size_t done = 0; done < o->block;) {
        ssize_t w = write(fd, buf + done, o->block - done);
        SYS_CHECK(w > 0, path);
        done += (size_t)w;
    }
    SYS_CHECK(fsync(fd) == 0, path);
    SYS_CHECK(close(fd) == 0, path);
    tm->t[local ? 0 : 1] += now() - a;
    tm->count[local ? 0 : 1]++;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    /* consume */
    for (int p = 0; p < g_size; p++) {
        if (g_choice[p] != g_rank)
            continue;
        int plocal = method == M_TOPO && g_group[p] == g_group[g_rank];
        block_path(path, sizeof path, o, method, round, p);
        a = now();
        fd = open(path, O_RDONLY);
        SYS_CHECK(fd >= 0, path);
        size_t done = 0;
        while (done < o->block) {
            ssize_t r = read(fd, buf + done, o->block - done);
            SYS_CHECK(r >= 0, path);
            if (r == 0)
                break;
            done += (size_t)r;
        }
        close(fd);
        double b = now();
        tm->t[plocal ? 0 : 1] += b - a;
        tm->count[plocal ? 0 : 1]++;
        fill(want, o->block, round, p);
        if (done != o->block || memcmp(buf, want, o->block) != 0) {
            fprintf(stderr, "[rank %d] topo_exchange: block of rank %d, round %d, differs\n",
                    g_rank, p, round);
            ok = false;
        }
        SYS_CHECK(unlink(path) == 0, path);
        untimed += now() - b;
    }
    tm->round = bench_max_time(now() - t0 - untimed);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    options o = parse(argc, argv);
    if (g_size < 2)
        bench_die("needs at least 2 processes");

    MPI_Comm nbhd;
    MPI_CHECK(tio_comm_split_neighborhood(MPI_COMM_WORLD, o.local, g_rank, MPI_INFO_NULL,
                                          &nbhd));
    if (nbhd == MPI_COMM_NULL)
        bench_die("this process cannot use the node-local directory %s", o.local);
    int leader = g_rank, groups = 0, is_leader, nr;
    MPI_CHECK(MPI_Comm_rank(nbhd, &nr));
    MPI_CHECK(MPI_Bcast(&leader, 1, MPI_INT, 0, nbhd));
    is_leader = nr == 0;
    MPI_CHECK(MPI_Allreduce(&is_leader, &groups, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    g_group = bench_malloc(sizeof(int) * (size_t)g_size);
    g_choice = bench_malloc(sizeof(int) * (size_t)g_size);
    MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, g_group, 1, MPI_INT, MPI_COMM_WORLD));

    unsigned char *buf = bench_malloc(o.block), *want = bench_malloc(o.block);
    char lib[128];
    bench_mpi_library(lib, sizeof lib);
    if (g_rank == 0)
        fprintf(stderr, "# topo_exchange: %d processes, %d storage neighbourhoods of %s, PFS "
                "%s, %zu-byte blocks, %d rounds, local fraction asked %.2f, %s\n", g_size,
                groups, o.local, o.pfs, o.block, o.rounds, o.local_fraction, lib);

    double med[NMETHODS];
    bool ok[NMETHODS] = {true, true};
    double per_block[2] = {NAN, NAN};
    long long blocks[2] = {0, 0};
    double *rt = bench_malloc(sizeof(double) * (size_t)o.rounds);
    long long local_pairs = 0;
    for (int m = 0; m < NMETHODS; m++) {
        struct timing tm = {0};
        for (int r = 0; r < o.rounds; r++) {
            ok[m] = bench_all(one_round(&o, m, r, buf, want, &tm)) && ok[m];
            rt[r] = tm.round;
            if (m == M_TOPO)
                for (int p = 0; p < g_size; p++)
                    local_pairs += g_group[g_choice[p]] == g_group[p];
        }
        med[m] = bench_median(rt, o.rounds);
        if (m == M_TOPO) {
            double t[2];
            MPI_CHECK(MPI_Reduce(tm.t, t, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Reduce(tm.count, blocks, 2, MPI_LONG_LONG, MPI_SUM, 0,
                                 MPI_COMM_WORLD));
            /* a block's exchange = its write + fsync + its read: two timed operations */
            for (int k = 0; k < 2; k++)
                per_block[k] = blocks[k] ? 2.0 * t[k] / (double)blocks[k] : NAN;
        }
    }

    if (g_rank == 0) {
        double frac = (double)local_pairs / ((double)g_size * o.rounds);
        for (int m = 0; m < NMETHODS; m++) {
            bench_json j;
            bench_json_begin(&j, "topo_exchange");
            bench_json_str(&j, "method", method_name[m]);
            bench_json_int(&j, "ranks", g_size);
            bench_json_int(&j, "neighbourhoods", groups);
            bench_json_int(&j, "block_bytes", (long long)o.block);
            bench_json_int(&j, "rounds", o.rounds);
            bench_json_num(&j, "local_fraction", m == M_TOPO ? frac : 0.0);
            bench_json_num(&j, "seconds_per_round", med[m]);
            bench_json_str(&j, "baseline", method_name[M_GLOBAL]);
            bench_json_num(&j, "ratio", med[M_GLOBAL] / med[m]);
            bench_json_bool(&j, "verified", ok[m]);
            bench_json_str(&j, "mpi", lib);
            bench_json_end(&j);
        }
        bench_json j;
        bench_json_begin(&j, "topo_exchange");
        bench_json_str(&j, "method", "per_block");
        bench_json_num(&j, "local_seconds", per_block[0]);
        bench_json_num(&j, "global_seconds", per_block[1]);
        bench_json_int(&j, "local_blocks", blocks[0] / 2);
        bench_json_int(&j, "global_blocks", blocks[1] / 2);
        bench_json_str(&j, "baseline", "global_seconds");
        bench_json_num(&j, "ratio", per_block[1] / per_block[0]);
        bench_json_bool(&j, "verified", ok[M_TOPO]);
        bench_json_end(&j);
    }
    free(rt);
    free(buf);
    free(want);
    free(g_group);
    free(g_choice);
    MPI_CHECK(MPI_Comm_free(&nbhd));
    MPI_Finalize();
    return ok[M_GLOBAL] && ok[M_TOPO] ? 0 : 1;
}
