#include "tier/memavail.h"

#include <stdio.h>
#include <stdlib.h>
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

/* ---- where the memory cgroups are ---- */

/* One hierarchy that can limit memory: where it is mounted, the cgroup path its top
 * shows, the process's cgroup in it, and its files. */
struct hierarchy {
    char mount[4096], root[4096], path[4096];
    const char *limit, *usage, *hierarchy_flag; /* hierarchy_flag: v1 only */
    const char *inactive_file;                  /* its memory.stat field, hierarchical */
};

/* Copy of the n bytes at s into out (size len), mountinfo's octal escapes (\040 for a
 * blank) undone. */
static void unescape(const char *s, size_t n, char *out, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < len; i++) {
        if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
            s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out[o++] = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = 0;
}

/* Is word one of the comma-separated words of list (n bytes)? */
static int has_word(const char *list, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (const char *c = list, *end = list + n; c < end;) {
        size_t k = strcspn(c, ",");
        if (k > (size_t)(end - c))
            k = (size_t)(end - c);
        if (k == w && !strncmp(c, word, w))
            return 1;
        c += k + 1;
    }
    return 0;
}

/* The mount of v2 (the cgroup2 file system) or v1's memory controller, from mountinfo:
 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - TYPE SOURCE SUPEROPTIONS". */
static int find_mount(const char *mountinfo, int v2, struct hierarchy *h)
{
    for (const char *l = mountinfo; *l;) {
        size_t n = strcspn(l, "\n");
        const char *sep = strstr(l, " - "), *f[5] = {l};
        for (int i = 1; i < 5 && f[i - 1]; i++) {
            const char *b = memchr(f[i - 1], ' ', (size_t)(l + n - f[i - 1]));
            f[i] = b ? b + 1 : NULL;
        }
        if (sep && sep < l + n && f[4]) {
            const char *type = sep + 3, *src = strchr(type, ' ');
            const char *opts = src && src < l + n ? strchr(src + 1, ' ') : NULL;
            size_t tl = (size_t)((src ? src : l + n) - type);
            int match = v2 ? tl == 7 && !strncmp(type, "cgroup2", 7)
                           : tl == 6 && !strncmp(type, "cgroup", 6) && opts &&
                                 opts < l + n &&
                                 has_word(opts + 1, (size_t)(l + n - opts - 1), "memory");
            if (match) {
                unescape(f[3], (size_t)(f[4] - 1 - f[3]), h->root, sizeof h->root);
                const char *me = memchr(f[4], ' ', (size_t)(l + n - f[4]));
                unescape(f[4], (size_t)((me ? me : l + n) - f[4]), h->mount, sizeof h->mount);
                return 0;
            }
        }
        l += n + (l[n] == '\n');
    }
    return -1;
}

/* The process's cgroup in v2 ("0::PATH") or in v1's memory controller
 * ("ID:...,memory,...:PATH"), from /proc/self/cgroup. */
static int find_path(const char *self_cgroup, int v2, struct hierarchy *h)
{
    for (const char *l = self_cgroup; *l;) {
        size_t n = strcspn(l, "\n");
        const char *c1 = memchr(l, ':', n);
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(l + n - c1 - 1)) : NULL;
        if (c2 && (v2 ? c2 == c1 + 1 && !strncmp(l, "0:", 2)
                      : has_word(c1 + 1, (size_t)(c2 - c1 - 1), "memory"))) {
            snprintf(h->path, sizeof h->path, "%.*s", (int)(l + n - c2 - 1), c2 + 1);
            return 0;
        }
        l += n + (l[n] == '\n');
    }
    return -1;
}

/* ---- the room ---- */

/* A field of the memory.stat file in dir ("name value" lines); 0 when absent. */
static uint64_t stat_field(const char *dir, const char *field)
{
    char p[8300], name[64];
    unsigned long long v, found = 0;
    snprintf(p, sizeof p, "%s/memory.stat", dir);
    FILE *f = fopen(p, "re");
    if (!f)
        return 0;
    while (fscanf(f, "%63s %llu", name, &v) == 2)
        if (!strcmp(name, field)) {
            found = v;
            break;
        }
    fclose(f);
    return found;
}

