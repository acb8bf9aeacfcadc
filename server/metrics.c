/*
 * metrics.c - the server's counters (core/counters.h) and what each room
 * reports of itself in Prometheus's text exposition (format version
 * 0.0.4). One event-loop thread updates and reads them.
 */
#include "metrics.h"
#include "buf.h"
#include "formats.h"
#include "lease.h"
#include "segments.h"
#include "server.h"
#include "status.h"

#include <inttypes.h>

static const char *const route_names[IDMS_ROUTE_PROTO] = {
    "/v1/ids",    "/v1/inspect",   "/api/snowflake/get",
    "/healthz",   "/readyz",       "/metrics",
    "/v1/node",   "/v1/segment",   "/api/segment/get",
    "/tinyid/id", "/v1/obfuscate", "/v1/reveal",
    "/v1/hlc",    "leaf-monitor",  "other"};

/* The name of front end p (the listener's slot), or NULL for a row main.c
 * does not fill. */
static const char *proto_name(const idms_server *s, int p)
{
    return s->net.listeners[p].proto != NULL ? s->net.listeners[p].proto->name : NULL;
}
static const char *const status_classes[6] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};

/* A duration or a Unix time kept in milliseconds, as Prometheus's base
 * unit wants it: seconds, to the millisecond ("0.750", "1767225600.123").
 * Every series of a time is named _seconds or _timestamp_seconds
 * (promtool check metrics flags _ms as an abbreviated unit). */
static void put_seconds(idms_buf *out, const char *name, int64_t ms)
{
    uint64_t mag = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
    idms_buf_printf(out, "%s %s%" PRIu64 ".%03u\n", name, ms < 0 ? "-" : "", mag / 1000,
                    (unsigned)(mag % 1000));
}

