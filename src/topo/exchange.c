#include "topo/exchange.h"

#include "util/agree.h"

#include <stdio.h>
#include <string.h>

struct wire_err {
    int cls;
    char msg[TIO_ERRMSG_MAX];
};

int topo_allgather(MPI_Comm comm, const int *mine, int n, int *all, struct tio_err *err)
{
    int rank, size, stride = n + 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    /* Gathered in place with an error flag before each process's ints, then compacted
     * (moving down in rank order never overwrites what is still to be moved). */
    int *slot = all + rank * stride;
    slot[0] = err->cls != TIO_OK;
    memcpy(slot + 1, mine, (size_t)n * sizeof *all);
    if (PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, stride, MPI_INT, comm) !=
        MPI_SUCCESS)
        return tio_err_set(err, TIO_E_OTHER, "MPI_Allgather failed during discovery");
    int root = -1;
    for (int r = 0; r < size; r++) {
        if (root < 0 && all[r * stride])
            root = r;
        memmove(all + r * n, all + r * stride + 1, (size_t)n * sizeof *all);
    }
    if (root < 0)
        return TIO_OK;
    return tio_share_error(comm, root, err);
}

int topo_bcast(MPI_Comm comm, int root, int *vals, int n, struct tio_err *err)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    struct {
        int v[8];
        struct wire_err e;
    } m;
    memset(&m, 0, sizeof m);
    if (rank == root) {
        memcpy(m.v, vals, (size_t)n * sizeof *vals);
        m.e.cls = err->cls;
        snprintf(m.e.msg, sizeof m.e.msg, "%s", err->cls != TIO_OK ? err->msg : "");
    }
    if (PMPI_Bcast(&m, (int)sizeof m, MPI_BYTE, root, comm) != MPI_SUCCESS)
        return tio_err_set(err, TIO_E_OTHER, "MPI_Bcast failed during discovery");
    memcpy(vals, m.v, (size_t)n * sizeof *vals);
    if (m.e.cls == TIO_OK)
        return TIO_OK;
    tio_err_adopt(err, m.e.cls, m.e.msg, root);
    return err->cls;
}
