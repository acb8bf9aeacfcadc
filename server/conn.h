/*
 * conn.h - connections and listeners (conn.c), and the interface a
 * protocol adapter implements (http/, resp/, memcache/). Not installed.
 *
 * A front end is an idms_proto in its own folder and one row of main.c's
 * table of fronts (its listen address and idle timeout): the connection,
 * the listener and the metrics know a protocol only through this
 * structure and the listener's slot (its row), never by name or number.
 */
#ifndef IDMS_CONN_H
#define IDMS_CONN_H

#include "buf.h"
#include "core/counters.h"
#include "core/job.h"
#include "core/waitlist.h"
#include "options.h"

#include <openssl/ssl.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct idms_net;
struct idms_services;
struct idms_conn;
struct idms_tls;

/* A connection's share of --max-buffered: the budget (with TLS, the three
 * quarters not kept for handshakes in progress) divided by the open
 * connections, from IDMS_SHARE_MIN to IDMS_SHARE_MAX (idms_conn_share).
 * What it buffers - replies not yet written and input not yet answered -
 * stays within about its share: it is not read once they reach half of it,
 * a read takes at most a quarter, an adapter stops taking requests from the
 * buffer once its replies reach a part (idms_conn_part: a quarter), and the
 * mint service sends a larger reply in parts of that size; the rest waits
 * until they are written (bounded memory for
 * clients that pipeline big requests and read slowly or not at all) and,
 * when the socket took them at once, until the next loop turn (conn.c):
 * one batch per connection per turn, so that no client, however it
 * pipelines, holds up the others. */
#define IDMS_SHARE_MIN (16u << 10)
#define IDMS_SHARE_MAX (4u << 20)

/* A step - what a connection is served at once: a batch of replies, or a
 * part of a large one - renders at most a slice, whatever the share: a
 * step is never preempted, so its size is the longest another connection
 * can wait for it (conn.c, "Fair turns" in docs/idmintd.md). A fresh step,
 * one that begins a request read after its connection had answered all
 * its earlier ones, is served ahead of the connections already being
 * served and renders at most IDMS_SLICE_FRESH; the rest of its request
 * continues behind them in slices of IDMS_SLICE. */
#define IDMS_SLICE_FRESH (4u << 10)
#define IDMS_SLICE (64u << 10)

typedef struct idms_proto {
    const char *name;
    /* Consumes complete requests from buf[0..len), appending replies to
     * out. Returns bytes consumed, or -1 to close the connection after out
     * is flushed (a protocol error or a request to close). A request that
     * parks (idms_mint: IDMS_MINT_PARKED) is not consumed: the adapter
     * hands the service's park to idms_conn_park, keeps what the request
     * needs to go on in its session, returns the bytes before the
     * request, and is fed it again, at the head of buf, on resume: it goes
     * on from what it kept, without parsing the request again. */
    ptrdiff_t (*feed)(struct idms_conn *c, const char *buf, size_t len, idms_buf *out);
    /* The replies sent before closing: for a connection over the limit,
     * for a request larger than max_request, and for one not complete
     * within --header-timeout of its first byte. */
    const char *too_many;
    const char *too_large;
    void (*too_slow)(idms_buf *out, uint32_t timeout_ms);
    size_t max_request; /* the most a single request may need buffered */
    /* What the log calls one of its requests ("an HTTP request", "a RESP
     * command"), for refusals (auth.c). */
    const char *request_noun;
    /* Bytes of per-connection state the adapter keeps (idms_conn_session):
     * zeroed at accept, freed with the connection. */
    size_t session_size;
    /* The requests are counted under route="<name>" in
     * idmint_requests_total (idms_metrics_count_command), not by HTTP route. */
    bool counts_commands;
    /* The protocol cannot carry the token (memcached's text protocol has
     * no authentication): with --auth-token-file its listener must be
     * local (loopback or a Unix socket: auth.c), and it serves local
     * clients without the token. */
    bool tokenless;
    /* Whether the first request in buf[0..len) is a health probe, which a
     * connection over --max-connections still has answered (then closed):
     * 1 yes, 0 no (it gets too_many), -1 not complete yet. NULL: such
     * connections get too_many at once. */
    int (*probe)(const char *buf, size_t len);
    /* Each request begins with a head that ends with a line feed (HTTP):
     * an incomplete one is parsed again only once a line feed (or enough
     * more bytes) arrives, not per byte trickled in (conn.c). */
    bool head_ends_in_lf;
    /* Frees what the session points to (RESP: a transaction's queue), once
     * the connection is closed and before it is freed; NULL when the
     * session holds no allocation. */
    void (*session_free)(struct idms_conn *c);
} idms_proto;

/* Connections per listener beyond --max-connections that are read for a
 * health probe (idms_proto.probe) before they are answered and closed;
 * within IDMS_PROBE_MS of their accept. */
#define IDMS_PROBE_CONNS 16
#define IDMS_PROBE_MS 2000

/* The links of a connection in one of the server's queues of them (the
 * turn queue, the handshake queue: conn.c), and such a queue. */
