#define _POSIX_C_SOURCE 200809L
/* DHT: a distributed hash table on MPI windows, in memory or in storage.
 *
 * After seed 000 §3.3.2 (the foMPI DHT of Gerstenberger et al.). Every rank exposes a table
 * of S slots in one window; a slot is {key, value}, two 64-bit words, key 0 = empty.
 *
 *   insert: the owner rank and the home slot come from a hash of the key; the key is
 *           claimed with MPI_Compare_and_swap(expected 0) on the slot's key word, with
 *           linear probing on collision; the value is then written with MPI_Put.
 *   lookup: MPI_Get of the slot {key, value}; linear probing until the key or an empty slot.
 *
 * All ranks insert together until the tables are filled to -F (default 80 %) of their total
 * capacity, with keys spread over random owners. Then every rank looks up every key it
 * inserted and checks its value; afterwards every rank scans its own table and checks the
 * number of occupied slots and every value. "verified" is true only if all of it holds.
 * All one-sided operations run in one MPI_Win_lock_all epoch; MPI_Win_flush completes each
 * CAS / Get before its result is used.
 *
 * Window kinds: memory (no hints; the baseline), storage (alloc_type=storage,
 * storage_alloc_filename=<dir>/dht.<rank>, storage_alloc_unlink=true), combined (storage +
 * storage_alloc_factor=F). For storage kinds the write-back of the filled table
 * (MPI_Win_sync) is reported as phase "sync".
 *
 * Output: one JSON line per result on stdout (rank 0). seconds = median over repetitions of
 * the slowest rank; ratio = memory seconds / this seconds (speed relative to memory).
 */
#include "bench_common.h"

typedef struct {
    size_t slots;   /* per rank */
    int reps;
    const char *dir;
    unsigned kinds;
    double fill;    /* fraction of the total capacity to insert */
    double factor;  /* storage_alloc_factor of the combined kind */
} options;

static int g_rank, g_size;

static void usage(const char *prog)
{
    bench_usage("usage: %s [-n slots] [-r reps] [-d dir] [-w kinds] [-F fill] [-f factor]\n"
                "  -n slots   table slots per rank, 16 bytes each (default 65536)\n"
                "  -r reps    repetitions, the median is reported (default 3)\n"
                "  -d dir     directory of the window files (default $TIERIO_BENCH_DIR or /tmp)\n"
                "  -w kinds   comma list of memory,storage,combined (default memory,storage)\n"
                "  -F fill    fraction of the total capacity inserted (default 0.8)\n"
                "  -f factor  storage_alloc_factor of the combined window (default 0.5)\n",
                prog);
}

static options parse_options(int argc, char **argv)
{
    options o = {.slots = 65536, .reps = 3, .dir = bench_default_dir(),
                 .kinds = (1u << BENCH_WIN_MEMORY) | (1u << BENCH_WIN_STORAGE), .fill = 0.8,
                 .factor = 0.5};
    int c;
    while ((c = bench_getopt(argc, argv, "n:r:d:w:F:f:h", usage)) != -1) {
        switch (c) {
        case 'n': o.slots = (size_t)bench_parse_u64("-n", optarg); break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'd': o.dir = optarg; break;
        case 'w': o.kinds = bench_parse_kinds("-w", optarg); break;
        case 'F': o.fill = bench_parse_double("-F", optarg); break;
        case 'f': o.factor = bench_parse_double("-f", optarg); break;
        }
    }
    if (o.slots < 1 || o.slots > (size_t)1 << 40) {
        bench_die("-n: slots per rank must be 1 .. 2^40");
    }
    if (o.reps < 1) {
        bench_die("-r: at least one repetition");
    }
    if (!(o.fill > 0.0 && o.fill <= 0.95)) {
        bench_die("-F: fill must be in (0, 0.95]: linear probing degrades beyond that");
    }
    if (!(o.factor > 0.0 && o.factor < 1.0)) {
        bench_die("-f: the combined window needs a factor strictly between 0 and 1");
    }
    return o;
}

/* Keys are unique and non-zero by construction (rank-major numbering); the hash decides
 * owner and home slot, so owners are random. Values are a second hash of the key. */
static inline uint64_t key_of(int rank, size_t per_rank, size_t j)
{
    return (uint64_t)rank * per_rank + j + 1;
}
static inline uint64_t value_of(uint64_t key)
{
    return bench_mix64(key ^ 0x5bd1e9955bd1e995ULL);
}
static inline void home_of(uint64_t key, size_t slots, int *owner, size_t *slot)
{
    uint64_t h = bench_mix64(key);
    *owner = (int)(h % (uint64_t)g_size);
    *slot = (size_t)((h / (uint64_t)g_size) % slots);
}

typedef struct {
    double insert, lookup, total, sync; /* medians */
    double probes_insert, probes_lookup; /* mean probes per operation */
    bool verified;
    const char *placement;
} kind_result;

