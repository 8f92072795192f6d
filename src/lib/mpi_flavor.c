/* The MPI library check of mpi_flavor.h, made when libtierio is loaded. */
#include "lib/mpi_flavor.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *tio_mpi_mismatch(const char *running, char *msg, size_t len)
{
    /* Open MPI's ABI is its own; MPICH's is shared by its derivatives (Intel MPI, MVAPICH,
     * Cray MPICH), whose version strings need not say "MPICH": an MPICH build only
     * rejects Open MPI. */
    int open_mpi = strstr(running, "Open MPI") != NULL;
    int bad = !strcmp(TIO_BUILD_MPI_FAMILY, "Open MPI") ? !open_mpi
              : !strcmp(TIO_BUILD_MPI_FAMILY, "MPICH")  ? open_mpi
                                                        : 0;
    if (!bad)
        return NULL;
    /* The running library by the first line of its string, whitespace collapsed and its
     * "Version:" label dropped: "MPICH 4.0.2", "Open MPI v4.1.4". */
    char name[96];
    size_t at = 0;
    for (const char *p = running; *p && *p != '\n' && *p != ',' && at + 1 < sizeof name; p++) {
        if (!strncmp(p, " Version:", 9) || !strncmp(p, "\tVersion:", 9))
            p += 8;
        else if (*p == ' ' || *p == '\t') {
            if (at && name[at - 1] != ' ')
                name[at++] = ' ';
        } else
            name[at++] = *p;
    }
    name[at] = 0;
    snprintf(msg, len,
             "tierio: libtierio was built with %s, but this program runs with %s: its MPI "
             "calls would fail (\"Invalid MPI_Op\" and the like). Compile the program with "
             "the MPI tierio was built with, or use a tierio built for %s.",
             TIO_BUILD_MPI, name, name);
    return msg;
}

/* MPI_Get_library_version may be called before MPI_Init (MPI 3.0). In a program that
 * mixes the two libraries it reaches the one the program's own MPI calls reach. */
__attribute__((constructor)) static void check_mpi(void)
{
    char running[MPI_MAX_LIBRARY_VERSION_STRING], msg[512];
    int len = 0;
    if (MPI_Get_library_version(running, &len) != MPI_SUCCESS)
        return;
    running[len < (int)sizeof running ? len : (int)sizeof running - 1] = 0;
    if (!tio_mpi_mismatch(running, msg, sizeof msg))
        return;
    /* Nothing can work: every collective would abort later, somewhere less clear. */
    fprintf(stderr, "%s\n", msg);
    _exit(1);
}
