#include "util/log.h"

#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t level_once = PTHREAD_ONCE_INIT;
static enum tio_log_level level = TIO_LOG_WARN;

static void read_level(void)
{
    const char *s = getenv("TIERIO_LOG");
    if (!s || !*s)
        return;
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; i++)
        if (strcasecmp(s, names[i]) == 0)
            level = (enum tio_log_level)i;
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
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
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
