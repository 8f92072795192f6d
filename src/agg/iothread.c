/* The aggregator's I/O thread: see iothread.h. */
#include "agg/iothread.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { JOB_NONE = 0, JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job {
    int state;
    int writing;
    struct tio_agg_driver *d;
    char *mem;
    int64_t base;
    struct tio_agg_run *runs;
    size_t n, cap;
    unsigned long seq;        /* submission order: the thread runs the oldest first */
    struct tio_err err;
};

struct tio_agg_io {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    int stop;
    int nslots;
    unsigned long seq;
    struct job *jobs;
};

static void run_job(struct job *j)
{
    tio_err_clear(&j->err);
    for (size_t i = 0; i < j->n && j->err.cls == TIO_OK; i++) {
        char *p = j->mem + (j->runs[i].lo - j->base);
        int64_t len = j->runs[i].hi - j->runs[i].lo;
        if (j->writing)
            j->d->ops->write(j->d, p, j->runs[i].lo, len, &j->err);
        else
            j->d->ops->read(j->d, p, j->runs[i].lo, len, &j->err);
    }
}

static void *main_loop(void *arg)
{
    struct tio_agg_io *io = arg;
    pthread_mutex_lock(&io->lock);
    for (;;) {
        struct job *next = NULL;
        for (int s = 0; s < io->nslots; s++)
            if (io->jobs[s].state == JOB_QUEUED && (!next || io->jobs[s].seq < next->seq))
                next = &io->jobs[s];
        if (!next) {
            if (io->stop)
                break;
            pthread_cond_wait(&io->wake, &io->lock);
            continue;
        }
        next->state = JOB_RUNNING;
        pthread_mutex_unlock(&io->lock);
        run_job(next);
        pthread_mutex_lock(&io->lock);
        next->state = JOB_DONE;
        pthread_cond_broadcast(&io->done);
    }
    pthread_mutex_unlock(&io->lock);
    return NULL;
}

int tio_agg_io_start(struct tio_agg_io **out, int nslots, struct tio_err *err)
{
    struct tio_agg_io *io = calloc(1, sizeof *io);
    if (!io || !(io->jobs = calloc((size_t)nslots, sizeof *io->jobs))) {
        free(io);
        return tio_err_set(err, TIO_E_NOMEM, "aggregator I/O thread: out of memory");
    }
    io->nslots = nslots;
    pthread_mutex_init(&io->lock, NULL);
    pthread_cond_init(&io->wake, NULL);
    pthread_cond_init(&io->done, NULL);
    int rc = pthread_create(&io->thread, NULL, main_loop, io);
    if (rc) {
        pthread_mutex_destroy(&io->lock);
        pthread_cond_destroy(&io->wake);
        pthread_cond_destroy(&io->done);
        free(io->jobs);
        free(io);
        return tio_err_errno(err, rc, "starting the aggregator's I/O thread");
    }
    *out = io;
    return TIO_OK;
}

void tio_agg_io_stop(struct tio_agg_io *io)
{
    if (!io)
        return;
    pthread_mutex_lock(&io->lock);
    io->stop = 1;
    pthread_cond_broadcast(&io->wake);
    pthread_mutex_unlock(&io->lock);
    pthread_join(io->thread, NULL);
    for (int s = 0; s < io->nslots; s++)
        free(io->jobs[s].runs);
    pthread_mutex_destroy(&io->lock);
    pthread_cond_destroy(&io->wake);
    pthread_cond_destroy(&io->done);
    free(io->jobs);
    free(io);
}

int tio_agg_io_wait(struct tio_agg_io *io, int slot, struct tio_err *err)
{
    struct job *j = &io->jobs[slot];
    pthread_mutex_lock(&io->lock);
    while (j->state == JOB_QUEUED || j->state == JOB_RUNNING)
        pthread_cond_wait(&io->done, &io->lock);
    int was = j->state;
    j->state = JOB_NONE;
    pthread_mutex_unlock(&io->lock);
    if (was == JOB_DONE && j->err.cls != TIO_OK && err->cls == TIO_OK)
        *err = j->err;
    return err->cls;
}

int tio_agg_io_wait_all(struct tio_agg_io *io, struct tio_err *err)
{
    for (int s = 0; s < io->nslots; s++)
        tio_agg_io_wait(io, s, err);
    return err->cls;
}

int tio_agg_io_submit(struct tio_agg_io *io, int slot, int writing, struct tio_agg_driver *d,
                      char *mem, int64_t base, const struct tio_agg_run *runs, size_t n,
                      int inline_, struct tio_err *err)
{
    struct job *j = &io->jobs[slot];
    if (inline_) {
        /* Nothing may run beside it: the driver is used by one thread at a time. */
        tio_agg_io_wait_all(io, err);
        struct job here = {.writing = writing, .d = d, .mem = mem, .base = base,
                           .runs = (struct tio_agg_run *)runs, .n = n};
        run_job(&here);
        if (here.err.cls != TIO_OK && err->cls == TIO_OK)
            *err = here.err;
        return err->cls;
    }
    if (n > j->cap) {
        struct tio_agg_run *r = realloc(j->runs, sizeof *r * n);
        if (!r)
            return tio_err_set(err, TIO_E_NOMEM, "aggregator I/O thread: out of memory");
        j->runs = r;
        j->cap = n;
    }
    memcpy(j->runs, runs, sizeof *runs * n);
    pthread_mutex_lock(&io->lock);
    j->writing = writing;
    j->d = d;
    j->mem = mem;
    j->base = base;
    j->n = n;
    j->seq = ++io->seq;
    j->state = JOB_QUEUED;
    pthread_cond_signal(&io->wake);
    pthread_mutex_unlock(&io->lock);
    return TIO_OK;
}
