/* `tierio settings`: every info key and environment variable tierio reads, from the key
 * tables the layers declare (util/settings.h). --markdown prints docs/settings.md, which a
 * test regenerates and compares, so that the reference cannot drift from the code. Without
 * it, a plain list with the value each variable has in this environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agg/settings.h"
#include "ckpt/handle.h"
#include "commands.h"
#include "tier/tier_env.h"
#include "topo/discover.h"
#include "ummap/keys.h"
#include "util/log.h"
#include "win/hints.h"

/* Every layer's table, in the order of the layers from the application down. */
static const struct tio_key_table *const tables[] = {
    &tio_win_keys, &tio_win_env_keys, &tio_agg_keys, &tio_topo_keys, &tio_ckpt_keys,
    &tio_tier_env_keys, &tio_um_env_table, &tio_log_keys,
};
#define NTABLES (sizeof tables / sizeof *tables)

static void plain(void)
{
    for (size_t t = 0; t < NTABLES; t++) {
        printf("%s\n", tables[t]->layer);
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct tio_key *k = &tables[t]->keys[i];
            char set[TIO_KEY_VAL_MAX + 1] = "";
            if (k->env)
                tio_settings_getenv(NULL, k->env, set, sizeof set);
            printf("  %-30s %-26s %s", k->name ? k->name : "-", k->env ? k->env : "-",
                   k->values ? k->values : "");
            if (set[0])
                printf("  [now: %s]", set);
            printf("\n");
        }
    }
}

int tio_cmd_settings(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "--markdown") != 0)) {
        fprintf(stderr, "usage: tierio settings [--markdown]\n");
        return 2;
    }
    if (argc == 2)
        tio_settings_markdown(stdout, tables, NTABLES);
    else
        plain();
    return 0;
}
