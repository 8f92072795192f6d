/* The engine's names and settings for the tables of util/settings.h: the evict policies
 * and I/O drivers (the storage-window hints that choose them take their values from here,
 * win/hints.c) and the engine's environment variables (ummap/keys.c). */
#ifndef TIO_UMMAP_KEYS_H
#define TIO_UMMAP_KEYS_H

#include "util/settings.h"

/* Fault-handling threads at most (TIERIO_UMMAP_HANDLERS). */
#define TIO_UM_HANDLERS_MAX 16

/* By UMMAP_PTYPE_* value (policy.c). */
extern const struct tio_key_word tio_um_policy_words[];

/* A parse hook (util/settings.h) for a key naming an I/O driver: one of this build's. */
int tio_um_driver_known(const struct tio_key *k, const char *val, void *s, const char **why,
                        char *buf, size_t len);

/* The engine's environment variables (read by api.c, memnode_env.c, uffd.c). */
extern const struct tio_key_table tio_um_env_table;

/* The variables read where they are used: the value, its default when unset, or -1
 * (NULL) with err naming the variable and the reason. */
int tio_um_env_bulk_sync(struct tio_err *err);
const char *tio_um_env_driver(char *out, size_t len, struct tio_err *err); /* "" = posix */
int tio_um_env_handlers(struct tio_err *err);

#endif
