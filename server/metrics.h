/*
 * metrics.h - the whole server's figures in Prometheus text (metrics.c):
 * the counters (core/counters.h) and what each room reports of itself
 * (connections and buffers, TLS handshakes, the node and its lease, the
 * durable mark). In the main room: it reads every room below; the
 * adapters reach it through the services' render_metrics (services.h).
 * Not installed.
 */
#ifndef IDMS_METRICS_H
#define IDMS_METRICS_H

#include "buf.h"
#include "core/counters.h"

struct idms_server;
void idms_metrics_render(struct idms_server *s, idms_buf *out);

#endif
