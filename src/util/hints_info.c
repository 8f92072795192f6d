#include "util/hints_info.h"

#include <stdio.h>
#include <string.h>

#include "tierio/hints.h"

static int info_get(void *ctx, const char *key, char *val, size_t len)
{
    MPI_Info info = *(MPI_Info *)ctx;
    int flag = 0;
#if MPI_VERSION >= 4
    int buflen = (int)len;
    if (PMPI_Info_get_string(info, key, &buflen, val, &flag) != MPI_SUCCESS)
        return 0;
    if (flag && buflen > (int)len) /* truncated: treat as too long rather than cut it */
        val[len - 1] = 0;
#else
    if (PMPI_Info_get(info, key, (int)len - 1, val, &flag) != MPI_SUCCESS)
        return 0;
#endif
    return flag;
}

int tio_hints_from_info(struct tio_hints *h, MPI_Info info, struct tio_err *err)
{
    if (info == MPI_INFO_NULL) {
        tio_hints_default(h);
        return TIO_OK;
    }
    return tio_hints_parse(h, info_get, &info, err);
}

void tio_hints_report(const struct tio_hints *h, double factor, MPI_Info info)
{
    char buf[64];
    PMPI_Info_set(info, TIO_HINT_ALLOC_TYPE,
                  h->alloc_type == TIO_ALLOC_STORAGE ? "storage" : "memory");
    if (h->alloc_type != TIO_ALLOC_STORAGE)
        return;
    PMPI_Info_set(info, TIO_HINT_FILENAME, h->filename);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)h->offset);
    PMPI_Info_set(info, TIO_HINT_OFFSET, buf);
    snprintf(buf, sizeof buf, "%.6g", factor);
    PMPI_Info_set(info, TIO_HINT_FACTOR, buf);
    PMPI_Info_set(info, TIO_HINT_ORDER,
                  h->order == TIO_ORDER_STORAGE_FIRST ? "storage_first" : "memory_first");
    PMPI_Info_set(info, TIO_HINT_UNLINK, h->unlink ? "true" : "false");
    PMPI_Info_set(info, TIO_HINT_DISCARD, h->discard ? "true" : "false");
    if (h->engine == TIO_ENGINE_UMMAP) {
        PMPI_Info_set(info, TIO_HINT_ENGINE, "ummap");
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)h->segsize);
        PMPI_Info_set(info, TIO_HINT_SEGSIZE, buf);
        if (h->flush_interval == UINT_MAX)
            snprintf(buf, sizeof buf, "never");
        else
            snprintf(buf, sizeof buf, "%u", h->flush_interval);
        PMPI_Info_set(info, TIO_HINT_FLUSH_INTERVAL, buf);
        PMPI_Info_set(info, TIO_HINT_READFILE, h->readfile ? "true" : "false");
        PMPI_Info_set(info, TIO_HINT_POLICY, tio_policy_names[h->policy]);
        if (h->driver[0])
            PMPI_Info_set(info, TIO_HINT_DRIVER, h->driver);
        PMPI_Info_set(info, TIO_HINT_SYNC_SCOPE, h->sync_file ? "file" : "window");
    } else {
        PMPI_Info_set(info, TIO_HINT_ENGINE, "mmap");
        PMPI_Info_set(info, TIO_HINT_HUGEPAGES, tio_hints_hugepages(h) ? "true" : "false");
    }
    snprintf(buf, sizeof buf, "0%o", (unsigned)h->file_perm);
    PMPI_Info_set(info, TIO_HINT_FILE_PERM, buf);
    if (h->access_style_str[0])
        PMPI_Info_set(info, TIO_HINT_ACCESS_STYLE, h->access_style_str);
    /* striping_* are not reported: no file system here applies them (see filemap.c). */
}
