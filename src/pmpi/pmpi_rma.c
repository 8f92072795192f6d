/* The one-sided calls, for storage windows made on MPI's shared-memory window: their
 * target displacements are shifted (win/translate.h). Every other window passes straight
 * through after one atomic load. */
#include <mpi.h>

#include "win/translate.h"

/* Tell libtierio that the one-sided calls are translated here. */
__attribute__((constructor)) static void interposed(void)
{
    tio_mark_rma_interposed();
}

#define X(win, rank, disp) tio_xlate_disp(win, rank, disp)

int MPI_Put(const void *oa, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
            MPI_Datatype tt, MPI_Win win)
{
    return PMPI_Put(oa, oc, ot, tr, X(win, tr, td), tc, tt, win);
}

int MPI_Get(void *oa, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt,
            MPI_Win win)
{
    return PMPI_Get(oa, oc, ot, tr, X(win, tr, td), tc, tt, win);
}

int MPI_Accumulate(const void *oa, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
                   MPI_Datatype tt, MPI_Op op, MPI_Win win)
{
    return PMPI_Accumulate(oa, oc, ot, tr, X(win, tr, td), tc, tt, op, win);
}

int MPI_Get_accumulate(const void *oa, int oc, MPI_Datatype ot, void *ra, int rc,
                       MPI_Datatype rt, int tr, MPI_Aint td, int tc, MPI_Datatype tt,
                       MPI_Op op, MPI_Win win)
{
    return PMPI_Get_accumulate(oa, oc, ot, ra, rc, rt, tr, X(win, tr, td), tc, tt, op, win);
}

int MPI_Fetch_and_op(const void *oa, void *ra, MPI_Datatype dt, int tr, MPI_Aint td,
                     MPI_Op op, MPI_Win win)
{
    return PMPI_Fetch_and_op(oa, ra, dt, tr, X(win, tr, td), op, win);
}

int MPI_Compare_and_swap(const void *oa, const void *ca, void *ra, MPI_Datatype dt, int tr,
                         MPI_Aint td, MPI_Win win)
{
    return PMPI_Compare_and_swap(oa, ca, ra, dt, tr, X(win, tr, td), win);
}

int MPI_Rput(const void *oa, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
             MPI_Datatype tt, MPI_Win win, MPI_Request *req)
{
    return PMPI_Rput(oa, oc, ot, tr, X(win, tr, td), tc, tt, win, req);
}

int MPI_Rget(void *oa, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt,
             MPI_Win win, MPI_Request *req)
{
    return PMPI_Rget(oa, oc, ot, tr, X(win, tr, td), tc, tt, win, req);
}

int MPI_Raccumulate(const void *oa, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc,
                    MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    return PMPI_Raccumulate(oa, oc, ot, tr, X(win, tr, td), tc, tt, op, win, req);
}

int MPI_Rget_accumulate(const void *oa, int oc, MPI_Datatype ot, void *ra, int rc,
                        MPI_Datatype rt, int tr, MPI_Aint td, int tc, MPI_Datatype tt,
                        MPI_Op op, MPI_Win win, MPI_Request *req)
{
    return PMPI_Rget_accumulate(oa, oc, ot, ra, rc, rt, tr, X(win, tr, td), tc, tt, op, win,
                                req);
}

#if MPI_VERSION >= 4
int MPI_Put_c(const void *oa, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td,
              MPI_Count tc, MPI_Datatype tt, MPI_Win win)
{
    return PMPI_Put_c(oa, oc, ot, tr, X(win, tr, td), tc, tt, win);
}

int MPI_Get_c(void *oa, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td, MPI_Count tc,
              MPI_Datatype tt, MPI_Win win)
{
    return PMPI_Get_c(oa, oc, ot, tr, X(win, tr, td), tc, tt, win);
}

int MPI_Accumulate_c(const void *oa, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td,
                     MPI_Count tc, MPI_Datatype tt, MPI_Op op, MPI_Win win)
{
    return PMPI_Accumulate_c(oa, oc, ot, tr, X(win, tr, td), tc, tt, op, win);
}

int MPI_Get_accumulate_c(const void *oa, MPI_Count oc, MPI_Datatype ot, void *ra,
                         MPI_Count rc, MPI_Datatype rt, int tr, MPI_Aint td, MPI_Count tc,
                         MPI_Datatype tt, MPI_Op op, MPI_Win win)
{
    return PMPI_Get_accumulate_c(oa, oc, ot, ra, rc, rt, tr, X(win, tr, td), tc, tt, op, win);
}

int MPI_Rput_c(const void *oa, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td,
               MPI_Count tc, MPI_Datatype tt, MPI_Win win, MPI_Request *req)
{
    return PMPI_Rput_c(oa, oc, ot, tr, X(win, tr, td), tc, tt, win, req);
}

int MPI_Rget_c(void *oa, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td, MPI_Count tc,
               MPI_Datatype tt, MPI_Win win, MPI_Request *req)
{
    return PMPI_Rget_c(oa, oc, ot, tr, X(win, tr, td), tc, tt, win, req);
}

int MPI_Raccumulate_c(const void *oa, MPI_Count oc, MPI_Datatype ot, int tr, MPI_Aint td,
                      MPI_Count tc, MPI_Datatype tt, MPI_Op op, MPI_Win win,
                      MPI_Request *req)
{
    return PMPI_Raccumulate_c(oa, oc, ot, tr, X(win, tr, td), tc, tt, op, win, req);
}

int MPI_Rget_accumulate_c(const void *oa, MPI_Count oc, MPI_Datatype ot, void *ra,
                          MPI_Count rc, MPI_Datatype rt, int tr, MPI_Aint td, MPI_Count tc,
                          MPI_Datatype tt, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    return PMPI_Rget_accumulate_c(oa, oc, ot, ra, rc, rt, tr, X(win, tr, td), tc, tt, op,
                                  win, req);
}
#endif
