/*
 * services.h - what a front end reaches below it: the state of each
 * service (the mint service, segments, the HLC, keyed forms, readiness),
 * the node (for GET /v1/node and INFO), the options and counters, and the
 * callbacks into the room above (the whole server's /metrics). main.c
 * fills one and hands it to each listener; an adapter finds it as its
 * connection's svc (conn.h) and a service as its request's (core/job.h:
 * idms_req). No service writes a connection's fields: each returns a
 * result (mint.h, hlc.h, segments.h) that the adapter renders and hands
 * to conn.c. Not installed.
 */
#ifndef IDMS_SERVICES_H
#define IDMS_SERVICES_H

#include "buf.h"
#include "core/counters.h"
#include "options.h"

#include <stdbool.h>
#include <stdint.h>

/* Each service's own header says what its state is; this one only points
 * at them, so that including it brings in no service (mint.c includes it
 * and neither libuv nor the node's headers). */
struct idms_minter;
struct idms_segments;
struct idms_hlc;
struct idms_keyed;
struct idms_status;
struct idms_node;

typedef struct idms_services {
    const idms_options *opt;
    const char *layout_name; /* the snowflake layout's, as --layout names it */
    struct idms_minter *mint;
    struct idms_segments *segments;
    struct idms_hlc *hlc;
    struct idms_keyed *keyed;
    struct idms_status *status;
    struct idms_node *node;
    idms_metrics *metrics;
    int64_t start_ms; /* when the server started (Unix ms): uptime */
    /* GET /metrics and the like: the whole server's figures, rendered by
     * the room above (metrics.c), with ctx. */
    void (*render_metrics)(void *ctx, idms_buf *out);
    void *ctx;
} idms_services;

#endif
