/* Helpers of the MPI-IO benchmarks (bench/agg_ior.c, bench/agg_collperf.c,
 * bench/agg_flashio.c; seed 004 §4): unmodified MPI-IO programs, so everything tierio
 * needs reaches them through the environment.
 *
 * - Hints, IOR's way: every IOR_HINT__MPI__<key>=<value> in the environment is set on the
 *   MPI_Info the program opens its file with (cb_buffer_size, romio_cb_write,
 *   tierio_agg_buffer_size, tierio_agg_strategy, ...).
 * - "routed": the count of collective calls tierio's engine served, from the file's
 *   MPI_File_get_info (key tierio_agg_collective_calls; -1 when the key is absent: the
 *   calls went to the MPI library), so that a result can prove which path it took.
 * - The repetitions' median, fastest and slowest times, for the JSON lines.
 * Include after bench_common.h. */
#ifndef TIO_BENCH_MEMCON_COMMON_H
#define TIO_BENCH_MEMCON_COMMON_H

#include <limits.h>

#define MEMCON_HINT_PREFIX "IOR_HINT__MPI__"

/* Set every IOR_HINT__MPI__key=value of envp on info; returns how many. */
static inline int memcon_env_hints(MPI_Info info, char **envp)
{
    const size_t pre = strlen(MEMCON_HINT_PREFIX);
    int n = 0;
    for (char **e = envp; *e != NULL; e++) {
        if (strncmp(*e, MEMCON_HINT_PREFIX, pre) != 0)
            continue;
        const char *kv = *e + pre, *eq = strchr(kv, '=');
        if (eq == NULL || eq == kv || (size_t)(eq - kv) > MPI_MAX_INFO_KEY)
            bench_die("environment %s: expected %s<key>=<value>", *e, MEMCON_HINT_PREFIX);
        char key[MPI_MAX_INFO_KEY + 1];
        memcpy(key, kv, (size_t)(eq - kv));
        key[eq - kv] = '\0';
        MPI_CHECK(MPI_Info_set(info, key, eq + 1));
        n++;
    }
    return n;
}

/* The info of the file: the environment's hints, and with variant >= 0 (-A) the MPI-IO
 * route turned off (0) or on (1) by the info key tierio_agg. */
static inline MPI_Info memcon_file_info(char **envp, int variant)
{
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    memcon_env_hints(info, envp);
    if (variant >= 0)
        bench_info_set(info, "tierio_agg", variant ? "enable" : "disable");
    return info;
}

/* "routed" when the program cannot know it (printed as null). */
#define MEMCON_ROUTED_UNKNOWN LONG_MIN

/* tierio_agg_collective_calls of a file's info (-1: absent, the MPI library's own path). */
static inline long memcon_routed_info(MPI_Info used)
{
    char v[64];
    int flag = 0;
    MPI_CHECK(MPI_Info_get(used, "tierio_agg_collective_calls", (int)sizeof v - 1, v, &flag));
    return flag ? atol(v) : -1;
}

static inline long memcon_routed(MPI_File fh)
{
    MPI_Info used;
    MPI_CHECK(MPI_File_get_info(fh, &used));
    long n = memcon_routed_info(used);
    MPI_CHECK(MPI_Info_free(&used));
    return n;
}

/* The rest of a result line, and the line out: "bytes", "seconds" (median of the
 * repetitions' times t), "seconds_min", "seconds_max", "GBps" of the median; with -A on the
 * tierio line (base: the mpiio line's times) the baseline and ratio, else null; "routed",
 * "verified". */
static inline void memcon_json_finish(bench_json *j, const double *t, const double *base,
                                      int n, unsigned long long bytes, long routed,
                                      bool verified)
{
    double lo = t[0], hi = t[0];
    for (int i = 1; i < n; i++) {
        lo = t[i] < lo ? t[i] : lo;
        hi = t[i] > hi ? t[i] : hi;
    }
    double med = bench_median(t, n);
    bench_json_int(j, "bytes", (long long)bytes);
    bench_json_num(j, "seconds", med);
    bench_json_num(j, "seconds_min", lo);
    bench_json_num(j, "seconds_max", hi);
    bench_json_num(j, "GBps", bytes / med / 1e9);
    if (base != NULL) {
        bench_json_str(j, "baseline", "mpiio");
        bench_json_num(j, "ratio", bench_median(base, n) / med);
    } else {
        bench_json_raw(j, ",\"baseline\":null,\"ratio\":null");
    }
    if (routed == MEMCON_ROUTED_UNKNOWN)
        bench_json_raw(j, ",\"routed\":null");
    else
        bench_json_int(j, "routed", routed);
    bench_json_bool(j, "verified", verified);
    bench_json_end(j);
}

/* "as_configured" without -A; with it "mpiio" (tierio_agg=disable) or "tierio_route". */
static inline const char *memcon_method(bool ab, int variant)
{
    return !ab ? "as_configured" : variant ? "tierio_route" : "mpiio";
}

#endif
