#include "win/quirks.h"

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "util/log.h"
#include "win/rma.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int misplaces;

/* Put one byte into a window on MPI_COMM_SELF whose base is 8 bytes past a 16-byte
 * boundary, and see where it lands. */
static void probe(void)
{
    static _Alignas(64) char buf[128];
    char *base = buf + 24; /* 16-byte aligned + 8 */
    MPI_Win win;
    memset(buf, 0, sizeof buf);
    if (PMPI_Win_create(base, 64, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win) != MPI_SUCCESS)
        return;
    char one = 1;
    PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    tio_rma_put(&one, 1, MPI_CHAR, 0, 32, 1, MPI_CHAR, win);
    PMPI_Win_unlock(0, win);
    PMPI_Win_free(&win);
    misplaces = base[32] != 1;
    if (misplaces)
        TIO_INFO("this MPI library misplaces RMA on windows with bases not 16-byte "
                 "aligned");
}

int tio_check_window_base(const void *base, const char *what, struct tio_err *err)
{
    if ((uintptr_t)base % 16 == 0)
        return TIO_OK;
    pthread_once(&once, probe);
    if (!misplaces)
        return TIO_OK;
    return tio_err_set(err, TIO_E_UNSUPPORTED,
                       "%s: this MPI library misplaces one-sided operations on windows "
                       "whose base address is not a multiple of 16 bytes (an MPICH 4.0 "
                       "defect); use an offset (and, for shared windows, sizes) that are "
                       "multiples of 16", what);
}
