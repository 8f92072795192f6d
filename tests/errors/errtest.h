/* Helpers for the MPI error-path tests: run the three allocating calls with an info,
 * expect an error of a given class whose MPI_Error_string names the hint or path and the
 * reason, and check that nothing was left behind (no file in the target directory, no
 * mapping of it, no window, baseptr untouched, no leaked address space).
 *
 * Checks and the expected-error check (et_check_error, EX_*) are the harness's
 * (tests/common/harness.h, tests/common/harness_mpi.h). */
#ifndef TIO_TEST_ERRTEST_H
#define TIO_TEST_ERRTEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>

#include "../common/harness_mpi.h"
#include "../common/leftovers.h"
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- setup ---- */

static char et_root[4096]; /* this program's directory under $TIERIO_TEST_TMPDIR */

/* MPI_Init unless the program started MPI itself (MPI_Init_thread). */
static inline void et_init(int *argc, char ***argv, const char *tag)
{
    /* ET_THREAD_MULTIPLE=1: MPI_THREAD_MULTIPLE, and MPI_COMM_SELF keeps its fatal
     * handler, as in a program that only made MPI_COMM_WORLD return errors: nothing tierio
     * does internally may then abort the job. */
    const char *tm = getenv("ET_THREAD_MULTIPLE");
    int started = 0, multiple = tm && !strcmp(tm, "1");
    MPI_Initialized(&started);
    if (!started && multiple)
        tt_mpi_init_multiple(argc, argv);
    else if (!started)
        MPI_Init(argc, argv);
    if (!multiple)
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    tt_mpi_joined();
    if (tt_rank == 0) {
        snprintf(et_root, sizeof et_root, "%s/%s-XXXXXX", tt_tmproot(), tag);
        if (!mkdtemp(et_root))
            FAIL_NOW("mkdtemp %s: %s", et_root, strerror(errno));
        chmod(et_root, 0755);
    }
    MPI_Bcast(et_root, sizeof et_root, MPI_CHAR, 0, MPI_COMM_WORLD);
    /* Warm up the collectives tierio uses to agree on errors: MPICH maps a 4 MiB buffer
     * the first time a process is the root of a broadcast, which would look like a leaked
     * window to et_snap_check. */
    static char warm[8192];
    for (int r = 0; r < tt_size; r++) {
        MPI_Bcast(warm, 512, MPI_BYTE, r, MPI_COMM_WORLD);
        MPI_Bcast(warm, sizeof warm, MPI_BYTE, r, MPI_COMM_WORLD);
    }
    MPI_Aint mine = tt_rank, *all = calloc((size_t)tt_size, sizeof *all);
    MPI_Allgather(&mine, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD);
    free(all);
}

static inline int et_finish(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (tt_rank == 0) {
        tt_rmtree(et_root);
        printf("all checks passed on %d processes\n", tt_size);
    }
    MPI_Finalize();
    return 0;
}

/* A fresh, empty subdirectory of et_root (collective). */
static inline void et_subdir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", et_root, name);
    if (tt_rank == 0 && mkdir(out, 0755) < 0 && errno != EEXIST)
        FAIL_NOW("mkdir %s: %s", out, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- what a process holds ---- */

static inline long et_vmsize_kb(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[256];
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

struct et_snap {
    int entries;   /* in the target directory */
    long vm_kb;    /* address space */
    int fds;
};

static inline struct et_snap et_snap_take(const char *dir)
{
    MPI_Barrier(MPI_COMM_WORLD);
    struct et_snap s = {tc_count_entries(dir), et_vmsize_kb(), tc_count_entries("/proc/self/fd")};
    MPI_Barrier(MPI_COMM_WORLD); /* nobody creates files before all have counted */
    return s;
}

/* Nothing new in dir, no mapping of anything under dir, and the address space did not
 * grow by as much as leak_kb (a window that was not unmapped is at least that big). */
static inline void et_snap_check(const struct et_snap *s, const char *dir, long leak_kb)
{
    MPI_Barrier(MPI_COMM_WORLD); /* every process has finished cleaning up */
    CHECK_EQ(tc_count_entries(dir), s->entries);
    CHECK_EQ(tc_maps_count(dir), 0);
    long vm = et_vmsize_kb();
    if (vm - s->vm_kb >= leak_kb)
        FAIL_NOW("address space grew by %ld kB (a leaked mapping?)", vm - s->vm_kb);
    CHECK_EQ(tc_count_entries("/proc/self/fd"), s->fds);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody starts the next case before all have looked */
}

/* ---- the calls ---- */

enum et_call { ET_WIN_ALLOCATE, ET_WIN_ALLOCATE_SHARED, ET_ALLOC_MEM, ET_NCALLS };
static const char *et_call_name[] = {"MPI_Win_allocate", "MPI_Win_allocate_shared",
                                     "MPI_Alloc_mem"};

#define ET_SENTINEL ((void *)(uintptr_t)0x5e1f)

/* Make the call; on success free what it made and return MPI_SUCCESS. On error check
 * that no window was made and baseptr is untouched, and return the code. */
static inline int et_call(enum et_call c, MPI_Aint size, MPI_Info info, int keep, MPI_Win *win_out,
                   void **base_out)
{
    MPI_Win win = MPI_WIN_NULL;
    void *base = ET_SENTINEL;
    int rc;
    switch (c) {
    case ET_WIN_ALLOCATE:
        rc = MPI_Win_allocate(size, 1, info, MPI_COMM_WORLD, &base, &win);
        break;
    case ET_WIN_ALLOCATE_SHARED:
        rc = MPI_Win_allocate_shared(size, 1, info, MPI_COMM_WORLD, &base, &win);
        break;
    default:
        rc = MPI_Alloc_mem(size, info, &base);
        break;
    }
    if (rc == MPI_SUCCESS) {
        if (keep) {
            *win_out = win;
            *base_out = base;
        } else if (c == ET_ALLOC_MEM) {
            MPI_Free_mem(base);
        } else {
            MPI_Win_free(&win);
        }
        return rc;
    }
    if (win != MPI_WIN_NULL)
        FAIL_NOW("%s failed but made a window", et_call_name[c]);
    if (base != ET_SENTINEL)
        FAIL_NOW("%s failed but set baseptr to %p", et_call_name[c], base);
    return rc;
}

static inline MPI_Info et_info(const char *kv[][2], int n)
{
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 0; i < n; i++)
        if (kv[i][0])
            MPI_Info_set(info, kv[i][0], kv[i][1]);
    return info;
}

#endif
