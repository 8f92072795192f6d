/* What a process holds, for tests that check nothing was left behind: directory entries
 * and memory mappings. Shared by the unit tests and the MPI error-path tests. */
#ifndef TIO_TEST_LEFTOVERS_H
#define TIO_TEST_LEFTOVERS_H

#include <dirent.h>
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

#endif
