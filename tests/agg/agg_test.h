/* Shared by the aggregation tests (tests/agg): data sizes drawn from the distributions of
 * seed 002 §4.2, a site file describing the tiers, and checking a target's bytes (shared
 * file, or subfiles / node-local files through their manifest) against the expected image.
 * Header-only, on top of tests/mpi/tio_test.h. */
#ifndef TIO_AGG_TEST_H
#define TIO_AGG_TEST_H

#include "../mpi/tio_test.h"
#include "../common/leftovers.h"

#include <math.h>

#include <tierio.h>

enum at_dist { AT_FIXED, AT_UNIFORM, AT_NORMAL, AT_NDIST };
static const char *const at_dist_name[AT_NDIST] = {"fixed", "uniform", "normal"};

/* A field of /proc/self/status in KiB ("VmHWM": peak resident memory), -1 if absent. */
TT_FN long at_status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    long kb = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':')
            kb = atol(line + n + 1);
    if (f)
        fclose(f);
    return kb;
}

/* splitmix64: the same stream on every process. */
TT_FN uint64_t at_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Bytes of every rank: fixed = max; uniform in [0, max]; normal with mean max/2 and
 * standard deviation max/6, clipped to [0, max]. Rank 1 (when there is one) has nothing,
 * in every distribution. */
TT_FN void at_sizes(enum at_dist d, int64_t max, int n, uint64_t seed, int64_t *out)
{
    uint64_t s = seed;
    for (int r = 0; r < n; r++) {
        double u1 = ((double)(at_next(&s) >> 11) + 0.5) / 9007199254740992.0;
        double u2 = ((double)(at_next(&s) >> 11) + 0.5) / 9007199254740992.0;
        double v;
        switch (d) {
        case AT_FIXED: v = (double)max; break;
        case AT_UNIFORM: v = u1 * (double)(max + 1); break;
        default: v = max / 2.0 + max / 6.0 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2); break;
        }
        if (v < 0)
            v = 0;
        if (v > (double)max)
            v = (double)max;
        out[r] = (int64_t)v;
    }
    if (n > 1)
        out[1] = 0;
}

/* A site file in dir: DRAM and node-local storage (node_local_dir) with figures, and the
 * shared directory as the global tier. Returns its path (static). */
TT_FN const char *at_site(const char *dir, const char *node_local_dir, const char *ssd_capacity)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/site.conf", dir);
    if (tt_rank == 0) {
        FILE *f = fopen(path, "w");
        if (!f)
            TT_DIE("cannot write %s: %s", path, strerror(errno));
        fprintf(f, "[network]\nlatency = 20us\nbandwidth = 2GB/s\n"
                   "node_latency = 1us\nnode_bandwidth = 10GB/s\n\n"
                   "[tier dram]\nkind = dram\nlatency = 100ns\nbandwidth = 20GB/s\n\n"
                   "[tier ssd]\nkind = node-local\npath = %s\nlatency = 50us\n"
                   "read_bandwidth = 2GB/s\nwrite_bandwidth = 1GB/s\ncapacity = %s\n\n"
                   "[tier pfs]\nkind = global\npath = %s\nlatency = 1ms\n"
                   "read_bandwidth = 400MB/s\nwrite_bandwidth = 200MB/s\n",
                node_local_dir, ssd_capacity, dir);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return path;
}


/* The expected image: bytes [0, extent) of the access's space, 0 where nobody writes. */
struct at_image {
    uint8_t *bytes;
    char *set;      /* written by somebody */
    int64_t extent;
};

/* Check the target against the image. file: the shared file's bytes [0, extent) must equal
 * it where set. subfiles / node-local: the manifest at path names data files
 * (<datadir>/<base>.<k>, datadir = the manifest's directory, or node_local_dir); every set
 * byte must be in an extent, and each process checks the extents in files it can see (the
 * lowest process of each node for node-local files of its host, rank 0 for subfiles).
 * Collective. Returns the number of set bytes checked by all (the caller compares it). */
