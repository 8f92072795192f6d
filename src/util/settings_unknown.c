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

/* Whether name is a setting (or a reported key); else *nearest is the closest setting of
 * the same kind, or NULL when none is close. */
static int known(const char *name, int env, const char **nearest)
{
    size_t n, best = (size_t)-1;
    const struct tio_key_table *const *tables = tio_settings_tables(&n);
    *nearest = NULL;
    for (size_t r = 0; r < nreported; r++)
        for (const char *const *p = reported[r]; *p; p++)
            if (!strcmp(*p, name))
                return 1;
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct tio_key *k = &tables[t]->keys[i];
            const char *cands[] = {env ? k->env : k->name, env ? NULL : k->alias};
            for (size_t c = 0; c < 2; c++) {
                if (!cands[c])
                    continue;
                if (!strcmp(cands[c], name))
                    return 1;
                size_t d = distance(name, cands[c]);
                if (d < best) {
                    best = d;
                    *nearest = cands[c];
                }
            }
        }
    if (best > 3 || best * 4 > strlen(name))
        *nearest = NULL;
    return 0;
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
    const char *nearest;
    if (!starts(name, env ? env_prefixes : key_prefixes) || (env && starts(name, env_reserved)))
        return 0;
    if (known(name, env, &nearest))
        return 0;
    if (first_time(name))
        TIO_WARN("%s \"%s\" is not one of tierio's settings: ignored%s%s%s (docs/settings.md "
                 "lists them)", env ? "environment variable" : "info key", name,
                 nearest ? "; did you mean \"" : "", nearest ? nearest : "",
                 nearest ? "\"?" : "");
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
        const char *nearest;
        if (starts(name, env_prefixes) && !starts(name, env_reserved) &&
            !known(name, 1, &nearest))
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
