/* tierio's version: of the headers a program was compiled with (these macros) and of the
 * library it runs with (tio_version), and what the library was built with
 * (tio_build_info; `tierio info` prints it). */
#ifndef TIERIO_VERSION_H
#define TIERIO_VERSION_H

#include "tierio/export.h"

#define TIERIO_VERSION_MAJOR 0
#define TIERIO_VERSION_MINOR 1
#define TIERIO_VERSION_PATCH 0
#define TIERIO_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library loaded at run time, "MAJOR.MINOR.PATCH"; the numbers too
 * when the pointers are not NULL. A program may compare it with TIERIO_VERSION_STRING. */
TIO_API const char *tio_version(int *major, int *minor, int *patch);

/* What this build of the library has, one fact per index from 0: *key and *value are set
 * and 0 returned, or -1 past the last. Keys: "version", "mpi" (the MPI library it was
 * compiled against), "mpi_standard", "hwloc", "liburing", "ummap_drivers",
 * "agg_strategies", "agg_targets". Values are constant strings. */
TIO_API int tio_build_info(int index, const char **key, const char **value);

#ifdef __cplusplus
}
#endif
#endif
