/* The configuration of a node memory group from the environment (memnode_env.c): sizes,
 * object names, where the key and the process count come from, the default limit. */
#include "mntest.h"

#include "tier/memavail.h"
#include "ummap/memnode_env.h"

static void check_sizes(void)
{
    CASE("parse_size");
    static const struct { const char *s; uint64_t v; } good[] = {
        {"1", 1},           {"4096", 4096},           {"64K", 64000},
        {"64k", 64000},     {"64KB", 64000},          {"64KiB", 65536},
        {"64Ki", 65536},    {"3Mi", 3u << 20},        {"3M", 3000000},
        {"2Gi", 2ull << 30}, {"2G", 2000000000ull},   {"1ti", 1ull << 40},
        {"1.5Gi", 3ull << 29}, {"16777215Ti", 16777215ull << 40},
        {"18446744073709551615", UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        uint64_t v = 0;
        CHECK_EQ(tio_memnode_parse_size(good[i].s, &v), 0);
        CHECK(v == good[i].v);
    }
    static const char *bad[] = {"", "0", "0K", "-1", "+1", "1.5", "1X", "1KK", "1iB",
                                "K", "16777216Ti", "18446744073709551616", "0x10", "1KiBB"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v = 7;
        if (tio_memnode_parse_size(bad[i], &v) != EINVAL || v != 7) {
            fprintf(stderr, "parse_size(\"%s\") accepted\n", bad[i]);
            exit(1);
        }
    }
    CHECK_EQ(tio_memnode_parse_size(NULL, NULL), EINVAL);
}

static void check_names(void)
{
    CASE("object_name");
    char a[128], b[128], c[128], want[64];
    tio_memnode_object_name(a, sizeof a, 1234, "job/1");
    tio_memnode_object_name(b, sizeof b, 1234, "job_1");
    snprintf(want, sizeof want, "/" TIO_MEMNODE_PREFIX "1234-");
    CHECK(!strncmp(a, want, strlen(want)));
    CHECK(strchr(a + 1, '/') == NULL); /* one name, no directory */
    CHECK(strcmp(a, b) != 0);          /* the hash tells them apart */
    CHECK(!strcmp(a + strlen(a) - 6, "-job_1"));
    tio_memnode_object_name(c, sizeof c, 1235, "job/1");
    CHECK(strcmp(a, c) != 0); /* another user */
    char longkey[300];
    memset(longkey, 'x', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    tio_memnode_object_name(a, sizeof a, 4294967295u, longkey);
    CHECK(strlen(a) < 100);
    tio_memnode_object_name(b, sizeof b, 4294967295u, "");
    CHECK(strlen(b) > strlen(want));
}

static struct tio_memnode_config read_ok(void)
{
    struct tio_memnode_config c;
    int rc = tio_memnode_config_read(&c);
    if (rc) {
        fprintf(stderr, "[%s] config_read: %s\n", tt_current_case, strerror(rc));
        exit(1);
    }
    char want[128];
    tio_memnode_object_name(want, sizeof want, (unsigned)geteuid(), c.key);
    CHECK(!strcmp(c.name, want));
    return c;
}

static unsigned long long start_time(long pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *f = fopen(p, "re");
    CHECK(f != NULL);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = strrchr(buf, ')') + 2;
    for (int field = 3; field < 22; field++)
        s = strchr(s, ' ') + 1;
    return strtoull(s, NULL, 10);
}

static void check_keys(void)
{
    struct tio_memnode_config c;
    char want[300];

    CASE("key from UMMAP_NODE_KEY");
    mn_env("my key", "1Mi", NULL, NULL);
    setenv("PMIX_NAMESPACE", "123", 1);
    c = read_ok();
    CHECK(!strcmp(c.key, "my key"));
    CHECK(!strcmp(c.key_source, "UMMAP_NODE_KEY"));

    CASE("key from PMIX_NAMESPACE");
    unsetenv("UMMAP_NODE_KEY");
    setenv("PMI_RANK", "0", 1); /* PMIx first */
    c = read_ok();
    CHECK(!strcmp(c.key, "pmix:123"));
    CHECK(!strcmp(c.key_source, "PMIX_NAMESPACE"));

    CASE("key from SLURM");
    mn_env(NULL, "1Mi", NULL, NULL);
    setenv("SLURM_JOB_ID", "77", 1);
    setenv("SLURM_STEP_ID", "3", 1);
    c = read_ok();
    CHECK(!strcmp(c.key, "slurm:77.3"));

    CASE("key from the parent process");
    unsetenv("SLURM_STEP_ID"); /* a batch script's environment: not a step */
    c = read_ok();
    CHECK(!strcmp(c.key_source, "parent process"));
    snprintf(want, sizeof want, "parent:%ld.%llu", (long)getppid(), start_time(getppid()));
    CHECK(!strcmp(c.key, want));
    /* Under hydra's variables but without a hydra_pmi_proxy above us: still the parent. */
    setenv("PMI_RANK", "0", 1);
    c = read_ok();
    CHECK(!strcmp(c.key, want));
}

/* A process named hydra_pmi_proxy, a wrapper below it, and a "rank" below that. */
static void rank_under_wrapper(int in, int out)
{
    (void)in;
    setenv("PMI_RANK", "1", 1);
    struct tio_memnode_config c = read_ok();
    CHECK(!strcmp(c.key_source, "hydra_pmi_proxy"));
    char want[128];
    long proxy = (long)mn_recv(in);
    snprintf(want, sizeof want, "hydra:%ld.%llu", proxy, start_time(proxy));
    if (strcmp(c.key, want)) {
        fprintf(stderr, "hydra key \"%s\", want \"%s\"\n", c.key, want);
        exit(1);
    }
    mn_send(out, 1);
}

static void wrapper(int in, int out)
{
    prctl(PR_SET_NAME, "sh");
    struct mn_kid r = mn_spawn(rank_under_wrapper);
    mn_send(r.to, mn_recv(in));
    mn_send(out, mn_recv(r.from));
    mn_reap_ok(&r);
}

static void proxy(int in, int out)
{
    (void)in;
    prctl(PR_SET_NAME, "hydra_pmi_proxy");
    struct mn_kid w = mn_spawn(wrapper);
    mn_send(w.to, (uint64_t)getpid());
    mn_send(out, mn_recv(w.from));
    mn_reap_ok(&w);
}

static void check_hydra(void)
{
    CASE("key from hydra_pmi_proxy");
    mn_env(NULL, "1Mi", NULL, NULL);
    struct mn_kid p = mn_spawn(proxy);
    CHECK_EQ(mn_recv(p.from), 1);
    mn_reap_ok(&p);
}

static void check_procs(void)
{
    struct tio_memnode_config c;
    CASE("process count");
    mn_env("k", "1Mi", NULL, NULL);
    c = read_ok();
    CHECK_EQ(c.nprocs, 0);
    CHECK(!strcmp(c.nprocs_source, "processes joined"));
    setenv("MPI_LOCALNRANKS", "3", 1);
    c = read_ok();
    CHECK_EQ(c.nprocs, 3);
    CHECK(!strcmp(c.nprocs_source, "MPI_LOCALNRANKS"));
    CHECK_EQ(c.nprocs_explicit, 0);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "5", 1);
    c = read_ok();
    CHECK_EQ(c.nprocs, 5);
    CHECK(!strcmp(c.nprocs_source, "OMPI_COMM_WORLD_LOCAL_SIZE"));
    setenv("UMMAP_NODE_PROCS", "7", 1);
    c = read_ok();
    CHECK_EQ(c.nprocs, 7);
    CHECK_EQ(c.nprocs_explicit, 1);
    CHECK(!strcmp(c.nprocs_source, "UMMAP_NODE_PROCS"));

    CASE("mode");
    CHECK_EQ(c.dynamic, 0);
    CHECK_EQ(c.mode_explicit, 0);
    setenv("UMMAP_MEMCONFIG", "Dynamic", 1);
    c = read_ok();
    CHECK_EQ(c.dynamic, 1);
    CHECK_EQ(c.mode_explicit, 1);
    setenv("UMMAP_MEMCONFIG", "static", 1);
    c = read_ok();
    CHECK_EQ(c.dynamic, 0);
    CHECK_EQ(c.mode_explicit, 1);
}

/* The default limit follows the memory available (which moves a little between our
 * reads: compare with a tolerance). */
static void check_limit(double factor, const char *factor_env)
{
    mn_env("k", NULL, NULL, NULL);
    if (factor_env)
        setenv("UMMAP_MEM_FACTOR", factor_env, 1);
    double before = (double)tio_mem_available();
    struct tio_memnode_config c = read_ok();
    double after = (double)tio_mem_available();
    CHECK_EQ(c.limit_explicit, 0);
    double lo = (before < after ? before : after) * factor * 0.95;
    double hi = (before > after ? before : after) * factor * 1.05;
    if ((double)c.limit < lo || (double)c.limit > hi) {
        fprintf(stderr, "[%s] limit %llu not within [%.0f, %.0f]\n", tt_current_case,
                (unsigned long long)c.limit, lo, hi);
        exit(1);
    }
}

static void check_limits(void)
{
    CASE("default limit");
    check_limit(TIO_MEMNODE_DEFAULT_FACTOR, NULL);
    CASE("UMMAP_MEM_FACTOR");
    check_limit(0.25, "0.25");
    check_limit(1.0, "1");
    CASE("UMMAP_MEM_LIMIT");
    mn_env("k", "3Gi", NULL, NULL);
    setenv("UMMAP_MEM_FACTOR", "0.5", 1);
    struct tio_memnode_config c = read_ok();
    CHECK(c.limit == 3ull << 30);
    CHECK_EQ(c.limit_explicit, 1);
}

int main(void)
{
    setenv("TIERIO_LOG", "error", 0);
    check_sizes();
    check_names();
    check_keys();
    check_hydra();
    check_procs();
    check_limits();
    printf("test_memnode_env: passed\n");
    return 0;
}
