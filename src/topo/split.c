/* tio_comm_split_neighborhood and the MPI_Comm_split_type entry of libtierio-pmpi: agree
 * on the arguments, run the algorithm, split by the group found (MPI_Comm_split orders
 * each group by key, then by rank in comm), record what it cost. */
#include <string.h>

#include "tierio/topo.h"
#include "topo/discover.h"
#include "topo/exchange.h"
#include "topo/probe.h"
#include "topo/split_type.h"
#include "util/agree.h"
#include "util/error_mpi.h"
#include "util/log.h"

/* Per thread, so that concurrent discoveries under MPI_THREAD_MULTIPLE do not mix. */
static _Thread_local struct tio_nbhd_stats last_stats;
static _Thread_local int have_last_stats;

const char *tio_nbhd_algorithm_name(enum tio_nbhd_algorithm algorithm)
{
    switch (algorithm) {
    case TIO_NBHD_AUTO: return "auto";
    case TIO_NBHD_EXHAUSTIVE: return "exhaustive";
    case TIO_NBHD_HEURISTIC: return "heuristic";
    case TIO_NBHD_HYBRID: return "hybrid";
    }
    return NULL;
}

int tio_nbhd_last_stats(struct tio_nbhd_stats *stats)
{
    if (!stats)
        return 0;
    if (!have_last_stats) {
        memset(stats, 0, sizeof *stats);
        return 0;
    }
    *stats = last_stats;
    return 1;
}

static void record(const struct topo_call *c, const struct topo_result *res, int code,
                   double t0)
{
    struct tio_nbhd_stats *s = &last_stats;
    memset(s, 0, sizeof *s);
    s->algorithm = c->alg;
    s->error = code;
    s->nprocs = c->size;
    s->nodes = res->nodes;
    s->groups = res->groups;
    s->excluded = res->excluded;
    s->fileops = res->mine.creates + res->mine.lookups + res->mine.listings + res->mine.checks;
    s->creates_all = res->all.creates;
    s->lookups_all = res->all.lookups;
    s->listings_all = res->all.listings;
    s->removals_all = res->all.removals;
    s->checks_all = res->all.checks;
    s->fileops_all = s->creates_all + s->lookups_all + s->listings_all + s->checks_all;
    s->seconds = PMPI_Wtime() - t0;
    have_last_stats = 1;
}

static int split(MPI_Comm comm, const char *dirname, int key, MPI_Info info,
                 MPI_Comm *newcomm, int from_split_type)
{
    double t0 = PMPI_Wtime();
    struct tio_err err;
    struct topo_call c;
    struct topo_result res;
    tio_err_clear(&err);
    memset(&c, 0, sizeof c);
    memset(&res, 0, sizeof res);
    res.color = MPI_UNDEFINED;
    if (newcomm)
        *newcomm = MPI_COMM_NULL;

    /* Failures every process detects alike need no agreement. */
    int inter = 0;
    if (comm == MPI_COMM_NULL) {
        tio_err_set(&err, TIO_E_ARG, "comm is MPI_COMM_NULL");
        return tio_err_raise_comm(MPI_COMM_NULL, &err);
    }
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        tio_err_set(&err, TIO_E_UNSUPPORTED,
                    "neighborhood split of an intercommunicator: use an intracommunicator");
        return tio_err_raise_comm(comm, &err);
    }

    if (topo_call_init(&c, comm, dirname, info, newcomm == NULL, &err) != TIO_OK)
        goto fail;
    if (!c.given) {
#ifdef MPIX_COMM_TYPE_NEIGHBORHOOD
        /* No process named a directory: the MPI library's own neighborhood keys (MPICH's
         * network_topo), or its MPI_COMM_NULL, apply unchanged. */
        if (from_split_type) {
            topo_call_free(&c);
            return PMPI_Comm_split_type(comm, MPIX_COMM_TYPE_NEIGHBORHOOD, key, info, newcomm);
        }
#endif
        tio_err_set(&err, TIO_E_INFO_KEY, "no directory to probe: set info key %s%s",
                    TIO_NBHD_HINT_DIRNAME, from_split_type ? "" : " or pass dirname");
        goto fail;
    }

    switch (c.alg) {
    case TIO_NBHD_EXHAUSTIVE: topo_exhaustive(&c, &res, &err); break;
    case TIO_NBHD_HEURISTIC: topo_heuristic(&c, &res, &err); break;
    default: topo_hybrid(&c, &res, &err); break;
    }

    /* Every probe is removed, then all processes make sure that every removal worked
     * before any returns. err is the same on every process here. */
    struct tio_err rm;
    tio_err_clear(&rm);
    if (res.probe[0])
        topo_probe_remove(c.dir, res.probe, &res.mine, &rm);
    if (err.cls != TIO_OK) {
        if (tio_agree(comm, &rm, NULL, 0) != TIO_OK && c.rank == 0)
            tio_log(TIO_LOG_ERROR, "%s (while failing with: %s)", rm.msg, err.msg);
        goto fail;
    }
    /* On success that agreement overlaps the split that makes the result. */
    int failed = rm.cls != TIO_OK ? c.size - c.rank : 0, first_failed = 0;
    MPI_Request req;
    if (PMPI_Iallreduce(&failed, &first_failed, 1, MPI_INT, MPI_MAX, comm, &req) !=
        MPI_SUCCESS) {
        tio_err_set(&err, TIO_E_OTHER, "MPI_Iallreduce failed while agreeing on the removals");
        goto fail;
    }
    int rc = PMPI_Comm_split(comm, res.color, key, newcomm);
    PMPI_Wait(&req, MPI_STATUS_IGNORE);
    if (first_failed) {
        if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL)
            PMPI_Comm_free(newcomm);
        tio_share_error(comm, c.size - first_failed, &rm);
        err = rm;
        goto fail;
    }
    record(&c, &res, rc, t0);
    if (c.rank == 0)
        TIO_INFO("%s: %s found %d group(s) of %d processes on %d node(s), %d without access; "
                 "%lld file operations, %.3f ms", c.dir, tio_nbhd_algorithm_name(c.alg),
                 res.groups, c.size, res.nodes, res.excluded, last_stats.fileops_all,
                 last_stats.seconds * 1e3);
    topo_call_free(&c);
    return rc; /* an MPI_Comm_split failure was raised by MPI already */

fail:;
    int code = tio_err_mpi_code(&err);
    record(&c, &res, code, t0);
    topo_call_free(&c);
    if (code != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(comm, code);
    return code;
}

int tio_comm_split_neighborhood(MPI_Comm comm, const char *dirname, int key, MPI_Info info,
                                MPI_Comm *newcomm)
{
    return split(comm, dirname, key, info, newcomm, 0);
}

int tio_topo_split_type(MPI_Comm comm, int key, MPI_Info info, MPI_Comm *newcomm)
{
    return split(comm, NULL, key, info, newcomm, 1);
}