/* The room under the cgroup directory dir: limit - usage, UINT64_MAX without a limit
 * (v2 "max", v1's 2^63-ish "unlimited", an unreadable file). The usage counts the page
 * cache, whose inactive file pages the kernel drops before it fails an allocation: they
 * are room (what MemAvailable says of the whole machine, and the "working set" of
 * container runtimes). Without that a node that has just written a file through its
 * cache would seem to have none. */
static uint64_t level_room(const struct hierarchy *h, const char *dir)
{
    char p[8300];
    uint64_t limit, usage = 0;
    snprintf(p, sizeof p, "%s/%s", dir, h->limit);
    if (read_u64(p, &limit) || limit >= (UINT64_C(1) << 62))
        return UINT64_MAX;
    snprintf(p, sizeof p, "%s/%s", dir, h->usage);
    if (read_u64(p, &usage))
        usage = 0;
    uint64_t cache = stat_field(dir, h->inactive_file);
    usage = usage > cache ? usage - cache : 0;
    return limit > usage ? limit - usage : 0;
}

/* The smallest room from the process's cgroup up to the top of the mount. */
static uint64_t hierarchy_room(struct hierarchy *h)
{
    size_t rl = strlen(h->root);
    while (rl > 1 && h->root[rl - 1] == '/')
        rl--;
    if (strncmp(h->path, h->root, rl) || (rl > 1 && h->path[rl] && h->path[rl] != '/'))
        return UINT64_MAX; /* the process's cgroup is not under this mount's top */
    const char *rel = rl > 1 ? h->path + rl : h->path;
    char dir[8300];
    snprintf(dir, sizeof dir, "%s%s", h->mount, rel);
    size_t top = strlen(h->mount);
    uint64_t room = UINT64_MAX;
    for (;;) {
        size_t n = strlen(dir);
        while (n > top && dir[n - 1] == '/')
            dir[--n] = 0;
        uint64_t r = level_room(h, dir);
        room = r < room ? r : room;
        if (n <= top)
            break;
        size_t parent = (size_t)(strrchr(dir, '/') - dir);
        dir[parent > top ? parent : top] = 0;
        /* v1: a parent with use_hierarchy 0 does not count its children's memory */
        char p[8400];
        uint64_t flag;
        snprintf(p, sizeof p, "%s/%s", dir, h->hierarchy_flag ? h->hierarchy_flag : "");
        if (h->hierarchy_flag && read_u64(p, &flag) == 0 && flag == 0)
            break;
    }
    return room;
}

uint64_t tio_cgroup_room(const char *mountinfo, const char *self_cgroup)
{
    static const struct hierarchy kinds[2] = {
        {.limit = "memory.max", .usage = "memory.current", .inactive_file = "inactive_file"},
        {.limit = "memory.limit_in_bytes", .usage = "memory.usage_in_bytes",
         .hierarchy_flag = "memory.use_hierarchy", .inactive_file = "total_inactive_file"},
    };
    uint64_t room = UINT64_MAX;
    for (int v1 = 0; v1 < 2; v1++) {
        struct hierarchy h = kinds[v1];
        if (find_mount(mountinfo, !v1, &h) || find_path(self_cgroup, !v1, &h))
            continue;
        uint64_t r = hierarchy_room(&h);
        room = r < room ? r : room;
    }
    return room;
}

/* The whole text of a /proc file (malloc'd), or NULL. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t cap = 0;
    if (getdelim(&text, &cap, 0, f) < 0) { /* to the end: the text has no NUL */
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

uint64_t tio_mem_available(void)
{
    char *mountinfo = read_text("/proc/self/mountinfo"), *self = read_text("/proc/self/cgroup");
    uint64_t a = tio_meminfo("MemAvailable");
    uint64_t c = mountinfo && self ? tio_cgroup_room(mountinfo, self) : UINT64_MAX;
    free(mountinfo);
    free(self);
    return c < a ? c : a;
}
