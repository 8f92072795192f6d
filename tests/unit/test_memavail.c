/* tio_mem_available (tier/memavail.c): positive, at most MemTotal, and within the room
 * left under this process's memory cgroup when that has a limit. */
#include <inttypes.h>

#include "check.h"
#include "tier/memavail.h"

static uint64_t meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "re");
    char line[256];
    unsigned long long kb = 0;
    size_t n = strlen(key);
    CHECK(f != NULL);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, n) && line[n] == ':' &&
            sscanf(line + n + 1, "%llu", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

static int read_u64(const char *path, uint64_t *v)
{
    FILE *f = fopen(path, "re");
    unsigned long long x;
    int ok = f && fscanf(f, "%llu", &x) == 1;
    if (f)
        fclose(f);
    if (ok)
        *v = x;
    return ok ? 0 : -1;
}

/* The v1 memory cgroup limit of this process (UINT64_MAX when none or not v1). */
static uint64_t cgroup_v1_limit(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096], path[8192];
    uint64_t limit = UINT64_MAX;
    if (!f)
        return limit;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || strncmp(c1 + 1, "memory:", 7))
            continue;
        snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", c2 + 1);
        if (read_u64(path, &limit) || limit >= (UINT64_C(1) << 60))
            limit = UINT64_MAX;
    }
    fclose(f);
    return limit;
}

int main(void)
{
    CASE("tio_mem_available");
    uint64_t total = meminfo("MemTotal");
    CHECK(total > 0);
    uint64_t a = tio_mem_available();
    uint64_t avail = meminfo("MemAvailable");
    printf("tio_mem_available %" PRIu64 " MiB, MemAvailable %" PRIu64 " MiB, MemTotal %"
           PRIu64 " MiB\n", a >> 20, avail >> 20, total >> 20);
    CHECK(a > 0);
    CHECK(a <= total);
    /* never more than the kernel says is available (10% slack for the moments between) */
    CHECK(a <= avail + avail / 10);
    uint64_t lim = cgroup_v1_limit();
    if (lim != UINT64_MAX) {
        printf("memory cgroup limit %" PRIu64 " MiB\n", lim >> 20);
        CHECK(a <= lim);
    }
    /* stable: two calls in a row agree within 10% */
    uint64_t b = tio_mem_available();
    CHECK(b > a - a / 10 && b < a + a / 10);
    printf("test_memavail: all checks passed\n");
    return 0;
}