void idms_metrics_render(idms_server *s, idms_buf *out)
{
    const idms_metrics *m = &s->metrics;
    idms_buf_puts(out, "# HELP idmint_ids_minted_total IDs minted, by format.\n"
                       "# TYPE idmint_ids_minted_total counter\n");
    for (int f = 0; f < IDMX_FMT_COUNT; f++)
        idms_buf_printf(out, "idmint_ids_minted_total{format=\"%s\"} %" PRIu64 "\n",
                        idmx_formats[f].name, m->minted[f]);
    idms_buf_puts(out,
                  "# HELP idmint_requests_total Requests answered, by route and status class.\n"
                  "# TYPE idmint_requests_total counter\n");
    for (int r = 0; r < IDMS_ROUTE_COUNT; r++) {
        const char *name = route_names[r < IDMS_ROUTE_PROTO ? r : 0];
        if (r >= IDMS_ROUTE_PROTO) {
            const idms_proto *p = s->net.listeners[r - IDMS_ROUTE_PROTO].proto;
            if (p == NULL || !p->counts_commands)
                continue;
            name = p->name;
        }
        for (int c = 0; c < 6; c++) {
            if (m->requests[r][c] != 0 || c == 2)
                idms_buf_printf(out,
                                "idmint_requests_total{route=\"%s\",status=\"%s\"} %" PRIu64 "\n",
                                name, status_classes[c], m->requests[r][c]);
        }
    }
    idms_buf_printf(
        out,
        "# HELP idmint_clock_rewinds_total Backwards clock steps seen while minting snowflakes.\n"
        "# TYPE idmint_clock_rewinds_total counter\n"
        "idmint_clock_rewinds_total %" PRIu64 "\n"
        "# HELP idmint_clock_rewind_waits_total Requests parked for a small backwards step.\n"
        "# TYPE idmint_clock_rewind_waits_total counter\n"
        "idmint_clock_rewind_waits_total %" PRIu64 "\n"
        "# HELP idmint_clock_refusals_total Requests refused because the clock moved back too "
        "far.\n"
        "# TYPE idmint_clock_refusals_total counter\n"
        "idmint_clock_refusals_total %" PRIu64 "\n"
        "# HELP idmint_sequence_exhaustion_waits_total Requests parked for the next time unit "
        "after a full sequence.\n"
        "# TYPE idmint_sequence_exhaustion_waits_total counter\n"
        "idmint_sequence_exhaustion_waits_total %" PRIu64 "\n",
        m->clock_rewinds, m->rewind_waits, m->clock_refusals, m->exhaustion_waits);
    idms_buf_printf(
        out,
        "# HELP idmint_connections_open Open client connections.\n"
        "# TYPE idmint_connections_open gauge\n"
        "idmint_connections_open %" PRIu64 "\n"
        "# HELP idmint_connections_total Connections accepted.\n"
        "# TYPE idmint_connections_total counter\n"
        "idmint_connections_total %" PRIu64 "\n"
        "# HELP idmint_connections_rejected_total Connections turned away at the "
        "limit or while draining (idmint_connections_refused_total has the detail).\n"
        "# TYPE idmint_connections_rejected_total counter\n"
        "idmint_connections_rejected_total %" PRIu64 "\n"
        "# HELP idmint_protocol_errors_total Malformed or oversized requests.\n"
        "# TYPE idmint_protocol_errors_total counter\n"
        "idmint_protocol_errors_total %" PRIu64 "\n"
        "# HELP idmint_high_water_mark_writes_total Time high-water mark fsyncs.\n"
        "# TYPE idmint_high_water_mark_writes_total counter\n"
        "idmint_high_water_mark_writes_total %" PRIu64 "\n"
        "# HELP idmint_high_water_mark_errors_total Time high-water mark writes that failed.\n"
        "# TYPE idmint_high_water_mark_errors_total counter\n"
        "idmint_high_water_mark_errors_total %" PRIu64 "\n",
        m->connections_open, m->connections_total, m->connections_rejected, m->protocol_errors,
        s->hwm.writes, s->hwm.write_errors);
    static const char *const reasons[IDMS_REFUSED_COUNT] = {"limit", "draining", "accept"};
    idms_buf_puts(out, "# HELP idmint_connections_refused_total Connections refused, by protocol "
                       "and reason (limit: over --max-connections, answered with an error; "
                       "draining: during a drain; accept: the accept call failed, e.g. out of "
                       "file descriptors).\n"
                       "# TYPE idmint_connections_refused_total counter\n");
    for (int p = 0; p < IDMS_PROTO_MAX; p++) {
        for (int r = 0; r < IDMS_REFUSED_COUNT && proto_name(s, p) != NULL; r++)
            idms_buf_printf(
                out,
                "idmint_connections_refused_total{protocol=\"%s\",reason=\"%s\"} %" PRIu64 "\n",
                proto_name(s, p), reasons[r], m->refused[p][r]);
    }
    idms_buf_puts(out, "# HELP idmint_request_timeouts_total Requests not complete within "
                       "--header-timeout of their first byte (and bodies cut off), by protocol.\n"
                       "# TYPE idmint_request_timeouts_total counter\n");
    for (int p = 0; p < IDMS_PROTO_MAX; p++) {
        if (proto_name(s, p) != NULL)
            idms_buf_printf(out, "idmint_request_timeouts_total{protocol=\"%s\"} %" PRIu64 "\n",
                            proto_name(s, p), m->request_timeouts[p]);
    }
    idms_buf_printf(out,
                    "# HELP idmint_buffered_bytes Bytes buffered for the connections: unanswered "
                    "input and replies waiting to be written (bounded by --max-buffered's shares), "
                    "and what their TLS sessions hold (handshakes in progress bounded by their "
                    "slots).\n"
                    "# TYPE idmint_buffered_bytes gauge\n"
                    "idmint_buffered_bytes{direction=\"in\"} %" PRIu64 "\n"
                    "idmint_buffered_bytes{direction=\"out\"} %" PRIu64 "\n"
                    "idmint_buffered_bytes{direction=\"tls\"} %" PRIu64 "\n"
                    "# HELP idmint_buffered_bytes_max The budget: --max-buffered.\n"
                    "# TYPE idmint_buffered_bytes_max gauge\n"
                    "idmint_buffered_bytes_max %" PRIu64 "\n",
                    s->net.buffered_in, s->net.buffered_out, s->net.buffered_tls,
                    s->opt.max_buffered);
    idms_buf_puts(out, "# HELP idmint_auth_failures_total Requests (HTTP) and commands (RESP) "
                       "refused for a missing, malformed or wrong token (--auth-token-file), by "
                       "protocol.\n"
                       "# TYPE idmint_auth_failures_total counter\n");
    for (int p = 0; p < IDMS_PROTO_MAX; p++) {
        if (proto_name(s, p) != NULL)
            idms_buf_printf(out, "idmint_auth_failures_total{protocol=\"%s\"} %" PRIu64 "\n",
                            proto_name(s, p), m->auth_failures[p]);
    }
    idms_buf_printf(out,
                    "# HELP idmint_node The snowflake node held (-1 while none is: every node of "
                    "the range is held by others).\n"
                    "# TYPE idmint_node gauge\n"
                    "idmint_node %" PRId64 "\n"
                    "# HELP idmint_node_claims_total Nodes claimed from the registry or the "
                    "coordinator.\n"
                    "# TYPE idmint_node_claims_total counter\n"
                    "idmint_node_claims_total %" PRIu64 "\n"
                    "# HELP idmint_node_lease_losses_total Leases the coordinator reported "
                    "expired or taken over.\n"
                    "# TYPE idmint_node_lease_losses_total counter\n"
                    "idmint_node_lease_losses_total %" PRIu64 "\n"
                    "# HELP idmint_node_lease_expiries_total Leases whose deadline passed with "
                    "no keep-alive confirmed (minting stopped).\n"
                    "# TYPE idmint_node_lease_expiries_total counter\n"
                    "idmint_node_lease_expiries_total %" PRIu64 "\n"
                    "# HELP idmint_node_keepalive_failures_total Keep-alives the coordinator "
                    "did not answer.\n"
                    "# TYPE idmint_node_keepalive_failures_total counter\n"
                    "idmint_node_keepalive_failures_total %" PRIu64 "\n"
                    "# HELP idmint_node_lease_remaining_seconds Seconds before the lease's "
                    "deadline (0 while none is held, and without a coordinator).\n"
                    "# TYPE idmint_node_lease_remaining_seconds gauge\n",
                    s->node.held ? (int64_t)s->node.node : -1, s->node.claims,
                    s->node.lease.seen.losses, s->node.lease.expiries,
                    s->node.lease.seen.keepalive_failures);
    put_seconds(out, "idmint_node_lease_remaining_seconds",
                s->node.coord == IDMS_NODE_COORD ? idms_lease_ms_left(&s->node.lease) : 0);
    int64_t now;
    const idms_pauses *paused = idms_status_poll(&s->status, &now);
    idms_pauses_metrics(paused, now, out);
    idms_buf_printf(out,
                    "# HELP idmint_connections_max Open connections each port takes at most "
                    "(--max-connections, or less if the open-file limit is lower).\n"
                    "# TYPE idmint_connections_max gauge\n"
                    "idmint_connections_max %" PRIu64 "\n",
                    s->net.max_conns);
    idms_segments_metrics(&s->segments, out);
    int64_t durable = idms_hwm_enabled(&s->hwm) ? idms_hwm_durable_ms(&s->hwm) : 0;
    idms_buf_puts(out, "# HELP idmint_hwm_persisted_timestamp_seconds The time high-water mark "
                       "last made durable (Unix time in seconds, to the millisecond; 0 without a "
                       "state directory): no ID handed out has a later time.\n"
                       "# TYPE idmint_hwm_persisted_timestamp_seconds gauge\n");
    put_seconds(out, "idmint_hwm_persisted_timestamp_seconds", durable);
    idms_buf_printf(
        out,
        "# HELP idmint_requests_parked Requests waiting now (next time unit, a small "
        "rewind, or the mark).\n"
        "# TYPE idmint_requests_parked gauge\n"
        "idmint_requests_parked %" PRIu64 "\n"
        "# HELP idmint_parks_total Requests that were parked at least once.\n"
        "# TYPE idmint_parks_total counter\n"
        "idmint_parks_total %" PRIu64 "\n"
        "# HELP idmint_ceiling_waits_total Requests parked until the mark was durable.\n"
        "# TYPE idmint_ceiling_waits_total counter\n"
        "idmint_ceiling_waits_total %" PRIu64 "\n",
        m->parked, m->parks, m->ceiling_waits);
    idms_buf_printf(
        out,
        "# HELP idmint_observations_total IDs given as after= (HTTP) or AFTER (RESP) "
        "and observed: the reply's IDs sort after them.\n"
        "# TYPE idmint_observations_total counter\n"
        "idmint_observations_total %" PRIu64 "\n"
        "# HELP idmint_observations_refused_total after= / AFTER IDs refused as further "
        "ahead of the clock than --max-offset.\n"
        "# TYPE idmint_observations_refused_total counter\n"
        "idmint_observations_refused_total %" PRIu64 "\n"
        "# HELP idmint_max_offset_seconds --max-offset: how far ahead of the clock an after= "
        "ID or a remote HLC stamp may be, in seconds.\n"
        "# TYPE idmint_max_offset_seconds gauge\n",
        m->observations, m->observations_refused);
    put_seconds(out, "idmint_max_offset_seconds", s->opt.max_offset_ms);
    idms_buf_printf(
        out,
        "# HELP idmint_tls_handshakes_total TLS handshakes completed (--tls-cert).\n"
        "# TYPE idmint_tls_handshakes_total counter\n"
        "idmint_tls_handshakes_total %" PRIu64 "\n"
        "# HELP idmint_tls_handshake_failures_total TLS handshakes that failed (a plain-text "
        "client, an old protocol version, garbage); the connection was closed.\n"
        "# TYPE idmint_tls_handshake_failures_total counter\n"
        "idmint_tls_handshake_failures_total %" PRIu64 "\n"
        "# HELP idmint_tls_reloads_total Reloads of the certificate and key on SIGHUP, by "
        "result (a failed one keeps the previous pair).\n"
        "# TYPE idmint_tls_reloads_total counter\n"
        "idmint_tls_reloads_total{result=\"ok\"} %" PRIu64 "\n"
        "idmint_tls_reloads_total{result=\"failed\"} %" PRIu64 "\n",
        m->tls_handshakes, m->tls_handshake_failures, m->tls_reloads[0], m->tls_reloads[1]);
    idms_buf_printf(out,
                    "# HELP idmint_tls_handshakes_in_progress TLS handshakes under way, each "
                    "holding a slot.\n"
                    "# TYPE idmint_tls_handshakes_in_progress gauge\n"
                    "idmint_tls_handshakes_in_progress %" PRIu64 "\n"
                    "# HELP idmint_tls_handshakes_max Handshake slots: as many handshakes as a "
                    "quarter of --max-buffered holds (0 without TLS).\n"
                    "# TYPE idmint_tls_handshakes_max gauge\n"
                    "idmint_tls_handshakes_max %" PRIu64 "\n"
                    "# HELP idmint_tls_handshakes_waiting Connections whose ClientHello has come, "
                    "waiting for a handshake slot.\n"
                    "# TYPE idmint_tls_handshakes_waiting gauge\n"
                    "idmint_tls_handshakes_waiting %" PRIu64 "\n"
                    "# HELP idmint_tls_handshake_waits_total Handshakes that had to wait for a "
                    "slot.\n"
                    "# TYPE idmint_tls_handshake_waits_total counter\n"
                    "idmint_tls_handshake_waits_total %" PRIu64 "\n",
                    s->net.tls_handshakes_open, s->net.tls_handshake_max,
                    s->net.tls_handshakes_waiting, m->tls_handshake_waits);
    idms_buf_printf(out,
                    "# HELP idmint_hlc_stamps_total Hybrid logical clock stamps handed out "
                    "(/v1/hlc, HLC).\n"
                    "# TYPE idmint_hlc_stamps_total counter\n"
                    "idmint_hlc_stamps_total %" PRIu64 "\n"
                    "# HELP idmint_hlc_offset_refusals_total Remote stamps refused for being more "
                    "than --max-offset ahead of the clock.\n"
                    "# TYPE idmint_hlc_offset_refusals_total counter\n"
                    "idmint_hlc_offset_refusals_total %" PRIu64 "\n",
                    m->hlc_stamps, m->hlc_offset_refusals);
}
