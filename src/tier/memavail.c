#include "tier/memavail.h"

#include <stdio.h>
#include <string.h>

static int read_u64(const char *path, uint64_t *v)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    unsigned long long x;
    int ok = fscanf(f, "%llu", &x) == 1;
    fclose(f);
    if (ok)
        *v = x;
    return ok ? 0 : -1;
}

uint64_t tio_meminfo(const char *field)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return 0;
    char line[256], name[64];
    unsigned long long kb = 0, v;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%63[^:]: %llu kB", name, &v) == 2 && !strcmp(name, field)) {
            kb = v;
            break;
        }
    fclose(f);
    return (uint64_t)kb * 1024;
}

/* Room under the memory cgroup of this process: limit - usage, or UINT64_MAX. */
static uint64_t cgroup_room(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return UINT64_MAX;
    char line[4096], v1[4096] = "", v2[4096] = "";
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        const char *ctrl = c1 + 1, *path = c2 + 1;
        if (!strcmp(ctrl, ""))
            snprintf(v2, sizeof v2, "%s", path);
        else if (strstr(ctrl, "memory"))
            snprintf(v1, sizeof v1, "%s", path);
    }
    fclose(f);
    uint64_t limit, usage;
    char p[8192];
    if (v1[0]) {
        snprintf(p, sizeof p, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", v1);
        if (read_u64(p, &limit) == 0) {
            snprintf(p, sizeof p, "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", v1);
            if (read_u64(p, &usage) == 0 && limit < (UINT64_C(1) << 60))
                return limit > usage ? limit - usage : 0;
        }
    }
    if (v2[0]) {
        snprintf(p, sizeof p, "/sys/fs/cgroup%s/memory.max", v2);
        if (read_u64(p, &limit) == 0) { /* "max" fails to parse: no limit */
            snprintf(p, sizeof p, "/sys/fs/cgroup%s/memory.current", v2);
            if (read_u64(p, &usage) == 0)
                return limit > usage ? limit - usage : 0;
        }
    }
    return UINT64_MAX;
}

uint64_t tio_mem_available(void)
{
    uint64_t a = tio_meminfo("MemAvailable"), c = cgroup_room();
    return c < a ? c : a;
}
