#define _GNU_SOURCE
/* First-touch page-fault latency: the ummap engine (userfaultfd, a handler thread) vs the
 * kernel's mmap of the same file, with anonymous memory as the reference (issue 3).
 *
 * A mapping of N pages (-n, default 4096) of a file is touched one byte per page, in
 * sequential or pseudo-random page order (-o), and every touch is timed on its own
 * (clock_gettime around one load or store). ummap uses one-page segments (-g to change),
 * so that each first touch of a page is one fault, as with the kernel. Access kinds:
 *   read              load from a page of a file that is in the page cache
 *   read_cold         the same after the file was dropped from the page cache
 *   write             store into a page of a file in the page cache (ummap loads it:
 *                     read_file=1; the kernel maps the cached page writable)
 *   write_new         store into a new file's page (a sparse file; ummap read_file=0)
 *   write_after_read  store into a page already mapped by a load (ummap: a write-protect
 *                     fault; the kernel: page_mkwrite)
 * memory rows (read, write, write_after_read) touch anonymous memory the same way.
 *
 * Per row: mean (all touches' time / touches), median and 99th percentile of the single
 * touches, over -r repetitions, each on a fresh mapping; faults per touch as getrusage
 * counts them (userfaultfd faults are counted too); the clock's own cost per pair of
 * readings. Every value loaded is checked against the file's pattern, and after the store
 * kinds the mapping is synced and the file compared with what was stored.
 * ratio = mmap mean / mean (speed relative to the kernel's mmap, measured in the same run). */
#include "ummap_common.h"

enum access { A_READ, A_READ_COLD, A_WRITE, A_WRITE_NEW, A_WRITE_AFTER_READ, A_N };
static const char *const access_name[A_N] = {"read", "read_cold", "write", "write_new",
                                             "write_after_read"};

typedef struct {
    size_t pages, seg_size;
    int reps;
    bool order[2]; /* seq, rnd */
    unsigned access_mask;
    const char *dir;
} options;

static long g_page;

static void usage(const char *prog)
{
    bench_usage("usage: %s [-n pages] [-g bytes] [-o seq,rnd] [-a kinds] [-r reps] [-d dir]\n"
                "  -n pages   pages per mapping (default 4096)\n"
                "  -g bytes   ummap segment size (default one page)\n"
                "  -o list    page orders: seq, rnd (default both)\n"
                "  -a list    access kinds (default all): read,read_cold,write,write_new,"
                "write_after_read\n"
                "  -r reps    repetitions (default 3)\n"
                "  -d dir     directory of the file (default $TIERIO_BENCH_DIR or /tmp)\n",
                prog);
}

static options parse_options(int argc, char **argv)
{
    options o = {.pages = 4096, .seg_size = (size_t)g_page, .reps = 3, .order = {true, true},
                 .access_mask = (1u << A_N) - 1, .dir = bench_default_dir()};
    int c;
    while ((c = bench_getopt(argc, argv, "n:g:o:a:r:d:h", usage)) != -1) {
        switch (c) {
        case 'n': o.pages = (size_t)bench_parse_u64("-n", optarg); break;
        case 'g': o.seg_size = um_parse_segsize("-g", optarg); break;
        case 'o':
            bench_parse_either("-o", optarg, "seq", "rnd", "seq, rnd or seq,rnd", o.order);
            break;
        case 'a': {
            o.access_mask = 0;
            const char *p = optarg;
            while (*p) {
                size_t n = strcspn(p, ",");
                int found = 0;
                for (int a = 0; a < A_N; a++) {
                    if (strlen(access_name[a]) == n && strncmp(p, access_name[a], n) == 0) {
                        o.access_mask |= 1u << a, found = 1;
                    }
                }
                if (!found) {
                    bench_die("-a: unknown access kind '%.*s'", (int)n, p);
                }
                p += n + (p[n] == ',');
            }
            break;
        }
        case 'r': o.reps = (int)bench_parse_u64("-r", optarg); break;
        case 'd': o.dir = optarg; break;
        }
    }
    if (o.pages < 2 || o.reps < 1 || o.access_mask == 0) {
        bench_die("need at least 2 pages, 1 repetition and one access kind");
    }
    return o;
}

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Median cost of two clock readings back to back. */
static double clock_overhead_ns(void)
{
    double d[1001];
    for (int i = 0; i < 1001; i++) {
        uint64_t a = now_ns(), b = now_ns();
        d[i] = (double)(b - a);
    }
    return bench_median(d, 1001);
}

