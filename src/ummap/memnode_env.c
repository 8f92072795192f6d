#include "ummap/memnode_env.h"
#include "util/values.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tier/memavail.h"
#include "util/log.h"

/* An unset or empty variable counts as not given (`VAR= prog` is how shells unset). */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

int tio_memnode_parse_size(const char *s, uint64_t *out)
{
    /* tierio's one size parser (util/values.h); a limit of 0 bytes means nothing. */
    uint64_t v;
    if (!s || tio_parse_bytes(s, &v) != 0 || v == 0)
        return EINVAL;
    *out = v;
    return 0;
}

/* A positive decimal integer up to max. */
static int parse_count(const char *s, uint32_t max, uint32_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return EINVAL;
    errno = 0;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v == 0 || v > max)
        return EINVAL;
    *out = (uint32_t)v;
    return 0;
}

/* FNV-1a: names must differ for keys that differ only in characters a name cannot hold. */
static uint64_t hash64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

void tio_memnode_object_name(char *out, unsigned long len, unsigned uid, const char *key)
{
    char part[41];
    size_t n = 0;
    for (const char *p = key; *p && n < sizeof part - 1; p++, n++) {
        char c = *p;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-' || c == '_';
        part[n] = ok ? c : '_';
    }
    part[n] = 0;
    snprintf(out, len, "/" TIO_MEMNODE_PREFIX "%u-%016llx-%s", uid,
             (unsigned long long)hash64(key), part);
}

/* Parent and start time (clock ticks after boot) of pid, and its command name. */
static int proc_stat(long pid, long *ppid, unsigned long long *start, char *comm, size_t len)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* "pid (comm) state ppid ..."; comm may hold blanks and parentheses. */
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return -1;
    snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
    char state;
    long pp;
    unsigned long long st;
    /* fields 3..22: state ppid pgrp session tty tpgid flags minflt cminflt majflt
     * cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime */
    if (sscanf(close + 1, " %c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                          "%*d %*d %*d %llu", &state, &pp, &st) != 3)
        return -1;
    *ppid = pp;
    *start = st;
    return 0;
}

/* The key from the environment and the process tree; see docs/ummap_memory.md. */
static void read_key(struct tio_memnode_config *c)
{
    const char *v;
    if ((v = env("UMMAP_NODE_KEY"))) {
        c->key_source = "UMMAP_NODE_KEY";
        snprintf(c->key, sizeof c->key, "%s", v);
        return;
    }
    if ((v = env("PMIX_NAMESPACE"))) { /* Open MPI >= 2, srun --mpi=pmix, PRRTE */
        c->key_source = "PMIX_NAMESPACE";
        snprintf(c->key, sizeof c->key, "pmix:%s", v);
        return;
    }
    long pid = (long)getppid(), ppid;
    unsigned long long start;
    char comm[64];
    /* MPICH's hydra puts no job id in the environment; every rank of a node descends from
     * the job's hydra_pmi_proxy on that node (wrappers such as valgrind or a shell may
     * stand in between). */
    if (env("PMI_RANK") || env("PMI_FD") || env("HYDI_CONTROL_FD")) {
        for (int depth = 0; depth < 16 && pid > 1; depth++) {
            if (proc_stat(pid, &ppid, &start, comm, sizeof comm) < 0)
                break;
            if (!strcmp(comm, "hydra_pmi_proxy")) {
                c->key_source = "hydra_pmi_proxy";
                snprintf(c->key, sizeof c->key, "hydra:%ld.%llu", pid, start);
                return;
            }
            pid = ppid;
        }
    }
    const char *job = env("SLURM_JOB_ID"), *step = env("SLURM_STEP_ID");
    if (job && step) { /* srun with PMI-2 or without MPI */
        c->key_source = "SLURM_JOB_ID.SLURM_STEP_ID";
        snprintf(c->key, sizeof c->key, "slurm:%s.%s", job, step);
        return;
    }
    /* Fallback: the processes started by one parent (a launcher, a script, a program that
     * forks). The start time tells a reused pid apart. */
    pid = (long)getppid();
    start = 0;
    if (proc_stat(pid, &ppid, &start, comm, sizeof comm) < 0)
        start = 0;
    c->key_source = "parent process";
    snprintf(c->key, sizeof c->key, "parent:%ld.%llu", pid, start);
}

static int bad(const char *var, const char *value, const char *why)
{
    tio_log(TIO_LOG_ERROR, "ummap: %s=\"%s\" is invalid: %s", var, value, why);
    return EINVAL;
}

static int read_nprocs(struct tio_memnode_config *c)
{
    static const char *launcher[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
    const char *v = env("UMMAP_NODE_PROCS");
    c->nprocs = 0;
    c->nprocs_source = "processes joined";
    if (v) {
        if (parse_count(v, TIO_MEMNODE_MAX_PROCS, &c->nprocs))
            return bad("UMMAP_NODE_PROCS", v, "expected a process count from 1 to 1048576");
        c->nprocs_source = "UMMAP_NODE_PROCS";
        c->nprocs_explicit = 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof launcher / sizeof *launcher; i++) {
        if ((v = env(launcher[i]))) {
            if (parse_count(v, TIO_MEMNODE_MAX_PROCS, &c->nprocs))
                return bad(launcher[i], v, "expected a process count (set UMMAP_NODE_PROCS "
                                           "to override the launcher)");
            c->nprocs_source = launcher[i];
            return 0;
        }
    }
    return 0;
}

static int read_limit(struct tio_memnode_config *c)
{
    double factor = TIO_MEMNODE_DEFAULT_FACTOR;
    const char *f = env("UMMAP_MEM_FACTOR"), *l = env("UMMAP_MEM_LIMIT");
    if (f) {
        char *end;
        errno = 0;
        factor = strtod(f, &end);
        if (errno || *end || end == f || !isfinite(factor) || factor <= 0 || factor > 1)
            return bad("UMMAP_MEM_FACTOR", f, "expected a number greater than 0 and at most 1");
    }
    if (l) {
        if (tio_memnode_parse_size(l, &c->limit))
            return bad("UMMAP_MEM_LIMIT", l,
                       "expected a positive number of bytes, optionally with " TIO_SIZE_UNITS);
        c->limit_explicit = 1;
        return 0;
    }
    uint64_t avail = tio_mem_available();
    c->limit = (uint64_t)((double)avail * factor);
    if (c->limit == 0) {
        tio_log(TIO_LOG_ERROR, "ummap: no memory available for segments (MemAvailable and "
                "the memory cgroup give %llu bytes); set UMMAP_MEM_LIMIT",
                (unsigned long long)avail);
        return ENOMEM;
    }
    return 0;
}

int tio_memnode_config_read(struct tio_memnode_config *c)
{
    memset(c, 0, sizeof *c);
    const char *m = env("UMMAP_MEMCONFIG");
    if (m) {
        if (!strcasecmp(m, "dynamic"))
            c->dynamic = 1;
        else if (strcasecmp(m, "static"))
            return bad("UMMAP_MEMCONFIG", m, "expected \"static\" or \"dynamic\"");
        c->mode_explicit = 1;
    }
    int rc = read_nprocs(c);
    if (!rc)
        rc = read_limit(c);
    if (rc)
        return rc;
    read_key(c);
    tio_memnode_object_name(c->name, sizeof c->name, (unsigned)geteuid(), c->key);
    return 0;
}
