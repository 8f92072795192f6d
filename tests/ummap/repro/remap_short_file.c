/* Reproducer: umremap changes what the mapping shows past the end of a short file.
 *
 * A mapping of 5000 bytes over a file of 3007 bytes at offset 7 shows zeros from byte 3000
 * on (past the end of the file, as with mmap). umremap to a region of another file that
 * holds other bytes must keep that view (docs/ummap.md: "what the application sees before
 * the call it sees after it"), but the in-kernel copy of the segment stops at the end of
 * the old file and leaves the new region's bytes there: after the remap, byte 3000 of the
 * mapping reads 0xee.
 *
 *   repro_remap_short_file [DIR]     exit 0: the view is kept; 1: it changed */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <ummap.h>

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/repro-short-a.dat", dir);
    snprintf(b, sizeof b, "%s/repro-short-b.dat", dir);
    static unsigned char buf[10000];
    memset(buf, 0x11, sizeof buf);
    int fa = open(a, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int fb = open(b, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fa < 0 || fb < 0 || write(fa, buf, 3007) != 3007)
        return 2;
    memset(buf, 0xee, sizeof buf);
    if (write(fb, buf, sizeof buf) != (ssize_t)sizeof buf)
        return 2;
    void *p = NULL, *np = NULL;
    int rc = ummap(5000, 65536, PROT_READ | PROT_WRITE, fa, 7, UMMAP_NO_FLUSH, 1,
                   UMMAP_PTYPE_FIFO, &p);
    if (rc)
        return 2;
    unsigned char before = ((unsigned char *)p)[3000];
    umsync(p, 1); /* nothing in memory: the remap copies the segment in the kernel */
    rc = umremap(p, fb, 1000, 0, &np);
    unsigned char after = ((unsigned char *)p)[3000];
    printf("umremap: %d; byte 3000 of the mapping: 0x%02x before, 0x%02x after\n", rc, before,
           after);
    umunmap(p, 0);
    unlink(a);
    unlink(b);
    return rc == 0 && after == before ? 0 : 1;
}
