/* What a process holds, for tests that check nothing was left behind: directory entries
 * and memory mappings. Shared by the unit tests and the MPI error-path tests. */
#ifndef TIO_TEST_LEFTOVERS_H
#define TIO_TEST_LEFTOVERS_H

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Entries in dir other than . and .. (-1 if it cannot be read). */
static inline int tc_count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* Lines of /proc/self/maps that contain needle (all lines when needle is NULL). */
static inline int tc_maps_count(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "re");
    char line[8192];
    int n = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!needle || strstr(line, needle))
            n++;
    fclose(f);
    return n;
}

static inline void *tc_idle_thread(void *barrier)
{
    pthread_barrier_wait(barrier);
    return NULL;
}

/* glibc keeps the stacks of joined threads for reuse, as mappings: an engine that started
 * and stopped its threads leaves their stacks behind, and a count of the mappings would
 * take them for a leak. Filling that cache first (4 stacks at once: the ummap engine runs
 * 2 fault handlers and an I/O thread) makes the engine's threads reuse it. 0, or the
 * error of pthread_create (the caller fails the test). */
static inline int tc_warm_stack_cache(void)
{
    pthread_barrier_t b;
    pthread_t t[4];
    pthread_barrier_init(&b, NULL, 5);
    for (int i = 0; i < 4; i++) {
        int rc = pthread_create(&t[i], NULL, tc_idle_thread, &b);
        if (rc != 0)
            return rc; /* the caller fails the test and exits, threads started or not */
    }
    pthread_barrier_wait(&b);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&b);
    return 0;
}

#endif
