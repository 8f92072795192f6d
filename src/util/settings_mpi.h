/* The settings tables (util/settings.h) bound to MPI_Info. */
#ifndef TIO_UTIL_SETTINGS_MPI_H
#define TIO_UTIL_SETTINGS_MPI_H

#include <mpi.h>

#include "util/settings.h"

/* MPI_Info as a getter (ctx: MPI_Info *). */
long tio_settings_info_get(void *ctx, const char *key, char *val, size_t len);

/* Parse the table from info (MPI_INFO_NULL: none) and, when use_env, the environment: each
 * info object is read once, here. */
int tio_settings_from_info(const struct tio_key_table *t, void *s, MPI_Info info,
                           int use_env, enum tio_key_from *from, struct tio_err *err);

/* Set in info every key of the table that the settings s report (the get_info answers). */
void tio_settings_report(const struct tio_key_table *t, const void *s, MPI_Info info);

/* Warn about every key of info that looks like a tierio setting and is none
 * (tio_settings_check_name); every layer that reads an info object calls it. */
void tio_settings_check_info(MPI_Info info);

/* A key of info that starts with prefix and is not in the table: a misspelling, an error
 * naming it (TIO_E_INFO_KEY). */
int tio_settings_unknown(const struct tio_key_table *t, MPI_Info info, const char *prefix,
                         struct tio_err *err);

#endif
