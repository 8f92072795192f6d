/* Probe files: the only things discovery does on the probed file system.
 *
 * Every probe of one discovery is named after a token drawn at random for that call (128
 * bits), so concurrent discoveries, other jobs and leftovers of a crashed
 * run never collide with it: <dir>/.tierio-nbhd-<token> (one file per directory, hybrid
 * and heuristic) or <dir>/.tierio-nbhd-<token>.<rank> (one per process, exhaustive).
 * Probes are created O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, and read O_NOFOLLOW, so a
 * planted file or symbolic link is never followed or reused. Each function counts what it
 * did on the file system in a topo_ops. Pure POSIX: unit-tested without MPI. */
#ifndef TIO_TOPO_PROBE_H
#define TIO_TOPO_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define TOPO_PROBE_PREFIX ".tierio-nbhd-"
#define TOPO_TOKEN_LEN 32 /* hex digits */
/* Longest probe path suffix: "/" prefix token "." rank */
#define TOPO_PROBE_SUFFIX_MAX (1 + sizeof TOPO_PROBE_PREFIX + TOPO_TOKEN_LEN + 12)

/* File-system operations of one process (see struct tio_nbhd_stats). */
struct topo_ops {
    long long creates;  /* creation attempts, failed ones included */
    long long lookups;  /* a probe looked up by name (opened and read) */
    long long listings; /* directory listings */
    long long removals; /* probes removed */
    long long checks;   /* writability checks of the directory (access(2)) */
};

enum topo_probe {
    TOPO_PROBE_DONE,   /* created / found */
    TOPO_PROBE_EXISTS, /* create: the name exists already (O_EXCL) */
    TOPO_PROBE_NODIR,  /* the directory does not exist for this process */
    TOPO_PROBE_ERROR   /* anything else; err says what */
};

/* 128 fresh random bits (each process draws its own; the token of a discovery is all of
 * them combined, see args.c). */
int topo_token_random(uint32_t raw[4], struct tio_err *err);

/* The token for raw: TOPO_TOKEN_LEN hex digits and a NUL. */
void topo_token_hex(const uint32_t raw[4], char *token);

/* dir/.tierio-nbhd-<token>, or with rank >= 0 dir/.tierio-nbhd-<token>.<rank>. The caller's
 * buffer holds strlen(dir) + TOPO_PROBE_SUFFIX_MAX bytes. */
void topo_probe_path(char *out, size_t len, const char *dir, const char *token, int rank);

/* Create path exclusively with content (NULL: empty), write it and close it. On a write
 * failure the file is removed again. EEXIST gives TOPO_PROBE_EXISTS, ENOENT
 * TOPO_PROBE_NODIR; everything else TOPO_PROBE_ERROR with err naming dir and the reason. */
enum topo_probe topo_probe_create(const char *dir, const char *path, const char *content,
                                  struct topo_ops *ops, struct tio_err *err);

/* Can this process create files in dir? The check of the processes that create no probe
 * (access(2) with the effective ids: a read-only mount shows also for root), counted in
 * ops->checks. A missing dir gives TOPO_PROBE_NODIR and no error, anything else (a
 * regular file: ENOTDIR) the error creating a probe would give. */
enum topo_probe topo_probe_writable(const char *dir, struct topo_ops *ops,
                                    struct tio_err *err);

/* The error of a probe name that exists already before this call made it. */
int topo_probe_taken(const char *path, struct tio_err *err);

/* Look up path by name and read up to len-1 bytes of it into buf (NUL-terminated; buf
 * may be NULL when only presence matters). ENOENT/ENOTDIR give TOPO_PROBE_NODIR. */
enum topo_probe topo_probe_read(const char *dir, const char *path, char *buf, size_t len,
                                struct topo_ops *ops, struct tio_err *err);

/* Remove a probe this process created. */
int topo_probe_remove(const char *dir, const char *path, struct topo_ops *ops,
                      struct tio_err *err);

/* List dir once and set seen[r] = 1 for every per-process probe of token with a rank
 * 0 <= r < nprocs. Other entries are ignored. */
int topo_probe_list(const char *dir, const char *token, int nprocs, unsigned char *seen,
                    struct topo_ops *ops, struct tio_err *err);

/* The rank in a directory entry name .tierio-nbhd-<token>.<rank>, or -1 when the name is
 * anything else (another token, no rank, a rank out of [0, nprocs), trailing bytes). */
int topo_probe_entry_rank(const char *name, const char *token, int nprocs);

#endif
