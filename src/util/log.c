#include "util/log.h"

#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/settings.h"

struct log_settings {
    int level;
};

static const struct tio_key_word level_words[] = {
    {"error", TIO_LOG_ERROR}, {"warn", TIO_LOG_WARN}, {"info", TIO_LOG_INFO},
    {"debug", TIO_LOG_DEBUG}, {NULL, 0}};

static const struct tio_key keys[] = {
    {.env = "TIERIO_LOG", .type = TIO_KEY_CHOICE, .def = "warn",
     TIO_KEY_FIELD(struct log_settings, level), .words = level_words, .nocase = 1,
     .values = "error | warn | info | debug",
     .doc = "what tierio logs on stderr, each line prefixed with the rank."},
};

TIO_SETTINGS_TABLE(tio_log_keys, 90, "logging", NULL, keys, struct log_settings)


static pthread_once_t level_once = PTHREAD_ONCE_INIT;
static enum tio_log_level level = TIO_LOG_WARN;

static void read_level(void)
{
    struct log_settings s;
    struct tio_err err = {0};
    /* Unchecked: the misspelling warnings would come back here, inside this
     * pthread_once. */
    if (tio_settings_env_unchecked(&tio_log_keys, "TIERIO_LOG", &s, &err) != TIO_OK) {
        /* The logger cannot log its own setting: straight to stderr, once. */
        fprintf(stderr, "tierio: %s; logging warnings and errors\n", err.msg);
        return;
    }
    level = (enum tio_log_level)s.level;
}

int tio_log_enabled(enum tio_log_level l)
{
    pthread_once(&level_once, read_level);
    return l <= level;
}

/* The rank in MPI_COMM_WORLD, or -1 before MPI_Init / after MPI_Finalize. */
static int world_rank(void)
{
    int init = 0, fin = 0, rank = -1;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin)
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

void tio_log(enum tio_log_level l, const char *fmt, ...)
{
    if (!tio_log_enabled(l))
        return;
    static const char *tags[] = {"error", "warn", "info", "debug"};
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[tierio %d] %s: %s\n", world_rank(), tags[l], msg);
}
