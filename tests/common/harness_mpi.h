/* The MPI part of the harness (tests/common/harness.h): a failed check on one rank aborts
 * the job (MPI_Abort) instead of leaving the others waiting in a collective, messages name
 * the rank, and the expected-error check of tierio's MPI errors (class and message).
 *
 * Error classes: on Open MPI tierio's codes belong to the predefined classes
 * (MPI_ERR_INFO_VALUE, ...); MPICH 4.0 cannot attach strings to codes of predefined
 * classes, so there tierio adds its own classes, one per reason (src/util/error_mpi.c),
 * and the check compares the class's string ("tierio: invalid hint value", ...) instead. */
#ifndef TIO_TEST_HARNESS_MPI_H
#define TIO_TEST_HARNESS_MPI_H

#include "harness.h"

#include <mpi.h>

TT_FN void tt_mpi_abort(void)
{
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* MPI_Init_thread with MPI_THREAD_MULTIPLE, or the test is skipped (exit 77). */
TT_FN void tt_mpi_init_multiple(int *argc, char ***argv)
{
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("skipped: the MPI library does not provide MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        exit(77);
    }
}

/* After MPI_Init: failed checks name the rank and abort the job. */
TT_FN void tt_mpi_joined(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &tt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tt_size);
    tt_abort = tt_mpi_abort;
}

/* Counted checks, for tests that go on after a difference to report every one: a failed
 * TT_CHECK prints and counts (tt_errors, which the test's end agrees on among the ranks);
 * TT_MPI and TT_DIE are fatal. */
/* Failed TT_CHECKs of this rank, agreed on by tt_finish. */
static int tt_errors;
static const char *tt_name = "test";

__attribute__((format(printf, 1, 2))) TT_FN void tt_fail(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[%s rank %d] FAIL: %s\n", tt_name, tt_rank, msg);
    fflush(stderr);
    tt_errors++;
}

/* Fatal: an MPI call failed where the test cannot go on. */
#define TT_MPI(call)                                                                     \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != MPI_SUCCESS) {                                                        \
            char s_[MPI_MAX_ERROR_STRING];                                               \
            int l_ = 0;                                                                  \
            MPI_Error_string(rc_, s_, &l_);                                              \
            fprintf(stderr, "[%s rank %d] FATAL: %s:%d: %s failed: %s\n", tt_name,       \
                    tt_rank, __FILE__, __LINE__, #call, s_);                             \
            fflush(stderr);                                                              \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                \
        }                                                                                \
    } while (0)

#define TT_CHECK(cond, ...)                                                              \
    do {                                                                                 \
        if (!(cond))                                                                     \
            tt_fail(__VA_ARGS__);                                                        \
    } while (0)

/* Fatal outside MPI calls (e.g. cannot open a file we need). */
#define TT_DIE(...)                                                                      \
    do {                                                                                 \
        tt_fail(__VA_ARGS__);                                                            \
        MPI_Abort(MPI_COMM_WORLD, 2);                                                    \
    } while (0)

/* Our expectation of an error: the Open MPI class, the tierio class string (MPICH),
 * one per reason (EX_*). */
struct et_expect {
    int mpi_class;
    const char *tierio_class;
};

#define EX_INFO_VALUE ((struct et_expect){MPI_ERR_INFO_VALUE, "tierio: invalid hint value"})
#define EX_INFO_KEY ((struct et_expect){MPI_ERR_INFO_KEY, "tierio: missing or conflicting hint"})
#define EX_NOENT ((struct et_expect){MPI_ERR_NO_SUCH_FILE, "tierio: no such file or directory"})
#define EX_ACCESS ((struct et_expect){MPI_ERR_ACCESS, "tierio: permission denied"})
#define EX_NOSPACE ((struct et_expect){MPI_ERR_NO_SPACE, "tierio: no space left"})
#define EX_ARG ((struct et_expect){MPI_ERR_ARG, "tierio: invalid argument"})
#define EX_IO ((struct et_expect){MPI_ERR_IO, "tierio: I/O error"})
#define EX_UNSUPPORTED \
    ((struct et_expect){MPI_ERR_UNSUPPORTED_OPERATION, "tierio: unsupported"})

/* Does error rc have the class ex names? Its message goes to msg (MPI_MAX_ERROR_STRING
 * bytes); when it has not, why (n bytes) says what differs. */
TT_FN int tt_error_class_is(int rc, struct et_expect ex, char *msg, char *why, size_t n)
{
    char cmsg[MPI_MAX_ERROR_STRING];
    int len, cls = -1;
    msg[0] = 0;
    MPI_Error_string(rc, msg, &len);
    MPI_Error_class(rc, &cls);
#ifdef OPEN_MPI
    if (cls == ex.mpi_class)
        return 1;
    MPI_Error_string(ex.mpi_class, cmsg, &len);
    snprintf(why, n, "error class %d, expected %d (%s); message: %s", cls, ex.mpi_class, cmsg,
             msg);
#else
    cmsg[0] = 0;
    MPI_Error_string(cls, cmsg, &len);
    if (strcmp(cmsg, ex.tierio_class) == 0)
        return 1;
    snprintf(why, n, "error class %d \"%s\", expected \"%s\"; message: %s", cls, cmsg,
             ex.tierio_class, msg);
#endif
    return 0;
}

/* rc must be an error of the class ex names whose message contains every string of the
 * NULL-terminated list that follows; a failure is fatal. */
TT_FN void et_check_error(int rc, struct et_expect ex, ...)
{
    char msg[MPI_MAX_ERROR_STRING], why[3 * MPI_MAX_ERROR_STRING];
    if (rc == MPI_SUCCESS)
        FAIL_NOW("the call succeeded; an error was expected");
    if (!tt_error_class_is(rc, ex, msg, why, sizeof why))
        FAIL_NOW("%s", why);
    va_list ap;
    va_start(ap, ex);
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;)
        CHECK_HAS(msg, s);
    va_end(ap);
}

#endif
