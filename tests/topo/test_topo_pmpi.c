/* MPI_Comm_split_type through libtierio-pmpi (linked):
 *   - TIERIO_COMM_TYPE_NEIGHBORHOOD with nbhd_common_dirname gives tierio's split (ordered
 *     by key; tio_nbhd_last_stats shows the discovery and the algorithm asked for);
 *   - MPICH: TIERIO_COMM_TYPE_NEIGHBORHOOD equals MPIX_COMM_TYPE_NEIGHBORHOOD, and a call
 *     with MPIX_COMM_TYPE_NEIGHBORHOOD gets tierio's results too; without any directory the
 *     call goes to MPICH unchanged (MPI_COMM_NULL, no error); Open MPI: without a directory
 *     it is an error naming the key, on every process;
 *   - a missing directory is an error on every process (MPICH's own implementation would
 *     spin forever; the test's timeout catches that);
 *   - MPI_COMM_TYPE_SHARED and MPI_UNDEFINED reach the MPI library unchanged and do not
 *     count as discoveries. */
#include "topo_test.h"

#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
_Static_assert(TIERIO_COMM_TYPE_NEIGHBORHOOD == MPIX_COMM_TYPE_NEIGHBORHOOD,
               "tierio's split type must be MPICH's");
#endif

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "topo_pmpi");
    int *key = malloc((size_t)tt_size * sizeof *key), *group = calloc((size_t)tt_size, sizeof *group);
    for (int r = 0; r < tt_size; r++)
        key[r] = 100 - r; /* reversed: MPI_Comm_dup or a listing order would not give it */
    char dir[PATH_MAX], missing[PATH_MAX];
    tt_path(dir, sizeof dir, "shared");
    tt_path(missing, sizeof missing, "missing");
    if (tt_rank == 0 && mkdir(dir, 0755) < 0)
        TT_DIE("mkdir %s: %s", dir, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
    struct tio_nbhd_stats s;
    MPI_Comm nc;
    int rc;
    TT_CHECK(tio_nbhd_last_stats(&s) == 0 && s.fileops_all == 0,
             "statistics before any discovery");

    /* Each algorithm through MPI_Comm_split_type. */
    for (int a = 1; a < TP_NALGS; a++) {
        char what[96];
        snprintf(what, sizeof what, "MPI_Comm_split_type, %s", tio_nbhd_algorithm_name(tp_algs[a]));
        MPI_Info info = tp_info(tp_algs[a], dir);
        rc = MPI_Comm_split_type(MPI_COMM_WORLD, TIERIO_COMM_TYPE_NEIGHBORHOOD, key[tt_rank], info,
                                 &nc);
        MPI_Info_free(&info);
        TT_CHECK(rc == MPI_SUCCESS, "%s: failed", what);
        TT_CHECK(tio_nbhd_last_stats(&s) == 1 && s.algorithm == tp_algs[a] && s.groups == 1,
                 "%s: no tierio discovery recorded (algorithm %d)", what, (int)s.algorithm);
        if (rc == MPI_SUCCESS)
            tp_check_split(MPI_COMM_WORLD, &nc, group, key, what);
        TT_CHECK(tp_entries(dir) == 0, "%s: probe files left", what);
    }

#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
    {
        MPI_Info info = tp_info(TIO_NBHD_EXHAUSTIVE, dir);
        rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, key[tt_rank], info,
                                 &nc);
        MPI_Info_free(&info);
        TT_CHECK(rc == MPI_SUCCESS, "MPIX_COMM_TYPE_NEIGHBORHOOD: failed");
        TT_CHECK(tio_nbhd_last_stats(&s) == 1 && s.algorithm == TIO_NBHD_EXHAUSTIVE &&
                     s.fileops_all == 2 * tt_size,
                 "MPIX_COMM_TYPE_NEIGHBORHOOD did not run tierio's exhaustive discovery "
                 "(stats: algorithm %d, %lld file operations)", (int)s.algorithm, s.fileops_all);
        if (rc == MPI_SUCCESS)
            tp_check_split(MPI_COMM_WORLD, &nc, group, key, "MPIX_COMM_TYPE_NEIGHBORHOOD");
        /* No directory anywhere: MPICH's own handling, which gives MPI_COMM_NULL. */
        double before = s.seconds;
        nc = MPI_COMM_WORLD;
        rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPIX_COMM_TYPE_NEIGHBORHOOD, 0, MPI_INFO_NULL,
                                 &nc);
        TT_CHECK(rc == MPI_SUCCESS && nc == MPI_COMM_NULL,
                 "no directory: MPICH should give MPI_COMM_NULL (rc %d)", rc);
        TT_CHECK(tio_nbhd_last_stats(&s) == 1 && s.seconds == before,
                 "no directory: counted as a tierio discovery");
    }
#else
    nc = MPI_COMM_WORLD;
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, TIERIO_COMM_TYPE_NEIGHBORHOOD, 0, MPI_INFO_NULL, &nc);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_INFO_KEY, TIO_NBHD_HINT_DIRNAME,
                   "no directory (Open MPI)");
#endif

    /* A missing directory: an error everywhere, promptly. */
    MPI_Info info = tp_info(TIO_NBHD_AUTO, missing);
    nc = MPI_COMM_WORLD;
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, TIERIO_COMM_TYPE_NEIGHBORHOOD, 0, info, &nc);
    MPI_Info_free(&info);
    tp_check_error(MPI_COMM_WORLD, rc, nc, EX_NOENT, missing, "missing directory");

    /* Other split types are the MPI library's. */
    tio_nbhd_last_stats(&s);
    double last = s.seconds;
    MPI_Comm mine, ref;
    TT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, key[tt_rank], MPI_INFO_NULL,
                               &mine));
    TT_MPI(PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, key[tt_rank], MPI_INFO_NULL,
                                &ref));
    int cmp = MPI_UNEQUAL;
    MPI_Comm_compare(mine, ref, &cmp);
    TT_CHECK(cmp == MPI_CONGRUENT, "MPI_COMM_TYPE_SHARED through the wrapper differs (%d)", cmp);
    MPI_Comm_free(&mine);
    MPI_Comm_free(&ref);
    nc = MPI_COMM_WORLD;
    TT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &nc));
    TT_CHECK(nc == MPI_COMM_NULL, "MPI_UNDEFINED should give MPI_COMM_NULL");
    TT_CHECK(tio_nbhd_last_stats(&s) == 1 && s.seconds == last,
             "other split types were taken for discoveries");
    free(key);
    free(group);
    return tt_finish();
}
