/* libtierio-pmpi: the MPI-IO route (include/tierio/agg.h). MPI_File_open gives a file an
 * aggregation handle when info tierio_agg=enable or TIERIO_AGG=1 asks for it; on such
 * files the collective calls below go through tierio's aggregation engine when their data
 * and file view are contiguous. Every other case, and every other MPI_File call, goes to
 * the MPI library unchanged. */
#include <mpi.h>

#include "tierio/agg.h"

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                  MPI_File *fh)
{
    return tio_file_open(comm, filename, amode, info, fh);
}

int MPI_File_close(MPI_File *fh)
{
    return tio_file_close(fh);
}

int MPI_File_sync(MPI_File fh)
{
    return tio_file_sync(fh);
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    return tio_file_get_info(fh, info_used);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return tio_file_write_at_all(fh, offset, buf, count, datatype, status);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return tio_file_read_at_all(fh, offset, buf, count, datatype, status);
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return tio_file_write_all(fh, buf, count, datatype, status);
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return tio_file_read_all(fh, buf, count, datatype, status);
}
