/* The reference of every info key and environment variable tierio reads, from the tables
 * the library's layers declare (docs/settings.md is this, generated). */
#ifndef TIERIO_SETTINGS_H
#define TIERIO_SETTINGS_H

#include "tierio/export.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What tio_settings_print prints. */
enum tio_settings_format {
    /* the reference: one line per setting, with the value its variable has now */
    TIO_SETTINGS_REFERENCE = 0,
    /* the reference as Markdown (docs/settings.md) */
    TIO_SETTINGS_MARKDOWN = 1,
    /* the effective value of every environment variable (its value or default), and
     * whether it is valid: as text (only the variables that are set) or as a JSON array */
    TIO_SETTINGS_ENVIRONMENT = 2,
    TIO_SETTINGS_ENVIRONMENT_JSON = 3
};

/* Print to out in one of the formats above. Returns how many environment variables have
 * an invalid value (the environment formats; 0 for the others), or -1 for a bad format. */
TIO_API int tio_settings_print(FILE *out, int format);

#ifdef __cplusplus
}
#endif
#endif
