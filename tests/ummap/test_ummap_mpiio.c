/* ummap memory as the buffer of MPI calls, under a limit of 2 segments per process so
 * that the buffers are cold (never touched, or evicted) when MPI reads or fills them:
 * MPI_File_write_at_all from a mapping, MPI_File_read_at_all into one, MPI_File_write_at
 * with a strided memory datatype whose blocks cross segments, and MPI_Sendrecv between
 * processes from one mapping into another (shared-memory transports may copy with the
 * kernel's process_vm_* calls: another process's access). Every buffer, file and mapping
 * is compared byte for byte; what was read into a mapping must reach its file at umsync. */
#include "../mpi/tio_test.h"

#include <ummap.h>

#define NSEG 6
static size_t SEG, SIZE;
static const off_t OFF = 333;

struct mapping {
    char path[PATH_MAX];
    uint8_t *p;
};

static void open_mapping(struct mapping *m, const char *name, uint64_t seed, uint8_t *content)
{
    snprintf(m->path, sizeof m->path, "%s/%s.%d", tt_dir, name, tt_rank);
    size_t len = (size_t)OFF + SIZE + 100;
    uint8_t *all = malloc(len);
    tt_fill(all, len, seed, 0);
    memcpy(content, all + OFF, SIZE);
    int fd = open(m->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || pwrite(fd, all, len, 0) != (ssize_t)len)
        TT_DIE("cannot write %s: %s", m->path, strerror(errno));
    void *p = NULL;
    int rc = ummap(SIZE, SEG, PROT_READ | PROT_WRITE, fd, OFF, UMMAP_NO_FLUSH, 1,
                   UMMAP_PTYPE_LIFO, &p);
    if (rc)
        TT_DIE("ummap %s: %s", m->path, strerror(rc));
    close(fd);
    free(all);
    m->p = p;
}

static void cool(struct mapping *m)
{
    int rc = umsync(m->p, 1);
    if (rc)
        TT_DIE("umsync: %s", strerror(rc));
}

int main(int argc, char **argv)
{
    tt_init(&argc, &argv, "ummap_mpiio");
    const int n = tt_size, me = tt_rank, right = (me + 1) % n, left = (me + n - 1) % n;
    SEG = 4 * (size_t)sysconf(_SC_PAGESIZE);
    SIZE = NSEG * SEG + 1000;
    MPI_Comm node;
    int local;
    TT_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    char lim[32];
    snprintf(lim, sizeof lim, "%zu", 2 * SEG * (size_t)local);
    setenv("UMMAP_MEM_LIMIT", lim, 0);

    struct mapping m, m2;
    uint8_t *mine = malloc(SIZE), *mine2 = malloc(SIZE), *z = malloc(SIZE), *buf = malloc(SIZE);
    open_mapping(&m, "m", 500 + (uint64_t)me, mine);
    open_mapping(&m2, "m2", 600 + (uint64_t)me, mine2);
    char out[PATH_MAX], in[PATH_MAX], out2[PATH_MAX];
    tt_path(out, sizeof out, "out.dat");
    tt_path(in, sizeof in, "in.dat");
    tt_path(out2, sizeof out2, "out2.dat");

    /* MPI_File_write_at_all from a cold mapping */
    MPI_File fh;
    TT_MPI(MPI_File_open(MPI_COMM_WORLD, out, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    TT_MPI(MPI_File_write_at_all(fh, (MPI_Offset)((size_t)me * SIZE), m.p, (int)SIZE, MPI_BYTE,
                                 MPI_STATUS_IGNORE));
    TT_MPI(MPI_File_close(&fh));
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(out, (size_t)me * SIZE, mine, SIZE, "MPI_File_write_at_all from a cold mapping");

    /* MPI_File_read_at_all into a cold mapping; umsync brings it to the mapping's file */
    if (me == 0) {
        uint8_t *all = malloc((size_t)n * SIZE);
        tt_fill(all, (size_t)n * SIZE, 700, 0);
        int fd = open(in, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || pwrite(fd, all, (size_t)n * SIZE, 0) != (ssize_t)((size_t)n * SIZE))
            TT_DIE("cannot write %s", in);
        close(fd);
        free(all);
    }
    tt_fill(z, SIZE, 700, (uint64_t)me * SIZE);
    cool(&m);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    TT_MPI(MPI_File_open(MPI_COMM_WORLD, in, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    TT_MPI(MPI_File_read_at_all(fh, (MPI_Offset)((size_t)me * SIZE), m.p, (int)SIZE, MPI_BYTE,
                                MPI_STATUS_IGNORE));
    TT_MPI(MPI_File_close(&fh));
    tt_compare(m.p, z, SIZE, "MPI_File_read_at_all into a cold mapping");
    cool(&m);
    tt_check_file(m.path, OFF, z, SIZE, "the mapping's file after read_at_all + umsync");
    memcpy(mine, z, SIZE);

    /* a strided memory datatype: 5 blocks of 5000 bytes, one per segment, each crossing
     * into the next segment */
    const int NB = NSEG - 1;
    MPI_Datatype vec;
    TT_MPI(MPI_Type_vector(NB, 5000, (int)SEG, MPI_BYTE, &vec));
    TT_MPI(MPI_Type_commit(&vec));
    TT_MPI(MPI_File_open(MPI_COMM_WORLD, out2, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    TT_MPI(MPI_File_write_at(fh, (MPI_Offset)((size_t)me * (size_t)NB * 5000), m.p + SEG - 2500,
                             1, vec, MPI_STATUS_IGNORE));
    TT_MPI(MPI_File_close(&fh));
    TT_MPI(MPI_Type_free(&vec));
    for (int b = 0; b < NB; b++)
        memcpy(buf + (size_t)b * 5000, mine + SEG - 2500 + (size_t)b * SEG, 5000);
    TT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    tt_check_file(out2, (size_t)me * (size_t)NB * 5000, buf, (size_t)NB * 5000,
                  "MPI_File_write_at of a strided datatype over segments");

    /* MPI_Sendrecv from one cold mapping into another, between processes */
    cool(&m);
    cool(&m2);
    TT_MPI(MPI_Sendrecv(m.p, (int)SIZE, MPI_BYTE, right, 7, m2.p, (int)SIZE, MPI_BYTE, left, 7,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    uint8_t *lefts = malloc(SIZE);
    TT_MPI(MPI_Sendrecv(mine, (int)SIZE, MPI_BYTE, right, 8, lefts, (int)SIZE, MPI_BYTE, left, 8,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    tt_compare(m2.p, lefts, SIZE, "MPI_Sendrecv into a cold mapping from rank %d's", left);
    tt_compare(m.p, mine, SIZE, "the sending mapping after MPI_Sendrecv");
    int rc = umunmap(m2.p, 1);
    TT_CHECK(rc == 0, "umunmap: %s", strerror(rc));
    tt_check_file(m2.path, OFF, lefts, SIZE, "the receiving mapping's file");

    tio_ummap_stats_t st;
    rc = tio_ummap_stats(m.p, &st);
    TT_CHECK(rc == 0 && st.evictions > 0, "no eviction under a limit of 2 segments");
    rc = umunmap(m.p, 1);
    TT_CHECK(rc == 0, "umunmap: %s", strerror(rc));
    tt_check_file(m.path, OFF, mine, SIZE, "the mapping's file at the end");
    (void)mine2;
    free(mine);
    free(mine2);
    free(z);
    free(buf);
    free(lefts);
    return tt_finish();
}
