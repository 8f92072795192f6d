/* libtierio-pmpi: the MPI names, for unmodified programs (link it, or LD_PRELOAD it).
 * Each wrapper only forwards to the explicit API, which calls PMPI_* underneath. */
#include <mpi.h>

#include "tierio/win.h"

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                     void *baseptr, MPI_Win *win)
{
    return tio_win_allocate(size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    return tio_win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                         void *baseptr)
{
    return tio_win_shared_query(win, rank, size, disp_unit, baseptr);
}

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    return tio_alloc_mem(size, info, baseptr);
}

int MPI_Free_mem(void *base)
{
    return tio_free_mem(base);
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    return tio_win_attach(win, base, size);
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    return tio_win_detach(win, base);
}

int MPI_Win_sync(MPI_Win win)
{
    return tio_win_sync(win);
}

int MPI_Win_free(MPI_Win *win)
{
    return tio_win_free(win);
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    return tio_win_get_info(win, info_used);
}

int MPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    return tio_win_get_attr(win, keyval, attribute_val, flag);
}

#if MPI_VERSION >= 4
/* MPI-4 large-count forms: mpi4py calls these on MPICH. */
int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void *baseptr, MPI_Win *win)
{
    return tio_win_allocate_c(size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                              MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return tio_win_allocate_shared_c(size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                           void *baseptr)
{
    return tio_win_shared_query_c(win, rank, size, disp_unit, baseptr);
}
#endif
