#define _GNU_SOURCE
/* Write-back cost of umsync: bulk (coalesced) and individual (segment by segment), with the
 * posix, direct (O_DIRECT) and io_uring drivers, against a plain pwrite + fsync of the same bytes at the same
 * offsets (issue 3; seed 000 §6.1.1 "Individual" and "Bulk Synchronization").
 *
 * Each configuration maps its own file of S bytes (-m, default 64 MiB) with segments of -g
 * bytes (default 64 KiB). The file exists and is fully written beforehand, so every method
 * rewrites allocated blocks in place. Per repetition (-r, default 5) every k-th segment
 * (-p k, default 1 = all; several values give several rows) is filled with new data — not
 * timed, this is the application's work — and then umsync(addr, 0) is timed on its own.
 * The baseline writes the same bytes from a private buffer to its own file, one pwrite per
 * run of contiguous dirty segments, then fsync: timed as well, right next to each umsync
 * (before it in odd repetitions, after it in even ones), so that each pair sees the same
 * conditions on a machine shared with other work.
 *
 * Verification: after the last repetition every file is read with pread and compared byte
 * for byte with what was written (new data in the dirty segments, the initial data in the
 * others).
 *
 * Output: one JSON line per (stride, configuration) and one per stride for the baseline
 * (all its samples): seconds = median over repetitions, bytes = dirty bytes per sync,
 * ratio = median over repetitions of baseline seconds / umsync seconds of each pair (speed
 * relative to write+fsync), baseline_seconds = median of the paired baselines,
 * write_ops_per_sync = write calls the engine issued per sync (tio_ummap_stats). */
#include "ummap_common.h"

typedef struct {
    size_t size, seg_size;
    int reps;
    size_t strides[8];
    int nstrides;
    char *drivers[4];
    int ndrivers;
    bool modes[2]; /* individual, bulk */
    const char *dir;
} options;

static void usage(const char *prog)
{
    bench_usage("usage: %s [-m bytes] [-g bytes] [-p k[,k...]] [-D drivers] [-B bulk,individual]\n"
                "          [-r reps] [-d dir]\n"
                "  -m bytes   mapping size (default 64Mi)\n"
                "  -g bytes   segment size (default 64Ki)\n"
                "  -p list    dirty every k-th segment, one row set per k (default 1)\n"
                "  -D list    I/O drivers: posix, direct, uring (default all three; a driver the\n"
                "             engine refuses is reported as skipped)\n"
                "  -B list    sync modes (default bulk,individual)\n"
                "  -r reps    repetitions, the median is reported (default 5)\n"
                "  -d dir     directory of the files (default $TIERIO_BENCH_DIR or /tmp)\n",
                prog);
}

static options parse_options(int argc, char **argv)
{
    static char posix[] = "posix", direct[] = "direct", uring[] = "uring";
    options o = {.size = 64u << 20, .seg_size = 64u << 10, .reps = 5, .strides = {1},
                 .nstrides = 1, .drivers = {posix, direct, uring}, .ndrivers = 3,
                 .modes = {true, true}, .dir = bench_default_dir()};
    int c;
    while ((c = bench_getopt(argc, argv, "m:g:p:D:B:r:d:h", usage)) != -1) {
        switch (c) {
        case 'm': o.size = (size_t)bench_parse_u64("-m", optarg); break;
        case 'g': o.seg_size = um_parse_segsize("-g", optarg); break;
        case 'p': {
            o.nstrides = 0;
            char *save = NULL;
            for (char *t = strtok_r(optarg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o.nstrides == 8) {
                    bench_die("-p: at most 8 strides");
                }
                o.strides[o.nstrides] = (size_t)bench_parse_u64("-p", t);
                if (o.strides[o.nstrides] == 0) {
                    bench_die("-p: strides start at 1 (every segment)");
                }
                o.nstrides++;
            }
            break;
        }
        case 'D':
            o.ndrivers = um_parse_drivers("-D", optarg, o.drivers, 4);
            if (o.ndrivers == 0) {
                bench_die("-D: expected a list of drivers");
            }
            break;
        case 'B':
            bench_parse_either("-B", optarg, "individual", "bulk", "bulk, individual or both",
                               o.modes);
            break;
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'd': o.dir = optarg; break;
        }
    }
    if (o.size < o.seg_size || o.size % o.seg_size != 0) {
        bench_die("-m: the size must be a positive multiple of the segment size");
    }
    if (o.reps < 1 || o.nstrides < 1) {
        bench_die("need a repetition and a stride");
    }
    return o;
}

#define TAG_INIT 0x1417ull

/* Data of repetition rep in the dirty segments. */
static inline uint64_t tag_of(int rep)
{
    return 0x100ull + (uint64_t)rep;
}

