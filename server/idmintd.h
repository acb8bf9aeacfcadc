/*
 * idmintd.h - the ID service's internal interfaces (not installed).
 *
 * idmintd is a thin layer over libidmint: one libuv event loop thread owns
 * the generators (so they are made IDM_GEN_UNSHARED), two protocol
 * adapters (HTTP/1.1 in http/, RESP2 in resp/) turn requests into calls of
 * the mint service (mint.c), and conn.c carries bytes between sockets and
 * adapters with bounded buffers. See docs/idmintd.md for the design.
 */
#ifndef IDMINTD_H
#define IDMINTD_H

#include <idmint/idmint.h>

#include "optparse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* ---- a growable output buffer -------------------------------------------- */

typedef struct idms_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: the connection is closed */
} idms_buf;

void idms_buf_init(idms_buf *b);
void idms_buf_free(idms_buf *b);
/* Room for n more bytes at data + len, or NULL (failed set). */
char *idms_buf_reserve(idms_buf *b, size_t n);
void idms_buf_append(idms_buf *b, const void *p, size_t n);
void idms_buf_puts(idms_buf *b, const char *s);
void idms_buf_printf(idms_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void idms_buf_u64(idms_buf *b, uint64_t v);

/* ---- logging ---------------------------------------------------------------- */

enum { IDMS_LOG_ERROR = 0, IDMS_LOG_WARN = 1, IDMS_LOG_INFO = 2, IDMS_LOG_DEBUG = 3 };
int idms_log_open(const char *path, int level); /* NULL path: stderr */
int idms_log_reopen(void);                       /* SIGHUP */
void idms_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int idms_log_level_from_name(const char *name);

/* ---- options ---------------------------------------------------------------- */

typedef struct idms_options {
    char http[128];          /* ADDR:PORT, "" = off */
    char resp[128];
    uint64_t node;
    bool node_set;
    char layout[256];
    char epoch[64];
    int64_t max_rewind_ms;
    char state_dir[1024];    /* "" = no persistence */
    char log_file[1024];     /* "" = stderr */
    int log_level;
    uint32_t max_connections;
    uint64_t max_count;      /* per request */
    uint32_t idle_timeout_ms;
    int64_t reserve_ms;      /* time window reserved ahead of use */
} idms_options;

/* Fills defaults, then applies --config FILE and the flags (flags win).
 * Returns 0, 1 when --help/--version was printed, or 2 on a usage error
 * (already reported on stderr). */
int idms_options_load(idms_options *o, int argc, char **argv);

/* ---- metrics ---------------------------------------------------------------- */

enum { IDMS_FMT_UUIDV7, IDMS_FMT_UUIDV4, IDMS_FMT_ULID, IDMS_FMT_KSUID, IDMS_FMT_SNOWFLAKE,
       IDMS_FMT_TYPEID, IDMS_FMT_TOKEN, IDMS_FMT_TRACEPARENT, IDMS_FMT_COUNT };
extern const char *const idms_format_names[IDMS_FMT_COUNT];
int idms_format_from_name(const char *s, size_t len);

enum { IDMS_ROUTE_IDS, IDMS_ROUTE_INSPECT, IDMS_ROUTE_LEAF, IDMS_ROUTE_HEALTHZ, IDMS_ROUTE_READYZ,
       IDMS_ROUTE_METRICS, IDMS_ROUTE_OTHER, IDMS_ROUTE_RESP, IDMS_ROUTE_COUNT };

typedef struct idms_metrics {
    uint64_t minted[IDMS_FMT_COUNT];
    uint64_t requests[IDMS_ROUTE_COUNT][6]; /* by status class: 2xx..5xx; [0] other */
    uint64_t clock_rewinds;     /* rewinds seen (waited or refused) */
    uint64_t rewind_waits;      /* small rewinds waited out */
    uint64_t clock_refusals;    /* requests refused for a rewind */
    uint64_t exhaustion_waits;  /* full sequences waited out */
    uint64_t connections_open;
    uint64_t connections_total;
    uint64_t connections_rejected;
    uint64_t protocol_errors;
    uint64_t reserve_writes;    /* high-water mark fsyncs */
} idms_metrics;

/* ---- the mint service ------------------------------------------------------- */

typedef struct idms_server idms_server;

typedef struct idms_mint_result {
    int status;           /* 200, 400, 503, 500 */
    int64_t retry_after_s;
    char message[IDM_ERROR_MSG_CAP + 64];
} idms_mint_result;

enum { IDMS_OUT_LINES, IDMS_OUT_JSON, IDMS_OUT_RESP };

/* Mints count IDs of format into out, one per line, as a JSON array of
 * strings, or as a RESP reply (a bulk string for count 1, an array
 * otherwise). prefix may be NULL. On failure nothing is appended and
 * r->status/message say why. */
void idms_mint(idms_server *s, int format, const char *prefix, uint64_t count, int style,
               idms_buf *out, idms_mint_result *r);

/* Whether the service can mint right now (the clock is not refused). */
bool idms_ready(idms_server *s, char *why, size_t cap);

/* ---- the server ------------------------------------------------------------- */

struct idms_conn;

/* An adapter stops taking requests from the buffer once its replies reach
 * this size; the rest waits until they are written (bounded memory for
 * clients that pipeline big requests and read slowly or not at all). */
#define IDMS_OUT_BATCH (1u << 20)

typedef struct idms_proto {
    const char *name;
    /* Consumes complete requests from buf[0..len), appending replies to
     * out. Returns bytes consumed, or -1 to close the connection after out
     * is flushed (a protocol error or a request to close). */
    ptrdiff_t (*feed)(struct idms_conn *c, const char *buf, size_t len, idms_buf *out);
    /* The reply for a connection over the limit, sent before closing. */
    const char *too_many;
    size_t max_request; /* the most a single request may need buffered */
} idms_proto;

extern const idms_proto idms_http_proto;
extern const idms_proto idms_resp_proto;

typedef struct idms_conn {
    uv_tcp_t tcp;
    idms_server *server;
    const idms_proto *proto;
    uv_timer_t idle;
    char *in;
    size_t in_len, in_cap;
    size_t parsed_len;    /* in[0..parsed_len) held no complete request */
    uint64_t skip_body;   /* HTTP: body bytes still to discard */
    int writes_pending;
    bool closing;
    bool close_after_write;
    bool reading;
    bool more; /* the adapter stopped at IDMS_OUT_BATCH with input left */
    struct idms_conn *prev, *next;
} idms_conn;

typedef struct idms_listener {
    uv_tcp_t tcp;
    const idms_proto *proto;
    idms_server *server;
    bool open;
} idms_listener;

struct idms_server {
    uv_loop_t *loop;
    idms_options opt;
    idm_gen *gen;
    idm_snowflake *sf;
    idm_sf_layout layout;
    char layout_name[IDM_SF_SPEC_CAP];
    idms_metrics metrics;
    idms_listener http, resp;
    idms_conn *conns;
    bool draining;
    uv_signal_t sigterm, sigint, sighup;
    /* The time high-water mark: IDs are minted only at times up to
     * reserved_until_ms, which is on disk (fsynced) before use. */
    int hwm_fd;
    int64_t reserved_until_ms;
    int64_t start_ms;
    uv_timer_t drain_timer;
};

int idms_conn_listen(idms_server *s, idms_listener *l, const idms_proto *proto, const char *addr);
void idms_conn_close_listeners(idms_server *s);
void idms_conn_close_idle(idms_server *s);
/* Starts (again) reading a connection paused by backpressure. */
void idms_conn_resume(struct idms_conn *c);

/* High-water mark (hwm.c). */
int idms_hwm_open(idms_server *s, int64_t *resume_ms);
int idms_hwm_reserve(idms_server *s, int64_t now_ms);
void idms_hwm_close(idms_server *s);

/* Prometheus text (metrics.c). */
void idms_metrics_render(idms_server *s, idms_buf *out);
void idms_metrics_count_request(idms_server *s, int route, int status);

#endif
