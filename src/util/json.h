/* JSON output: the one string escaper of the library and the `tierio` command (which
 * compiles this file in, as it uses only the public API of the library). */
#ifndef TIO_UTIL_JSON_H
#define TIO_UTIL_JSON_H

#include <stdio.h>

/* s as a JSON string: quoted, with quotes, backslashes and control characters escaped. */
void tio_json_str(FILE *f, const char *s);

#endif
