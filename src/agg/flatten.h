/* File views as byte ranges, for the MPI-IO route (mpiio.c): the data blocks of one
 * instance of a derived datatype, from its envelope and contents (no memory of its
 * extent is touched), and the file ranges an access of a view covers. Views whose
 * filetype is a subarray, vector, indexed, struct or any nesting of them (coll_perf's 3D
 * blocks, PnetCDF's variables) then go through the engine like contiguous ones. */
#ifndef TIO_AGG_FLATTEN_H
#define TIO_AGG_FLATTEN_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The blocks of a type: byte offsets from its origin, in typemap order, adjacent ones
 * merged. */
struct tio_agg_flat {
    size_t n, cap;
    int64_t *off, *len;
    int64_t size, extent;           /* MPI_Type_size and extent of the type */
};

/* 0 on success; -1 when the type cannot be described so (a combiner not handled: darray,
 * Fortran types; a named pair type with holes; more than max blocks; out of memory). */
int tio_agg_flatten(MPI_Datatype type, size_t max, struct tio_agg_flat *f);
void tio_agg_flat_free(struct tio_agg_flat *f);

/* A view (disp + blocks of the filetype, tiled every extent) read or written from data
 * byte `first` on for `bytes` bytes: its file ranges in order, at most max (*n set; -1
 * when more, or out of memory). The blocks must be in increasing, non-overlapping order
 * (what MPI asks of a filetype); -1 otherwise. */
int tio_agg_flat_ranges(const struct tio_agg_flat *f, MPI_Offset disp, int64_t first,
                        int64_t bytes, size_t max, MPI_Offset **off, MPI_Offset **len,
                        size_t *n);

#endif
