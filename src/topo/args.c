/* The arguments of a discovery, parsed on each process and agreed across the
 * communicator before any probe is made: every process must name the same directory and
 * algorithm, or every process fails (a process probing another directory, or running
 * another algorithm, would wait forever in collectives the others never make).
 *
 * The agreement is one MPI_Allreduce of a small record, whatever the number of processes:
 * the lowest failing rank, the minimum and maximum of "a directory was given", of the
 * algorithm and of a 128-bit hash of the directory name, and the XOR of 128 random bits
 * from every process (the probes' token). Only when the processes disagree does rank 0's
 * name travel, so that the process that differs can say how. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/discover.h"
#include "topo/exchange.h"
#include "topo/hash.h"
#include "util/agree.h"
#include "util/settings_mpi.h"

/* The record: fields [0, NMAX) combine by MAX (a minimum is kept as the maximum of the
 * negated or complemented value), [NMAX, NREC) by XOR. */
enum {
    R_FAIL,                /* size - rank when this process failed: max = lowest rank */
    R_GIVEN, R_NGIVEN,     /* given, -given */
    R_ALG, R_NALG,         /* algorithm, -algorithm */
    R_DIR, R_NDIR = R_DIR + 4, /* directory hash, its complement */
    NMAX = R_NDIR + 4,
    R_TOKEN = NMAX,        /* random bits */
    NREC = R_TOKEN + 4
};

static void combine(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int *a = in;
    int *b = inout;
    for (int r = 0; r < *len; r++, a += NREC, b += NREC) {
        for (int i = 0; i < NMAX; i++)
            b[i] = a[i] > b[i] ? a[i] : b[i];
        for (int i = R_TOKEN; i < NREC; i++)
            b[i] ^= a[i];
    }
}

/* The topology keys (util/settings.h): read once from the info of the split. */
struct topo_args {
    char dir[PATH_MAX];
    int alg;
};

static const struct tio_key_word alg_words[] = {
    {"auto", TIO_NBHD_AUTO}, {"hybrid", TIO_NBHD_HYBRID}, {"exhaustive", TIO_NBHD_EXHAUSTIVE},
    {"heuristic", TIO_NBHD_HEURISTIC}, {NULL, 0}};

#define F(m) TIO_KEY_FIELD(struct topo_args, m)
static const struct tio_key keys[] = {
    {.name = TIO_NBHD_HINT_DIRNAME, .type = TIO_KEY_STRING, F(dir), .def_doc = "none (required)",
     .values = "a directory",
     .doc = "MPI_Comm_split_type(TIERIO_COMM_TYPE_NEIGHBORHOOD): the ranks that see the same "
            "directory under this name form one group."},
    {.name = TIO_NBHD_HINT_ALGORITHM, .type = TIO_KEY_CHOICE, .def = "auto", F(alg), .words = alg_words,
     .values = "auto | hybrid | exhaustive | heuristic",
     .doc = "how the groups are found; auto is hybrid (one probe per node)."},
};
#undef F

TIO_SETTINGS_TABLE(tio_topo_keys, 30, "storage topology", "topo.md", keys, struct topo_args)


/* This process's view of the arguments. */
static void parse_local(struct topo_call *c, const char *dirname, MPI_Info info,
                        struct tio_err *err)
{
    struct topo_args args;
    enum tio_key_from from[sizeof keys / sizeof *keys];
    if (tio_settings_from_info(&tio_topo_keys, &args, info, 0, from, err) != TIO_OK)
        return;
    c->alg = (enum tio_nbhd_algorithm)args.alg;
    int have_info_dir = from[0] != TIO_FROM_DEFAULT;
    if (dirname && have_info_dir && strcmp(dirname, args.dir) != 0) {
        tio_err_set(err, TIO_E_INFO_KEY,
                    "dirname \"%s\" and info key %s \"%s\" name different directories",
                    dirname, TIO_NBHD_HINT_DIRNAME, args.dir);
        return;
    }
    const char *d = dirname ? dirname : have_info_dir ? args.dir : NULL;
    if (!d)
        return;
    /* Probe paths are the directory plus a suffix: leave room for it. */
    size_t room = sizeof c->dir - TOPO_PROBE_SUFFIX_MAX;
    if (!*d) {
        tio_settings_bad(err, &keys[0], TIO_FROM_NAME, d, "empty directory name");
    } else if (strlen(d) >= room) {
        tio_settings_bad(err, &keys[0], TIO_FROM_NAME, d, "%zu bytes long (at most %zu)",
                         strlen(d), room - 1);
    } else {
        c->given = 1;
        snprintf(c->dir, sizeof c->dir, "%s", d);
    }
}

static void alloc_scratch(struct topo_call *c, struct tio_err *err)
{
    size_t n = (size_t)c->size;
    c->gather_a = malloc(n * 3 * sizeof *c->gather_a);
    c->gather_b = malloc(n * 5 * sizeof *c->gather_b);
    c->leader = malloc(n * sizeof *c->leader);
    c->node_keys = malloc(n * sizeof *c->node_keys);
    c->class_count = malloc(n * sizeof *c->class_count);
    c->class_hash = malloc(n * sizeof *c->class_hash);
    c->seen = malloc(n);
    if (!c->gather_a || !c->gather_b || !c->leader || !c->node_keys || !c->class_count ||
        !c->class_hash || !c->seen)
        tio_err_set(err, TIO_E_NOMEM, "out of memory for the discovery data of %d processes",
                    c->size);
}

