/*
 * dpdk_raw: the results as JSON (--json), client and server.
 */
#include "bench/dpdk_raw_internal.h"

void raw_report_json(const struct raw_opts *o, const struct raw_port *p, const struct raw_lat *lat,
                     uint32_t nlat, const struct raw_bw *bw)
{
    FILE *f = fopen(o->json, "w");
    if (f == NULL)
        raw_die("%s: %s", o->json, strerror(errno));
    fprintf(f, "{\n  \"benchmark\": \"dpdk_raw\",\n  \"port\": \"%s\",\n", p->name);
    fprintf(f, "  \"mtu\": %" PRIu32 ",\n  \"overhead\": %" PRIu32 ",\n", p->mtu, o->overhead);
    fprintf(f, "  \"iterations\": %" PRIu32 ",\n  \"warmup\": %" PRIu32 ",\n", o->iters, o->warmup);
    fprintf(f, "  \"latency\": [");
    for (uint32_t i = 0; i < nlat; i++)
        fprintf(f,
                "%s\n    {\"size\": %" PRIu32 ", \"frame\": %" PRIu32 ", \"lat_mean_us\": "
                "%.4f, \"lat_median_us\": %.4f, \"lat_min_us\": %.4f, \"lat_p99_us\": "
                "%.4f, \"lat_max_us\": %.4f, \"samples\": %" PRIu32 ", \"lost\": %" PRIu32 "}",
                i ? "," : "", lat[i].size, lat[i].frame, lat[i].mean_us, lat[i].median_us,
                lat[i].min_us, lat[i].p99_us, lat[i].max_us, lat[i].samples, lat[i].lost);
    fprintf(f, "\n  ]");
    if (bw != NULL)
        fprintf(f,
                ",\n  \"bandwidth\": {\"payload\": %" PRIu32 ", \"frame\": %" PRIu32
                ", \"frames_sent\": %" PRIu32 ", \"frames_seen\": %" PRIu32
                ", \"seconds\": %.6f, \"rx_seconds\": %.6f, \"MB_per_s\": %.2f"
                ", \"Mpps\": %.4f}",
                bw->payload, bw->frame, bw->sent, bw->seen, bw->seconds, bw->rx_seconds, bw->mbps,
                bw->mpps);
    fprintf(f, "\n}\n");
    if (fclose(f) != 0)
        raw_die("%s: %s", o->json, strerror(errno));
}

void raw_report_server_json(const struct raw_opts *o, const struct raw_port *p, uint64_t echoed,
                            uint32_t seen, uint64_t stray)
{
    FILE *f = fopen(o->json, "w");
    if (f == NULL)
        raw_die("%s: %s", o->json, strerror(errno));
    fprintf(f,
            "{\"benchmark\": \"dpdk_raw\", \"role\": \"server\", \"port\": \"%s\", "
            "\"echoed\": %" PRIu64 ", \"stream_seen\": %" PRIu32 ", \"stray\": %" PRIu64 "}\n",
            p->name, echoed, seen, stray);
    if (fclose(f) != 0)
        raw_die("%s: %s", o->json, strerror(errno));
}