static int make_file(const options *o, const char *path)
{
    int fd = um_open_file(path, 0, true);
    char *buf = bench_malloc(1u << 20);
    for (size_t off = 0; off < o->size; off += 1u << 20) {
        size_t len = o->size - off < (1u << 20) ? o->size - off : (1u << 20);
        um_fill(buf, len, TAG_INIT, off);
        um_pwrite_all(fd, buf, len, (off_t)off);
    }
    free(buf);
    SYS_CHECK(fsync(fd) == 0, "fsync");
    return fd;
}

/* The file holds tag_of(last) in segments i % stride == 0 and TAG_INIT elsewhere. */
static bool check_file(const options *o, int fd, size_t stride, int last, const char *what)
{
    char *buf = bench_malloc(o->seg_size);
    bool ok = true;
    for (size_t i = 0; i < o->size / o->seg_size && ok; i++) {
        size_t off = i * o->seg_size;
        um_pread_all(fd, buf, o->seg_size, (off_t)off);
        uint64_t tag = i % stride == 0 ? tag_of(last) : TAG_INIT;
        long long bad = um_check(buf, o->seg_size, tag, off);
        if (bad >= 0) {
            fprintf(stderr, "ummap_bulksync: %s: segment %zu differs at word %lld\n", what, i,
                    bad);
            ok = false;
        }
    }
    free(buf);
    return ok;
}

/* pwrite of the dirty segments (one call per run of contiguous ones) + fsync; seconds. */
static double time_baseline(const options *o, int fd, const char *buf, size_t stride)
{
    const size_t nseg = o->size / o->seg_size;
    double t0 = um_now();
    for (size_t i = 0; i < nseg; i += stride) {
        size_t run = stride == 1 ? nseg - i : 1; /* contiguous dirty segments: one write */
        um_pwrite_all(fd, buf + i * o->seg_size, run * o->seg_size, (off_t)(i * o->seg_size));
        i += run - 1;
    }
    SYS_CHECK(fsync(fd) == 0, "fsync of the baseline");
    return um_now() - t0;
}

typedef struct {
    const char *driver;
    int bulk;
    char path[4096];
    int fd;
    char *base;
    double *t, *tb; /* umsync and its paired baseline, per repetition */
    uint64_t write_ops, seg_writes;
    char skipped[256];
} config;

