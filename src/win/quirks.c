#include "win/quirks.h"

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "util/log.h"
#include "win/rma.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int misplaces;

/* Put one byte into a window on a process of its own whose base is 8 bytes past a 16-byte
 * boundary, and see where it lands. The window is made on a duplicate of MPI_COMM_SELF
 * that returns errors: MPI_COMM_SELF's own handler is the application's (fatal by
 * default), and Open MPI cannot make this window at all under MPI_THREAD_MULTIPLE (its
 * pt2pt one-sided component refuses). Then nothing can be learnt here, and nothing is
 * assumed misplaced: the libraries that misplace (MPICH 4.0) make such windows. */
static void probe(void)
{
    static _Alignas(64) char buf[128];
    char *base = buf + 24; /* 16-byte aligned + 8 */
    MPI_Comm self;
    MPI_Win win;
    memset(buf, 0, sizeof buf);
    if (PMPI_Comm_dup(MPI_COMM_SELF, &self) != MPI_SUCCESS)
        return;
    PMPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
    int rc = PMPI_Win_create(base, 64, 1, MPI_INFO_NULL, self, &win);
    if (rc != MPI_SUCCESS) {
        TIO_INFO("cannot make a window to check where this MPI library puts RMA on bases "
                 "not 16-byte aligned; assuming it puts it right");
        PMPI_Comm_free(&self);
        return;
    }
    PMPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    char one = 1;
    PMPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    tio_rma_put(&one, 1, MPI_CHAR, 0, 32, 1, MPI_CHAR, win);
    PMPI_Win_unlock(0, win);
    PMPI_Win_free(&win);
    PMPI_Comm_free(&self);
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
