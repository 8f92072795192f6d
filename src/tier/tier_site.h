/* The site file: the tiers of the machine and its network, as a site describes them or as
 * `tierio probe` measured them (docs/tier.md has the format). Pure C (no MPI), so the
 * parser is unit-tested on text. */
#ifndef TIO_TIER_SITE_H
#define TIO_TIER_SITE_H

#include <stdint.h>
#include <stdio.h>

#include "tierio/tier.h"
#include "util/error.h"
#include "util/values.h"

#define TIO_SITE_MAX_TIERS 32
#define TIO_SITE_HOST_MAX 64
#define TIO_SITE_NUMA_MAX 65535 /* the largest NUMA node number a site file may name */

/* One [tier NAME] section. Figures not given are 0 (or -1 for the enums). */
struct tio_site_tier {
    char name[TIO_TIER_NAME_MAX];
    enum tio_tier_kind kind;
    int persistence;           /* enum tio_persistence, -1 = the kind's default */
    int scope;                 /* enum tio_scope, -1 = the kind's default */
    double latency;
    double read_bandwidth, write_bandwidth;
    uint64_t capacity;
    char path[TIO_TIER_PATH_MAX];
    char numa[64];             /* "1" or "1,3": NUMA nodes (OS indexes) */
    char nodes[512];           /* host-name patterns (fnmatch), blank-separated; "" = all */
    int line;                  /* of the section header, for messages */
};

struct tio_site_hops {
    char a[TIO_SITE_HOST_MAX], b[TIO_SITE_HOST_MAX]; /* b = "" for io_hops */
    int hops;
    int line;
};

struct tio_site {
    char file[TIO_TIER_PATH_MAX];   /* for messages: the path, or "<text>" */
    int ntiers;
    struct tio_site_tier tiers[TIO_SITE_MAX_TIERS];
    double net_latency, net_bandwidth;   /* between nodes; 0 = not given */
    double node_latency, node_bandwidth; /* within a node; 0 = not given */
    int default_hops, default_io_hops;   /* 1 when not given */
    int nhops, nio;
    struct tio_site_hops *hops, *io;     /* pairs of nodes, and nodes to the I/O node */
};

void tio_site_init(struct tio_site *s);
void tio_site_free(struct tio_site *s);
/* Parse text (a whole file's content) into s (initialised here). name is used in error
 * messages ("<name>:<line>: ..."). On error s holds nothing to free. */
int tio_site_parse(const char *text, const char *name, struct tio_site *s, struct tio_err *err);
int tio_site_load(const char *path, struct tio_site *s, struct tio_err *err);
/* Write s in the site-file format (what tierio probe produces). Returns 0 or -1 (errno). */
int tio_site_write(FILE *f, const struct tio_site *s, const char *comment);

/* The site's tier called name, or NULL. */
const struct tio_site_tier *tio_site_tier(const struct tio_site *s, const char *name);
/* Does the tier exist on host (nodes patterns; "" matches every host)? */
int tio_site_tier_on_host(const struct tio_site_tier *t, const char *host);
/* Hops between two hosts and from a host to the I/O node. */
int tio_site_hops(const struct tio_site *s, const char *a, const char *b);
int tio_site_io_hops(const struct tio_site *s, const char *host);

/* Values with units (sizes, rates, times): util/values.h. */

/* Names <-> enums for the site file's spellings; -1 when unknown. */
int tio_tier_kind_parse(const char *s);
int tio_persistence_parse(const char *s);
int tio_scope_parse(const char *s);

#endif
