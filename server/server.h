/*
 * server.h - the server object that main.c sets up and every component
 * shares. One libuv loop thread owns it (so the generators are made
 * IDM_GEN_UNSHARED); only the mark's writes run elsewhere (hwm.c), on
 * data of their own. Not installed.
 */
#ifndef IDMS_SERVER_H
#define IDMS_SERVER_H

#include "auth.h"
#include "conn.h"
#include "hwm.h"
#include "hwm_loop.h"
#include "keyfile.h"
#include "metrics.h"
#include "mint.h"
#include "node.h"
#include "options.h"
#include "segments.h"
#include "tls.h"

#include <idmint/idmint.h>
#include <stdbool.h>
#include <uv.h>

typedef struct idms_server {
    uv_loop_t *loop;
    idms_options opt;
    /* The generators: made here (main.c), their ceilings set by the mark's
     * owner (hwm.c, node.c), minted from by the mint service, which holds
     * them too (mint; main.c's make_snowflake hands it each new sf). */
    idm_gen *gen;
    idm_snowflake *sf;
    idms_minter mint;
    idm_sf_layout layout;
    char layout_name[IDM_SF_SPEC_CAP];
    idms_metrics metrics;
    idms_auth auth; /* --auth-token-file (auth.c) */
    idmx_keyring keys; /* --key-file (keyed.c): keys[0] current; n 0 without */
    /* The front ends, one per row of main.c's table (a listener's slot is
     * its index); rows past the table's have no proto. */
    idms_listener listeners[IDMS_PROTO_MAX];
    idms_conn *conns;
    /* The requests parked until the generators' ceiling rises (mint.c,
     * hlc.c park there; idms_conn_wake_ceiling wakes them). */
    idms_waitq ceiling_waiters;
    bool draining;
    uv_signal_t sigterm, sigint, sighup;
    idms_hwm hwm;
    idms_hwm_loop hwm_loop; /* hwm's executor on the loop */
    idms_node node;
    idms_segments segments; /* --segments (segments.h) */
    idm_hlc *hlc;           /* the hybrid logical clock (hlc.h) */
    int64_t hlc_clock_ns;   /* the time its clock reads: set per request (hlc.c) */
    int64_t start_ms;
    uv_timer_t drain_timer;
    /* Connections per port at most: --max-connections, or less when the
     * open-file limit cannot hold that many (main.c). */
    uint64_t max_conns;
    /* The turn queue (conn.c): the check handle runs it after each poll,
     * the idle handle keeps that poll from blocking while it is not empty. */
    uv_check_t turn_check;
    uv_idle_t turn_idle;
    idms_conn_queue turn_queue;
    uint64_t turn;
    uint64_t turn_work_ns; /* spent on requests since the last check */
    int64_t conn_refusal_logged_s; /* the last second (loop time) a refusal was logged */
    int64_t accept_error_logged_s; /* ... an accept error was logged */
    /* Bytes buffered for the connections (conn.c): their own input
     * buffers, replies queued for writing, and what their TLS sessions
     * hold (idms_tls_held); the peak of those and of the connection
     * structures since memory was last given back (malloc_trim), checked
     * every second by trim_timer. */
    uint64_t buffered_in, buffered_out, buffered_tls, buffered_peak;
    uint64_t buffered_conns; /* the connection structures allocated, sessions included */
    uv_timer_t trim_timer;
    /* Handshake slots (conn.c): with TLS, tls_reserve (a quarter of
     * --max-buffered) holds tls_handshake_max handshakes in progress at
     * IDMS_TLS_HANDSHAKE_BYTES each; the connections whose first record is
     * complete wait for a slot in hs_queue, oldest first. */
    uint64_t tls_reserve, tls_handshake_max, tls_handshakes_open, tls_handshakes_waiting;
    idms_conn_queue hs_queue;
    int64_t tls_wait_logged_s; /* the last second a wait was logged */
    /* --tls-cert and --tls-key loaded (NULL: no TLS); new connections take
     * it, SIGHUP replaces it (each session holds its own reference). */
    SSL_CTX *tls_ctx;
    int64_t tls_failure_logged_s; /* the last second a TLS failure was logged */
} idms_server;

/* The request at the head of c's buffer as the services see it. */
static inline idms_req idms_conn_req(idms_conn *c)
{
    idms_req q = {c->server, &c->server->mint, &c->job, &c->seg};
    return q;
}

#endif