#define TAG_FILE 0xf11eull
#define TAG_STORE 0x57011ull

/* ---- one mapping, one access kind ---------------------------------------------------- */

typedef struct {
    double *lat;      /* ns, reps * pages */
    size_t nlat;
    double total_ns;
    long faults;
    bool ok;
} row;

/* A file of the pattern (in the page cache), or sparse for write_new. */
static int prepare_file(const options *o, const char *path, enum access a)
{
    size_t size = o->pages * (size_t)g_page;
    int fd = um_open_file(path, 0, true);
    if (a == A_WRITE_NEW) {
        SYS_CHECK(ftruncate(fd, (off_t)size) == 0, path);
        return fd;
    }
    char *buf = bench_malloc(1u << 20);
    for (size_t off = 0; off < size; off += 1u << 20) {
        size_t len = size - off < (1u << 20) ? size - off : (1u << 20);
        um_fill(buf, len, TAG_FILE, off);
        um_pwrite_all(fd, buf, len, (off_t)off);
    }
    free(buf);
    SYS_CHECK(fdatasync(fd) == 0, "fdatasync");
    if (a == A_READ_COLD) {
        um_drop_cache(fd, 0, (off_t)size);
    }
    return fd;
}

static void run_one(const options *o, enum um_method m, enum access a, const size_t *order,
                    row *rw)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ummap_fault.%d", o->dir, (int)getpid());
    const size_t size = o->pages * (size_t)g_page;
    int fd = -1;
    um_region r;
    memset(&r, 0, sizeof r);
    char *p;
    if (m == UM_MEMORY) {
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        SYS_CHECK(p != MAP_FAILED, "mmap of anonymous memory");
    } else {
        fd = prepare_file(o, path, a);
        um_region_opts ro = UM_REGION_OPTS_INIT;
        ro.seg_size = o->seg_size;
        ro.read_file = a == A_WRITE_NEW ? 0 : 1;
        um_region_open(&r, m, fd, 0, size, &ro, false);
        p = um_region_ptr(&r);
    }
    uint64_t *seen = bench_malloc(o->pages * sizeof *seen);
    if (a == A_WRITE_AFTER_READ) { /* map every page by a load first (not timed) */
        for (size_t i = 0; i < o->pages; i++) {
            seen[i] = *(volatile uint64_t *)(p + i * (size_t)g_page);
        }
    }
    const bool store = a == A_WRITE || a == A_WRITE_NEW || a == A_WRITE_AFTER_READ;
    double *lat = rw->lat + rw->nlat;
    long f0 = um_faults(NULL);
    uint64_t t_start = now_ns();
    for (size_t i = 0; i < o->pages; i++) {
        size_t pg = order[i];
        volatile uint64_t *w = (volatile uint64_t *)(p + pg * (size_t)g_page);
        uint64_t t0 = now_ns();
        if (store) {
            *w = um_word(TAG_STORE, pg);
        } else {
            seen[pg] = *w;
        }
        lat[i] = (double)(now_ns() - t0);
    }
    rw->total_ns += (double)(now_ns() - t_start);
    rw->faults += um_faults(NULL) - f0;
    rw->nlat += o->pages;

    /* check: loads saw the file (memory: zeros); stores reached the file */
    bool ok = true;
    for (size_t pg = 0; pg < o->pages && ok && (!store || a == A_WRITE_AFTER_READ); pg++) {
        uint64_t want = m == UM_MEMORY ? 0 : um_word(TAG_FILE, pg * (size_t)g_page);
        if (seen[pg] != want) {
            fprintf(stderr, "ummap_fault: %s %s: page %zu loaded %#llx, expected %#llx\n",
                    um_method_name(m), access_name[a], pg, (unsigned long long)seen[pg],
                    (unsigned long long)want);
            ok = false;
        }
    }
    if (m == UM_MEMORY) {
        for (size_t pg = 0; pg < o->pages && ok && store; pg++) {
            ok = *(uint64_t *)(p + pg * (size_t)g_page) == um_word(TAG_STORE, pg);
        }
        SYS_CHECK(munmap(p, size) == 0, "munmap");
    } else {
        if (store) {
            um_region_sync(&r);
        }
        um_region_close(&r);
        for (size_t pg = 0; pg < o->pages && ok && store; pg++) {
            uint64_t got;
            um_pread_all(fd, &got, sizeof got, (off_t)(pg * (size_t)g_page));
            if (got != um_word(TAG_STORE, pg)) {
                fprintf(stderr, "ummap_fault: %s %s: the file's page %zu holds %#llx, not "
                        "what was stored\n", um_method_name(m), access_name[a], pg,
                        (unsigned long long)got);
                ok = false;
            }
        }
        close(fd);
        SYS_CHECK(unlink(path) == 0, path);
    }
    free(seen);
    rw->ok &= ok;
}

