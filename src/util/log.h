/* Logging on stderr, prefixed with the MPI rank: TIERIO_LOG=error|warn|info|debug
 * (default warn). Thread-safe: one fprintf per message. */
#ifndef TIO_UTIL_LOG_H
#define TIO_UTIL_LOG_H

enum tio_log_level { TIO_LOG_ERROR = 0, TIO_LOG_WARN, TIO_LOG_INFO, TIO_LOG_DEBUG };

int tio_log_enabled(enum tio_log_level level);

/* TIERIO_LOG's key table (util/settings.h), for the reference. */
struct tio_key_table;
extern const struct tio_key_table tio_log_keys;
void tio_log(enum tio_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define TIO_WARN(...)  tio_log(TIO_LOG_WARN, __VA_ARGS__)
#define TIO_INFO(...)  tio_log(TIO_LOG_INFO, __VA_ARGS__)
#define TIO_DEBUG(...) tio_log(TIO_LOG_DEBUG, __VA_ARGS__)

#endif
