/* The report of tier/probe_report.h. */
#include "tier/probe_report.h"

#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/values.h"

void tio_probe_report_open(struct tio_probe_report *r, FILE *out, FILE *progress, int json)
{
    memset(r, 0, sizeof *r);
    r->out = out;
    r->progress = progress;
    r->json = json;
    if (json) {
        r->tiers_f = open_memstream(&r->tiers, &r->tiers_len);
        r->net_f = open_memstream(&r->net, &r->net_len);
    }
}

void tio_probe_report_begin(struct tio_probe_report *r, int nprocs, size_t size, int steps)
{
    r->steps = steps;
    r->begun = 1;
    if (r->json) {
        fprintf(r->out, "{\"processes\":%d,\"bytes_per_measurement\":%zu", nprocs, size);
        return;
    }
    char sz[32];
    tio_format_size(size, sz, sizeof sz);
    fprintf(r->out, "tierio probe on %d process%s, %s per measurement\n", nprocs,
            nprocs > 1 ? "es" : "", sz);
    fprintf(r->out, "  %-10s %-11s %11s %12s %12s   %s\n", "tier", "kind", "latency", "read",
            "write", "where");
}

/* The progress line is rewritten in place (\r) and erased before the table goes on, so
 * that a terminal shows the table alone at the end. */
static void progress_clear(struct tio_probe_report *r)
{
    if (r->progress) {
        fputs("\r\033[K", r->progress);
        fflush(r->progress);
    }
}

void tio_probe_report_step(struct tio_probe_report *r, const char *what)
{
    if (!r->progress)
        return;
    r->step++;
    fprintf(r->progress, "\r\033[K[%d/%d] measuring %s ...", r->step,
            r->steps > r->step ? r->steps : r->step, what);
    fflush(r->progress);
}

static void json_sep(FILE *f)
{
    if (ftell(f) > 0)
        fputc(',', f);
}

void tio_probe_report_tier(struct tio_probe_report *r, const char *name, const char *kind,
                           const struct tio_probe *p, const char *status, const char *where)
{
    progress_clear(r);
    if (r->json) {
        FILE *f = r->tiers_f;
        json_sep(f);
        fputs("{\"name\":", f);
        tio_json_str(f, name);
        fputs(",\"kind\":", f);
        tio_json_str(f, kind);
        fputs(",\"status\":", f);
        tio_json_str(f, p ? "measured" : status);
        if (p)
            fprintf(f, ",\"latency_s\":%.9g,\"read_bytes_per_s\":%.6g,"
                       "\"write_bytes_per_s\":%.6g,\"direct\":%s",
                    p->latency, p->read_bw, p->write_bw, p->direct ? "true" : "false");
        fputs(p ? ",\"where\":" : ",\"reason\":", f);
        tio_json_str(f, where);
        fputc('}', f);
        return;
    }
    if (!p) {
        fprintf(r->out, "  %-10s %-11s %s%s%s\n", name, kind,
                strcmp(status, "elsewhere") ? status : "", strcmp(status, "elsewhere") ? ": " : "",
                where);
        return;
    }
    char lat[32], rd[32], wr[32];
    tio_format_time(p->latency, lat, sizeof lat);
    tio_format_rate(p->read_bw, rd, sizeof rd);
    tio_format_rate(p->write_bw, wr, sizeof wr);
    fprintf(r->out, "  %-10s %-11s %11s %12s %12s   %s\n", name, kind, lat, rd, wr, where);
}

void tio_probe_report_net(struct tio_probe_report *r, int level, double latency,
                          double bandwidth, const char *host0, int peer, const char *peer_host)
{
    progress_clear(r);
    const char *name = level ? "network" : "in-node", *kind = level ? "inter-node" : "intra-node";
    if (r->json) {
        FILE *f = r->net_f;
        json_sep(f);
        fprintf(f, "{\"level\":\"%s\",", kind);
        if (peer < 0) {
            fputs("\"status\":\"not measured\",\"host\":", f);
            tio_json_str(f, host0);
        } else {
            fprintf(f, "\"status\":\"measured\",\"latency_s\":%.9g,\"bytes_per_s\":%.6g,"
                       "\"between\":[{\"rank\":0,\"host\":", latency, bandwidth);
            tio_json_str(f, host0);
            fprintf(f, "},{\"rank\":%d,\"host\":", peer);
            tio_json_str(f, peer_host);
            fputs("}]", f);
        }
        fputc('}', f);
        return;
    }
    if (peer < 0) {
        fprintf(r->out, "  %-10s not measured: every rank is on %s (run under mpiexec on two "
                        "nodes)\n", name, host0);
        return;
    }
    char l[32], b[32];
    tio_format_time(latency, l, sizeof l);
    tio_format_rate(bandwidth, b, sizeof b);
    fprintf(r->out, "  %-10s %-11s %11s %12s %12s   rank 0 (%s) - rank %d (%s)\n", name, kind,
            l, b, b, host0, peer, peer_host);
}

void tio_probe_report_end(struct tio_probe_report *r, int failed, const char *out)
{
    progress_clear(r);
    if (r->json) {
        fclose(r->tiers_f);
        fclose(r->net_f);
        if (!r->begun) /* the options were wrong: nothing was measured */
            fputc('{', r->out);
        fprintf(r->out, "%s\"tiers\":[%s],\"network\":[%s],\"status\":\"%s\"",
                r->begun ? "," : "", r->tiers ? r->tiers : "", r->net ? r->net : "",
                failed == 0 ? "ok" : failed == 1 ? "failed" : "usage");
        fputs(",\"site_file\":", r->out);
        if (failed || !strcmp(out, "-"))
            fputs("null", r->out);
        else
            tio_json_str(r->out, out);
        fputs("}\n", r->out);
        free(r->tiers);
        free(r->net);
    } else if (!failed && strcmp(out, "-")) {
        fprintf(r->out, "wrote %s\n", out);
    }
    fflush(r->out);
}
