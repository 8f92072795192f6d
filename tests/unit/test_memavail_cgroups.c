/* tio_cgroup_room (tier/memavail.c) on made-up cgroup hierarchies in a temporary
 * directory: a limit on a parent bounds an unlimited child (v2 and v1), "max" everywhere
 * limits nothing (MemAvailable then decides), unreadable files, v1 use_hierarchy 0, a
 * mount whose top is not the root cgroup, escaped mount points. */
#include <inttypes.h>

#include "check.h"
#include "tier/memavail.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static const char *base;

/* base/rel/file with content (directories made as needed); content NULL: a directory
 * in place of the file, which opens but does not read. */
static void put(const char *rel, const char *file, const char *content)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", base, rel);
    for (char *c = p + strlen(base) + 1; (c = strchr(c, '/')) != NULL; c++) {
        *c = 0;
        mkdir(p, 0755);
        *c = '/';
    }
    mkdir(p, 0755);
    snprintf(p + strlen(p), sizeof p - strlen(p), "/%s", file);
    if (content)
        tt_write_file(p, content, strlen(content));
    else
        CHECK_OK(mkdir(p, 0755));
}

/* tio_cgroup_room with a mountinfo line for base/mnt (type, root, super options) and
 * self as /proc/self/cgroup. */
static uint64_t room(const char *mnt, const char *type, const char *root, const char *opts,
                     const char *self)
{
    char mountinfo[8192];
    snprintf(mountinfo, sizeof mountinfo,
             "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
             "31 23 0:28 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
             "40 31 0:36 %s %s/%s rw,relatime shared:9 - %s cgroup %s\n",
             root, base, mnt, type, opts);
    uint64_t r = tio_cgroup_room(mountinfo, self);
    printf("[%s] room %" PRIu64 "\n", tt_current_case, r);
    return r;
}

static void v2(void)
{
    CASE("v2: a 2 GiB parent, an unlimited child");
    put("v2/job", "memory.max", "2147483648\n");
    put("v2/job", "memory.current", "524288000\n");
    put("v2/job/step", "memory.max", "max\n");
    put("v2/job/step", "memory.current", "104857600\n");
    put("v2", "cgroup.procs", "1\n"); /* the root cgroup has no memory.max */
    CHECK_EQ(room("v2", "cgroup2", "/", "rw,nsdelegate", "0::/job/step\n"),
             2 * GiB - 500 * MiB);

    CASE("v2: the child's own limit when it is the smaller room");
    put("v2/job/tight", "memory.max", "209715200\n");
    put("v2/job/tight", "memory.current", "10485760\n");
    CHECK_EQ(room("v2", "cgroup2", "/", "rw", "0::/job/tight\n"), 190 * MiB);

    CASE("v2: usage above the limit leaves no room");
    put("v2/full", "memory.max", "1048576\n");
    put("v2/full", "memory.current", "2097152\n");
    CHECK_EQ(room("v2", "cgroup2", "/", "rw", "0::/full\n"), 0);

    CASE("v2: inactive page cache is room (memory.stat)");
    put("v2/cached", "memory.max", "1073741824\n");
    put("v2/cached", "memory.current", "1073741824\n");
    put("v2/cached", "memory.stat", "anon 104857600\nfile 943718400\nactive_file 209715200\n"
                                    "inactive_file 734003200\nfile_dirty 0\n");
    CHECK_EQ(room("v2", "cgroup2", "/", "rw", "0::/cached\n"), 700 * MiB);

    CASE("v2: max everywhere limits nothing (MemAvailable decides)");
    put("v2/free/a/b", "memory.max", "max\n");
    put("v2/free/a", "memory.max", "max\n");
    put("v2/free", "memory.max", "max\n");
    CHECK(room("v2", "cgroup2", "/", "rw", "0::/free/a/b\n") == UINT64_MAX);

    CASE("v2: a mount whose top is the job's cgroup (a container's view)");
    put("v2c", "memory.max", "3221225472\n");
    put("v2c", "memory.current", "0\n");
    put("v2c/step/task", "memory.max", "max\n");
    CHECK_EQ(room("v2c", "cgroup2", "/job42", "rw", "0::/job42/step/task\n"), 3 * GiB);
    CASE("v2: a cgroup outside the mount's top is not seen");
    CHECK(room("v2c", "cgroup2", "/job42", "rw", "0::/job420/step\n") == UINT64_MAX);
}

