#include "tier/tier_site.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---- */

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

static const char *const kind_names[] = {"dram", "hbm", "node-local", "global"};
static const char *const persist_names[] = {"none", "job", "permanent"};
static const char *const scope_names[] = {"process", "node", "nodes", "global"};

int tio_tier_kind_parse(const char *s) { return lookup(s, kind_names, 4); }
int tio_persistence_parse(const char *s) { return lookup(s, persist_names, 3); }
int tio_scope_parse(const char *s) { return lookup(s, scope_names, 4); }

const char *tio_tier_kind_name(enum tio_tier_kind k)
{
    return (unsigned)k < 4 ? kind_names[k] : NULL;
}
const char *tio_persistence_name(enum tio_persistence p)
{
    return (unsigned)p < 3 ? persist_names[p] : NULL;
}
const char *tio_scope_name(enum tio_scope s)
{
    return (unsigned)s < 4 ? scope_names[s] : NULL;
}

/* ---- the parser ---- */

void tio_site_init(struct tio_site *s)
{
    memset(s, 0, sizeof *s);
    s->default_hops = 1;
    s->default_io_hops = 1;
}

void tio_site_free(struct tio_site *s)
{
    free(s->hops);
    free(s->io);
    s->hops = s->io = NULL;
    s->nhops = s->nio = 0;
}

struct parser {
    struct tio_site *s;
    const char *name;
    int line;
    struct tio_err *err;
    enum { SEC_NONE, SEC_NETWORK, SEC_TIER } sec;
    struct tio_site_tier *tier;
    unsigned seen;          /* keys given in the current section (bit per key) */
    int network_seen;
};

