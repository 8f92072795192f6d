#include "util/error_mpi.h"

#include <pthread.h>
#include <string.h>

#include "util/log.h"

#define RING 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int probed;            /* 1 once we know whether predefined classes work */
static int predefined_ok;     /* MPI attaches strings to codes of predefined classes */
static int own_class[TIO_E_COUNT];
static int ring[TIO_E_COUNT][RING];
static int ring_next[TIO_E_COUNT];

int tio_err_mpi_class(enum tio_errclass cls)
{
    switch (cls) {
    case TIO_OK: return MPI_SUCCESS;
    case TIO_E_ARG: return MPI_ERR_ARG;
    case TIO_E_INFO_KEY: return MPI_ERR_INFO_KEY;
    case TIO_E_INFO_VALUE: return MPI_ERR_INFO_VALUE;
    case TIO_E_NOENT: return MPI_ERR_NO_SUCH_FILE;
    case TIO_E_ACCESS: return MPI_ERR_ACCESS;
    case TIO_E_NOSPACE: return MPI_ERR_NO_SPACE;
    case TIO_E_IO: return MPI_ERR_IO;
    case TIO_E_NOMEM: return MPI_ERR_NO_MEM;
    case TIO_E_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    default: return MPI_ERR_OTHER;
    }
}

/* Does a code added to a predefined class keep the string we give it? (MPICH 4.0.2:
 * no, it answers with an unrelated built-in message.) Called with lock held. */
static void probe(void)
{
    static const char probe_msg[] = "tierio error-string probe";
    int code, len;
    char buf[MPI_MAX_ERROR_STRING];
    probed = 1;
    if (PMPI_Add_error_code(MPI_ERR_OTHER, &code) != MPI_SUCCESS)
        return;
    if (PMPI_Add_error_string(code, probe_msg) == MPI_SUCCESS &&
        PMPI_Error_string(code, buf, &len) == MPI_SUCCESS && strcmp(buf, probe_msg) == 0) {
        predefined_ok = 1;
        ring[TIO_E_OTHER][0] = code; /* do not waste it */
        ring_next[TIO_E_OTHER] = 1;
    }
    if (!predefined_ok)
        TIO_DEBUG("MPI library drops strings of codes in predefined classes; "
                  "tierio errors use tierio's own error classes");
}

static int class_for(enum tio_errclass cls)
{
    if (predefined_ok)
        return tio_err_mpi_class(cls);
    if (!own_class[cls]) {
        static const char *names[TIO_E_COUNT] = {
            "", "tierio: invalid argument", "tierio: missing or conflicting hint",
            "tierio: invalid hint value", "tierio: no such file or directory",
            "tierio: permission denied", "tierio: no space left", "tierio: I/O error",
            "tierio: out of memory", "tierio: unsupported", "tierio: error"};
        if (PMPI_Add_error_class(&own_class[cls]) != MPI_SUCCESS)
            return tio_err_mpi_class(cls);
        PMPI_Add_error_string(own_class[cls], names[cls]);
    }
    return own_class[cls];
}

int tio_err_mpi_code(const struct tio_err *e)
{
    if (!e || e->cls == TIO_OK)
        return MPI_SUCCESS;
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!init || fin)
        return tio_err_mpi_class(e->cls);

    pthread_mutex_lock(&lock);
    if (!probed)
        probe();
    int cls = e->cls, slot = ring_next[cls] % RING, code = ring[cls][slot];
    if (!code && PMPI_Add_error_code(class_for(e->cls), &code) != MPI_SUCCESS)
        code = 0;
    if (code) {
        ring[cls][slot] = code;
        ring_next[cls] = slot + 1;
        /* MPI refuses strings of MPI_MAX_ERROR_STRING or more (256 in Open MPI). */
        char msg[MPI_MAX_ERROR_STRING];
        size_t n = strlen(e->msg);
        if (n >= sizeof msg) {
            memcpy(msg, e->msg, sizeof msg - 4);
            strcpy(msg + sizeof msg - 4, "...");
        } else {
            memcpy(msg, e->msg, n + 1);
        }
        PMPI_Add_error_string(code, msg);
    }
    pthread_mutex_unlock(&lock);
    TIO_INFO("%s", e->msg);
    return code ? code : tio_err_mpi_class(e->cls);
}

int tio_err_raise_comm(MPI_Comm comm, const struct tio_err *e)
{
    int code = tio_err_mpi_code(e);
    if (code != MPI_SUCCESS)
        PMPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
    return code;
}

int tio_err_raise_win(MPI_Win win, const struct tio_err *e)
{
    int code = tio_err_mpi_code(e);
    if (code != MPI_SUCCESS)
        PMPI_Win_call_errhandler(win, code);
    return code;
}
