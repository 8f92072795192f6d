/* Where a checkpoint set keeps its files, and the file-system steps that make them
 * durable, check them and remove them. POSIX only (no MPI), so it is unit-testable.
 *
 *   <dir>/<name>/v<version>/r<rank>.<file>           a process's own file
 *   <dir>/<name>/v<version>/partner/r<rank>.<file>   a partner copy held for rank
 *   <dir>/<name>/v<version>/manifest                 written last: the version is complete
 *
 * <dir> is the local or the global directory; both levels use the same layout. */
#ifndef TIO_CKPT_STORE_H
#define TIO_CKPT_STORE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/fileio.h" /* whole writes, tio_fsync_dir */

#define TIO_CKPT_NAME_MAX 64     /* bytes of a set or file name, without the NUL */
#define TIO_CKPT_MANIFEST "manifest"
#define TIO_CKPT_PARTNER_DIR "partner"

/* A set or file name: [A-Za-z0-9._-]{1,64}, not starting with '.'. what names the
 * argument in the error message. */
int tio_ckpt_check_name(const char *s, const char *what, struct tio_err *err);

/* Copy a name that tio_ckpt_check_name accepted into dst[TIO_CKPT_NAME_MAX + 1]. */
void tio_ckpt_copy_name(char *dst, const char *name);

/* <dir>/<name> and <dir>/<name>/v<version>; -1 if it does not fit in len. */
int tio_ckpt_set_path(char *out, size_t len, const char *dir, const char *name);
int tio_ckpt_vdir(char *out, size_t len, const char *dir, const char *name, long long version);
/* <vdir>/r<rank>.<file>, or <vdir>/partner/r<rank>.<file> when partner. */
int tio_ckpt_file_path(char *out, size_t len, const char *vdir, int partner, int rank,
                       const char *file);

/* mkdir -p (mode 0755 for what it creates); each directory it creates is made durable in
 * its parent (fsync of the parent). */
int tio_ckpt_mkdirs(const char *path, struct tio_err *err);

/* The largest version v < bound in <set dir> whose directory holds a manifest (any
 * content), or -1. A missing set directory is no version. */
long long tio_ckpt_newest_version(const char *setdir, long long bound);

/* Remove version directories of setdir: every one with a version >= from (the
 * leftovers that tio_ckpt_begin clears); or (prune) every complete one but the newest
 * `keep`, and every incomplete one older than the newest complete one -- except version
 * `protect` (one being drained; -1 for none). Manifests go first (then a directory
 * fsync), so a version being removed never looks complete with files missing. Returns
 * TIO_OK or the first error (it goes on with the others). */
int tio_ckpt_remove_from(const char *setdir, long long from, struct tio_err *err);
int tio_ckpt_prune(const char *setdir, int keep, long long protect, struct tio_err *err);
/* Remove one version directory the same way. A missing one is fine. */
int tio_ckpt_remove_version(const char *setdir, long long version, struct tio_err *err);

/* Size and CRC-32C of a whole file (read through once); fsync it when sync. */
int tio_ckpt_file_sum(const char *path, int sync, uint64_t *size, uint32_t *crc,
                      struct tio_err *err);

/* fsync a file that must hold exactly size bytes (its checksum is known already). */
int tio_ckpt_file_sync(const char *path, uint64_t size, struct tio_err *err);

/* Does path hold exactly size bytes with checksum crc? 1 yes, 0 no (why in err, class
 * TIO_E_NOENT for a missing file, TIO_E_IO for a size or checksum mismatch). */
int tio_ckpt_file_matches(const char *path, uint64_t size, uint32_t crc, struct tio_err *err);

/* Copy src to dst (created or truncated, mode 0644), checking on the way that src holds
 * size bytes with checksum crc, and fsync dst. On any failure dst is removed. */
int tio_ckpt_copy_file(const char *src, const char *dst, uint64_t size, uint32_t crc,
                       struct tio_err *err);

#endif
