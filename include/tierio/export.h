/* Which symbols libtierio exports. The library is built with hidden visibility
 * (-fvisibility=hidden): only declarations marked TIO_API are part of its ABI, so internal
 * functions can change without breaking programs linked against libtierio.so.0, and cannot
 * clash with an application's own names. */
#ifndef TIERIO_EXPORT_H
#define TIERIO_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define TIO_API __attribute__((visibility("default")))
#else
#define TIO_API
#endif

#endif