#define PERR(p, ...) perr(p, __VA_ARGS__)
__attribute__((format(printf, 2, 3))) static int perr(struct parser *p, const char *fmt, ...)
{
    char msg[TIO_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tio_err_set(p->err, TIO_E_ARG, "site file %s:%d: %s", p->name, p->line, msg);
}

static int valid_name(const char *n)
{
    size_t len = strlen(n);
    if (len == 0 || len >= TIO_TIER_NAME_MAX || n[0] == '.')
        return 0;
    for (const char *c = n; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
            return 0;
    return 1;
}

static int section(struct parser *p, char *head)
{
    char *close = strchr(head, ']');
    if (!close || *tio_skip_blank(close + 1))
        return PERR(p, "malformed section header (want [network] or [tier NAME])");
    *close = 0;
    char word[32] = "", name[128] = "", extra[8];
    int n = sscanf(head + 1, "%31s %127s %7s", word, name, extra);
    p->seen = 0;
    if (n == 1 && !strcmp(word, "network")) {
        if (p->network_seen++)
            return PERR(p, "a second [network] section");
        p->sec = SEC_NETWORK;
        return TIO_OK;
    }
    if (n == 2 && !strcmp(word, "tier")) {
        if (!valid_name(name))
            return PERR(p, "tier name \"%s\": use 1-%d of [A-Za-z0-9._-], not starting with "
                        "'.'", name, TIO_TIER_NAME_MAX - 1);
        if (tio_site_tier(p->s, name))
            return PERR(p, "tier \"%s\" is described twice", name);
        if (p->s->ntiers == TIO_SITE_MAX_TIERS)
            return PERR(p, "more than %d tiers", TIO_SITE_MAX_TIERS);
        p->tier = &p->s->tiers[p->s->ntiers++];
        memset(p->tier, 0, sizeof *p->tier);
        snprintf(p->tier->name, sizeof p->tier->name, "%.*s", TIO_TIER_NAME_MAX - 1, name);
        p->tier->kind = (enum tio_tier_kind)-1;
        p->tier->persistence = p->tier->scope = -1;
        p->tier->line = p->line;
        p->sec = SEC_TIER;
        return TIO_OK;
    }
    if (n == 1 && !strcmp(word, "tier"))
        return PERR(p, "[tier] needs a name: [tier NAME]");
    return PERR(p, "unknown section [%s%s%s] (want [network] or [tier NAME])", word,
                n > 1 ? " " : "", n > 1 ? name : "");
}

/* Bit of a key in `seen`, to refuse a key given twice. */
static int once(struct parser *p, unsigned bit, const char *key)
{
    if (p->seen & bit)
        return PERR(p, "\"%s\" is given twice in this section", key);
    p->seen |= bit;
    return TIO_OK;
}

/* A parse's failure as the parser says it: the key, the value and why. */
static int bad_value(struct parser *p, int rc, const char *key, const char *v,
                     const char *malformed, const char *range)
{
    if (rc == TIO_VALUE_RANGE)
        return PERR(p, "%s = \"%s\": out of range (%s)", key, v, range);
    return PERR(p, "%s = \"%s\": %s", key, v, malformed);
}

static int value_time(struct parser *p, const char *key, const char *v, double *out)
{
    int rc = tio_parse_time(v, out);
    return rc ? bad_value(p, rc, key, v, "not a time (e.g. 80ns, 7us, 2ms, 0.1s)",
                          TIO_TIME_RANGE) : TIO_OK;
}

static int value_rate(struct parser *p, const char *key, const char *v, double *out)
{
    int rc = tio_parse_rate(v, out);
    if (!rc && *out <= 0)
        rc = -1;
    return rc ? bad_value(p, rc, key, v, "not a positive rate (e.g. 5GB/s, 800MiB/s)",
                          TIO_RATE_RANGE) : TIO_OK;
}

static int value_hops(struct parser *p, const char *key, const char *v, int *out)
{
    uint64_t h;
    if (tio_parse_u64(v, &h) || h > 1000000)
        return PERR(p, "%s = \"%s\": not a hop count (0 to 1000000)", key, v);
    *out = (int)h;
    return TIO_OK;
}

static int add_hops(struct parser *p, int io, const char *v)
{
    char a[256], b[256], h[64], extra[8];
    int want = io ? 2 : 3;
    int n = io ? sscanf(v, "%255s %63s %7s", a, h, extra)
               : sscanf(v, "%255s %255s %63s %7s", a, b, h, extra);
    if (n != want)
        return PERR(p, io ? "io_hops = \"%s\": want a host name and a hop count"
                          : "hops = \"%s\": want two host names and a hop count", v);
    if (strlen(a) >= TIO_SITE_HOST_MAX || (!io && strlen(b) >= TIO_SITE_HOST_MAX))
        return PERR(p, "host name longer than %d bytes", TIO_SITE_HOST_MAX - 1);
    int hops = 0; /* set by value_hops on success; GCC -O3 cannot tell */
    if (value_hops(p, io ? "io_hops" : "hops", h, &hops))
        return p->err->cls;
    if (!io && !strcmp(a, b))
        return PERR(p, "hops = \"%s\": a node is 0 hops from itself", v);
    int *count = io ? &p->s->nio : &p->s->nhops;
    struct tio_site_hops **arr = io ? &p->s->io : &p->s->hops;
    void *grown = realloc(*arr, (size_t)(*count + 1) * sizeof **arr);
    if (!grown)
        return tio_err_set(p->err, TIO_E_NOMEM, "site file %s: out of memory", p->name);
    *arr = grown;
    struct tio_site_hops *e = &(*arr)[(*count)++];
    memset(e, 0, sizeof *e);
    snprintf(e->a, sizeof e->a, "%.*s", TIO_SITE_HOST_MAX - 1, a);
    if (!io)
        snprintf(e->b, sizeof e->b, "%.*s", TIO_SITE_HOST_MAX - 1, b);
    e->hops = hops;
    e->line = p->line;
    return TIO_OK;
}

static int network_key(struct parser *p, const char *k, const char *v)
{
    struct tio_site *s = p->s;
    if (!strcmp(k, "hops"))
        return add_hops(p, 0, v);
    if (!strcmp(k, "io_hops"))
        return add_hops(p, 1, v);
    static const char *const keys[] = {"latency", "bandwidth", "node_latency",
                                       "node_bandwidth", "default_hops", "default_io_hops"};
    int i = lookup(k, keys, 6);
    if (i < 0)
        return PERR(p, "unknown key \"%s\" in [network] (latency, bandwidth, node_latency, "
                    "node_bandwidth, hops, io_hops, default_hops, default_io_hops)", k);
    if (once(p, 1u << i, k))
        return p->err->cls;
    switch (i) {
    case 0: return value_time(p, k, v, &s->net_latency);
    case 1: return value_rate(p, k, v, &s->net_bandwidth);
    case 2: return value_time(p, k, v, &s->node_latency);
    case 3: return value_rate(p, k, v, &s->node_bandwidth);
    case 4: return value_hops(p, k, v, &s->default_hops);
    default: return value_hops(p, k, v, &s->default_io_hops);
    }
}

/* "1" or "1,3,4": NUMA node indexes up to TIO_SITE_NUMA_MAX, comma-separated. */
static int valid_numa_list(const char *v)
{
    for (const char *c = v;; c++) {
        if (!isdigit((unsigned char)*c))
            return 0;
        unsigned long node = 0;
        for (; isdigit((unsigned char)*c); c++)
            if ((node = node * 10 + (unsigned long)(*c - '0')) > TIO_SITE_NUMA_MAX)
                return 0;
        if (*c == 0)
            return 1;
        if (*c != ',')
            return 0;
    }
}

static int tier_key(struct parser *p, const char *k, const char *v)
{
    struct tio_site_tier *t = p->tier;
    static const char *const keys[] = {"kind", "latency", "bandwidth", "read_bandwidth",
                                       "write_bandwidth", "capacity", "persistence", "scope",
                                       "path", "numa", "nodes"};
    int i = lookup(k, keys, 11);
    if (i < 0)
        return PERR(p, "unknown key \"%s\" in [tier %s] (kind, latency, bandwidth, "
                    "read_bandwidth, write_bandwidth, capacity, persistence, scope, path, "
                    "numa, nodes)", k, t->name);
    if (once(p, 1u << i, k))
        return p->err->cls;
    /* bandwidth sets both directions; a direction given as well would be ambiguous. */
    if ((i == 2 && (p->seen & (3u << 3))) || ((i == 3 || i == 4) && (p->seen & (1u << 2))))
        return PERR(p, "give either bandwidth or read_bandwidth/write_bandwidth, not both");
    int e;
    switch (i) {
    case 0:
        if ((e = tio_tier_kind_parse(v)) < 0)
            return PERR(p, "kind = \"%s\": want dram, hbm, node-local or global", v);
        t->kind = (enum tio_tier_kind)e;
        return TIO_OK;
    case 1:
        return value_time(p, k, v, &t->latency);
    case 2:
        if (value_rate(p, k, v, &t->read_bandwidth))
            return p->err->cls;
        t->write_bandwidth = t->read_bandwidth;
        return TIO_OK;
    case 3:
        return value_rate(p, k, v, &t->read_bandwidth);
    case 4:
        return value_rate(p, k, v, &t->write_bandwidth);
    case 5:
        if ((e = tio_parse_bytes(v, &t->capacity)) == 0 && t->capacity == 0)
            e = -1;
        return e ? bad_value(p, e, k, v, "not a positive size (e.g. 16GiB, 128GB)",
                             TIO_SIZE_RANGE) : TIO_OK;
    case 6:
        if ((t->persistence = tio_persistence_parse(v)) < 0)
            return PERR(p, "persistence = \"%s\": want none, job or permanent", v);
        return TIO_OK;
    case 7:
        if ((t->scope = tio_scope_parse(v)) < 0)
            return PERR(p, "scope = \"%s\": want process, node, nodes or global", v);
        return TIO_OK;
    case 8:
        if (v[0] != '/')
            return PERR(p, "path = \"%s\": want an absolute directory", v);
        if (strlen(v) >= sizeof t->path - 80) /* room for the buffers' file names */
            return PERR(p, "path is too long");
        snprintf(t->path, sizeof t->path, "%s", v);
        return TIO_OK;
    case 9:
        if (!valid_numa_list(v) || strlen(v) >= sizeof t->numa)
            return PERR(p, "numa = \"%s\": want NUMA node numbers (0 to %d), e.g. 1 or 1,3",
                        v, TIO_SITE_NUMA_MAX);
        snprintf(t->numa, sizeof t->numa, "%s", v);
        return TIO_OK;
    default:
        if (strlen(v) >= sizeof t->nodes)
            return PERR(p, "nodes: list too long");
        snprintf(t->nodes, sizeof t->nodes, "%s", v);
        return TIO_OK;
    }
}

/* The rules that need the whole section. */
static int check_tier(struct parser *p, const struct tio_site_tier *t)
{
    p->line = t->line;
    if ((int)t->kind < 0)
        return PERR(p, "[tier %s] has no kind (dram, hbm, node-local or global)", t->name);
    int storage = t->kind == TIO_TIER_NODE_LOCAL || t->kind == TIO_TIER_GLOBAL;
    if (storage && !t->path[0])
        return PERR(p, "[tier %s] is storage (%s) and needs a path", t->name,
                    tio_tier_kind_name(t->kind));
    if (!storage && t->path[0])
        return PERR(p, "[tier %s] is memory (%s): path does not apply", t->name,
                    tio_tier_kind_name(t->kind));
    if (storage && t->numa[0])
        return PERR(p, "[tier %s] is storage: numa does not apply", t->name);
    if (!storage && t->persistence > TIO_PERSIST_NONE)
        return PERR(p, "[tier %s] is memory (%s): its buffers do not outlive the process, "
                    "persistence must be none", t->name, tio_tier_kind_name(t->kind));
    if (!storage && t->scope > TIO_SCOPE_PROCESS)
        return PERR(p, "[tier %s] is memory (%s): scope must be process", t->name,
                    tio_tier_kind_name(t->kind));
    if (t->kind == TIO_TIER_GLOBAL && t->scope >= 0 && t->scope != TIO_SCOPE_GLOBAL)
        return PERR(p, "[tier %s] is global: scope must be global", t->name);
    if (t->kind == TIO_TIER_NODE_LOCAL && (t->scope == TIO_SCOPE_GLOBAL ||
                                           t->scope == TIO_SCOPE_PROCESS))
        return PERR(p, "[tier %s] is node-local: scope must be node or nodes", t->name);
    return TIO_OK;
}

int tio_site_parse(const char *text, const char *name, struct tio_site *s, struct tio_err *err)
{
    tio_site_init(s);
    snprintf(s->file, sizeof s->file, "%s", name);
    struct parser p = {.s = s, .name = name, .err = err};
    char line[8192];
    const char *c = text;
    int rc = TIO_OK;
    while (*c && !rc) {
        size_t n = strcspn(c, "\n");
        p.line++;
        if (n >= sizeof line) {
            rc = PERR(&p, "line longer than %zu bytes", sizeof line - 1);
            break;
        }
        memcpy(line, c, n);
        line[n] = 0;
        c += n + (c[n] == '\n');
        /* A comment starts with '#' at the start or after a blank. */
        for (char *h = line; (h = strchr(h, '#')) != NULL; h++)
            if (h == line || h[-1] == ' ' || h[-1] == '\t') {
                *h = 0;
                break;
            }
        char *b = (char *)tio_skip_blank(line);
        size_t len = strlen(b);
        while (len && isspace((unsigned char)b[len - 1]))
            b[--len] = 0;
        if (!len)
            continue;
        if (b[0] == '[') {
            rc = section(&p, b);
            continue;
        }
        char *eq = strchr(b, '=');
        if (!eq) {
            rc = PERR(&p, "want \"key = value\", a [section] or a # comment");
            break;
        }
        char *k = b, *v = (char *)tio_skip_blank(eq + 1);
        *eq = 0;
        size_t kl = strlen(k);
        while (kl && (k[kl - 1] == ' ' || k[kl - 1] == '\t'))
            k[--kl] = 0;
        if (!kl || !*v) {
            rc = PERR(&p, "\"%s\" has no %s", kl ? k : "=", kl ? "value" : "key");
            break;
        }
        if (p.sec == SEC_NONE)
            rc = PERR(&p, "\"%s\" is outside a section ([network] or [tier NAME])", k);
        else if (p.sec == SEC_NETWORK)
            rc = network_key(&p, k, v);
        else
            rc = tier_key(&p, k, v);
    }
    for (int i = 0; !rc && i < s->ntiers; i++)
        rc = check_tier(&p, &s->tiers[i]);
    if (rc)
        tio_site_free(s);
    return rc;
}

int tio_site_load(const char *path, struct tio_site *s, struct tio_err *err)
{
    tio_site_init(s);
    FILE *f = fopen(path, "re");
    if (!f)
        return tio_err_errno(err, errno, "site file \"%s\": cannot open", path);
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    for (size_t got; text && (got = fread(text + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *grown = cap < (16u << 20) ? realloc(text, cap * 2) : NULL;
            if (!grown) {
                free(text);
                text = NULL;
                break;
            }
            text = grown;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!text || bad) {
        free(text);
        return tio_err_set(err, bad ? TIO_E_IO : TIO_E_NOMEM,
                           "site file \"%s\": %s", path,
                           bad ? "read error" : "too large or out of memory");
    }
    text[n] = 0;
    if (memchr(text, 0, n)) {
        free(text);
        return tio_err_set(err, TIO_E_ARG, "site file \"%s\": not a text file", path);
    }
    int rc = tio_site_parse(text, path, s, err);
    free(text);
    return rc;
}

/* ---- queries ---- */

const struct tio_site_tier *tio_site_tier(const struct tio_site *s, const char *name)
{
    for (int i = 0; i < s->ntiers; i++)
        if (!strcmp(s->tiers[i].name, name))
            return &s->tiers[i];
    return NULL;
}

/* A host matches a pattern by its full name or its first label (node7 for
 * node7.cluster.site). */
static int host_match(const char *pattern, const char *host)
{
    if (!fnmatch(pattern, host, 0))
        return 1;
    char shortname[256];
    snprintf(shortname, sizeof shortname, "%.*s", (int)strcspn(host, "."), host);
    return strcmp(shortname, host) && !fnmatch(pattern, shortname, 0);
}

int tio_site_tier_on_host(const struct tio_site_tier *t, const char *host)
{
    if (!t->nodes[0])
        return 1;
    char list[sizeof t->nodes];
    snprintf(list, sizeof list, "%s", t->nodes);
    char *save = NULL;
    for (char *w = strtok_r(list, " \t,", &save); w; w = strtok_r(NULL, " \t,", &save))
        if (host_match(w, host))
            return 1;
    return 0;
}

int tio_site_hops(const struct tio_site *s, const char *a, const char *b)
{
    if (!strcmp(a, b))
        return 0;
    for (int i = 0; i < s->nhops; i++) {
        const struct tio_site_hops *h = &s->hops[i];
        if ((host_match(h->a, a) && host_match(h->b, b)) ||
            (host_match(h->a, b) && host_match(h->b, a)))
            return h->hops;
    }
    return s->default_hops;
}

int tio_site_io_hops(const struct tio_site *s, const char *host)
{
    for (int i = 0; i < s->nio; i++)
        if (host_match(s->io[i].a, host))
            return s->io[i].hops;
    return s->default_io_hops;
}

/* ---- writing ---- */

static void put_time(FILE *f, const char *key, double v)
{
    if (v > 0)
        fprintf(f, "%s = %.9gus\n", key, v * 1e6);
}

static void put_rate(FILE *f, const char *key, double v)
{
    if (v > 0)
        fprintf(f, "%s = %.9gMB/s\n", key, v / 1e6);
}

int tio_site_write(FILE *f, const struct tio_site *s, const char *comment)
{
    if (comment)
        for (const char *c = comment; *c;) {
            size_t n = strcspn(c, "\n");
            fprintf(f, "# %.*s\n", (int)n, c);
            c += n + (c[n] == '\n');
        }
    fprintf(f, "\n[network]\n");
    put_time(f, "latency", s->net_latency);
    put_rate(f, "bandwidth", s->net_bandwidth);
    put_time(f, "node_latency", s->node_latency);
    put_rate(f, "node_bandwidth", s->node_bandwidth);
    if (s->default_hops != 1)
        fprintf(f, "default_hops = %d\n", s->default_hops);
    if (s->default_io_hops != 1)
        fprintf(f, "default_io_hops = %d\n", s->default_io_hops);
    for (int i = 0; i < s->nhops; i++)
        fprintf(f, "hops = %s %s %d\n", s->hops[i].a, s->hops[i].b, s->hops[i].hops);
    for (int i = 0; i < s->nio; i++)
        fprintf(f, "io_hops = %s %d\n", s->io[i].a, s->io[i].hops);
    for (int i = 0; i < s->ntiers; i++) {
        const struct tio_site_tier *t = &s->tiers[i];
        fprintf(f, "\n[tier %s]\nkind = %s\n", t->name, tio_tier_kind_name(t->kind));
        if (t->path[0])
            fprintf(f, "path = %s\n", t->path);
        if (t->numa[0])
            fprintf(f, "numa = %s\n", t->numa);
        if (t->nodes[0])
            fprintf(f, "nodes = %s\n", t->nodes);
        put_time(f, "latency", t->latency);
        if (t->read_bandwidth > 0 && t->read_bandwidth == t->write_bandwidth) {
            put_rate(f, "bandwidth", t->read_bandwidth);
        } else {
            put_rate(f, "read_bandwidth", t->read_bandwidth);
            put_rate(f, "write_bandwidth", t->write_bandwidth);
        }
        if (t->capacity)
            fprintf(f, "capacity = %llu\n", (unsigned long long)t->capacity);
        if (t->persistence >= 0)
            fprintf(f, "persistence = %s\n",
                    tio_persistence_name((enum tio_persistence)t->persistence));
        if (t->scope >= 0)
            fprintf(f, "scope = %s\n", tio_scope_name((enum tio_scope)t->scope));
    }
    fflush(f);
    return ferror(f) ? -1 : 0;
}
