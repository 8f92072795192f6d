/* tio_settings_print (include/tierio/settings.h): the reference of every setting, and the
 * effective value of every environment variable (`tierio settings`, `tierio info`). */
#include <stdlib.h>
#include <string.h>

#include "tierio/settings.h"
#include "util/error.h"
#include "util/json.h"
#include "util/settings.h"

static void reference(FILE *out, const struct tio_key_table *const *tables, size_t n)
{
    char now[TIO_KEY_VAL_MAX + 1];
    for (size_t t = 0; t < n; t++) {
        fprintf(out, "%s\n", tables[t]->layer);
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct tio_key *k = &tables[t]->keys[i];
            fprintf(out, "  %-30s %-26s %s", k->name ? k->name : "-", k->env ? k->env : "-",
                    k->values ? k->values : "");
            if (k->env && tio_settings_getenv(NULL, k->env, now, sizeof now) >= 0)
                fprintf(out, "  [now: %s]", now);
            fputc('\n', out);
        }
    }
}

/* One variable: parsed by its own table's rules into a scratch settings struct, so that
 * the value shown is the one the layer would use. Returns 1 when its value is invalid. */
static int environment_one(FILE *out, int json, int *first, const struct tio_key_table *t,
                           const struct tio_key *k, void *scratch)
{
    char now[TIO_KEY_VAL_MAX + 1], eff[TIO_KEY_VAL_MAX + 1];
    struct tio_err err;
    tio_err_clear(&err);
    int set = tio_settings_getenv(NULL, k->env, now, sizeof now) >= 0;
    int bad = tio_settings_env_one(t, k->env, scratch, &err) != TIO_OK;
    if (bad || !tio_settings_format(k, scratch, eff, sizeof eff))
        snprintf(eff, sizeof eff, "%s", k->def_doc ? k->def_doc : k->def ? k->def : "");
    if (!json) {
        if (set && bad)
            fprintf(out, "  %-26s INVALID: %s\n", k->env, err.msg);
        else if (set)
            fprintf(out, "  %-26s %s%s%s%s\n", k->env, now, strcmp(now, eff) ? " (= " : "",
                    strcmp(now, eff) ? eff : "", strcmp(now, eff) ? ")" : "");
        return bad;
    }
    fprintf(out, "%s\n  {\"variable\":", *first ? "" : ",");
    *first = 0;
    tio_json_str(out, k->env);
    fputs(",\"layer\":", out);
    tio_json_str(out, t->layer);
    fputs(",\"set\":", out);
    if (set)
        tio_json_str(out, now);
    else
        fputs("null", out);
    fputs(",\"effective\":", out);
    tio_json_str(out, eff);
    if (bad) {
        fputs(",\"error\":", out);
        tio_json_str(out, err.msg);
    }
    fputc('}', out);
    return bad;
}

static int environment(FILE *out, int json, const struct tio_key_table *const *tables,
                       size_t n)
{
    int bad = 0, first = 1, shown = 0;
    if (json)
        fputc('[', out);
    for (size_t t = 0; t < n; t++) {
        void *scratch = calloc(1, tables[t]->size ? tables[t]->size : 1);
        if (!scratch)
            return bad + 1;
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct tio_key *k = &tables[t]->keys[i];
            if (!k->env)
                continue;
            shown += tio_settings_getenv(NULL, k->env, NULL, 0) >= 0;
            bad += environment_one(out, json, &first, tables[t], k, scratch);
        }
        free(scratch);
    }
    if (json)
        fputs("\n]\n", out);
    else if (!shown)
        fputs("  (no tierio variable is set: every setting has its default)\n", out);
    return bad;
}

int tio_settings_print(FILE *out, int format)
{
    size_t n;
    const struct tio_key_table *const *tables = tio_settings_tables(&n);
    switch (format) {
    case TIO_SETTINGS_REFERENCE:
        reference(out, tables, n);
        return 0;
    case TIO_SETTINGS_MARKDOWN:
        tio_settings_markdown(out, tables, n);
        return 0;
    case TIO_SETTINGS_ENVIRONMENT:
    case TIO_SETTINGS_ENVIRONMENT_JSON:
        return environment(out, format == TIO_SETTINGS_ENVIRONMENT_JSON, tables, n);
    }
    return -1;
}
