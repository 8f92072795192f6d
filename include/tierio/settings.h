/* The reference of every info key and environment variable tierio reads, from the tables
 * the library's layers declare (docs/settings.md is this, generated). */
#ifndef TIERIO_SETTINGS_H
#define TIERIO_SETTINGS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Print the reference to out: as Markdown (docs/settings.md) when markdown is non-zero,
 * else one line per setting with the value the environment gives it now. */
void tio_settings_print(FILE *out, int markdown);

#ifdef __cplusplus
}
#endif
#endif
