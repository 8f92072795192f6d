/* Cost_A + Cost_T of one candidate tier (seed 002 §3.2).
 *
 * Where the paper's formulas leave a choice, Table 2 decides (tests/tier/test_cost.c
 * reproduces it to the last digit): a producer on the candidate's node still moves its
 * data into the aggregation buffer, over one hop at the candidate's latency (also when
 * the candidate is the DRAM the data is in: it is copied into the buffer); and the
 * bandwidth towards the target is the network's and the target's, not the candidate's. */
#include "tier/cost.h"

#include <float.h>
#include <stdint.h>

#include "util/error_mpi.h"

static double min_rate(double a, double b)
{
    /* 0 stands for "not limiting" here. */
    if (a <= 0)
        return b;
    if (b <= 0)
        return a;
    return a < b ? a : b;
}

int tio_cost_compute(const struct tio_cost_input *in, const struct tio_tier_info *a,
                     struct tio_cost *out, struct tio_err *err)
{
    if (!in || !a || !out)
        return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: input, candidate or result is "
                           "NULL");
    const struct tio_cost_opts *o = &in->opts;
    if (in->nproducers < 0 || (in->nproducers > 0 && (!in->bytes || !in->hops)))
        return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: %d producers need bytes and hops "
                           "arrays", in->nproducers);
    if (in->hops_to_target < 0)
        return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: hops_to_target %d is negative",
                           in->hops_to_target);
    if ((int)o->persistence < TIO_PERSIST_NONE || o->persistence > TIO_PERSIST_PERMANENT)
        return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: persistence %d is not a "
                           "tio_persistence", (int)o->persistence);
    if (o->target_latency < 0 || o->target_bandwidth < 0)
        return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: the target's latency and "
                           "bandwidth must not be negative");

    *out = (struct tio_cost){0};
    unsigned long long total = 0;
    for (int i = 0; i < in->nproducers; i++) {
        if (in->hops[i] < 0)
            return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: hops[%d] = %d is negative", i,
                               in->hops[i]);
        if (total + in->bytes[i] < total)
            return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: the bytes add up beyond "
                               "2^64");
        total += in->bytes[i];
    }

    /* Capacity: all the data when it must persist there, else the aggregation buffers. */
    if (o->persistence > TIO_PERSIST_NONE) {
        out->needed = total;
    } else {
        if (o->nbuf && o->bufsize > UINT64_MAX / o->nbuf)
            return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: nbuf x bufsize overflows");
        out->needed = o->nbuf * o->bufsize;
    }
    if (a->persistence < o->persistence)
        out->verdict = TIO_COST_NOT_PERSISTENT;
    else if (a->available < out->needed)
        out->verdict = TIO_COST_TOO_SMALL;
    if (out->verdict != TIO_COST_OK)
        return TIO_OK; /* no figures needed to rule it out */

    if (!(in->net_latency > 0) || !(in->net_bandwidth > 0))
        return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: the network's %s is unknown (give "
                           "it in the site file's [network] section, or run tierio probe "
                           "on two nodes)", in->net_latency > 0 ? "bandwidth" : "latency");
    if (!(a->latency > 0) || !(a->write_bandwidth > 0) ||
        ((o->flags & TIO_COST_DRAIN_AT_TIER_SPEED) && !(a->read_bandwidth > 0)))
        return tio_err_set(err, TIO_E_ARG, "tio_cost_eval: tier \"%s\": %s unknown (give it "
                           "in the site file, or run tierio probe)", a->name,
                           !(a->latency > 0)         ? "latency"
                           : !(a->write_bandwidth > 0) ? "write bandwidth"
                                                       : "read bandwidth");

    /* Cost_A: each producer's latency over its hops plus its bytes at the slowest rate
     * on the way. */
    double l_remote = in->net_latency > a->latency ? in->net_latency : a->latency;
    for (int i = 0; i < in->nproducers; i++) {
        double src = in->src_bandwidth ? in->src_bandwidth[i] : 0;
        double w = (double)in->bytes[i];
        if (in->hops[i] == 0)
            out->aggregate += a->latency + w / min_rate(src, a->write_bandwidth);
        else
            out->aggregate += l_remote * in->hops[i] +
                              w / min_rate(min_rate(in->net_bandwidth, src),
                                           a->write_bandwidth);
    }

    /* Cost_T: the aggregated bytes to the target. */
    double l_t = in->net_latency > o->target_latency ? in->net_latency : o->target_latency;
    double b_t = min_rate(in->net_bandwidth, o->target_bandwidth);
    if (o->flags & TIO_COST_DRAIN_AT_TIER_SPEED)
        b_t = min_rate(b_t, a->read_bandwidth);
    out->transfer = l_t * in->hops_to_target + (double)total / b_t;
    out->total = out->aggregate + out->transfer;
    return TIO_OK;
}

int tio_cost_eval(const struct tio_cost_input *in, const struct tio_tier_info *candidate,
                  struct tio_cost *out)
{
    struct tio_err err = {0};
    if (tio_cost_compute(in, candidate, out, &err))
        return tio_err_raise_comm(MPI_COMM_SELF, &err);
    return MPI_SUCCESS;
}
