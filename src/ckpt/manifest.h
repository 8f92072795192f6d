/* The manifest of a checkpoint version: every process's files with their sizes and
 * CRC-32C checksums. Its presence (under its final name) is what makes a version complete
 * at a level, so it is written last and atomically; it carries its own checksum on its last
 * line, so a damaged or cut manifest is rejected, never half-believed. POSIX only.
 *
 *   tierio-checkpoint 1
 *   set <name>
 *   version <version>
 *   ranks <processes>
 *   files <count>
 *   f <rank> <size> <crc32c, 8 hex digits> <file name>      one line per file, by rank
 *   end <crc32c of every byte above, 8 hex digits>
 */
#ifndef TIO_CKPT_MANIFEST_H
#define TIO_CKPT_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt/store.h"
#include "util/error.h"

struct tio_manifest_file {
    int rank;
    uint64_t size;
    uint32_t crc;
    char name[TIO_CKPT_NAME_MAX + 1];
};

struct tio_manifest {
    char set[TIO_CKPT_NAME_MAX + 1];
    long long version;
    int nranks;
    int nfiles;
    struct tio_manifest_file *files; /* by rank, then in the order the process gave them */
    int *first;                      /* files of rank r: [first[r], first[r + 1]) */
};

/* One "f" line into buf; returns its length, or -1 if it does not fit. */
int tio_manifest_line(char *buf, size_t len, int rank, uint64_t size, uint32_t crc,
                      const char *name);

/* The whole manifest text from the "f" lines of every rank (concatenated, by rank).
 * *text is malloc'ed. */
int tio_manifest_build(const char *set, long long version, int nranks, const char *lines,
                       size_t lines_len, char **text, size_t *text_len, struct tio_err *err);

/* Parse and validate text (checksum, syntax, names, ranks in order and in range, no file
 * twice for a rank). On failure m is empty and err says what is wrong. */
int tio_manifest_parse(const char *text, size_t len, struct tio_manifest *m,
                       struct tio_err *err);
void tio_manifest_free(struct tio_manifest *m);

/* The entry of rank's file name, or NULL. */
const struct tio_manifest_file *tio_manifest_find(const struct tio_manifest *m, int rank,
                                                  const char *name);

/* Write text as <vdir>/manifest: a temporary file, fsync, rename, fsync of vdir. */
int tio_manifest_write(const char *vdir, const char *text, size_t len, struct tio_err *err);

/* Read <vdir>/manifest whole (*text malloc'ed and NUL-terminated). */
int tio_manifest_read(const char *vdir, char **text, size_t *len, struct tio_err *err);

#endif
