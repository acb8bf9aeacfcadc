/*
 * core/counters.h - what idmintd counts: by route and status, by format
 * minted, the parks and refusals, the connections, TLS, the segment
 * store, the HLC. Plain integers: one loop thread updates and reads them.
 * Every room counts into it (each through the pointer main.c hands it);
 * metrics.c renders it with the rest of the server's figures. Not
 * installed.
 */
#ifndef IDMS_CORE_COUNTERS_H
#define IDMS_CORE_COUNTERS_H

#include "formats.h"

#include <stdint.h>

enum {
    IDMS_ROUTE_IDS,
    IDMS_ROUTE_INSPECT,
    IDMS_ROUTE_LEAF,
    IDMS_ROUTE_HEALTHZ,
    IDMS_ROUTE_READYZ,
    IDMS_ROUTE_METRICS,
    IDMS_ROUTE_NODE,
    IDMS_ROUTE_SEGMENT,
    IDMS_ROUTE_SEGMENT_LEAF,
    IDMS_ROUTE_TINYID,
    IDMS_ROUTE_OBFUSCATE,
    IDMS_ROUTE_REVEAL,
    IDMS_ROUTE_HLC,
    IDMS_ROUTE_LEAF_MONITOR, /* Leaf's /decodeSnowflakeId, /cache, /db */
    IDMS_ROUTE_OTHER,
    IDMS_ROUTE_PROTO
};

/* The most front ends (main.c's table of them; a listener's slot is its
 * row): the metrics keep a row per front end. The requests of a protocol
 * that counts commands (conn.h: idms_proto.counts_commands) are route
 * IDMS_ROUTE_PROTO + slot, rendered as route="<protocol>". */
#define IDMS_PROTO_MAX   4
#define IDMS_ROUTE_COUNT (IDMS_ROUTE_PROTO + IDMS_PROTO_MAX)
/* Why a connection was refused: at the per-port limit (it gets its error
 * reply), during a drain, or the accept call failed (EMFILE and the like:
 * no connection to reply on). */
enum { IDMS_REFUSED_LIMIT, IDMS_REFUSED_DRAINING, IDMS_REFUSED_ACCEPT, IDMS_REFUSED_COUNT };

typedef struct idms_metrics {
    uint64_t minted[IDMX_FMT_COUNT];
    uint64_t requests[IDMS_ROUTE_COUNT][6]; /* by status class: 2xx..5xx; [0] other */
    uint64_t clock_rewinds;                 /* rewinds seen (waited or refused) */
    uint64_t rewind_waits;                  /* requests parked for a small rewind */
    uint64_t clock_refusals;                /* requests refused for a rewind */
    uint64_t exhaustion_waits;              /* requests parked for the next time unit */
    uint64_t ceiling_waits;                 /* requests parked until the mark was durable */
    uint64_t observations;                  /* ?after= / AFTER IDs observed (mint.c) */
    uint64_t observations_refused;          /* ... refused as too far ahead (--max-offset) */
    uint64_t parks;                         /* every park of a request */
    uint64_t parked;                        /* requests parked now (a gauge) */
    uint64_t connections_open;
    uint64_t connections_total;
    uint64_t connections_rejected; /* refused at the limit or while draining */
    /* Refused connections by front end (the listener's slot) and reason. */
    uint64_t refused[IDMS_PROTO_MAX][IDMS_REFUSED_COUNT];
    uint64_t protocol_errors;
    /* Requests not complete within --header-timeout (and bodies cut off),
     * by protocol. */
    uint64_t request_timeouts[IDMS_PROTO_MAX];
    /* Requests refused for want of the token, by protocol (auth.c). */
    uint64_t auth_failures[IDMS_PROTO_MAX];
    uint64_t tls_handshakes;         /* TLS handshakes completed */
    uint64_t tls_handshake_failures; /* ... failed (the connection closed) */
    uint64_t tls_handshake_waits;    /* ... that waited for a slot (conn.c) */
    uint64_t tls_reloads[2];         /* SIGHUP reloads of the certificate: [0] ok, [1] failed */
    uint64_t segment_leases;         /* ranges leased from the segment store (segments.c) */
    uint64_t segment_store_errors;   /* segment store calls that failed */
    uint64_t hlc_stamps;             /* hybrid logical clock stamps handed out (hlc.c) */
    uint64_t hlc_offset_refusals;    /* remote stamps refused: beyond --max-offset */
} idms_metrics;

/* A request of route (IDMS_ROUTE_*) answered with status (HTTP's; a
 * command protocol's 200/400/503). */
static inline void idms_metrics_count_request(idms_metrics *m, int route, int status)
{
    int cls = status >= 100 && status < 600 ? status / 100 : 0;
    m->requests[route][cls]++;
}

/* A command of the front end in slot (a listener's: conn.h) that counts
 * commands (idms_proto.counts_commands). */
static inline void idms_metrics_count_command(idms_metrics *m, int slot, int status)
{
    idms_metrics_count_request(m, IDMS_ROUTE_PROTO + slot, status);
}

#endif
