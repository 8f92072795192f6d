/* Is a thread asleep in futex()? Read from /proc, so that a test can make sure a waiter
 * really blocked before it sends the wake-up: a wait that then returns early was woken
 * through the futex word, not by chance of timing. Needs only libc (the MPI test uses it). */
#ifndef TIO_TEST_BLOCKED_H
#define TIO_TEST_BLOCKED_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>

/* The system call thread tid of pid is in ("NR args..." in /proc), -1 running, -2 unknown. */
static inline long mn_syscall_of(pid_t pid, pid_t tid)
{
    char p[128], buf[256];
    snprintf(p, sizeof p, "/proc/%ld/task/%ld/syscall", (long)pid, (long)tid);
    FILE *f = fopen(p, "re");
    if (!f)
        return -2;
    long nr = -2;
    if (fgets(buf, sizeof buf, f))
        nr = strncmp(buf, "running", 7) ? strtol(buf, NULL, 10) : -1;
    fclose(f);
    return nr;
}

static inline int mn_sleeping(pid_t pid, pid_t tid)
{
    char p[128], st[512];
    snprintf(p, sizeof p, "/proc/%ld/task/%ld/stat", (long)pid, (long)tid);
    FILE *f = fopen(p, "re");
    int sleeping = 0;
    if (f) {
        if (fgets(st, sizeof st, f)) {
            char *c = strrchr(st, ')');
            sleeping = c && c[1] == ' ' && c[2] == 'S';
        }
        fclose(f);
    }
    return sleeping;
}

/* Poll (every millisecond, at most timeout_ms) until the thread sleeps in futex().
 * 0 when it does, -1 on timeout. */
static inline int mn_wait_futex(pid_t pid, pid_t tid, int timeout_ms)
{
    const struct timespec ms = {0, 1000000};
    for (int i = 0; i < timeout_ms; i++) {
        if (mn_sleeping(pid, tid) && mn_syscall_of(pid, tid) == SYS_futex)
            return 0;
        nanosleep(&ms, NULL);
    }
    return -1;
}

#endif