static void print_result(const char *phase, const char *window, const char *placement,
                         long long ops, double seconds, double probes, const char *baseline,
                         double ratio, bool verified, const options *o)
{
    if (g_rank != 0) {
        return;
    }
    bench_json j;
    bench_json_begin(&j, "dht");
    bench_json_str(&j, "phase", phase);
    bench_json_str(&j, "window", window);
    bench_json_str(&j, "placement", placement);
    bench_json_int(&j, "ranks", g_size);
    bench_json_int(&j, "slots_per_rank", (long long)o->slots);
    bench_json_num(&j, "fill", o->fill);
    bench_json_int(&j, "bytes", 16LL * (long long)o->slots * g_size);
    bench_json_int(&j, "reps", o->reps);
    bench_json_int(&j, "ops", ops);
    bench_json_num(&j, "seconds", seconds);
    bench_json_num(&j, "Mops", ops > 0 ? (double)ops / seconds / 1e6 : NAN);
    if (probes >= 0) {
        bench_json_num(&j, "probes_per_op", probes);
    }
    bench_json_str(&j, "baseline", baseline);
    bench_json_num(&j, "ratio", ratio);
    bench_json_bool(&j, "verified", verified);
    bench_json_end(&j);
}

static kind_result run_kind(enum bench_win_kind kind, const options *o)
{
    const size_t S = o->slots;
    const size_t per_rank = (size_t)(o->fill * (double)S); /* keys each rank inserts */
    const bool storage = kind != BENCH_WIN_MEMORY;
    char path[4096];
    snprintf(path, sizeof path, "%s/dht.%d", o->dir, g_rank);

    if (storage) {
        bench_remove_stale(path);
    }
    MPI_Info info = bench_win_info(kind, path, 0, o->factor, true);
    uint64_t *table = NULL; /* table[2*s] = key, table[2*s+1] = value */
    MPI_Win win;
    /* 16 bytes per slot: the size is always a multiple of 16 (MPICH 4.0.2 bug) */
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)(16 * S), sizeof(uint64_t), info, MPI_COMM_WORLD,
                               &table, &win));
    if (info != MPI_INFO_NULL) {
        MPI_CHECK(MPI_Info_free(&info));
    }
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    kind_result kr = {.verified = true};
    kr.placement = bench_win_placement(win, storage ? path : NULL);

    uint64_t *values = bench_malloc(per_rank * sizeof *values); /* Put origin buffers */
    double *ti = bench_malloc((size_t)o->reps * sizeof(double));
    double *tl = bench_malloc((size_t)o->reps * sizeof(double));
    double *tt = bench_malloc((size_t)o->reps * sizeof(double));
    double *ts = bench_malloc((size_t)o->reps * sizeof(double));
    unsigned long long probes_i = 0, probes_l = 0;
    bool ok = true;

    for (int r = 0; r < o->reps; r++) {
        MPI_CHECK(MPI_Win_lock_all(0, win));
        /* empty table; MPI_Win_sync makes the local stores visible to the RMA below */
        memset(table, 0, 16 * S);
        MPI_CHECK(MPI_Win_sync(win));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        probes_i = probes_l = 0;

        /* ---- insert ---- */
        double t0 = MPI_Wtime();
        for (size_t j = 0; j < per_rank; j++) {
            const uint64_t key = key_of(g_rank, per_rank, j);
            const uint64_t empty = 0;
            int owner;
            size_t slot;
            home_of(key, S, &owner, &slot);
            values[j] = value_of(key);
            for (size_t probe = 0;; probe++) {
                if (probe == S) {
                    bench_die("dht: the table of rank %d is full (key %llu)", owner,
                              (unsigned long long)key);
                }
                uint64_t old = 0;
                MPI_CHECK(MPI_Compare_and_swap(&key, &empty, &old, MPI_UINT64_T, owner,
                                               (MPI_Aint)(2 * slot), win));
                MPI_CHECK(MPI_Win_flush(owner, win));
                probes_i++;
                if (old == 0 || old == key) {
                    MPI_CHECK(MPI_Put(&values[j], 1, MPI_UINT64_T, owner, (MPI_Aint)(2 * slot + 1),
                                      1, MPI_UINT64_T, win));
                    break;
                }
                slot = (slot + 1) % S;
            }
        }
        MPI_CHECK(MPI_Win_flush_all(win));
        double t_ins = MPI_Wtime() - t0;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* all inserts complete before any lookup */

        /* ---- lookup ---- */
        bool found_all = true;
        t0 = MPI_Wtime();
        for (size_t j = 0; j < per_rank; j++) {
            const uint64_t key = key_of(g_rank, per_rank, j);
            int owner;
            size_t slot;
            home_of(key, S, &owner, &slot);
            for (size_t probe = 0;; probe++) {
                uint64_t entry[2];
                if (probe == S) {
                    found_all = false;
                    break;
                }
                MPI_CHECK(MPI_Get(entry, 2, MPI_UINT64_T, owner, (MPI_Aint)(2 * slot), 2,
                                  MPI_UINT64_T, win));
                MPI_CHECK(MPI_Win_flush(owner, win));
                probes_l++;
                if (entry[0] == key) {
                    if (entry[1] != value_of(key)) {
                        if (found_all) {
                            fprintf(stderr, "[rank %d] dht: key %llu has value %llu, expected "
                                    "%llu\n", g_rank, (unsigned long long)key,
                                    (unsigned long long)entry[1],
                                    (unsigned long long)value_of(key));
                        }
                        found_all = false;
                    }
                    break;
                }
                if (entry[0] == 0) {
                    if (found_all) {
                        fprintf(stderr, "[rank %d] dht: key %llu not found\n", g_rank,
                                (unsigned long long)key);
                    }
                    found_all = false;
                    break;
                }
                slot = (slot + 1) % S;
            }
        }
        double t_look = MPI_Wtime() - t0;
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

        /* ---- write-back of the filled table (storage kinds) ---- */
        double t_sync = 0.0;
        if (storage) {
            t0 = MPI_Wtime();
            MPI_CHECK(MPI_Win_sync(win));
            t_sync = MPI_Wtime() - t0;
        }
        MPI_CHECK(MPI_Win_unlock_all(win));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

        /* ---- own table: occupied slots and their values ---- */
        unsigned long long used = 0;
        bool values_ok = true;
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, win));
        for (size_t s = 0; s < S; s++) {
            if (table[2 * s] != 0) {
                used++;
                if (table[2 * s + 1] != value_of(table[2 * s])) {
                    values_ok = false;
                }
            }
        }
        MPI_CHECK(MPI_Win_unlock(g_rank, win));
        unsigned long long used_all = 0;
        MPI_CHECK(MPI_Allreduce(&used, &used_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM,
                                MPI_COMM_WORLD));
        if (used_all != (unsigned long long)per_rank * (unsigned long long)g_size) {
            if (g_rank == 0) {
                fprintf(stderr, "dht: %llu occupied slots, expected %llu\n", used_all,
                        (unsigned long long)per_rank * (unsigned long long)g_size);
            }
            values_ok = false;
        }
        ok = ok && bench_all(found_all && values_ok);

        ti[r] = bench_max_time(t_ins);
        tl[r] = bench_max_time(t_look);
        tt[r] = bench_max_time(t_ins + t_look);
        ts[r] = bench_max_time(t_sync);
    }

    unsigned long long pr[2] = {probes_i, probes_l}, pr_all[2];
    MPI_CHECK(MPI_Allreduce(pr, pr_all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    double nops = (double)per_rank * g_size;
    kr.probes_insert = nops > 0 ? (double)pr_all[0] / nops : 0.0;
    kr.probes_lookup = nops > 0 ? (double)pr_all[1] / nops : 0.0;
    kr.insert = bench_median(ti, o->reps);
    kr.lookup = bench_median(tl, o->reps);
    kr.total = bench_median(tt, o->reps);
    kr.sync = bench_median(ts, o->reps);
    kr.verified = ok;

    free(values);
    free(ti);
    free(tl);
    free(tt);
    free(ts);
    MPI_CHECK(MPI_Win_free(&win));
    return kr;
}

int main(int argc, char **argv)
{
    bench_mpi_start(&argc, &argv, &g_rank, &g_size);
    options o = parse_options(argc, argv);
    const size_t per_rank = (size_t)(o.fill * (double)o.slots);
    const long long ops = (long long)per_rank * g_size;

    bench_header("dht: %d ranks, %zu slots per rank (%.1f MiB), %zu inserts per rank (fill "
                 "%.2f), %d reps, dir %s",
                 g_size, o.slots, 16.0 * (double)o.slots / 1048576.0, per_rank, o.fill, o.reps,
                 o.dir);

    kind_result res[BENCH_WIN_NKINDS];
    bool have_mem = false;
    for (int k = 0; k < BENCH_WIN_NKINDS; k++) { /* memory first: it is the baseline */
        if (!(o.kinds & (1u << k))) {
            continue;
        }
        kind_result *kr = &res[k];
        *kr = run_kind((enum bench_win_kind)k, &o);
        const char *w = bench_win_kind_name(k);
        const bool is_base = k == BENCH_WIN_MEMORY;
        const kind_result *m = &res[BENCH_WIN_MEMORY];
        const char *bl = is_base ? NULL : "memory";
        print_result("insert", w, kr->placement, ops, kr->insert, kr->probes_insert, bl,
                     !is_base && have_mem ? m->insert / kr->insert : NAN, kr->verified, &o);
        print_result("lookup", w, kr->placement, ops, kr->lookup, kr->probes_lookup, bl,
                     !is_base && have_mem ? m->lookup / kr->lookup : NAN, kr->verified, &o);
        print_result("total", w, kr->placement, 2 * ops, kr->total, -1.0, bl,
                     !is_base && have_mem ? m->total / kr->total : NAN, kr->verified, &o);
        if (!is_base) {
            print_result("sync", w, kr->placement, 0, kr->sync, -1.0, NULL, NAN, kr->verified,
                         &o);
        }
        if (is_base) {
            have_mem = true;
        }
    }
    MPI_CHECK(MPI_Finalize());
    return 0;
}
