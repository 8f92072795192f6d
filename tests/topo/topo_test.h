/* Helpers of the storage-topology tests (tests/topo): checking a neighborhood split against
 * the expected groups (membership, size and MPI's order: key, then rank in comm), checking
 * an error (same class and message on every process, MPI_COMM_NULL, nothing left), and
 * counting probe files. Built on tests/mpi/tio_test.h (failures counted, agreed at
 * tt_finish). Header-only. */
#ifndef TIO_TOPO_TEST_H
#define TIO_TOPO_TEST_H

#include "../mpi/tio_test.h"

#include <tierio/topo.h>

static const enum tio_nbhd_algorithm tp_algs[] = {TIO_NBHD_AUTO, TIO_NBHD_HYBRID,
                                                  TIO_NBHD_EXHAUSTIVE, TIO_NBHD_HEURISTIC};
#define TP_NALGS 4

/* Entries of dir whose names start with the probe prefix (-1: cannot read dir). */
TT_FN int tp_probe_count(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, ".tierio-nbhd-", 13) == 0;
    closedir(d);
    return n;
}

/* Entries of dir other than . and .. (-1: cannot read dir). */
TT_FN int tp_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* An info with the algorithm (and the directory when dir is not NULL). */
TT_FN MPI_Info tp_info(enum tio_nbhd_algorithm alg, const char *dir)
{
    MPI_Info info;
    TT_MPI(MPI_Info_create(&info));
    tt_info_set(info, TIO_NBHD_HINT_ALGORITHM, tio_nbhd_algorithm_name(alg));
    if (dir)
        tt_info_set(info, TIO_NBHD_HINT_DIRNAME, dir);
    return info;
}

/* Check newcomm, the result of a split of comm where process r passed key[r] and belongs
 * to group group[r] (-1: MPI_COMM_NULL expected). Every process checks its own result:
 * same members as its group, ordered by (key, rank in comm). Frees newcomm. */
TT_FN void tp_check_split(MPI_Comm comm, MPI_Comm *newcomm, const int *group, const int *key,
                          const char *what)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (group[rank] < 0) {
        TT_CHECK(*newcomm == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL (no access)", what);
        if (*newcomm != MPI_COMM_NULL)
            MPI_Comm_free(newcomm);
        return;
    }
    if (*newcomm == MPI_COMM_NULL) {
        tt_fail("%s: got MPI_COMM_NULL, expected group %d", what, group[rank]);
        return;
    }
    /* The expected members in MPI's order: key, then rank (insertion sort, small n). */
    int *want = malloc((size_t)size * sizeof *want), n = 0;
    for (int r = 0; r < size; r++) {
        if (group[r] != group[rank])
            continue;
        int i = n++;
        while (i > 0 && (key[want[i - 1]] > key[r] ||
                         (key[want[i - 1]] == key[r] && want[i - 1] > r))) {
            want[i] = want[i - 1];
            i--;
        }
        want[i] = r;
    }
    int nsize = -1, inter = 1;
    MPI_Comm_size(*newcomm, &nsize);
    MPI_Comm_test_inter(*newcomm, &inter);
    TT_CHECK(!inter, "%s: got an intercommunicator", what);
    if (nsize != n) {
        tt_fail("%s: new communicator has %d processes, expected %d (group %d)", what, nsize, n,
                group[rank]);
    } else {
        MPI_Group g_new, g_old;
        int *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
        for (int i = 0; i < n; i++)
            in[i] = i;
        MPI_Comm_group(*newcomm, &g_new);
        MPI_Comm_group(comm, &g_old);
        MPI_Group_translate_ranks(g_new, n, in, g_old, out);
        for (int i = 0; i < n; i++)
            if (out[i] != want[i]) {
                tt_fail("%s: new rank %d is rank %d of comm, expected %d (order by key, "
                        "then rank)", what, i, out[i], want[i]);
                break;
            }
        MPI_Group_free(&g_new);
        MPI_Group_free(&g_old);
        free(in);
        free(out);
    }
    free(want);
    MPI_Comm_free(newcomm);
}

/* rc must be an error of the class ex names (harness_mpi.h: EX_*), its message must
 * contain sub (if not NULL), and newcomm must be MPI_COMM_NULL. Then all processes compare
 * messages: the same error everywhere. */
TT_FN void tp_check_error(MPI_Comm comm, int rc, MPI_Comm newcomm, struct et_expect ex,
                          const char *sub, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "", why[3 * MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS) {
        tt_fail("%s: succeeded, expected an error", what);
    } else {
        TT_CHECK(tt_error_class_is(rc, ex, msg, why, sizeof why), "%s: %s", what, why);
        TT_CHECK(!sub || strstr(msg, sub), "%s: message \"%s\" lacks \"%s\"", what, msg, sub);
    }
    TT_CHECK(newcomm == MPI_COMM_NULL, "%s: newcomm is not MPI_COMM_NULL after an error", what);
    /* The same message on every process: compare with rank 0's. */
    char m0[MPI_MAX_ERROR_STRING];
    memcpy(m0, msg, sizeof m0);
    MPI_Bcast(m0, (int)sizeof m0, MPI_CHAR, 0, comm);
    TT_CHECK(strcmp(m0, msg) == 0, "%s: rank 0 reports \"%s\", this process \"%s\"", what, m0,
             msg);
}

#endif
