/* What `tierio probe` prints (tier/site_probe.c): a table as it measures, or one JSON
 * object at the end; and, when asked (a terminal), a line of progress before each
 * measurement, on its own stream, overwritten as it goes. Rank 0 only. */
#ifndef TIO_TIER_PROBE_REPORT_H
#define TIO_TIER_PROBE_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "tier/tier_probe.h"

struct tio_probe_report {
    FILE *out;       /* the table or the JSON object */
    FILE *progress;  /* NULL: no progress */
    int json;
    int begun;       /* tio_probe_report_begin was called */
    int step, steps; /* progress: measurements done and planned */
    /* JSON: the tiers and the network, rendered as they come */
    char *tiers, *net;
    size_t tiers_len, net_len;
    FILE *tiers_f, *net_f;
};

void tio_probe_report_open(struct tio_probe_report *r, FILE *out, FILE *progress, int json);
/* Before the measurements: how many there will be and of what size. */
void tio_probe_report_begin(struct tio_probe_report *r, int nprocs, size_t size, int steps);
/* Progress: "measuring WHAT" (no-op without a progress stream). */
void tio_probe_report_step(struct tio_probe_report *r, const char *what);
/* A tier: measured (p, where), or not (p NULL; status "failed", "absent", "elsewhere" and
 * the reason in where). */
void tio_probe_report_tier(struct tio_probe_report *r, const char *name, const char *kind,
                           const struct tio_probe *p, const char *status, const char *where);
/* The network at level 0 (within rank 0's node) or 1 (between nodes); peer < 0: not
 * measured (every rank on host0). */
void tio_probe_report_net(struct tio_probe_report *r, int level, double latency,
                          double bandwidth, const char *host0, int peer, const char *peer_host);
/* After: the site file written (out), or failed (1) or the options wrong (2). */
void tio_probe_report_end(struct tio_probe_report *r, int failed, const char *out);

#endif
