/* tio_mem_available in a real memory cgroup whose parent has the limit: a parent cgroup
 * limited to 2 GiB and an unlimited child under this process's own cgroup; a child
 * process moves into the child cgroup and must see at most 2 GiB. cgroup v1's memory
 * controller (memory.limit_in_bytes) or v2 (memory.max). Needs root and a writable
 * memory hierarchy: exits 77 saying why when it cannot make one. */
#include <inttypes.h>

#include "check.h"
#include "tier/memavail.h"

#define GiB (UINT64_C(1) << 30)

static char parent[4096], child[4096];
static pid_t owner; /* the process that removes them (not the forked one) */

static int skip(const char *why)
{
    printf("test_memavail_nested: skipped: %s\n", why);
    return 77;
}

static int put(const char *dir, const char *file, const char *value)
{
    char p[8300];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    FILE *f = fopen(p, "we");
    if (!f)
        return -1;
    int ok = fputs(value, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* This process's cgroup in the hierarchy named by its /proc/self/cgroup line: "memory"
 * (v1) or "" (v2). */
static int own_cgroup(const char *controller, char *path, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 && (size_t)(c2 - c1 - 1) == strlen(controller) &&
            !strncmp(c1 + 1, controller, strlen(controller)))
            found = snprintf(path, len, "%s", c2 + 1) > 0;
    }
    if (f)
        fclose(f);
    return found ? 0 : -1;
}

/* The parent and child cgroups, the parent limited to 2 GiB; NULL or why not. */
static const char *make_cgroups(void)
{
    char own[4096];
    const char *limit;
    if (getuid() != 0)
        return "not root";
    if (tt_exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") &&
        own_cgroup("memory", own, sizeof own) == 0) {
        snprintf(parent, sizeof parent, "/sys/fs/cgroup/memory%s/tierio-test-%d",
                 strcmp(own, "/") ? own : "", (int)getpid());
        limit = "memory.limit_in_bytes";
    } else if (tt_exists("/sys/fs/cgroup/cgroup.controllers") &&
               own_cgroup("", own, sizeof own) == 0) {
        /* v2: processes live only in leaves, so the test's cgroups go beside this
         * process's own, under its parent, with memory enabled there. */
        char *slash = strrchr(own, '/');
        if (slash)
            *slash = 0;
        char up[4096 + 16];
        snprintf(up, sizeof up, "/sys/fs/cgroup%s", own);
        if (put(up, "cgroup.subtree_control", "+memory"))
            return "cannot enable the memory controller in this cgroup v2 hierarchy";
        snprintf(parent, sizeof parent, "%s/tierio-test-%d", up, (int)getpid());
        limit = "memory.max";
    } else {
        return "no cgroup memory controller under /sys/fs/cgroup";
    }
    if (mkdir(parent, 0755))
        return "cannot create a cgroup (read-only or delegated hierarchy)";
    snprintf(child, sizeof child, "%s/child", parent);
    if (!strcmp(limit, "memory.max") && put(parent, "cgroup.subtree_control", "+memory"))
        return "cannot enable the memory controller for the child cgroup";
    if (put(parent, limit, "2147483648") || mkdir(child, 0755))
        return "cannot set the parent cgroup's limit or create the child";
    return NULL;
}

static void remove_cgroups(void)
{
    if (getpid() != owner)
        return;
    for (int i = 0; i < 50 && child[0] && rmdir(child) && errno == EBUSY; i++)
        usleep(100000); /* the exited process leaves the cgroup a moment later */
    if (parent[0])
        rmdir(parent);
}

int main(void)
{
    owner = getpid();
    const char *why = make_cgroups();
    if (why) {
        remove_cgroups();
        return skip(why);
    }
    atexit(remove_cgroups);
    printf("parent %s: 2 GiB; child %s: no limit\n", parent, child);
    CASE("a process in an unlimited child of a 2 GiB cgroup");
    pid_t pid = tt_fork(30);
    if (pid == 0) {
        if (put(child, "cgroup.procs", "0"))
            FAIL_NOW("cannot move into %s: %s", child, strerror(errno));
        uint64_t a = tio_mem_available();
        printf("tio_mem_available in the child cgroup: %" PRIu64 " MiB (MemAvailable %" PRIu64
               " MiB)\n", a >> 20, tio_meminfo("MemAvailable") >> 20);
        CHECK_LE(a, 2 * GiB);
        CHECK(a >= GiB); /* the cgroups are new: nearly all of the 2 GiB is free */
        fflush(stdout);
        _exit(0);
    }
    char status[128];
    if (!tt_wait(pid, status, sizeof status))
        FAIL_NOW("the process in the child cgroup failed: %s", status);
    printf("test_memavail_nested: all checks passed\n");
    return 0;
}