void topo_call_free(struct topo_call *c)
{
    free(c->gather_a);
    free(c->gather_b);
    free(c->leader);
    free(c->node_keys);
    free(c->class_count);
    free(c->class_hash);
    free(c->seen);
    c->gather_a = c->gather_b = c->leader = c->class_count = NULL;
    c->node_keys = NULL;
    c->class_hash = NULL;
    c->seen = NULL;
}

/* The processes disagree: rank 0's choice goes to all, and each process that differs says
 * how (the lowest such rank's message wins). Rare, so it may cost two more collectives. */
static int explain_mismatch(struct topo_call *c, struct tio_err *err)
{
    struct {
        int given, alg;
        char dir[PATH_MAX];
    } r0;
    memset(&r0, 0, sizeof r0);
    if (c->rank == 0) {
        r0.given = c->given;
        r0.alg = (int)c->alg;
        memcpy(r0.dir, c->dir, sizeof r0.dir);
    }
    if (PMPI_Bcast(&r0, (int)sizeof r0, MPI_BYTE, 0, c->comm) != MPI_SUCCESS)
        tio_err_set(err, TIO_E_OTHER, "MPI_Bcast failed while comparing the arguments");
    else if (c->given != r0.given)
        tio_err_set(err, TIO_E_INFO_KEY, "%s: %s here but %s on rank 0", TIO_NBHD_HINT_DIRNAME,
                    c->given ? "given" : "not given", r0.given ? "given" : "not given");
    else if (c->given && strcmp(c->dir, r0.dir) != 0)
        tio_err_set(err, TIO_E_INFO_VALUE,
                    "%s: processes name different directories: \"%s\" here, \"%s\" on rank 0",
                    TIO_NBHD_HINT_DIRNAME, c->dir, r0.dir);
    else if ((int)c->alg != r0.alg)
        tio_err_set(err, TIO_E_INFO_VALUE,
                    "%s: processes ask for different algorithms: %s here, %s on rank 0",
                    TIO_NBHD_HINT_ALGORITHM, tio_nbhd_algorithm_name(c->alg),
                    tio_nbhd_algorithm_name((enum tio_nbhd_algorithm)r0.alg));
    return tio_agree(c->comm, err, NULL, 0);
}

int topo_call_init(struct topo_call *c, MPI_Comm comm, const char *dirname, MPI_Info info,
                   int bad_newcomm, struct tio_err *err)
{
    memset(c, 0, sizeof *c);
    c->comm = comm;
    c->alg = TIO_NBHD_AUTO;
    PMPI_Comm_rank(comm, &c->rank);
    PMPI_Comm_size(comm, &c->size);
    if (bad_newcomm)
        tio_err_set(err, TIO_E_ARG, "newcomm is NULL");
    else
        parse_local(c, dirname, info, err);
    /* auto is hybrid: processes asking for either run the same collectives. */
    if (c->alg == TIO_NBHD_AUTO)
        c->alg = TIO_NBHD_HYBRID;
    alloc_scratch(c, err);
    int rec[NREC];
    uint32_t dir_hash[4] = {0, 0, 0, 0}, raw[4] = {0, 0, 0, 0};
    if (c->given)
        topo_hash128(c->dir, dir_hash);
    topo_token_random(raw, err);
    rec[R_FAIL] = err->cls != TIO_OK ? c->size - c->rank : 0;
    rec[R_GIVEN] = c->given;
    rec[R_NGIVEN] = -c->given;
    rec[R_ALG] = (int)c->alg;
    rec[R_NALG] = -(int)c->alg;
    for (int i = 0; i < 4; i++) {
        rec[R_DIR + i] = (int)dir_hash[i];
        rec[R_NDIR + i] = (int)~dir_hash[i];
        rec[R_TOKEN + i] = (int)raw[i];
    }
    /* The record is one element of its own datatype, so that MPI never splits it between
     * calls of combine. Both are made per call (local and cheap): no global state. */
    MPI_Datatype rec_type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    int rc = PMPI_Type_contiguous(NREC, MPI_INT, &rec_type);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&rec_type);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Op_create(combine, 1, &op);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(MPI_IN_PLACE, rec, 1, rec_type, op, comm);
    if (op != MPI_OP_NULL)
        PMPI_Op_free(&op);
    if (rec_type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&rec_type);
    /* These fail only when MPI itself fails, which MPI reports through the handlers. */
    if (rc != MPI_SUCCESS)
        return tio_err_set(err, TIO_E_OTHER, "MPI_Allreduce failed while agreeing on the "
                                             "arguments");
    if (rec[R_FAIL])
        return tio_share_error(comm, c->size - rec[R_FAIL], err);

    int same = rec[R_GIVEN] == -rec[R_NGIVEN] && rec[R_ALG] == -rec[R_NALG];
    for (int i = 0; i < 4; i++)
        same &= rec[R_DIR + i] == ~rec[R_NDIR + i];
    if (!same)
        return explain_mismatch(c, err);
    for (int i = 0; i < 4; i++)
        raw[i] = (uint32_t)rec[R_TOKEN + i];
    topo_token_hex(raw, c->token);
    return TIO_OK;
}
