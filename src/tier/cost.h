/* The aggregation cost model of seed 002 §3.2 (include/tierio/tier.h describes it). Pure
 * arithmetic, no MPI: the unit test reproduces the paper's Table 2 with it. */
#ifndef TIO_TIER_COST_H
#define TIO_TIER_COST_H

#include "tierio/tier.h"
#include "util/error.h"

/* Fills *out; an error (TIO_E_ARG) when an input is missing or out of range, or a figure
 * the model needs is unknown. A candidate that does not qualify is not an error. */
int tio_cost_compute(const struct tio_cost_input *in, const struct tio_tier_info *candidate,
                     struct tio_cost *out, struct tio_err *err);

#endif
