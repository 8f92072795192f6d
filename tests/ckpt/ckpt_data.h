/* The data the checkpoint tests write and verify: every process writes two files per
 * version, "state" (size depending on rank and version, never a multiple of a page) and
 * "meta.txt" (empty on every third rank), with content that is a deterministic function
 * of (rank, version, file). Writing goes through tio_ckpt_route and plain POSIX I/O, as an
 * application would; verification reads the routed path back byte for byte.
 * Needs tio_test.h first. */
#ifndef TIO_TEST_CKPT_DATA_H
#define TIO_TEST_CKPT_DATA_H

#include <tierio.h>

#define CD_NFILES 2
static const char *const cd_file[CD_NFILES] = {"state", "meta.txt"};

static size_t cd_scale = 1; /* multiply the state size (benchmark-like runs) */

TT_FN size_t cd_size(int rank, long long version, int f)
{
    if (f == 1)
        return rank % 3 == 1 ? 0 : 100 + (size_t)rank;
    return cd_scale * (100000 + (size_t)rank * 4099 + (size_t)(version % 97) * 7);
}

TT_FN uint64_t cd_seed(int rank, long long version, int f)
{
    return (uint64_t)rank * 1000003u + (uint64_t)version * 101u + (uint64_t)f;
}

/* Write bytes [from, to) of file f of this rank's `version` at path (created by the
 * first call). */
TT_FN void cd_write_part(const char *path, int rank, long long version, int f, size_t from,
                         size_t to)
{
    size_t n = to - from;
    uint8_t *buf = malloc(n ? n : 1);
    tt_fill(buf, n, cd_seed(rank, version, f), from);
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0)
        TT_DIE("cannot create %s: %s", path, strerror(errno));
    if (pwrite(fd, buf, n, (off_t)from) != (ssize_t)n)
        TT_DIE("cannot write %s: %s", path, strerror(errno));
    close(fd);
    free(buf);
}

/* Write every file of this rank's `version`: "state" through tio_ckpt_write on odd
 * versions (checksummed from memory), everything else through tio_ckpt_route and POSIX
 * I/O (commit reads it back), so both ways are in every test. */
TT_FN void cd_write_all(tio_ckpt_t ck, long long version)
{
    for (int f = 0; f < CD_NFILES; f++) {
        size_t n = cd_size(tt_rank, version, f);
        if (f == 0 && version % 2) {
            uint8_t *buf = malloc(n ? n : 1);
            tt_fill(buf, n, cd_seed(tt_rank, version, f), 0);
            TT_MPI(tio_ckpt_write(ck, cd_file[f], buf, n));
            free(buf);
            continue;
        }
        char path[PATH_MAX];
        TT_MPI(tio_ckpt_route(ck, cd_file[f], path, sizeof path));
        unlink(path);
        cd_write_part(path, tt_rank, version, f, 0, n);
    }
}

/* After a restart to `version`: every file of this rank, read at its routed path, is
 * exactly what cd_write_all wrote. Returns the number of bad files. */
TT_FN int cd_verify_all(tio_ckpt_t ck, long long version)
{
    int bad = 0;
    for (int f = 0; f < CD_NFILES; f++) {
        char path[PATH_MAX], what[128];
        int rc = tio_ckpt_route(ck, cd_file[f], path, sizeof path);
        if (rc != MPI_SUCCESS) {
            char s[MPI_MAX_ERROR_STRING];
            int l;
            MPI_Error_string(rc, s, &l);
            tt_fail("route(%s) after restart failed: %s", cd_file[f], s);
            bad++;
            continue;
        }
        size_t n = cd_size(tt_rank, version, f);
        uint8_t *exp = malloc(n ? n : 1);
        tt_fill(exp, n, cd_seed(tt_rank, version, f), 0);
        snprintf(what, sizeof what, "rank %d's %s of version %lld", tt_rank, cd_file[f],
                 version);
        struct stat st;
        if (stat(path, &st) < 0 || (size_t)st.st_size != n) {
            tt_fail("%s: %s has %lld bytes, expected %zu", what, path,
                    stat(path, &st) < 0 ? -1LL : (long long)st.st_size, n);
            bad++;
        } else {
            bad += tt_check_file(path, 0, exp, n, what);
        }
        free(exp);
    }
    return bad;
}

TT_FN const char *cd_level_name(int level)
{
    switch (level) {
    case TIO_CKPT_LEVEL_NONE: return "none";
    case TIO_CKPT_LEVEL_LOCAL: return "local";
    case TIO_CKPT_LEVEL_PARTNER: return "partner";
    case TIO_CKPT_LEVEL_GLOBAL: return "global";
    default: return "?";
    }
}

/* An info with the checkpoint keys; NULL values are left out. */
TT_FN MPI_Info cd_info(const char *local, const char *global, const char *partner,
                       const char *keep, const char *drain, const char *every)
{
    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    if (local)
        tt_info_set(info, TIO_CKPT_HINT_LOCAL_DIR, local);
    if (global)
        tt_info_set(info, TIO_CKPT_HINT_GLOBAL_DIR, global);
    if (partner)
        tt_info_set(info, TIO_CKPT_HINT_PARTNER, partner);
    if (keep)
        tt_info_set(info, TIO_CKPT_HINT_KEEP, keep);
    if (drain)
        tt_info_set(info, TIO_CKPT_HINT_DRAIN, drain);
    if (every)
        tt_info_set(info, TIO_CKPT_HINT_DRAIN_EVERY, every);
    return info;
}

#endif
