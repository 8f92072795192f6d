/* The tier layer's environment variables, as a key table (util/settings.h). */
#ifndef TIO_TIER_TIER_ENV_H
#define TIO_TIER_TIER_ENV_H

#include <limits.h>

#include "util/settings.h"

struct tio_tier_env {
    char site[PATH_MAX];       /* TIERIO_SITE: the site file, "" = none */
    char node_local[PATH_MAX]; /* TIERIO_NODE_LOCAL: `tierio probe`'s node-local directory */
    char pfs[PATH_MAX];        /* TIERIO_PFS: `tierio probe`'s parallel file system */
};

extern const struct tio_key_table tio_tier_env_keys;

/* Read them. TIO_OK, or the error naming the variable. */
int tio_tier_env(struct tio_tier_env *e, struct tio_err *err);

#endif