int main(int argc, char **argv)
{
    options o = parse_options(argc, argv);
    fprintf(stderr, "# ummap_bulksync: mapping %zu B, segments %zu B, %d reps, dir %s\n", o.size,
            o.seg_size, o.reps, o.dir);
    const size_t nseg = o.size / o.seg_size;

    config cf[8];
    int ncf = 0;
    for (int d = 0; d < o.ndrivers; d++) {
        for (int b = 1; b >= 0; b--) {
            if (o.modes[b]) {
                memset(&cf[ncf], 0, sizeof cf[ncf]);
                cf[ncf].driver = o.drivers[d];
                cf[ncf].bulk = b;
                ncf++;
            }
        }
    }

    for (int s = 0; s < o.nstrides; s++) {
        const size_t stride = o.strides[s];
        size_t dirty_segs = (nseg + stride - 1) / stride;
        double dirty_bytes = (double)dirty_segs * (double)o.seg_size;

        for (int k = 0; k < ncf; k++) {
            config *c = &cf[k];
            snprintf(c->path, sizeof c->path, "%s/ummap_bulksync.%d.%d", o.dir, (int)getpid(), k);
            c->fd = make_file(&o, c->path);
            c->t = bench_malloc((size_t)o.reps * sizeof(double));
            c->tb = bench_malloc((size_t)o.reps * sizeof(double));
            c->write_ops = c->seg_writes = 0;
            c->skipped[0] = '\0';
            tio_ummap_opts_t uo = TIO_UMMAP_OPTS_INIT;
            uo.size = o.size;
            uo.seg_size = o.seg_size;
            uo.prot = PROT_READ | PROT_WRITE;
            uo.fd = c->fd;
            uo.read_file = 1;
            uo.driver = c->driver;
            uo.bulk_sync = c->bulk;
            void *p = NULL;
            int rc = tio_ummap_open(&uo, &p);
            if (rc != 0) {
                snprintf(c->skipped, sizeof c->skipped, "tio_ummap_open with driver %s: %s",
                         c->driver, strerror(rc));
                fprintf(stderr, "ummap_bulksync: skipping %s %s: %s\n", c->driver,
                        c->bulk ? "bulk" : "individual", c->skipped);
                c->base = NULL;
            } else {
                c->base = p;
            }
        }
        char bpath[4096];
        snprintf(bpath, sizeof bpath, "%s/ummap_bulksync.%d.base", o.dir, (int)getpid());
        int bfd = make_file(&o, bpath);
        char *bbuf = bench_malloc(o.size);
        /* every baseline sample, over all configurations and repetitions */
        double *tb = bench_malloc((size_t)o.reps * (size_t)(ncf + 1) * sizeof(double));
        int ntb = 0;

        for (int rep = 0; rep < o.reps; rep++) {
            /* the new data, once, in the baseline's buffer; copied into each mapping */
            for (size_t i = 0; i < nseg; i += stride) {
                um_fill(bbuf + i * o.seg_size, o.seg_size, tag_of(rep), i * o.seg_size);
            }
            bool any = false;
            for (int k = 0; k < ncf; k++) {
                config *c = &cf[k];
                if (c->base == NULL) {
                    continue;
                }
                any = true;
                for (size_t i = 0; i < nseg; i += stride) { /* the application's work */
                    memcpy(c->base + i * o.seg_size, bbuf + i * o.seg_size, o.seg_size);
                }
                /* each umsync gets its own baseline right next to it, the two taking turns
                 * at going first: on a shared machine the pair sees the same conditions */
                if (rep % 2 == 1) {
                    c->tb[rep] = tb[ntb++] = time_baseline(&o, bfd, bbuf, stride);
                }
                tio_ummap_stats_t s0, s1;
                UM_CHECK(tio_ummap_stats(c->base, &s0));
                double t0 = um_now();
                UM_CHECK(umsync(c->base, 0));
                c->t[rep] = um_now() - t0;
                UM_CHECK(tio_ummap_stats(c->base, &s1));
                c->write_ops += s1.write_ops - s0.write_ops;
                c->seg_writes += s1.seg_writes - s0.seg_writes;
                if (rep % 2 == 0) {
                    c->tb[rep] = tb[ntb++] = time_baseline(&o, bfd, bbuf, stride);
                }
            }
            if (!any) { /* every configuration was skipped: the baseline alone */
                tb[ntb++] = time_baseline(&o, bfd, bbuf, stride);
            }
        }

        double base_sec = bench_median(tb, ntb);
        bool base_ok = check_file(&o, bfd, stride, o.reps - 1, "write+fsync file");
        bench_json j;
        bench_json_begin(&j, "ummap_bulksync");
        bench_json_str(&j, "method", "write+fsync");
        bench_json_int(&j, "stride", (long long)stride);
        bench_json_int(&j, "size", (long long)o.size);
        bench_json_int(&j, "reps", o.reps);
        bench_json_num(&j, "bytes", dirty_bytes);
        bench_json_num(&j, "seconds", base_sec);
        bench_json_num(&j, "GBps", dirty_bytes / base_sec / 1e9);
        bench_json_str(&j, "baseline", NULL);
        bench_json_num(&j, "ratio", NAN);
        bench_json_bool(&j, "verified", base_ok);
        bench_json_end(&j);

        for (int k = 0; k < ncf; k++) {
            config *c = &cf[k];
            bench_json_begin(&j, "ummap_bulksync");
            bench_json_str(&j, "method", "umsync");
            bench_json_str(&j, "mode", c->bulk ? "bulk" : "individual");
            bench_json_str(&j, "driver", c->driver);
            bench_json_int(&j, "stride", (long long)stride);
            bench_json_int(&j, "size", (long long)o.size);
            bench_json_int(&j, "seg_size", (long long)o.seg_size);
            bench_json_int(&j, "reps", o.reps);
            if (c->base == NULL) {
                bench_json_str(&j, "skipped", c->skipped);
                bench_json_end(&j);
            } else {
                double sec = bench_median(c->t, o.reps);
                double *pair = bench_malloc((size_t)o.reps * sizeof(double));
                for (int r = 0; r < o.reps; r++) {
                    pair[r] = c->tb[r] / c->t[r];
                }
                double ratio = bench_median(pair, o.reps);
                free(pair);
                /* umunmap first: the file must show the data without the mapping */
                UM_CHECK(umunmap(c->base, 0));
                c->base = NULL;
                bool ok = check_file(&o, c->fd, stride, o.reps - 1, c->path);
                bench_json_num(&j, "bytes", dirty_bytes);
                bench_json_num(&j, "seconds", sec);
                bench_json_num(&j, "GBps", dirty_bytes / sec / 1e9);
                bench_json_num(&j, "write_ops_per_sync", (double)c->write_ops / o.reps);
                bench_json_num(&j, "seg_writes_per_sync", (double)c->seg_writes / o.reps);
                bench_json_str(&j, "baseline", "write+fsync");
                bench_json_num(&j, "baseline_seconds", bench_median(c->tb, o.reps));
                bench_json_num(&j, "ratio", ratio);
                bench_json_bool(&j, "verified", ok);
                bench_json_end(&j);
            }
            close(c->fd);
            SYS_CHECK(unlink(c->path) == 0, c->path);
            free(c->t);
            free(c->tb);
        }
        close(bfd);
        SYS_CHECK(unlink(bpath) == 0, bpath);
        free(bbuf);
        free(tb);
    }
    return 0;
}
