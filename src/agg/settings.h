/* The settings of an aggregation handle (include/tierio/agg.h), declared as a key table
 * in settings.c (util/settings.h: the one precedence rule, messages and reference). */
#ifndef TIO_AGG_SETTINGS_H
#define TIO_AGG_SETTINGS_H

#include <stdint.h>

#include "tierio/tier.h"
#include "util/error.h"
#include "util/settings.h"

enum tio_agg_target {
    TIO_AGG_TARGET_FILE = 0,   /* one shared file */
    TIO_AGG_TARGET_SUBFILES,   /* path.<k>, one per `subfiling` aggregators' nodes */
    TIO_AGG_TARGET_NODE_LOCAL  /* a file per aggregator on its node-local tier */
};

#define TIO_AGG_NAME_MAX 32

struct tio_agg_settings {
    int enable;                      /* MPI_File_open routes through tierio */
    char strategy[TIO_AGG_NAME_MAX];
    int aggregators;                 /* 0 = one per node */
    uint64_t buffer_size;
    int buffer_count;
    char tier[TIO_TIER_NAME_MAX];    /* "" = the strategy's default; "auto" */
    enum tio_persistence persistence;
    enum tio_agg_target target;
    int subfiling;                   /* aggregators' nodes per subfile */
    char target_tier[TIO_TIER_NAME_MAX]; /* node-local target; "" = the first one */
    uint64_t align;                  /* 0 = the file system's block size */
    int read_aggregate;              /* aggregate every read (else auto: non-interleaved
                                        reads of the shared file are independent) */
    int route_write_auto;            /* MPI-IO route: non-interleaved writes independent */
    int balanced;                    /* domains balance bytes only (else they follow the
                                        data's nodes where that is near, plan.h) */
    /* memory_conscious (strategy_memcon.c); sizes 0: derived at placement (auto) */
    int mc_per_node;                 /* N_ah */
    uint64_t mc_write_message;       /* Msg_ind of writes ... */
    uint64_t mc_read_message;        /* ... and of reads */
    uint64_t mc_min_memory;          /* Mem_min */
    uint64_t mc_group_message;       /* Msg_group */
    int mc_memory_share;             /* percent of a node's available memory */
    int mc_by_memory;                /* location by memory alone (the seed's), else data */
};

#define TIO_AGG_DEFAULT_BUFFER_SIZE ((uint64_t)16 << 20)
#define TIO_AGG_MAX_BUFFER_SIZE ((uint64_t)1 << 30)
#define TIO_AGG_MAX_BUFFER_COUNT 64

/* The key table (for the reference and the tests). */
extern const struct tio_key_table tio_agg_keys;

/* Parse through getters (util/settings.h; either may be NULL). Unknown strategies are
 * checked by the caller (the strategy table), everything else here. Errors name the key or
 * variable. */
int tio_agg_settings_parse(struct tio_agg_settings *s, tio_key_get_fn info, void *info_ctx,
                           tio_key_get_fn env, void *env_ctx, struct tio_err *err);

void tio_agg_settings_default(struct tio_agg_settings *s);

const char *tio_agg_target_name(enum tio_agg_target t);

/* The same, from an MPI_Info (MPI_INFO_NULL: none) and the process environment. */
#include <mpi.h>
int tio_agg_settings_from(struct tio_agg_settings *s, MPI_Info info, struct tio_err *err);

/* tierio_agg in info, else TIERIO_AGG in the environment: whether MPI_File_open routes the
 * file through tierio (only this key is read; a bad value is an error). */
int tio_agg_enabled_by(MPI_Info info, int *enabled, struct tio_err *err);

/* Set in info the settings keys of s (the settings half of tio_agg_get_info). */
void tio_agg_settings_report(const struct tio_agg_settings *s, MPI_Info info);

#endif
