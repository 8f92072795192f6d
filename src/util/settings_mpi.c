/* The settings tables bound to MPI_Info: read (through PMPI only, so that an application's
 * own MPI_Info_get wrappers are not entered from inside tierio) and report. */
#include <string.h>

#include "util/settings_mpi.h"

long tio_settings_info_get(void *ctx, const char *key, char *val, size_t len)
{
    MPI_Info info = *(MPI_Info *)ctx;
    int flag = 0, vlen = 0;
    if (info == MPI_INFO_NULL ||
        PMPI_Info_get_valuelen(info, key, &vlen, &flag) != MPI_SUCCESS || !flag)
        return -1;
    if ((size_t)vlen >= len) /* too long: say how long, read nothing */
        return vlen;
    val[0] = 0;
    if (PMPI_Info_get(info, key, vlen, val, &flag) != MPI_SUCCESS || !flag)
        return -1;
    val[vlen] = 0;
    return vlen;
}

int tio_settings_from_info(const struct tio_key_table *t, void *s, MPI_Info info,
                           int use_env, enum tio_key_from *from, struct tio_err *err)
{
    tio_settings_check_info(info);
    return tio_settings_parse(t, s, info == MPI_INFO_NULL ? NULL : tio_settings_info_get,
                              &info, use_env ? tio_settings_getenv : NULL, NULL, from, err);
}

void tio_settings_report(const struct tio_key_table *t, const void *s, MPI_Info info)
{
    char val[TIO_KEY_VAL_MAX + 1];
    for (size_t i = 0; i < t->n; i++) {
        const struct tio_key *k = &t->keys[i];
        if (!k->name || (k->shown && !k->shown(s)))
            continue;
        if (tio_settings_format(k, s, val, sizeof val))
            PMPI_Info_set(info, k->name, val);
    }
}

void tio_settings_check_info(MPI_Info info)
{
    int nkeys = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return;
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        if (PMPI_Info_get_nthkey(info, i, key) == MPI_SUCCESS)
            tio_settings_check_name(key, 0);
    }
}

int tio_settings_unknown(const struct tio_key_table *t, MPI_Info info, const char *prefix,
                         struct tio_err *err)
{
    int nkeys = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return TIO_OK;
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS)
            continue;
        if (strncmp(key, prefix, strlen(prefix)) != 0)
            continue;
        int known = 0;
        for (size_t k = 0; k < t->n && !known; k++)
            known = (t->keys[k].name && !strcmp(key, t->keys[k].name)) ||
                    (t->keys[k].alias && !strcmp(key, t->keys[k].alias));
        if (!known)
            return tio_err_set(err, TIO_E_INFO_KEY, "unknown info key \"%s\" (the %s* keys "
                               "are listed in docs/settings.md)", key, prefix);
    }
    return TIO_OK;
}
