/* Reproducer: data that an O_DIRECT read puts into a mapping is not written back by umsync
 * when loading the read's later segments had to try to evict its earlier ones.
 *
 * Limit 3 segments; mapping B holds 2 of them; an O_DIRECT read fills 3 cold segments of
 * mapping A. Loading A's second segment must evict one segment: the engine picks A's first
 * (FIFO, this mapping first), which the kernel has already pinned for the read and which
 * is dirty (the read faults for writing). The eviction writes it back, which counts it
 * clean and write-protects it, then cannot move its pages out (pinned): the segment stays,
 * counted clean. The read's data then reaches its pages by DMA, past the write-protection,
 * so the engine never learns that the segment changed: the mapping shows the data, but
 * umsync does not write it, and the next eviction of that "clean" segment drops it.
 *
 *   repro_pinned_writeback [DIR]     exit 0: the file holds what was read; 1: it does not;
 *                                    77: no O_DIRECT on DIR */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <ummap.h>

#define SEG 16384
#define N (8 * SEG)

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char a[4096], b[4096], c[4096];
    snprintf(a, sizeof a, "%s/repro-pin-a.dat", dir);
    snprintf(b, sizeof b, "%s/repro-pin-b.dat", dir);
    snprintf(c, sizeof c, "%s/repro-pin-src.dat", dir);
    setenv("UMMAP_MEM_LIMIT", "49152", 1); /* 3 segments */
    /* A node-memory group of its own: without a key every test ctest starts shares the
     * group of their common parent, and a concurrent test with another limit is refused. */
    char key[64];
    snprintf(key, sizeof key, "tiotest-repro-pin-%ld", (long)getpid());
    setenv("UMMAP_NODE_KEY", key, 1);
    setenv("UMMAP_NODE_PROCS", "1", 1);
    static unsigned char src[N], back[3 * SEG];
    for (size_t i = 0; i < N; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    int sfd = open(c, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int fa = open(a, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int fb = open(b, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (sfd < 0 || fa < 0 || fb < 0 || write(sfd, src, N) != N || ftruncate(fa, N) ||
        ftruncate(fb, N))
        return 2;
    close(sfd);
    int dfd = open(c, O_RDONLY | O_DIRECT);
    if (dfd < 0) {
        printf("skipped: O_DIRECT on %s: %s\n", dir, strerror(errno));
        return 77;
    }
    void *pa, *pb;
    if (ummap(N, SEG, PROT_READ | PROT_WRITE, fa, 0, UMMAP_NO_FLUSH, 1, UMMAP_PTYPE_FIFO, &pa) ||
        ummap(N, SEG, PROT_READ | PROT_WRITE, fb, 0, UMMAP_NO_FLUSH, 1, UMMAP_PTYPE_FIFO, &pb))
        return 2;
    volatile char t = ((char *)pb)[0];
    t = ((char *)pb)[SEG]; /* B holds 2 segments */
    (void)t;
    ssize_t r = pread(dfd, (char *)pa + 2 * SEG, 3 * SEG, 0);
    tio_ummap_stats_t st;
    tio_ummap_stats(pa, &st);
    int rc = umsync(pa, 0);
    if (pread(fa, back, sizeof back, 2 * SEG) != (ssize_t)sizeof back)
        return 2;
    long missing = 0;
    for (size_t i = 0; i < sizeof back; i++)
        missing += back[i] != src[i];
    printf("O_DIRECT read of 3 segments: %zd bytes; A then had %zu bytes resident, %zu dirty; "
           "umsync: %d; the file lacks %ld of the bytes read\n", r, st.resident, st.dirty, rc,
           missing);
    umunmap(pa, 0);
    umunmap(pb, 0);
    unlink(a);
    unlink(b);
    unlink(c);
    return missing ? 1 : 0;
}
