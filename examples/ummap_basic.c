#define _POSIX_C_SOURCE 200809L
/* ummap_basic: the uMMAP-IO API of include/ummap.h in one program (no MPI needed).
 *
 *   example-ummap-basic FILE
 *
 * Maps 8 MiB of FILE in 1 MiB segments, fills it with loads and stores, makes it durable
 * with umsync, drops it from memory (umsync with evict), reads it back through the mapping
 * (the segments come back from the file), moves it to FILE.v2 with umremap (a versioned
 * copy), prints the statistics and unmaps. Exits non-zero if any check fails. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ummap.h>

#define SIZE ((size_t)8 << 20)
#define SEG ((size_t)1 << 20)

static int fail(const char *what, int rc)
{
    fprintf(stderr, "ummap_basic: %s: %s\n", what, strerror(rc));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    unsigned char *p;
    /* No implicit write-back (UMMAP_NO_FLUSH), the file's old content is not wanted
     * (read_file 0), evict the oldest segment first (FIFO). */
    int rc = ummap(SIZE, SEG, PROT_READ | PROT_WRITE, fd, 0, UMMAP_NO_FLUSH, 0,
                   UMMAP_PTYPE_FIFO, (void **)&p);
    if (rc)
        return fail("ummap", rc);
    close(fd); /* the engine keeps its own descriptor */

    for (size_t i = 0; i < SIZE; i++)
        p[i] = (unsigned char)(i * 31 + 7);
    if ((rc = umsync(p, 1)) != 0) /* durable, then out of memory */
        return fail("umsync", rc);
    for (size_t i = 0; i < SIZE; i++)
        if (p[i] != (unsigned char)(i * 31 + 7)) {
            fprintf(stderr, "ummap_basic: byte %zu wrong after eviction\n", i);
            return 1;
        }

    char v2[4096];
    snprintf(v2, sizeof v2, "%s.v2", argv[1]);
    int fd2 = open(v2, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd2 < 0) {
        perror(v2);
        return 1;
    }
    void *moved;
    if ((rc = umremap(p, fd2, 0, 1, &moved)) != 0)
        return fail("umremap", rc);
    close(fd2);
    p = moved;
    p[0] = 0xff; /* only the new version sees this */
    if ((rc = umsync(p, 0)) != 0)
        return fail("umsync (v2)", rc);

    tio_ummap_stats_t st;
    unsigned reads, writes;
    tio_ummap_stats(p, &st);
    umstats(&reads, &writes);
    printf("segments read %u, written %u; faults %llu read, %llu write; evictions %llu\n",
           reads, writes, (unsigned long long)st.read_faults,
           (unsigned long long)st.write_faults, (unsigned long long)st.evictions);
    if ((rc = umunmap(p, 1)) != 0)
        return fail("umunmap", rc);

    /* The first version has the original first byte, the second the new one. */
    unsigned char b1 = 0, b2 = 0;
    int f1 = open(argv[1], O_RDONLY), f2 = open(v2, O_RDONLY);
    if (f1 < 0 || f2 < 0 || pread(f1, &b1, 1, 0) != 1 || pread(f2, &b2, 1, 0) != 1) {
        perror("reading back");
        return 1;
    }
    close(f1);
    close(f2);
    unlink(v2);
    if (b1 != 7 || b2 != 0xff) {
        fprintf(stderr, "ummap_basic: versions hold %#x and %#x\n", b1, b2);
        return 1;
    }
    printf("ummap_basic: ok\n");
    return 0;
}
