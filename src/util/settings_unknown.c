/* Misspelled settings: an info key or environment variable that starts as tierio's do but
 * is none of them is warned about, once per name, with the nearest known name. A setting
 * ignored in silence (storage_alloc_filname) sends a job to the wrong tier without a word. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/settings.h"

/* Names that are tierio's and start so but are no setting: keys get_info reports, and the
 * variables of the project's tests and tools. */
static const char *const *reported[8];
static size_t nreported;

void tio_settings_register_reported(const char *const *names)
{
    if (nreported < sizeof reported / sizeof *reported)
        reported[nreported++] = names;
}

static const char *const key_prefixes[] = {"storage_alloc_", "swin_", "tierio_", NULL};
static const char *const env_prefixes[] = {"TIERIO_", "UMMAP_", NULL};
static const char *const env_reserved[] = {"TIERIO_TEST_", "TIERIO_BENCH_", "TIERIO_CLUSTER_",
                                           "TIERIO_SELFTEST_", NULL};

static int starts(const char *s, const char *const *prefixes)
{
    for (; *prefixes; prefixes++)
        if (!strncmp(s, *prefixes, strlen(*prefixes)))
            return 1;
    return 0;
}

/* Edit distance, for the suggestion (names are short). */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[128];
    if (lb >= sizeof row / sizeof *row)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* Every name of the given kind a table or a layer knows, to fn; stops when fn returns 1
 * (and returns 1). */
static int each_name(int env, int (*fn)(const char *known, void *ctx), void *ctx)
{
    size_t n;
    const struct tio_key_table *const *tables = tio_settings_tables(&n);
    for (size_t r = 0; !env && r < nreported; r++)
        for (const char *const *p = reported[r]; *p; p++)
            if (fn(*p, ctx))
                return 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct tio_key *k = &tables[t]->keys[i];
            const char *names[] = {env ? k->env : k->name, env ? NULL : k->alias};
            for (size_t c = 0; c < 2; c++)
                if (names[c] && fn(names[c], ctx))
                    return 1;
        }
    return 0;
}

static int same(const char *known, void *name)
{
    return !strcmp(known, name);
}

struct nearest {
    const char *name, *best;
    size_t d;
};

static int closer(const char *known, void *ctx)
{
    struct nearest *n = ctx;
    size_t d = distance(n->name, known);
    if (d < n->d)
        n->d = d, n->best = known;
    return 0;
}

/* The setting closest to an unknown name, when one is close (a few edits, at most a
 * quarter of the name); NULL otherwise. Only for a warning: not on the way of known names. */
static const char *nearest(const char *name, int env)
{
    struct nearest n = {name, NULL, (size_t)-1};
    each_name(env, closer, &n);
    return n.d <= 3 && n.d * 4 <= strlen(name) ? n.best : NULL;
}

/* Each name once per process. */
static pthread_mutex_t warned_lock = PTHREAD_MUTEX_INITIALIZER;
static char *warned[64];
static size_t nwarned;

static int first_time(const char *name)
{
    int first = 1;
    pthread_mutex_lock(&warned_lock);
    for (size_t i = 0; i < nwarned && first; i++)
        first = strcmp(warned[i], name) != 0;
    if (first && nwarned < sizeof warned / sizeof *warned)
        warned[nwarned++] = strdup(name);
    pthread_mutex_unlock(&warned_lock);
    return first;
}

int tio_settings_check_name(const char *name, int env)
{
    if (!starts(name, env ? env_prefixes : key_prefixes) || (env && starts(name, env_reserved)))
        return 0;
    if (each_name(env, same, (void *)name))
        return 0;
    if (first_time(name)) {
        const char *near = nearest(name, env);
        TIO_WARN("%s \"%s\" is not one of tierio's settings: ignored%s%s%s (docs/settings.md "
                 "lists them)", env ? "environment variable" : "info key", name,
                 near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
    }
    return 1;
}

/* The environment is read once: the names are collected under pthread_once and warned
 * about after it, by one thread, so that the warning (which reads TIERIO_LOG through the
 * settings) cannot come back here half-way. */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char *env_unknown[16];
static size_t nenv_unknown;
static atomic_int env_warned;

static void scan_env(void)
{
    extern char **environ;
    for (char **e = environ; e && *e && nenv_unknown < 16; e++) {
        size_t len = strcspn(*e, "=");
        char name[128];
        if (len >= sizeof name)
            continue;
        memcpy(name, *e, len);
        name[len] = 0;
        if (starts(name, env_prefixes) && !starts(name, env_reserved) &&
            !each_name(1, same, name))
            env_unknown[nenv_unknown++] = strdup(name);
    }
}

void tio_settings_check_env(void)
{
    pthread_once(&env_once, scan_env);
    if (atomic_exchange(&env_warned, 1))
        return;
    for (size_t i = 0; i < nenv_unknown; i++)
        if (env_unknown[i])
            tio_settings_check_name(env_unknown[i], 1);
}
