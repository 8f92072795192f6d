/* The library as a whole: its version and what this build has (include/tierio/version.h).
 * This folder is the top of the layers: it may name any of them. */
#include <stdio.h>
#include <string.h>

#include <hwloc.h>
#include <mpi.h>

#include "agg/settings.h"
#include "tierio/agg.h"
#include "agg/strategy.h"
#include "lib/mpi_flavor.h"
#include "tierio/version.h"
#include "ummap/driver.h"
#include "util/settings.h"

const char *tio_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = TIERIO_VERSION_MAJOR;
    if (minor)
        *minor = TIERIO_VERSION_MINOR;
    if (patch)
        *patch = TIERIO_VERSION_PATCH;
    return TIERIO_VERSION_STRING;
}

static char um_drivers[128];
static char hwloc_version[32];
/* The aggregation targets, from the words of the target key's table. */
static char agg_targets[128];

/* Filled when the library is loaded, before any thread: tio_build_info only reads. */
__attribute__((constructor)) static void fill_lists(void)
{
    size_t at = 0;
    for (size_t i = 0; tio_umdrv_name(i); i++)
        at += (size_t)snprintf(um_drivers + at, sizeof um_drivers - at, "%s%s",
                               at ? " " : "", tio_umdrv_name(i));
    const struct tio_key *k = tio_settings_key(&tio_agg_keys, TIO_AGG_HINT_TARGET);
    at = 0;
    for (const struct tio_key_word *w = k ? k->words : NULL; w && w->word; w++) {
        int alias = 0; /* another spelling of a word listed already */
        for (const struct tio_key_word *v = k->words; v != w; v++)
            alias |= v->value == w->value;
        if (!alias)
            at += (size_t)snprintf(agg_targets + at, sizeof agg_targets - at, "%s%s",
                                   at ? " " : "", w->word);
    }
    unsigned v = HWLOC_API_VERSION;
    snprintf(hwloc_version, sizeof hwloc_version, "%u.%u.%u", v >> 16, (v >> 8) & 0xff,
             v & 0xff);
}

int tio_build_info(int index, const char **key, const char **value)
{
    static const char *const keys[] = {"version", "mpi", "mpi_standard", "hwloc", "liburing",
                                       "ummap_drivers", "agg_strategies", "agg_targets"};
    const char *values[] = {
        TIERIO_VERSION_STRING,
        TIO_BUILD_MPI,
        TIO_STR(MPI_VERSION) "." TIO_STR(MPI_SUBVERSION),
        hwloc_version,
#ifdef TIO_HAVE_URING
        "yes",
#else
        "no",
#endif
        um_drivers,
        tio_agg_strategy_names(),
        agg_targets,
    };
    if (index < 0 || (size_t)index >= sizeof keys / sizeof *keys)
        return -1;
    *key = keys[index];
    *value = values[index];
    return 0;
}
