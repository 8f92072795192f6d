/* Tiers, buffers on them and where to aggregate (include/tierio/tier.h, docs/tier.md).
 * Describes DIR as a node-local storage tier in a small site file, lists this node's
 * tiers, lets every process write a greeting into the next process's buffer on that tier
 * and read it back, and asks the cost model where to aggregate 1 MiB per process.
 * Run: mpiexec -n 2 ./example-tier-buffer DIR */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <tierio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = argc > 1 ? argv[1] : ".";

    /* A site file: usually written once by `tierio probe` and found through $TIERIO_SITE. */
    char site[4096];
    snprintf(site, sizeof site, "%s/example-site.conf", dir);
    int made_dir = 0;
    if (rank == 0) {
        made_dir = mkdir(dir, 0755) == 0; /* it may exist already */
        FILE *f = fopen(site, "w");
        fprintf(f, "[network]\nlatency = 5us\nbandwidth = 5GB/s\n"
                   "[tier dram]\nkind = dram\nlatency = 90ns\nbandwidth = 20GB/s\n"
                   "[tier scratch]\nkind = node-local\npath = %s\nlatency = 50us\n"
                   "read_bandwidth = 3GB/s\nwrite_bandwidth = 1GB/s\n", dir);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    tio_tiers_t tiers;
    tio_tiers_open(MPI_COMM_WORLD, site, &tiers);
    int n;
    tio_tiers_count(tiers, &n);
    for (int i = 0; i < n && rank == 0; i++) {
        struct tio_tier_info t;
        tio_tiers_get(tiers, i, &t);
        printf("tier %-8s %-10s latency %.3g s, write %.3g B/s, %llu bytes available, "
               "persistence %s\n", t.name, tio_tier_kind_name(t.kind), t.latency,
               t.write_bandwidth, t.available, tio_persistence_name(t.persistence));
    }

    /* Every process's buffer: a file in DIR mapped into memory, reachable from all. */
    tio_buf_t buf;
    tio_buf_alloc(tiers, "scratch", 64, "greetings", 0, MPI_COMM_WORLD, &buf);
    char hello[64] = {0}, got[64] = {0};
    snprintf(hello, sizeof hello, "hello from rank %d", rank);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    tio_buf_write(buf, hello, sizeof hello, 0, next);
    tio_buf_flush(buf);          /* my write is in place at `next` */
    MPI_Barrier(MPI_COMM_WORLD); /* everybody's is */
    tio_buf_flush(buf);          /* what `prev` wrote to me is on storage */
    tio_buf_read(buf, got, sizeof got, 0, rank);
    char want[64] = {0};
    snprintf(want, sizeof want, "hello from rank %d", prev);
    int ok = !memcmp(got, want, sizeof want);
    printf("rank %d found \"%s\" in its buffer: %s\n", rank, got, ok ? "right" : "WRONG");
    MPI_Barrier(MPI_COMM_WORLD);
    tio_buf_free(&buf);           /* the files are removed */

    /* Where should 1 MiB per process be aggregated, to be kept for the job? */
    struct tio_cost_opts opts = {.persistence = TIO_PERSIST_JOB, .nbuf = 2,
                                 .bufsize = 1 << 20};
    struct tio_placement p;
    tio_cost_place(tiers, MPI_COMM_WORLD, 1 << 20, 1, &opts, &p);
    if (rank == 0)
        printf("aggregate on rank %d, tier %s: %.3g s (Cost_A %.3g + Cost_T %.3g), %d of %d "
               "tiers qualified\n", p.rank, p.tier, p.total, p.aggregate, p.transfer,
               p.qualified, p.candidates);
    ok = ok && !strcmp(p.tier, "scratch"); /* DRAM does not keep data for the job */

    tio_tiers_close(&tiers);
    if (rank == 0) {
        remove(site);
        if (made_dir)
            rmdir(dir);
    }
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Finalize();
    return all ? 0 : 1;
}