TT_FN int64_t at_check_target(const char *path, const char *target, const char *node_local_dir,
                             const struct at_image *im, const char *what)
{
    int64_t checked = 0;
    if (!strcmp(target, "file")) {
        if (tt_rank == 0) {
            int64_t end = im->extent; /* the file ends with the last byte written */
            while (end > 0 && !im->set[end - 1])
                end--;
            uint8_t *got = malloc((size_t)end + 1);
            int fd = open(path, O_RDONLY);
            struct stat st;
            ssize_t n = fd >= 0 ? pread(fd, got, (size_t)end + 1, 0) : -1;
            if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size != end)
                n = -2;
            if (fd >= 0)
                close(fd);
            if (n != end)
                tt_fail("%s: \"%s\" has %zd bytes (-2: another size), %lld expected", what,
                        path, n, (long long)end);
            else
                for (int64_t i = 0; i < end; i++)
                    if (im->set[i]) {
                        if (got[i] != im->bytes[i]) {
                            tt_fail("%s: byte %lld of \"%s\" is 0x%02x, 0x%02x expected", what,
                                    (long long)i, path, got[i], im->bytes[i]);
                            break;
                        }
                        checked++;
                    }
            free(got);
        }
    } else {
        /* Which processes look: node leaders for node-local, rank 0 for subfiles. */
        MPI_Comm node;
        int nrank;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &nrank);
        MPI_Comm_free(&node);
        int local = !strcmp(target, "node-local");
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        size_t len;
        char *text = (local ? nrank == 0 : tt_rank == 0) ? tt_read_all(path, &len) : NULL;
        if ((local ? nrank == 0 : tt_rank == 0) && !text)
            tt_fail("%s: cannot read the manifest \"%s\"", what, path);
        char dir[PATH_MAX], base[NAME_MAX + 1] = "";
        snprintf(dir, sizeof dir, "%s", local ? node_local_dir : path);
        if (!local && strrchr(dir, '/'))
            *strrchr(dir, '/') = 0;
        char fhost[64][64];
        int nfiles = 0;
        int64_t covered = 0;
        for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
            long long lo, hi, at;
            int file, idx;
            long long size;
            char h[64], kind[32];
            if (sscanf(line, "base %255s %31s", base, kind) == 2) {
                if (strcmp(kind, local ? "node-local" : "file"))
                    tt_fail("%s: manifest says %s", what, kind);
            } else if (sscanf(line, "file %d %lld %63s", &idx, &size, h) == 3 && idx < 64) {
                snprintf(fhost[idx], sizeof fhost[idx], "%s", h);
                nfiles = idx + 1;
            } else if (sscanf(line, "extent %lld %lld %d %lld", &lo, &hi, &file, &at) == 4) {
                if (file >= nfiles) {
                    tt_fail("%s: extent names file %d of %d", what, file, nfiles);
                    continue;
                }
                for (int64_t x = lo; x < hi && x < im->extent; x++)
                    covered += im->set[x];
                if (local && strcmp(fhost[file], host))
                    continue;
                char dp[PATH_MAX + 300];
                snprintf(dp, sizeof dp, "%s/%s.%d", dir, base, file);
                int fd = open(dp, O_RDONLY);
                if (fd < 0) {
                    tt_fail("%s: cannot open data file \"%s\": %s", what, dp, strerror(errno));
                    continue;
                }
                uint8_t *got = malloc((size_t)(hi - lo));
                ssize_t n = pread(fd, got, (size_t)(hi - lo), (off_t)at);
                close(fd);
                if (n != hi - lo)
                    tt_fail("%s: \"%s\" holds %zd of the %lld bytes at %lld", what, dp, n,
                            hi - lo, at);
                else
                    for (int64_t x = lo; x < hi && x < im->extent; x++)
                        if (im->set[x]) {
                            if (got[x - lo] != im->bytes[x]) {
                                tt_fail("%s: byte %lld (in \"%s\" at %lld) is 0x%02x, 0x%02x "
                                        "expected", what, (long long)x, dp,
                                        (long long)(at + x - lo), got[x - lo], im->bytes[x]);
                                break;
                            }
                            checked++;
                        }
                free(got);
            }
        }
        if (text) {
            int64_t want = 0;
            for (int64_t x = 0; x < im->extent; x++)
                want += im->set[x];
            if (covered != want)
                tt_fail("%s: the manifest covers %lld of the %lld bytes written", what,
                        (long long)covered, (long long)want);
        }
        free(text);
    }
    int64_t total = 0;
    MPI_Allreduce(&checked, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* Remove the data files of a subfile / node-local target (every node's leader for
 * node-local: each sees its own directory). Collective. */
TT_FN void at_remove_data(const char *path, const char *target, const char *node_local_dir)
{
    MPI_Comm node;
    int nrank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_free(&node);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    if (strrchr(dir, '/'))
        *strrchr(dir, '/') = 0;
    if (strcmp(target, "file") && (!strcmp(target, "node-local") ? nrank == 0 : tt_rank == 0))
        for (int k = 0; k < 64; k++) {
            char p[PATH_MAX + 300];
            snprintf(p, sizeof p, "%s/%s.%d", !strcmp(target, "node-local") ? node_local_dir : dir,
                     name, k);
            unlink(p);
        }
    if (tt_rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
}

#endif
