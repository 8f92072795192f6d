#include "tier/tier_env.h"

#include <string.h>

#define F(m) TIO_KEY_FIELD(struct tio_tier_env, m)
static const struct tio_key keys[] = {
    {.env = "TIERIO_SITE", .type = TIO_KEY_STRING, F(site), .def_doc = "none",
     .values = "a path", .doc = "the site file: the machine's tiers and network "
                                "(docs/tier.md, `tierio probe -o`)."},
    {.env = "TIERIO_NODE_LOCAL", .type = TIO_KEY_STRING, F(node_local), .def_doc = "none",
     .values = "a directory",
     .doc = "`tierio probe` without a site file or --tier: measure this node-local "
            "directory."},
    {.env = "TIERIO_PFS", .type = TIO_KEY_STRING, F(pfs), .def_doc = "none",
     .values = "a directory",
     .doc = "`tierio probe` likewise: measure this directory as the global tier."},
};
#undef F

TIO_SETTINGS_TABLE(tio_tier_env_keys, 50, "tiers (environment)", "tier.md", keys,
                   struct tio_tier_env)


int tio_tier_env(struct tio_tier_env *e, struct tio_err *err)
{
    return tio_settings_parse(&tio_tier_env_keys, e, NULL, NULL, tio_settings_getenv, NULL,
                              NULL, err);
}
