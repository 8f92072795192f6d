/* The I/O phase of an aggregator, off the main thread: while the main thread moves the
 * next round into (out of) one buffer by one-sided communication, this thread writes
 * (reads) another buffer through the driver. One job per buffer at a time. The thread
 * makes no MPI call. */
#ifndef TIO_AGG_IOTHREAD_H
#define TIO_AGG_IOTHREAD_H

#include <stddef.h>
#include <stdint.h>

#include "agg/driver.h"
#include "agg/plan.h"

struct tio_agg_io;

int tio_agg_io_start(struct tio_agg_io **io, int nslots, struct tio_err *err);
void tio_agg_io_stop(struct tio_agg_io *io);

/* Queue (inline = 0) or run here (inline = 1, after every queued job has finished) the
 * transfer of runs[0..n) between file space and mem: the byte at file offset x is at
 * mem + (x - base). runs are copied. Slot `slot` must have no job. */
int tio_agg_io_submit(struct tio_agg_io *io, int slot, int writing, struct tio_agg_driver *d,
                      char *mem, int64_t base, const struct tio_agg_run *runs, size_t n,
                      int inline_, struct tio_err *err);

/* Wait for the job of slot (no-op when there is none); its error, if any, into err. */
int tio_agg_io_wait(struct tio_agg_io *io, int slot, struct tio_err *err);
/* Wait for every job; the first error into err. */
int tio_agg_io_wait_all(struct tio_agg_io *io, struct tio_err *err);

#endif
