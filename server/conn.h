/*
 * conn.h - connections and listeners (conn.c), and the interface a
 * protocol adapter implements (http/, resp/). Not installed.
 */
#ifndef IDMS_CONN_H
#define IDMS_CONN_H

#include "buf.h"
#include "mint.h"
#include "resp/resp_session.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct idms_server;
struct idms_conn;
struct idms_tls;

/* An adapter stops taking requests from the buffer once its replies reach
 * this size; the rest waits until they are written (bounded memory for
 * clients that pipeline big requests and read slowly or not at all) and,
 * when the socket took them at once, until the next loop turn (conn.c):
 * one batch per connection per turn, so that no client, however it
 * pipelines, holds up the others. */
#define IDMS_OUT_BATCH (1u << 20)

typedef struct idms_proto {
    const char *name;
    /* Consumes complete requests from buf[0..len), appending replies to
     * out. Returns bytes consumed, or -1 to close the connection after out
     * is flushed (a protocol error or a request to close). A request that
     * parks (idms_mint: IDMS_MINT_PARKED) is not consumed: the adapter
     * returns the bytes before it, and is fed it again on resume. */
    ptrdiff_t (*feed)(struct idms_conn *c, const char *buf, size_t len, idms_buf *out);
    /* The reply for a connection over the limit, sent before closing. */
    const char *too_many;
    size_t max_request; /* the most a single request may need buffered */
} idms_proto;

extern const idms_proto idms_http_proto;
extern const idms_proto idms_resp_proto;

/* Why a connection is parked. */
enum { IDMS_PARK_NONE = 0, IDMS_PARK_TIME = 1, IDMS_PARK_CEILING = 2 };

typedef struct idms_conn {
    uv_tcp_t tcp;
    struct idms_server *server;
    const idms_proto *proto;
    uv_timer_t idle;
    uv_timer_t park_timer;
    int handles_open; /* tcp and the two timers: freed when all are closed */
    char *in;
    size_t in_len, in_cap;
    size_t parsed_len;    /* in[0..parsed_len) held no complete request */
    uint64_t skip_body;   /* HTTP: body bytes still to discard */
    int writes_pending;
    bool closing;
    bool close_after_write;
    bool reading;
    bool more; /* the adapter stopped at IDMS_OUT_BATCH with input left */
    /* A parked request: why, and for IDMS_PARK_TIME the clock time (Unix
     * ns) at which to try again. The job keeps what it has minted. */
    int park;
    int64_t park_until_ns;
    int64_t park_clock_ns; /* the clock when it last parked */
    idms_mint_job job;
    idms_resp_session resp; /* RESP connections: the session (resp_server.c) */
    struct idms_tls *tls;   /* the TLS session (tls.h), NULL without TLS */
    struct idms_listener *listener;
    struct idms_conn *prev, *next;
    /* The turn queue (conn.c): work left for the next loop turn, after
     * the poll that serves every other connection. */
    bool queued;
    bool turn_more; /* resume the buffered requests (the batch was full) */
    bool turn_park; /* look again at a time park due within the ms */
    bool idle_due;  /* the idle timer fired: close unless input or output moved */
    uint64_t queued_turn;
    size_t idle_wq; /* the write queue's size when the idle timer fired */
    struct idms_conn *turn_prev, *turn_next;
} idms_conn;

typedef struct idms_listener {
    uv_tcp_t tcp;
    const idms_proto *proto;
    struct idms_server *server;
    bool open;
    uint64_t conns_open; /* counted against idms_server.max_conns */
} idms_listener;

/* Sets up the turn queue's handles; idms_conn_shutdown closes them (after
 * the loop has stopped). */
void idms_conn_init(struct idms_server *s);
void idms_conn_shutdown(struct idms_server *s);
int idms_conn_listen(struct idms_server *s, idms_listener *l, const idms_proto *proto, const char *addr);
void idms_conn_close_listeners(struct idms_server *s);
void idms_conn_close_idle(struct idms_server *s);
/* Closes every connection now (the drain's deadline), each once. */
void idms_conn_close_all(struct idms_server *s);
/* Starts (again) reading a connection paused by backpressure. */
void idms_conn_resume(idms_conn *c);
/* Resumes every connection parked for the ceiling (the mark is durable,
 * or its write failed: they then get their error). */
void idms_conn_wake_ceiling(struct idms_server *s);

#endif
