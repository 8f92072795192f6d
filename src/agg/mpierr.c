/* MPI error codes back into tio_err: see mpierr.h. */
#include "agg/mpierr.h"

#include <string.h>

#include "util/agree.h"
#include "util/error_mpi.h"

/* The reason of an MPI error class: a predefined class tierio maps to (Open MPI), or one
 * of the classes tierio adds where MPI cannot keep strings on predefined ones (MPICH),
 * recognised by the class's string. */
static enum tio_errclass reason_of(int cls)
{
    static const char *names[TIO_E_COUNT] = {
        "", "tierio: invalid argument", "tierio: missing or conflicting hint",
        "tierio: invalid hint value", "tierio: no such file or directory",
        "tierio: permission denied", "tierio: no space left", "tierio: I/O error",
        "tierio: out of memory", "tierio: unsupported", "tierio: error"};
    for (int c = TIO_E_ARG; c < TIO_E_COUNT; c++)
        if (tio_err_mpi_class((enum tio_errclass)c) == cls)
            return (enum tio_errclass)c;
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(cls, s, &len) == MPI_SUCCESS)
        for (int c = TIO_E_ARG; c < TIO_E_COUNT; c++)
            if (!strcmp(s, names[c]))
                return (enum tio_errclass)c;
    return TIO_E_OTHER;
}

int tio_agg_err_from_mpi(int rc, struct tio_err *err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_ERR_OTHER;
    msg[0] = 0;
    PMPI_Error_string(rc, msg, &len);
    PMPI_Error_class(rc, &cls);
    /* An error agreed on by a collective call keeps its rank prefix first. */
    return tio_err_wrap(err, reason_of(cls), msg, "%s", what);
}