typedef struct idms_conn_link {
    struct idms_conn *prev, *next;
} idms_conn_link;
typedef struct idms_conn_queue {
    struct idms_conn *head, *tail;
} idms_conn_queue;

/* A connection's or a listener's socket: TCP, or a Unix socket for
 * --http unix:PATH (uv_pipe_t). Both are streams. */
typedef union idms_stream {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
} idms_stream;

typedef struct idms_conn {
    idms_stream sock;
    struct idms_net *net;
    const idms_proto *proto;
    uv_timer_t idle;
    uv_timer_t park_timer;
    /* --header-timeout for the request at the head of the buffer (and a
     * body being skipped); the lingering close's limit after the last
     * reply. */
    uv_timer_t deadline;
    uv_shutdown_t shutdown;
    int handles_open; /* the socket and the three timers: freed when all are closed */
    int writes_pending;
    /* Input not yet answered. Between reads it is the connection's own
     * allocation, exactly what is left (an incomplete request, or requests
     * waiting behind a park or a full batch); a read with nothing left
     * lands in the loop's shared buffer (in_shared, below) and only the
     * remainder is copied out, so an idle connection holds no input
     * buffer. (The flags are together, and so are the words: the structure
     * is a good part of what an idle connection costs.) */
    char *in;
    size_t in_len, in_cap;
    size_t out_queued; /* bytes handed to uv_write and not yet written */
    size_t parsed_len;    /* in[0..parsed_len) held no complete request */
    uint64_t skip_body;   /* HTTP: body bytes still to discard */
    bool in_shared;
    bool body_wait;       /* HTTP: a request's body is still coming: parse on any input */
    bool closing;
    bool close_after_write;
    bool lingering; /* the last reply is written: discarding input until EOF */
    bool no_linger; /* refused at accept: close at once after the reply */
    bool over_limit; /* accepted past --max-connections: a probe, or refused */
    bool reading;
    bool more; /* the adapter stopped at IDMS_OUT_BATCH with input left */
    /* A parked request (IDMS_PARK_*: core/job.h): why, and what until: for
     * IDMS_PARK_TIME the clock time (Unix ns) at which to try again; for
     * IDMS_PARK_CEILING and IDMS_PARK_SEGMENT the list of the key waited
     * for (the server's ceiling_waiters, a segment tag's waiters), which
     * waiter is on while the request is parked there. Set from the
     * service's answer by the adapter (idms_conn_park). The job keeps what
     * it has minted. */
    int park;
    union {
        int64_t park_until_ns;
        idms_waitq *park_on;
    };
    idms_waiter waiter;
    int64_t park_clock_ns; /* the clock when it last parked */
    idms_mint_job job;
    idms_seg_share seg; /* its share of segment store lookups (segments.c) */
    struct idms_tls *tls;   /* the TLS session (tls.h), NULL without TLS */
    size_t tls_held;        /* what idms_net.buffered_tls counts for it */
    idms_conn_link hs_link; /* the handshake queue (tls_waiting, below) */
    struct idms_listener *listener;
    struct idms_conn *prev, *next;
    /* The turn queues (conn.c): work left for the next loop turn, after
     * the poll that serves every other connection; queued_fresh: in the
     * fresh queue, served first. */
    bool queued;
    bool queued_fresh;
    /* Its last step answered every complete request it had (its replies
     * may still be on their way): the next input begins a fresh step. */
    bool caught_up;
    /* The step to come is a fresh one: it renders at most
     * IDMS_SLICE_FRESH (idms_conn_part) and is queued in the fresh queue.
     * It stays so through parks that rendered nothing. */
    bool fresh;
    bool turn_more; /* resume the buffered requests (the batch was full) */
    bool turn_park; /* look again at a time park due within the ms */
    bool turn_tls;  /* a handshake slot came: start the handshake */
    bool idle_due;  /* the idle timer fired: close unless input or output moved */
    bool tls_slot;    /* its handshake holds one of the slots (conn.c) */
    bool tls_waiting; /* ... waits for one, in the server's queue (hs_link) */
    uint64_t queued_turn;
    size_t idle_wq; /* the write queue's size when the idle timer fired */
    idms_conn_link turn_link;
    /* The adapter's state (idms_proto.session_size bytes). */
    _Alignas(max_align_t) unsigned char session[];
} idms_conn;

/* The adapter's per-connection state: proto->session_size bytes, zeroed
 * at accept. */
static inline void *idms_conn_session(idms_conn *c)
{
    return c->session;
}

/* A front end's listener: one row of main.c's table, in the server's
 * listeners[slot]; every row exists (its metrics are rendered) whether or
 * not its address is "off". */
typedef struct idms_listener {
    idms_stream sock;
    int slot;           /* its index in idms_net.listeners (metrics) */
    const char *addr;   /* ADDR:PORT or unix:PATH; "" when off */
    int sd_fd;          /* a socket systemd passed (systemd:NAME), or -1 */
    char bound[128];    /* that socket's address, where addr then points */
    uint64_t conns_accepted; /* every connection accepted since the start */
    bool is_unix;
    char path[108]; /* a Unix socket's path, removed when the listener closes */
    const idms_proto *proto;
    struct idms_net *net;
    uint32_t idle_timeout_ms; /* its connections' idle timeout (0: never) */
    bool open;
    uint64_t conns_open;  /* counted against idms_net.max_conns */
    uint64_t probes_open; /* of those, over the limit (IDMS_PROBE_CONNS) */
} idms_listener;

