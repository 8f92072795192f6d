/* Collective agreement on errors: a collective call where one process failed locally
 * must fail on every process (else the others hang in the next collective), and every
 * process should report the real reason. */
#ifndef TIO_UTIL_AGREE_H
#define TIO_UTIL_AGREE_H

#include <mpi.h>

#include "util/error.h"

/* The rule for agreed messages: the error of the lowest failing rank reaches every
 * process prefixed "rank R: " exactly once, R being that process's rank in the
 * communicator of the first agreement (the caller's, or a duplicate of it). A message that
 * already starts with a rank prefix was agreed before: sharing it again (a later
 * agreement, where every process fails and rank 0 becomes the lowest) keeps it as it is,
 * and context added on the way out goes after the prefix (tio_err_wrap). */

/* All processes of comm call this. flags[0..n) are OR-ed (MPI_MAX) across processes
 * (n <= 6). When some process has an error in err, every process gets the error of the
 * lowest such rank in err (prefixed with that rank unless agreed before) and its TIO
 * error class is returned. */
int tio_agree(MPI_Comm comm, struct tio_err *err, int *flags, int n);

/* Every process of comm gets root's error (root knows it failed; the others know that it
 * did), prefixed "rank R: " unless agreed before. Returns its class. */
int tio_share_error(MPI_Comm comm, int root, struct tio_err *err);
/* Take the error (cls, msg) of process root as ours, prefixed "rank R: " unless msg was
 * agreed before. */
void tio_err_adopt(struct tio_err *err, int cls, const char *msg, int root);

/* Length of the rank prefix ("rank <digits>: ") msg starts with, 0 when none. */
size_t tio_err_rank_prefix(const char *msg);

/* Record in err (first error wins) the error msg, of class cls, with context before its
 * reason: "[rank R: ]<context>: <msg without its prefix>". For an error that comes back
 * from a collective call (an MPI error string, a drain's outcome) and gets a context. */
int tio_err_wrap(struct tio_err *err, enum tio_errclass cls, const char *msg,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
