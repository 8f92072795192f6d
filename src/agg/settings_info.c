/* The aggregation settings from an MPI_Info and the process environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agg/settings.h"
#include "tierio/agg.h"

static int info_get(void *ctx, const char *key, char *val, size_t len)
{
    MPI_Info info = *(MPI_Info *)ctx;
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return 0;
    val[0] = 0;
    if (PMPI_Info_get(info, key, (int)len - 1, val, &flag) != MPI_SUCCESS || !flag)
        return 0;
    return 1;
}

static int env_get(void *ctx, const char *key, char *val, size_t len)
{
    (void)ctx;
    const char *v = getenv(key);
    if (!v || !*v)
        return 0;
    snprintf(val, len, "%s", v);
    return 1;
}

int tio_agg_settings_from(struct tio_agg_settings *s, MPI_Info info, struct tio_err *err)
{
    return tio_agg_settings_parse(s, info_get, &info, env_get, NULL, err);
}

int tio_agg_enabled_by(MPI_Info info, int *enabled, struct tio_err *err)
{
    char val[64];
    *enabled = 0;
    const char *env = getenv("TIERIO_AGG");
    if (env && *env) {
        if (!strcmp(env, "1"))
            *enabled = 1;
        else if (strcmp(env, "0") != 0)
            return tio_err_set(err, TIO_E_ARG, "environment variable TIERIO_AGG = \"%.32s\": "
                               "expected 1 (route collective MPI-IO through tierio) or 0",
                               env);
    }
    if (info_get(&info, TIO_AGG_HINT_ENABLE, val, sizeof val)) {
        if (!strcasecmp(val, "enable"))
            *enabled = 1;
        else if (!strcasecmp(val, "disable"))
            *enabled = 0;
        else
            return tio_err_set(err, TIO_E_INFO_VALUE, "hint %s = \"%.32s\": expected enable "
                               "or disable", TIO_AGG_HINT_ENABLE, val);
    }
    return TIO_OK;
}