static double percentile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
    g_page = sysconf(_SC_PAGESIZE);
    options o = parse_options(argc, argv);
    double clk = clock_overhead_ns();
    fprintf(stderr, "# ummap_fault: %zu pages of %ld B, ummap segment %zu B, %d reps, clock "
            "pair %.0f ns, dir %s\n", o.pages, g_page, o.seg_size, o.reps, clk, o.dir);
    size_t *order_of[2];
    order_of[0] = bench_malloc(o.pages * sizeof(size_t));
    for (size_t i = 0; i < o.pages; i++) {
        order_of[0][i] = i;
    }
    order_of[1] = um_permutation(o.pages, 42);

    for (int ord = 0; ord < 2; ord++) {
        if (!o.order[ord]) {
            continue;
        }
        for (int a = 0; a < A_N; a++) {
            if (!(o.access_mask & (1u << a))) {
                continue;
            }
            /* mmap first: the others' lines carry the ratio to it */
            const enum um_method ms[3] = {UM_MMAP, UM_UMMAP, UM_MEMORY};
            double mmap_mean = NAN;
            for (int k = 0; k < 3; k++) {
                enum um_method m = ms[k];
                if (m == UM_MEMORY && (a == A_READ_COLD || a == A_WRITE_NEW)) {
                    continue; /* the same as read / write for anonymous memory */
                }
                row rw = {.lat = bench_malloc((size_t)o.reps * o.pages * sizeof(double)),
                          .ok = true};
                for (int rep = 0; rep < o.reps; rep++) {
                    run_one(&o, m, (enum access)a, order_of[ord], &rw);
                }
                double mean = rw.total_ns / (double)rw.nlat;
                if (m == UM_MMAP) {
                    mmap_mean = mean;
                }
                bench_json j;
                bench_json_begin(&j, "ummap_fault");
                bench_json_str(&j, "access", access_name[a]);
                bench_json_str(&j, "order", ord ? "rnd" : "seq");
                bench_json_str(&j, "method", um_method_name(m));
                bench_json_int(&j, "pages", (long long)o.pages);
                bench_json_int(&j, "reps", o.reps);
                if (m == UM_UMMAP) {
                    bench_json_int(&j, "seg_size", (long long)o.seg_size);
                }
                bench_json_num(&j, "mean_us", mean / 1e3);
                bench_json_num(&j, "median_us", percentile(rw.lat, rw.nlat, 0.5) / 1e3);
                bench_json_num(&j, "p99_us", percentile(rw.lat, rw.nlat, 0.99) / 1e3);
                bench_json_num(&j, "faults_per_touch", (double)rw.faults / (double)rw.nlat);
                bench_json_num(&j, "clock_pair_us", clk / 1e3);
                bench_json_str(&j, "baseline", m == UM_MMAP ? NULL : "mmap");
                bench_json_num(&j, "ratio", m == UM_MMAP ? NAN : mmap_mean / mean);
                bench_json_bool(&j, "verified", rw.ok);
                bench_json_end(&j);
                free(rw.lat);
            }
        }
    }
    free(order_of[0]);
    free(order_of[1]);
    return 0;
}