/* The connections and listeners of every front end, and what the
 * transport keeps across them: budgets, the turn queue, TLS handshake
 * slots. main.c sets up to svc before idms_conn_init; one loop thread owns
 * it. */
typedef struct idms_net {
    uv_loop_t *loop;
    const idms_options *opt;
    idms_metrics *metrics;
    /* What the adapters of its connections reach below them (services.h:
     * the transport only hands it on). */
    struct idms_services *svc;
    struct idms_auth *auth; /* --auth-token-file (auth.h): the adapters check it */
    bool draining;          /* SIGTERM: no new connections, keep-alive ends (main.c sets it) */
    /* The front ends, one per row of main.c's table (a listener's slot is
     * its index); rows past the table's have no proto. */
    idms_listener listeners[IDMS_PROTO_MAX];
    idms_conn *conns;
    /* The requests parked until the generators' ceiling rises (mint.c,
     * hlc.c park there; idms_conn_wake_ceiling wakes them). */
    idms_waitq ceiling_waiters;
    /* Connections per port at most: --max-connections, or less when the
     * open-file limit cannot hold that many (main.c). */
    uint64_t max_conns;
    /* The turn queues (conn.c): the check handle runs them after each
     * poll, the fresh one first; the idle handle keeps that poll from
     * blocking while they are not empty. */
    uv_check_t turn_check;
    uv_idle_t turn_idle;
    idms_conn_queue turn_fresh;
    idms_conn_queue turn_queue;
    uint64_t turn;
    uint64_t turn_work_ns;         /* spent on requests since the last check */
    /* What a step renders its replies into (conn.c): the loop's, its
     * memory kept from step to step. */
    idms_buf step_out;
    bool step_out_busy;
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
} idms_net;

/* Sets up the turn queue's handles; idms_conn_shutdown closes them (after
 * the loop has stopped). */
void idms_conn_init(idms_net *s);
void idms_conn_shutdown(idms_net *s);
/* Listens on l->addr (ADDR:PORT or unix:PATH) for l->proto, whose
 * connections close after l->idle_timeout_ms without a request (0: never).
 * Returns 0, or -1 after reporting why. */
int idms_conn_listen(idms_net *s, idms_listener *l);
void idms_conn_close_listeners(idms_net *s);
void idms_conn_close_idle(idms_net *s);
/* Closes every connection now (the drain's deadline), each once. */
void idms_conn_close_all(idms_net *s);
/* The connection's share of --max-buffered (IDMS_SHARE_MIN..MAX). */
size_t idms_conn_share(const idms_conn *c);
/* A part of a large reply: a quarter of the share (what is sent at once). */
size_t idms_conn_part(const idms_conn *c);
/* The most a step renders: IDMS_SLICE, or IDMS_SLICE_FRESH in a fresh
 * step (idms_conn_req hands it to the services). */
size_t idms_conn_slice(const idms_conn *c);
/* A batch of pipelined replies: a part, at most the step's slice. */
size_t idms_conn_batch(const idms_conn *c);
/* A service parked the request at the head of c's buffer (the adapter
 * leaves it there, unconsumed): conn.c parks c on p once feed returns. */
static inline void idms_conn_park(idms_conn *c, const idms_park *p)
{
    c->park = p->why;
    if (p->why == IDMS_PARK_TIME)
        c->park_until_ns = p->until_ns;
    else
        c->park_on = p->on;
}
/* After a request is answered, the rule of a command protocol's feed loop
 * (RESP, memcached): the connection closes once out is written when the
 * request asked for it (close), or when the server drains and
 * rest[0..len) does not begin another request (another: the adapter's
 * parser, asked only while draining) - a drain answers every request
 * already received, then closes. Returns true, with close_after_write
 * set, when the adapter must stop feeding. */
bool idms_conn_close_after(idms_conn *c, bool close,
                           bool (*another)(idms_conn *c, const char *rest, size_t len),
                           const char *rest, size_t len);
/* Starts (again) reading a connection paused by backpressure. */
void idms_conn_resume(idms_conn *c);
/* Resumes the connections parked for the ceiling (the mark is durable,
 * or its write failed: they then get their error): the waiters of
 * s->ceiling_waiters, none other. */
void idms_conn_wake_ceiling(idms_net *s);

/* The request at the head of c's buffer as the services see it. */
static inline idms_req idms_conn_req(idms_conn *c)
{
    idms_req q = {c->net->svc, &c->job, &c->seg, idms_conn_slice(c)};
    return q;
}

/* What c's adapter reaches below it (services.h). */
static inline struct idms_services *idms_conn_services(const idms_conn *c)
{
    return c->net->svc;
}

#endif