static void v1(void)
{
    const char *unlimited = "9223372036854771712\n";
    CASE("v1: a 1 GiB parent, an unlimited child");
    put("memory", "memory.limit_in_bytes", unlimited);
    put("memory", "memory.use_hierarchy", "1\n");
    put("memory/slurm", "memory.limit_in_bytes", "1073741824\n");
    put("memory/slurm", "memory.usage_in_bytes", "314572800\n");
    put("memory/slurm", "memory.use_hierarchy", "1\n");
    put("memory/slurm/job", "memory.limit_in_bytes", unlimited);
    put("memory/slurm/job", "memory.usage_in_bytes", "10485760\n");
    put("memory/slurm/job", "memory.use_hierarchy", "1\n");
    const char *self = "9:name=systemd:/\n4:memory:/slurm/job\n1:cpu:/\n0::/\n";
    CHECK_EQ(room("memory", "cgroup", "/", "rw,memory", self), GiB - 300 * MiB);

    CASE("v1: hierarchical inactive page cache is room, the local count is not used");
    put("memory/cache", "memory.limit_in_bytes", "536870912\n");
    put("memory/cache", "memory.usage_in_bytes", "536870912\n");
    put("memory/cache", "memory.use_hierarchy", "1\n");
    put("memory/cache", "memory.stat", "cache 400000000\ninactive_file 1048576\n"
                                       "total_inactive_file 268435456\n");
    CHECK_EQ(room("memory", "cgroup", "/", "rw,memory", "4:memory:/cache\n"), 256 * MiB);

    CASE("v1: memory listed with other controllers");
    CHECK_EQ(room("memory", "cgroup", "/", "rw,cpu,memory",
                  "4:cpu,memory:/slurm/job\n0::/\n"), GiB - 300 * MiB);

    CASE("v1: the v2 line and a cpu mount do not count");
    CHECK(room("memory", "cgroup", "/", "rw,cpu", self) == UINT64_MAX);

    CASE("v1: a parent with use_hierarchy 0 does not limit its children");
    put("memory/flat", "memory.limit_in_bytes", "1073741824\n");
    put("memory/flat", "memory.usage_in_bytes", "0\n");
    put("memory/flat", "memory.use_hierarchy", "0\n");
    put("memory/flat/job", "memory.limit_in_bytes", unlimited);
    CHECK(room("memory", "cgroup", "/", "rw,memory", "4:memory:/flat/job\n") == UINT64_MAX);
}

static void unreadable(void)
{
    CASE("unreadable files: a limit limits nothing, a usage counts as empty");
    put("v2u/job", "memory.max", NULL);
    put("v2u/job/step", "memory.max", "1073741824\n");
    put("v2u/job/step", "memory.current", NULL);
    CHECK_EQ(room("v2u", "cgroup2", "/", "rw", "0::/job/step\n"), GiB);
    CASE("garbage in a limit limits nothing");
    put("v2u/junk", "memory.max", "lots\n");
    CHECK(room("v2u", "cgroup2", "/", "rw", "0::/junk\n") == UINT64_MAX);
    CASE("missing directories and an empty /proc/self/cgroup");
    CHECK(room("v2u", "cgroup2", "/", "rw", "0::/gone/away\n") == UINT64_MAX);
    CHECK(room("v2u", "cgroup2", "/", "rw", "") == UINT64_MAX);
    CHECK(tio_cgroup_room("", "0::/\n") == UINT64_MAX);
}

static void escaped(void)
{
    CASE("a mount point with a blank (\\040 in mountinfo)");
    put("with space/job", "memory.max", "4194304\n");
    put("with space/job", "memory.current", "0\n");
    put("with space/job/x", "memory.max", "max\n");
    CHECK_EQ(room("with\\040space", "cgroup2", "/", "rw", "0::/job/x\n"), 4 * MiB);
}

int main(void)
{
    base = tt_tmpdir("memavail-cgroups");
    v2();
    v1();
    unreadable();
    escaped();
    CASE("this process: never above MemAvailable");
    CHECK(tio_mem_available() <= tio_meminfo("MemAvailable") + 64 * MiB);
    printf("test_memavail_cgroups: all checks passed\n");
    return 0;
}
