/* Turning a tio_err into an MPI error code whose MPI_Error_string is the message,
 * and raising it through a communicator's or window's error handler. */
#ifndef TIO_UTIL_ERROR_MPI_H
#define TIO_UTIL_ERROR_MPI_H

#include <mpi.h>

#include "util/error.h"

/* An MPI error code for e (MPI_SUCCESS when e holds no error). The code's class is the
 * matching predefined MPI class (MPI_ERR_NO_SPACE, MPI_ERR_INFO_VALUE, ...) where the MPI
 * library can attach a string to it; MPICH 4.0 cannot, so there the class is one tierio
 * adds per reason. Codes are recycled from a small ring per class, so a message stays
 * readable until that many newer errors of the same class have been raised. */
int tio_err_mpi_code(const struct tio_err *e);

/* The MPI class a tierio reason corresponds to. */
int tio_err_mpi_class(enum tio_errclass cls);

/* Raise e through comm's (or win's) error handler and return the code. */
int tio_err_raise_comm(MPI_Comm comm, const struct tio_err *e);
int tio_err_raise_win(MPI_Win win, const struct tio_err *e);

#endif
