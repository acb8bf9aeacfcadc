/*
 * conn.c - connections: accept, read into a bounded buffer, hand complete
 * requests to the protocol adapter, write replies, time out idle clients,
 * and drain on shutdown.
 *
 * Memory is bounded across connections by --max-buffered: each connection
 * gets a share of it (idms_conn_share: the budget over the connections
 * open). Reads land in one buffer the loop shares, at most a quarter of a
 * share at a time; a connection keeps only what is left unanswered, at
 * most the protocol's max_request of an incomplete request (a request that
 * would need more is answered with an error and the connection closed) or
 * one read of requests waiting behind a park or a full batch (a read after
 * an incomplete request lands in the shared buffer too, behind a copy of
 * it). Reading pauses while replies wait for a slow reader and the
 * connection holds half its share, and the adapters and the mint service
 * stop a batch, or a part of a large reply, at a quarter (idms_conn_part).
 * With TLS a quarter of the budget is for handshakes in progress
 * (handshake slots, below) and the shares divide the rest. Memory given
 * back to the allocator is returned to the system (malloc_trim) once the
 * bytes counted - buffered, TLS state, connection structures - have fallen
 * well below their peak.
 *
 * Deadlines: a request must be complete within --header-timeout of its
 * first byte (and a body the adapter skips must arrive within it), else
 * the protocol's too_slow reply and a close. A connection closed after a
 * reply lingers: the write side is shut down and input is discarded until
 * the client closes, for at most LINGER_MS, so that a client still sending
 * (a 1 MB request line) reads its 414 rather than a reset.
 *
 * With TLS (tls.c) the bytes read are ciphertext: they go into the
 * connection's session, and the plaintext it yields takes their place in
 * the input buffer (tls_input); replies are encrypted on their way out
 * (send_buf). The session may hold more plaintext than the buffer had room
 * for: tls_deliver moves it in as the connection reads on. A handshake
 * must be complete within --header-timeout of the accept.
 *
 * Handshake slots: a session gets its SSL object once the client's first
 * record is complete (tls.c; before, it holds only what was sent) and a
 * slot is free: at most tls_handshake_max handshakes are in progress, a
 * quarter of --max-buffered at IDMS_TLS_HANDSHAKE_BYTES each. The others
 * wait, not read, oldest first; a slot freed (a handshake completed,
 * failed or closed) goes to the first of them, whose handshake starts in
 * its turn. Their deadline runs on: a connection still waiting at
 * --header-timeout closes as a stalled handshake does. What the sessions
 * hold (idms_tls_held) is counted in buffered_tls.
 *
 * Work per connection is bounded too: a step - one batch of replies, or a
 * part of a large one, or up to a park - renders at most a slice
 * (IDMS_SLICE; IDMS_SLICE_FRESH for a fresh step: conn.h). What is left -
 * the rest of a pipeline whose batch the socket took at once, a time park
 * due within the millisecond, an idle timer's verdict - goes to a turn
 * queue, which a check handle runs after the loop's next poll: every other
 * connection's input and output is served in between. (A timer due at
 * once would not do: libuv 1.44 runs a timer re-armed for "now" from its
 * own callback again before it polls.) There are two queues: fresh steps
 * (a request read after its connection had answered all its earlier
 * ones: a probe, a client that waits for each reply) run first, then the
 * continuing ones, each in the order queued and each with a budget of
 * about TURN_BUDGET_NS; past it, a connection with requests to answer
 * (read, resumed or unparked) queues for the next turn instead, so that
 * many greedy clients together do not hold up a new one either. Each
 * queue runs at least its first connection per turn.
 */
#include "conn.h"
#include "buf.h"
#include "core/job.h"
#include "core/waitlist.h"
#include "log.h"
#include "optparse.h"
#include "optvalue.h"
#include "tls.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#define REPARSE_BYTES  1024
#define READ_CHUNK     65536
#define PARK_MAX_MS    100
#define TURN_BUDGET_NS 2000000u
#define LINGER_MS      2000
#define TRIM_PERIOD_MS 1000
#define TRIM_MIN_PEAK  (4u << 20)
#define STEP_OUT_KEEP  (256u << 10)

typedef struct write_req {
    uv_write_t req;
    idms_conn *c;
    char *data;
    size_t len; /* counted in out_queued */
} write_req;

/* Where every read lands first (one loop thread reads at a time). */
static char shared_in[READ_CHUNK];

static void conn_close(idms_conn *c);
static void read_again(idms_conn *c);
static void tls_count(idms_conn *c);
static void tls_start(idms_conn *c);
static void tls_deliver(idms_conn *c);
static void take_turn(idms_conn *c);
static void linger(idms_conn *c);
static void on_read_linger(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* A connection's links for a queue (at offset off: turn_link, hs_link). */
static idms_conn_link *link_of(idms_conn *c, size_t off)
{
    return (idms_conn_link *)((char *)c + off);
}

static void queue_push(idms_conn_queue *q, idms_conn *c, size_t off)
{
    idms_conn_link *l = link_of(c, off);
    l->next = NULL;
    l->prev = q->tail;
    if (q->tail != NULL)
        link_of(q->tail, off)->next = c;
    else
        q->head = c;
    q->tail = c;
}

static void queue_remove(idms_conn_queue *q, idms_conn *c, size_t off)
{
    idms_conn_link *l = link_of(c, off);
    if (l->prev != NULL)
        link_of(l->prev, off)->next = l->next;
    else
        q->head = l->next;
    if (l->next != NULL)
        link_of(l->next, off)->prev = l->prev;
    else
        q->tail = l->prev;
    l->prev = l->next = NULL;
}

#define TURN_LINK offsetof(idms_conn, turn_link)
#define HS_LINK   offsetof(idms_conn, hs_link)

static void on_turn_idle(uv_idle_t *h)
{
    /* Nothing to do: an active idle handle makes the poll not block while
     * the turn queue holds work. */
    (void)h;
}

static void turn_remove(idms_conn *c)
{
    idms_net *s = c->net;
    if (!c->queued)
        return;
    queue_remove(c->queued_fresh ? &s->turn_fresh : &s->turn_queue, c, TURN_LINK);
    c->queued = false;
}

/* Runs the work of queue q queued before this turn, each connection once,
 * in queue order, with a budget of its own: the first always, then while
 * the budget lasts and, for the continuing queue, while no fresh step has
 * been queued meanwhile (a fresh snowflake request parked until the next
 * millisecond: the steps of a flood of snowflake pipelines would take
 * that millisecond's sequence before it). */
static void run_queue(idms_net *s, idms_conn_queue *q, uint64_t turn)
{
    s->turn_work_ns = 0;
    bool first = true;
    while (q->head != NULL && q->head->queued_turn <= turn && s->turn_work_ns < TURN_BUDGET_NS &&
           (first || q == &s->turn_fresh || s->turn_fresh.head == NULL)) {
        idms_conn *c = q->head;
        turn_remove(c);
        take_turn(c);
        first = false;
    }
}

/* Runs, after a poll, the work queued before it: first the fresh steps,
 * then those of connections already being served. Work queued meanwhile
 * waits for the next turn. */
static void on_turn_check(uv_check_t *h)
{
    idms_net *s = h->data;
    uint64_t turn = s->turn++;
    run_queue(s, &s->turn_fresh, turn);
    /* What the continuing steps spend counts against the next timers and
     * poll too, until the next check. */
    run_queue(s, &s->turn_queue, turn);
    if (s->turn_fresh.head == NULL && s->turn_queue.head == NULL) {
        uv_idle_stop(&s->turn_idle);
        uv_check_stop(&s->turn_check);
    }
}

/* Queues c's work for the next turn: in the fresh queue when its step is
 * a fresh one (c->fresh), else behind the connections already queued. A
 * connection queued for other work (an idle verdict) that reads a fresh
 * request moves to the fresh queue. */
static void turn_push(idms_conn *c)
{
    idms_net *s = c->net;
    if (c->closing || c->lingering)
        return;
    if (c->queued) {
        if (!c->fresh || c->queued_fresh)
            return;
        turn_remove(c);
    }
    c->queued = true;
    c->queued_fresh = c->fresh;
    c->queued_turn = s->turn;
    queue_push(c->fresh ? &s->turn_fresh : &s->turn_queue, c, TURN_LINK);
    uv_idle_start(&s->turn_idle, on_turn_idle);
    uv_check_start(&s->turn_check, on_turn_check);
}

/* The bytes counted for giving memory back: buffered input and replies,
 * TLS state, and the connection structures as allocated (the adapter's
 * session included), until each is freed. */
static uint64_t counted(const idms_net *s)
{
    return s->buffered_in + s->buffered_out + s->buffered_tls + s->buffered_conns;
}

static void note_buffered(idms_net *s)
{
    uint64_t total = counted(s);
    if (total > s->buffered_peak)
        s->buffered_peak = total;
}

/* Every second: once the bytes counted have fallen to a quarter of a peak
 * of at least TRIM_MIN_PEAK, what the allocator keeps of them goes back to
 * the system (glibc keeps freed heap memory otherwise: 1.18 GB stayed
 * after the clients of a flood had left, and 448 MB after 9,000 TLS
 * half-handshakes, which buffer nothing). */
static void on_trim(uv_timer_t *t)
{
    idms_net *s = t->data;
    note_buffered(s); /* connections that came and sent nothing count too */
    uint64_t now = counted(s);
    if (s->buffered_peak < TRIM_MIN_PEAK || now > s->buffered_peak / 4)
        return;
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    s->buffered_peak = now;
}

void idms_conn_init(idms_net *s)
{
    if (s->tls_ctx != NULL) {
        s->tls_reserve = s->opt->max_buffered / 4;
        s->tls_handshake_max = s->tls_reserve / IDMS_TLS_HANDSHAKE_BYTES;
        if (s->tls_handshake_max < 1)
            s->tls_handshake_max = 1;
    }
    uv_idle_init(s->loop, &s->turn_idle);
    uv_check_init(s->loop, &s->turn_check);
    s->turn_idle.data = s;
    s->turn_check.data = s;
    uv_timer_init(s->loop, &s->trim_timer);
    s->trim_timer.data = s;
    uv_timer_start(&s->trim_timer, on_trim, TRIM_PERIOD_MS, TRIM_PERIOD_MS);
    uv_unref((uv_handle_t *)&s->trim_timer);
}

void idms_conn_shutdown(idms_net *s)
{
    uv_handle_t *hs[3] = {(uv_handle_t *)&s->turn_idle, (uv_handle_t *)&s->turn_check,
                          (uv_handle_t *)&s->trim_timer};
    for (int i = 0; i < 3; i++)
        if (!uv_is_closing(hs[i]))
            uv_close(hs[i], NULL);
    idms_buf_free(&s->step_out);
}

static bool over_budget(const idms_net *s)
{
    return s->turn_work_ns >= TURN_BUDGET_NS;
}

size_t idms_conn_share(const idms_conn *c)
{
    const idms_net *s = c->net;
    uint64_t open = s->metrics->connections_open > 0 ? s->metrics->connections_open : 1;
    uint64_t share = (s->opt->max_buffered - s->tls_reserve) / open;
    if (share < IDMS_SHARE_MIN)
        share = IDMS_SHARE_MIN;
    if (share > IDMS_SHARE_MAX)
        share = IDMS_SHARE_MAX;
    return (size_t)share;
}

size_t idms_conn_part(const idms_conn *c)
{
    return idms_conn_share(c) / 4;
}

size_t idms_conn_slice(const idms_conn *c)
{
    return c->fresh ? IDMS_SLICE_FRESH : IDMS_SLICE;
}

size_t idms_conn_batch(const idms_conn *c)
{
    size_t part = idms_conn_part(c);
    size_t slice = idms_conn_slice(c);
    return part < slice ? part : slice;
}

/* What the connection holds: replies not yet written, and its own input
 * buffer (not the shared one it reads into). */
static size_t held(const idms_conn *c)
{
    return c->out_queued + (c->in_shared ? 0 : c->in_cap);
}

/* Whether it holds half of its share with replies waiting to be written:
 * then it is not read, and a park that ends does not mint, until some
 * have been (input alone never holds it back: answering it is what frees
 * it). */
static bool full(const idms_conn *c)
{
    return c->out_queued > 0 && held(c) >= idms_conn_share(c) / 2;
}

/* The connection's own input buffer becomes p, of cap bytes (NULL, 0: none). */
static void set_in(idms_conn *c, char *p, size_t cap)
{
    idms_net *s = c->net;
    if (!c->in_shared)
        s->buffered_in -= c->in_cap;
    c->in = p;
    c->in_cap = cap;
    c->in_shared = false;
    s->buffered_in += cap;
    note_buffered(s);
}

/* Gives back an own input buffer that holds nothing. */
static void drop_empty_in(idms_conn *c)
{
    if (c->in_len == 0 && !c->in_shared && c->in != NULL) {
        free(c->in);
        set_in(c, NULL, 0);
    }
}

/* After the adapter has looked at a read that landed in the shared
 * buffer: what it left (an incomplete request, or requests waiting behind
 * a park or a full batch) is copied into an allocation of the
 * connection's own, of just that size (a half-sent head of 40 bytes keeps
 * 40, not a page: thousands of them add up). */
static void keep_rest(idms_conn *c)
{
    if (!c->in_shared)
        return;
    const char *rest = c->in;
    size_t len = c->closing ? 0 : c->in_len;
    c->in = NULL;
    c->in_cap = 0;
    c->in_shared = false;
    c->in_len = 0;
    if (len == 0)
        return;
    char *p = malloc(len);
    if (p == NULL) {
        conn_close(c);
        return;
    }
    memcpy(p, rest, len);
    set_in(c, p, len);
    c->in_len = len;
}

/* process(), its time counted against the turn's budget. */
static void process(idms_conn *c);
static void process_timed(idms_conn *c)
{
    idms_net *s = c->net;
    uint64_t t0 = uv_hrtime();
    process(c);
    s->turn_work_ns += uv_hrtime() - t0;
}

/* At most once a second (of loop time) per *last_s. */
static bool log_due(idms_net *s, int64_t *last_s)
{
    int64_t now_s = (int64_t)(uv_now(s->loop) / 1000);
    if (*last_s != 0 && now_s == *last_s)
        return false;
    *last_s = now_s;
    return true;
}

#define CONN_HANDLES 4

static void on_handle_closed(uv_handle_t *h)
{
    idms_conn *c = h->data;
    /* Four handles (the socket, the idle, park and deadline timers) share
     * the connection; the last one closed frees it. */
    if (--c->handles_open == 0) {
        if (c->proto->session_free != NULL)
            c->proto->session_free(c);
        idms_mint_job_free(&c->job);
        c->net->buffered_tls -= c->tls_held;
        idms_tls_free(c->tls);
        if (!c->in_shared) {
            free(c->in);
            set_in(c, NULL, 0);
        }
        c->net->buffered_conns -= sizeof *c + c->proto->session_size;
        free(c);
    }
}

static void close_handles(idms_conn *c)
{
    uv_close((uv_handle_t *)&c->idle, on_handle_closed);
    uv_close((uv_handle_t *)&c->park_timer, on_handle_closed);
    uv_close((uv_handle_t *)&c->deadline, on_handle_closed);
    uv_close(&c->sock.handle, on_handle_closed);
}

/* Counts a connection in or out of the parked gauge. */
static void set_parked(idms_conn *c, int park)
{
    idms_metrics *m = c->net->metrics;
    if (c->park != IDMS_PARK_NONE)
        m->parked--;
    if (park != IDMS_PARK_NONE)
        m->parked++;
    else
        idms_waiter_remove(&c->waiter);
    c->park = park;
}

static void unlink_conn(idms_conn *c)
{
    idms_net *s = c->net;
    if (c->prev)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
}

static void tls_goodbye(idms_conn *c);
static void tls_release(idms_conn *c);

static void conn_close(idms_conn *c)
{
    if (c->closing)
        return;
    if (c->tls != NULL && !c->lingering)
        tls_goodbye(c);
    tls_release(c);
    c->closing = true;
    c->net->metrics->connections_open--;
    c->listener->conns_open--;
    if (c->over_limit)
        c->listener->probes_open--;
    set_parked(c, IDMS_PARK_NONE);
    unlink_conn(c);
    turn_remove(c);
    uv_timer_stop(&c->idle);
    uv_timer_stop(&c->park_timer);
    uv_timer_stop(&c->deadline);
    close_handles(c);
}

static uint32_t idle_timeout_ms(const idms_conn *c)
{
    return c->listener->idle_timeout_ms;
}

/* The idle timer's verdict waits for the next poll: when the loop has been
 * stopped longer than the timeout (SIGSTOP, a paused VM), libuv runs the
 * due timers before it reads what arrived meanwhile (epoll_wait returns
 * EINTR after SIGCONT). take_turn then closes only a connection that
 * nothing moved on. */
static void on_idle(uv_timer_t *t)
{
    idms_conn *c = t->data;
    c->idle_due = true;
    c->idle_wq = uv_stream_get_write_queue_size(&c->sock.stream);
    turn_push(c);
}

/* Restarts the idle timer: input was read or output written. A parked
 * request is not idleness: its timer stays off until it resumes. */
static void touch(idms_conn *c)
{
    c->idle_due = false;
    if (c->closing || c->lingering)
        return;
    if (c->park != IDMS_PARK_NONE) {
        uv_timer_stop(&c->idle);
        return;
    }
    uint32_t ms = idle_timeout_ms(c);
    if (ms > 0)
        uv_timer_start(&c->idle, on_idle, ms, 0);
}

/* Bytes the kernel holds for us to read (FIONREAD), 0 if unknown. */
static int unread_bytes(idms_conn *c)
{
    uv_os_fd_t fd;
    int n = 0;
    if (uv_fileno(&c->sock.handle, &fd) != 0 || ioctl(fd, FIONREAD, &n) != 0)
        return 0;
    return n;
}

/* After the idle timer fired and a poll ran: whether the connection is
 * idle indeed. Not with requests buffered or parked, not with input
 * waiting in the socket (unless replies are stuck: a client that sends but
 * does not read is idle), not with replies that went out meanwhile. */
static bool still_idle(idms_conn *c)
{
    if (c->turn_more || c->turn_park || c->park != IDMS_PARK_NONE || c->turn_tls || c->tls_waiting)
        return false;
    if (c->writes_pending > 0)
        return uv_stream_get_write_queue_size(&c->sock.stream) >= c->idle_wq;
    return unread_bytes(c) == 0;
}

/* Room for the next input (a read, or plaintext from the TLS session):
 * the shared buffer when nothing is left over, else after what is. */
static uv_buf_t input_room(idms_conn *c)
{
    if (c->in_len == 0) {
        /* Nothing left over: into the shared buffer, at most a quarter of
         * the share. */
        drop_empty_in(c);
        size_t n = idms_conn_share(c) / 4;
        if (n > sizeof shared_in)
            n = sizeof shared_in;
        c->in = shared_in;
        c->in_cap = n;
        c->in_shared = true;
        return uv_buf_init(shared_in, (unsigned)n);
    }
    size_t max = c->proto->max_request;
    if (!c->in_shared && c->in_len < max && max <= sizeof shared_in) {
        /* An incomplete request is left: it moves into the shared buffer
         * and the read lands after it, up to the protocol's largest
         * request; keep_rest then keeps what is left, of just that size.
         * (Grown in place, its buffer would keep the room.) */
        memcpy(shared_in, c->in, c->in_len);
        free(c->in);
        set_in(c, NULL, 0);
        c->in = shared_in;
        c->in_cap = max;
        c->in_shared = true;
    }
    if (c->in_shared)
        return uv_buf_init(c->in + c->in_len, (unsigned)(c->in_cap - c->in_len));
    /* Otherwise (a leftover of the protocol's largest request or more:
     * complete requests waiting behind a park or a full batch): after it,
     * in its own buffer, grown up to the largest request when the room
     * left is small. */
    if (c->in_cap - c->in_len < READ_CHUNK / 4 && c->in_len < max) {
        size_t want = c->in_len + READ_CHUNK;
        if (want > max)
            want = max;
        if (want > c->in_cap) {
            char *p = realloc(c->in, want);
            if (p != NULL) {
                c->in = NULL; /* moved: set_in takes the new one */
                set_in(c, p, want);
            }
        }
    }
    /* A full buffer yields a zero-length buffer: libuv reports UV_ENOBUFS. */
    return uv_buf_init(c->in + c->in_len, (unsigned)(c->in_cap - c->in_len));
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    idms_conn *c = h->data;
    if (c->lingering) {
        /* Read to be discarded. */
        *buf = uv_buf_init(shared_in, sizeof shared_in);
        return;
    }
    *buf = input_room(c);
}

static void close_after_reply(idms_conn *c)
{
    if (c->writes_pending == 0)
        linger(c);
}

static void on_written(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    idms_conn *c = w->c;
    c->out_queued -= w->len;
    c->net->buffered_out -= w->len;
    free(w->data);
    free(w);
    c->writes_pending--;
    if (c->closing || c->lingering)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (c->close_after_write) {
        close_after_reply(c);
        return;
    }
    touch(c); /* a client reading its replies is not idle */
    read_again(c);
}

/* Sends out's bytes, and empties it (its memory stays the caller's): at
 * once when the socket takes them all (no write request, no allocation,
 * and no epoll_ctl that a completed uv_write costs libuv 1.44), else a
 * copy of the rest, of just that size, through uv_write. (Handing out's
 * own memory to the write would spare the copy, but every step would then
 * render into fresh memory: page faults, which cost more than the copy -
 * a fifth of the loop's time under a flood on this virtual machine.) */
static void send_wire(idms_conn *c, idms_buf *out)
{
    if (out->len == 0)
        return;
    size_t sent = 0;
    if (c->writes_pending == 0) {
        uv_buf_t all = uv_buf_init(out->data, (unsigned)out->len);
        int n = uv_try_write(&c->sock.stream, &all, 1);
        if (n > 0)
            sent = (size_t)n;
        if (sent == out->len) {
            out->len = 0;
            return;
        }
    }
    write_req *w = malloc(sizeof *w);
    char *rest = malloc(out->len - sent);
    if (w == NULL || rest == NULL) {
        free(w);
        free(rest);
        conn_close(c);
        return;
    }
    w->c = c;
    w->data = rest;
    w->len = out->len - sent;
    memcpy(rest, out->data + sent, w->len);
    out->len = 0;
    uv_buf_t b = uv_buf_init(rest, (unsigned)w->len);
    if (uv_write(&w->req, &c->sock.stream, &b, 1, on_written) != 0) {
        free(w->data);
        free(w);
        conn_close(c);
        return;
    }
    c->writes_pending++;
    c->out_queued += w->len;
    c->net->buffered_out += w->len;
    note_buffered(c->net);
}

/* Sends a reply: as it is, or encrypted by the connection's TLS session. */
static void send_buf(idms_conn *c, idms_buf *out)
{
    if (c->tls == NULL || out->len == 0) {
        send_wire(c, out);
        return;
    }
    idms_buf wire;
    idms_buf_init(&wire);
    int rc = idms_tls_write(c->tls, out->data, out->len, &wire);
    tls_count(c);
    out->len = 0;
    if (rc != 0)
        conn_close(c); /* before the handshake: a client refused at the limit */
    else
        send_wire(c, &wire);
    idms_buf_free(&wire);
}

/* Sends a reply that ends the connection (an error the protocol gives
 * before closing); the close lingers once it is written. */
static void send_last(idms_conn *c, idms_buf *out)
{
    c->close_after_write = true;
    uv_read_stop(&c->sock.stream);
    c->reading = false;
    send_buf(c, out);
    if (!c->closing)
        close_after_reply(c);
}

static void on_linger_end(uv_timer_t *t)
{
    conn_close(t->data);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    idms_conn *c = req->data;
    if (status < 0 && !c->closing)
        conn_close(c);
}

/* The last reply is written: the write side is shut down (the client reads
 * EOF after it), and whatever the client still sends is read and dropped
 * until it closes, for at most LINGER_MS. Closing at once with unread
 * input would make the kernel send a reset, and a client still sending
 * (the rest of a 1 MB request line) could then lose the reply. */
static void linger(idms_conn *c)
{
    if (c->closing || c->lingering)
        return;
    c->shutdown.data = c;
    if (c->tls != NULL)
        tls_goodbye(c); /* close_notify, before the FIN */
    if (c->no_linger || uv_shutdown(&c->shutdown, &c->sock.stream, on_shutdown) != 0) {
        conn_close(c);
        return;
    }
    c->lingering = true;
    set_parked(c, IDMS_PARK_NONE);
    turn_remove(c);
    uv_timer_stop(&c->idle);
    uv_timer_stop(&c->park_timer);
    uv_timer_start(&c->deadline, on_linger_end, LINGER_MS, 0);
    uv_read_stop(&c->sock.stream);
    c->reading = true;
    if (uv_read_start(&c->sock.stream, on_alloc, on_read_linger) != 0)
        conn_close(c);
}

/* Reads again, unless replies wait for the reader or a request is parked. */
static void read_again(idms_conn *c)
{
    if (!c->closing && !c->lingering && !c->reading && !c->close_after_write &&
        c->park == IDMS_PARK_NONE && !full(c))
        idms_conn_resume(c);
}

static void on_deadline(uv_timer_t *t);

/* A request begun in the buffer and not complete yet (or a body being
 * skipped) must be complete within --header-timeout of its first byte;
 * restart: the one before was just answered, so the request at the head
 * is a new one. */
static void watch_request(idms_conn *c, bool restart)
{
    uint32_t ms = c->net->opt->header_timeout_ms;
    if (c->over_limit) /* bounded from its accept, idle or not */
        return;
    if ((c->in_len == 0 && c->skip_body == 0) || ms == 0) {
        uv_timer_stop(&c->deadline);
        return;
    }
    if (restart || !uv_is_active((uv_handle_t *)&c->deadline))
        uv_timer_start(&c->deadline, on_deadline, ms, 0);
}

static void refuse_over_limit(idms_conn *c);

static void on_deadline(uv_timer_t *t)
{
    idms_conn *c = t->data;
    if (c->closing || c->lingering || c->close_after_write)
        return;
    if (c->over_limit) {
        /* No probe within IDMS_PROBE_MS of the accept. */
        refuse_over_limit(c);
        return;
    }
    if (!c->reading && (c->tls == NULL || idms_tls_established(c->tls))) {
        /* Not read because of us (replies wait for the reader, a park, a
         * full batch): the client cannot be late. Look again later. (A
         * handshake, waiting for a slot or about to start with one, is
         * timed all the same: the wait is bounded.) */
        watch_request(c, true);
        return;
    }
    idms_net *s = c->net;
    s->metrics->request_timeouts[c->listener->slot]++;
    idms_log(IDMS_LOG_DEBUG, "%s request not complete within %" PRIu32 " ms: closing",
             c->proto->name, s->opt->header_timeout_ms);
    idms_buf out;
    idms_buf_init(&out);
    /* A body being skipped comes after its reply: nothing more to say. */
    if (c->skip_body == 0)
        c->proto->too_slow(&out, s->opt->header_timeout_ms);
    send_last(c, &out);
    idms_buf_free(&out);
}

/* The park ends (its time came, its key changed): the request goes on now
 * (now, from its turn), or in the next turn. Only a fresh request goes on
 * at once, within the budget; a continuing one waits for the turn, behind
 * the fresh ones: the many parks of a flood of snowflake pipelines end
 * together as the millisecond turns, and would otherwise take the new
 * millisecond's sequence before a client asking for one ID got any. */
static void unpark(idms_conn *c, bool now)
{
    if (c->closing || c->lingering)
        return;
    if (full(c)) {
        /* A reply in parts whose last part is still unread: no more until
         * it is written (on_written resumes the request). */
        set_parked(c, IDMS_PARK_NONE);
        return;
    }
    if (!now && (over_budget(c->net) || !c->fresh)) {
        c->turn_park = true; /* still parked: take_turn unparks it */
        turn_push(c);
        return;
    }
    process_timed(c);
    if (!c->closing && c->park == IDMS_PARK_NONE) {
        touch(c);
        read_again(c);
    }
}

static void on_park_timer(uv_timer_t *t)
{
    unpark(t->data, false);
}

/* Its key changed (the ceiling rose, the tag got a range): waitlist.h. */
static void on_key_woken(idms_waiter *w)
{
    unpark((idms_conn *)((char *)w - offsetof(idms_conn, waiter)), false);
}

static void take_turn(idms_conn *c)
{
    if (c->closing || c->lingering)
        return;
    if (c->idle_due) {
        c->idle_due = false;
        if (still_idle(c)) {
            idms_log(IDMS_LOG_DEBUG, "closing an idle %s connection", c->proto->name);
            conn_close(c);
            return;
        }
        touch(c);
    }
    if (c->turn_tls) {
        c->turn_tls = false;
        tls_start(c);
        return;
    }
    if (c->turn_park) {
        c->turn_park = false;
        if (c->park != IDMS_PARK_NONE)
            unpark(c, true);
        return;
    }
    if (c->turn_more) {
        c->turn_more = false;
        read_again(c);
    }
}

/* The adapter left a parked request at the head of the buffer: read no
 * more (the request's successors wait behind it; a full buffer is the
 * client's backpressure), let no idle timer fire, and resume when the time
 * comes (IDMS_PARK_TIME: a timer of its own) or when its key changes
 * (IDMS_PARK_CEILING, IDMS_PARK_SEGMENT: on the key's list, park_on). */
static void park(idms_conn *c)
{
    uv_read_stop(&c->sock.stream);
    c->reading = false;
    uv_timer_stop(&c->idle);
    uv_timer_stop(&c->deadline);
    if (c->park != IDMS_PARK_TIME) {
        idms_waitq_add(c->park_on, &c->waiter);
        return;
    }
    idm_clock clock = idm_clock_system();
    int64_t now_ns = 0;
    if (clock.now_ns(clock.ctx, &now_ns) != IDM_OK)
        now_ns = c->park_until_ns;
    /* Timers run on the monotonic clock in whole ms from the loop's cached
     * time, the wait is on the wall clock to the ns. Rounding up would lose
     * most of a millisecond per used-up 1 ms unit (a quarter of the
     * layout's ceiling, measured), so: the loop's time refreshed, whole ms
     * rounded down, and a wait under 1 ms looks again on the next loop turn
     * (other connections are served in between). A clock that has not moved
     * since the last look (frozen) is looked at every ms instead of in a
     * spin; at most PARK_MAX_MS passes before looking again (a clock
     * stepped meanwhile is then noticed soon). */
    int64_t wait_ns = c->park_until_ns - now_ns;
    uint64_t ms = wait_ns <= 0 ? 0 : (uint64_t)(wait_ns / 1000000);
    if (now_ns == c->park_clock_ns && ms == 0)
        ms = 1;
    c->park_clock_ns = now_ns;
    if (ms == 0) {
        c->turn_park = true;
        turn_push(c);
        return;
    }
    if (ms > PARK_MAX_MS)
        ms = PARK_MAX_MS;
    uv_update_time(c->net->loop);
    uv_timer_start(&c->park_timer, on_park_timer, ms, 0);
}

void idms_conn_wake_ceiling(idms_net *s)
{
    idms_waitq_wake(&s->ceiling_waiters);
}

/* A connection over the limit: the protocol's refusal, and the close. */
static void refuse_over_limit(idms_conn *c)
{
    idms_net *s = c->net;
    const idms_listener *l = c->listener;
    s->metrics->connections_rejected++;
    int reason = s->draining ? IDMS_REFUSED_DRAINING : IDMS_REFUSED_LIMIT;
    uint64_t *n = &s->metrics->refused[l->slot][reason];
    (*n)++;
    if (!s->draining && log_due(s, &s->conn_refusal_logged_s))
        idms_log(IDMS_LOG_WARN,
                 "refusing %s connections: %" PRIu64 " open, the limit per port (%" PRIu64
                 " refused so far)",
                 l->proto->name, l->conns_open - 1, *n);
    idms_buf out;
    idms_buf_init(&out);
    idms_buf_puts(&out, c->proto->too_many);
    /* Closed as soon as the reply is written: a flood of refusals must
     * not hold descriptors for a lingering close. */
    c->no_linger = true;
    send_last(c, &out);
    idms_buf_free(&out);
}

/* The buffer a step renders into: the loop's, whose memory is kept from
 * step to step; own for a step that would run inside another (were a
 * service ever to wake parked requests synchronously while serving one,
 * which none does). */
static idms_buf *step_out_take(idms_net *s, idms_buf *own)
{
    idms_buf_init(own);
    if (s->step_out_busy)
        return own;
    s->step_out_busy = true;
    s->step_out.len = 0;
    return &s->step_out;
}

/* After the step: its buffer emptied, the loop's given back when the step
 * made it larger than STEP_OUT_KEEP (a reply that stays whole, a large
 * /metrics) or it failed. */
static void step_out_done(idms_net *s, idms_buf *out)
{
    if (out != &s->step_out) {
        idms_buf_free(out);
        return;
    }
    if (out->cap > STEP_OUT_KEEP || out->failed)
        idms_buf_free(out);
    out->len = 0;
    s->step_out_busy = false;
}

static void process(idms_conn *c)
{
    /* Over the limit: only a health probe is answered (the adapter then
     * closes, as over_limit forbids keep-alive). */
    if (c->over_limit && c->skip_body == 0) {
        int p = c->proto->probe(c->in, c->in_len);
        if (p < 0)
            return;
        if (p == 0) {
            refuse_over_limit(c);
            return;
        }
    }
    /* Discard a request body the adapter skips. */
    if (c->skip_body > 0) {
        size_t n = c->skip_body < c->in_len ? (size_t)c->skip_body : c->in_len;
        memmove(c->in, c->in + n, c->in_len - n);
        c->in_len -= n;
        c->skip_body -= n;
        c->parsed_len = 0;
        if (c->skip_body > 0)
            return;
    }
    /* An HTTP head ends with a line feed: until one arrives after the bytes
     * already found incomplete (or another REPARSE_BYTES, so that limits
     * are still noticed), parsing again would only repeat itself, and a
     * client trickling bytes would cost a full parse per byte. RESP
     * multibulk frames are length-prefixed and cheap to re-parse. */
    if (c->proto->head_ends_in_lf && !c->body_wait && c->parsed_len > 0 &&
        c->parsed_len < c->in_len && c->in_len - c->parsed_len < REPARSE_BYTES &&
        memchr(c->in + c->parsed_len, '\n', c->in_len - c->parsed_len) == NULL)
        return;
    /* send_wire copies what the socket does not take of it. */
    idms_net *s = c->net;
    idms_buf own;
    idms_buf *out = step_out_take(s, &own);
    c->more = false;
    c->body_wait = false;
    /* A parked request is offered again from here, at the head of the
     * buffer: the adapter goes on from what it kept of it (not parsing it
     * again) and the service continues its job. */
    set_parked(c, IDMS_PARK_NONE);
    ptrdiff_t used = c->proto->feed(c, c->in, c->in_len, out);
    int parked = c->park; /* set by the mint service */
    c->park = IDMS_PARK_NONE;
    set_parked(c, parked);
    /* The step has been served, unless it parked before rendering
     * anything: then the request has had nothing yet, and its next step
     * is fresh still. */
    c->fresh = c->fresh && parked != IDMS_PARK_NONE && out->len == 0;
    c->caught_up = false;
    if (out->failed) {
        step_out_done(s, out);
        conn_close(c);
        return;
    }
    if (used < 0) {
        c->close_after_write = true;
        used = (ptrdiff_t)c->in_len;
    }
    memmove(c->in, c->in + used, c->in_len - (size_t)used);
    c->in_len -= (size_t)used;
    c->parsed_len = c->in_len; /* what is left is an incomplete request */
    if (c->close_after_write) {
        send_last(c, out);
        step_out_done(s, out);
        return;
    }
    send_buf(c, out);
    step_out_done(s, out);
    if (c->closing)
        return;
    if (c->park != IDMS_PARK_NONE) {
        park(c);
        return;
    }
    /* Every complete request answered (what is left is an incomplete one,
     * if anything), though the replies may wait for the reader. */
    c->caught_up = !c->more;
    if (c->more || full(c)) {
        /* Replies wait for the reader (or the adapter stopped at its batch
         * with requests left, or a reply goes out in parts): read no more
         * until they are written; on_written resumes, and resuming
         * processes what is buffered. A batch the socket took at once
         * resumes on the next loop turn, after the others have had theirs. */
        uv_read_stop(&c->sock.stream);
        c->reading = false;
        uv_timer_stop(&c->deadline);
        if (c->more && c->writes_pending == 0) {
            c->more = false;
            c->turn_more = true;
            turn_push(c);
        }
        return;
    }
    drop_empty_in(c);
    watch_request(c, used > 0);
}

/* The request does not fit the buffer: answer as the protocol would for
 * an oversized request, and close. */
static void too_large(idms_conn *c)
{
    c->net->metrics->protocol_errors++;
    idms_buf out;
    idms_buf_init(&out);
    idms_buf_puts(&out, c->proto->too_large);
    send_last(c, &out);
    idms_buf_free(&out);
}

/* n bytes were added to the input buffer: answered now, or in the next
 * turn when this one's budget is spent; what is left moves out of the
 * shared buffer. */
static void take_input(idms_conn *c, size_t n)
{
    c->in_len += n;
    touch(c);
    if (c->caught_up)
        c->fresh = true;
    if (over_budget(c->net)) {
        uv_read_stop(&c->sock.stream);
        c->reading = false;
        c->turn_more = true;
        turn_push(c);
    } else {
        process_timed(c);
    }
    keep_rest(c);
}

static void tls_input(idms_conn *c, size_t nread);

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    idms_conn *c = stream->data;
    if (nread == UV_ENOBUFS) {
        too_large(c);
        return;
    }
    if (nread <= 0) {
        keep_rest(c);
        if (nread < 0)
            conn_close(c);
        return;
    }
    if (c->tls != NULL)
        tls_input(c, (size_t)nread);
    else
        take_input(c, (size_t)nread);
}

/* Counts what the connection's TLS session holds anew, after a call that
 * may have changed it. */
static void tls_count(idms_conn *c)
{
    idms_net *s = c->net;
    size_t now = idms_tls_held(c->tls);
    s->buffered_tls = s->buffered_tls - c->tls_held + now;
    c->tls_held = now;
    note_buffered(s);
}

/* The session's first record is complete: its handshake starts now with a
 * free slot, or waits for one (not read meanwhile; its deadline runs on). */
static void tls_begin(idms_conn *c)
{
    idms_net *s = c->net;
    if (s->tls_handshakes_open < s->tls_handshake_max) {
        s->tls_handshakes_open++;
        c->tls_slot = true;
        tls_start(c);
        return;
    }
    uv_read_stop(&c->sock.stream);
    c->reading = false;
    c->tls_waiting = true;
    queue_push(&s->hs_queue, c, HS_LINK);
    s->tls_handshakes_waiting++;
    uint64_t n = ++s->metrics->tls_handshake_waits;
    if (log_due(s, &s->tls_wait_logged_s))
        idms_log(IDMS_LOG_WARN,
                 "TLS handshakes wait: %" PRIu64 " in progress, as many as --max-buffered "
                 "allows; %" PRIu64 " waiting (%" PRIu64 " waited so far)",
                 s->tls_handshakes_open, s->tls_handshakes_waiting, n);
}

/* Makes the session's SSL object (the connection holds a slot) and runs
 * the handshake as far as what was sent allows. */
static void tls_start(idms_conn *c)
{
    if (idms_tls_start(c->tls) != 0) {
        conn_close(c);
        return;
    }
    tls_count(c);
    if (c->reading)
        tls_deliver(c);
    else
        idms_conn_resume(c); /* it waited for the slot: reads again */
}

/* The connection's handshake is over (complete, failed, or the connection
 * closing), or it no longer waits for a slot: a slot it held goes to the
 * first connection waiting, whose handshake starts in its turn. */
static void tls_release(idms_conn *c)
{
    idms_net *s = c->net;
    if (c->tls_waiting) {
        queue_remove(&s->hs_queue, c, HS_LINK);
        c->tls_waiting = false;
        s->tls_handshakes_waiting--;
    }
    if (!c->tls_slot)
        return;
    c->tls_slot = false;
    s->tls_handshakes_open--;
    idms_conn *w = s->hs_queue.head;
    if (w == NULL)
        return;
    tls_release(w); /* out of the queue */
    w->tls_slot = true;
    s->tls_handshakes_open++;
    w->turn_tls = true;
    turn_push(w);
}

/* A failed handshake (or, later, a bad record): counted, logged at most
 * once a second, and the connection closed (the alert has gone out). */
static void tls_failed(idms_conn *c)
{
    idms_net *s = c->net;
    bool handshake = !idms_tls_established(c->tls);
    uint64_t *n = handshake ? &s->metrics->tls_handshake_failures : &s->metrics->protocol_errors;
    (*n)++;
    if (log_due(s, &s->tls_failure_logged_s))
        idms_log(IDMS_LOG_WARN, "TLS %s failed on the %s port: %s (%" PRIu64 " so far)",
                 handshake ? "handshake" : "session", c->proto->name, idms_tls_error(c->tls), *n);
    conn_close(c);
}

/* Plaintext from the TLS session into the input buffer's room, and out at
 * once what the session says meanwhile (handshake flights, alerts).
 * Returns the bytes added, 0 for none until more ciphertext comes, or -1
 * when the connection is done (closed, or a request too large for the
 * buffer is being refused). */
static ptrdiff_t tls_pull(idms_conn *c)
{
    idms_net *s = c->net;
    uv_buf_t room = input_room(c);
    bool established = idms_tls_established(c->tls);
    idms_buf wire;
    idms_buf_init(&wire);
    uint64_t t0 = uv_hrtime(); /* handshakes cost the turn's budget too */
    ptrdiff_t n = idms_tls_read(c->tls, room.base, room.len, &wire);
    s->turn_work_ns += uv_hrtime() - t0;
    tls_count(c);
    send_wire(c, &wire);
    idms_buf_free(&wire);
    if (!established && idms_tls_established(c->tls)) {
        s->metrics->tls_handshakes++;
        uv_timer_stop(&c->deadline); /* the handshake's; requests get their own */
        tls_release(c);
    }
    if (c->closing)
        return -1;
    if (n == IDMS_TLS_FAILED) {
        tls_failed(c);
        return -1;
    }
    if (n == IDMS_TLS_EOF) {
        conn_close(c); /* close_notify: as the end of a plain stream */
        return -1;
    }
    if (n == 0 && room.len == 0 && idms_tls_pending(c->tls)) {
        /* A full buffer and more to come, as UV_ENOBUFS without TLS. */
        too_large(c);
        return -1;
    }
    return n;
}

/* Moves the session's plaintext into the input buffer and answers it, for
 * as long as the connection reads (process stops reading when its replies
 * wait, at a park, at a full batch) and the turn's budget lasts; resuming
 * comes back here. */
static void tls_deliver(idms_conn *c)
{
    while (c->reading && !c->closing && !c->lingering && idms_tls_pending(c->tls)) {
        ptrdiff_t n = tls_pull(c);
        if (n <= 0)
            break;
        take_input(c, (size_t)n);
    }
    keep_rest(c);
}

/* nread bytes of ciphertext were read into the input buffer's room: the
 * session takes them, and its plaintext takes their place. */
static void tls_input(idms_conn *c, size_t nread)
{
    if (idms_tls_feed(c->tls, c->in + c->in_len, nread) != 0) {
        keep_rest(c);
        conn_close(c);
        return;
    }
    tls_count(c);
    touch(c); /* a handshake in progress is not idleness */
    if (!idms_tls_started(c->tls)) {
        keep_rest(c); /* the bytes are the session's now */
        if (idms_tls_ready(c->tls))
            tls_begin(c);
        return;
    }
    tls_deliver(c);
}

/* Our close_notify, when the socket takes it now (nothing else is queued:
 * a connection closed with writes pending, at the drain's deadline or on
 * an error, goes without). */
static void tls_goodbye(idms_conn *c)
{
    if (c->writes_pending > 0)
        return;
    idms_buf wire;
    idms_buf_init(&wire);
    idms_tls_shutdown(c->tls, &wire);
    if (wire.len > 0) {
        uv_buf_t b = uv_buf_init(wire.data, (unsigned)wire.len);
        (void)uv_try_write(&c->sock.stream, &b, 1);
    }
    idms_buf_free(&wire);
}

/* A lingering connection's reads: dropped; its client's close ends it. */
static void on_read_linger(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    if (nread < 0)
        conn_close(stream->data);
}

void idms_conn_resume(idms_conn *c)
{
    if (c->closing || c->reading || c->lingering || c->tls_waiting)
        return;
    if (c->in_len > 0 && over_budget(c->net)) {
        c->turn_more = true;
        turn_push(c);
        return;
    }
    c->reading = true;
    uv_read_start(&c->sock.stream, on_alloc, on_read);
    if (c->in_len > 0)
        process_timed(c);
    if (c->tls != NULL)
        tls_deliver(c); /* what the session held back while not reading */
}

static void on_connection(uv_stream_t *server, int status)
{
    idms_listener *l = server->data;
    idms_net *s = l->net;
    if (status < 0) {
        /* Out of file descriptors, say (main.c keeps --max-connections
         * under RLIMIT_NOFILE so that this should not happen). */
        uint64_t *n = &s->metrics->refused[l->slot][IDMS_REFUSED_ACCEPT];
        (*n)++;
        if (log_due(s, &s->accept_error_logged_s))
            idms_log(IDMS_LOG_WARN, "cannot accept %s connections: %s (%" PRIu64 " failed so far)",
                     l->proto->name, uv_strerror(status), *n);
        return;
    }
    idms_conn *c = calloc(1, sizeof *c + l->proto->session_size);
    if (c == NULL)
        return;
    s->buffered_conns += sizeof *c + l->proto->session_size;
    c->net = s;
    c->proto = l->proto;
    c->listener = l;
    if (l->is_unix)
        uv_pipe_init(s->loop, &c->sock.pipe, 0);
    else
        uv_tcp_init(s->loop, &c->sock.tcp);
    uv_timer_init(s->loop, &c->idle);
    uv_timer_init(s->loop, &c->park_timer);
    uv_timer_init(s->loop, &c->deadline);
    c->sock.handle.data = c;
    c->idle.data = c;
    c->park_timer.data = c;
    c->deadline.data = c;
    c->caught_up = true; /* its first request is a fresh one */
    idms_waiter_init(&c->waiter, on_key_woken);
    c->handles_open = CONN_HANDLES;
    if (s->tls_ctx != NULL)
        c->tls = idms_tls_new(s->tls_ctx);
    if (uv_accept(server, &c->sock.stream) != 0 || (s->tls_ctx != NULL && c->tls == NULL)) {
        c->closing = true;
        close_handles(c);
        return;
    }
    if (!l->is_unix)
        uv_tcp_nodelay(&c->sock.tcp, 1);
    s->metrics->connections_total++;
    s->metrics->connections_open++;
    l->conns_open++;
    l->conns_accepted++;
    c->next = s->conns;
    if (s->conns)
        s->conns->prev = c;
    s->conns = c;
    if (l->conns_open > s->max_conns || s->draining) {
        /* Each port counts its own: a flood on one does not lock out the
         * other. The refused client gets the protocol's error reply; a few
         * are read first, for a health probe to be answered. */
        if (s->draining || l->proto->probe == NULL || l->probes_open >= IDMS_PROBE_CONNS) {
            refuse_over_limit(c);
            return;
        }
        c->over_limit = true;
        l->probes_open++;
        touch(c);
        uv_timer_start(&c->deadline, on_deadline, IDMS_PROBE_MS, 0);
        idms_conn_resume(c);
        return;
    }
    touch(c);
    /* A handshake must be complete within the header timeout too (the
     * first plaintext request then restarts it: watch_request). */
    if (c->tls != NULL && s->opt->header_timeout_ms > 0)
        uv_timer_start(&c->deadline, on_deadline, s->opt->header_timeout_ms, 0);
    idms_conn_resume(c);
}
/* ADDR:PORT, with [v6]:PORT for IPv6. */
static int parse_addr(const char *text, struct sockaddr_storage *sa)
{
    char msg[IDMX_OPT_MSG_CAP];
    return idmx_parse_listen("listen address", text, sa, msg, sizeof msg) == IDMX_LISTEN_INET
               ? 0
               : UV_EINVAL;
}

/* A Unix socket path left by a server that is gone is removed; one that a
 * server answers on, or a file that is not a socket, is not. */
static int clear_stale_socket(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISSOCK(st.st_mode)) {
        idms_log(IDMS_LOG_ERROR, "cannot listen on unix:%s: the path exists and is not a socket",
                 path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_un sun = {0};
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
    int rc = connect(fd, (struct sockaddr *)&sun, sizeof sun);
    close(fd);
    if (rc == 0) {
        idms_log(IDMS_LOG_ERROR, "cannot listen on unix:%s: another server answers there", path);
        return -1;
    }
    unlink(path);
    return 0;
}

/* unix:PATH: the socket is made with mode 0660 (owner and group: a
 * sidecar in the server's group), by the umask around bind, so that there
 * is no moment with wider permissions. */
static int listen_unix(idms_net *s, idms_listener *l, const char *path)
{
    if (path[0] == '\0' || strlen(path) >= sizeof l->path) {
        fprintf(stderr, "idmintd: invalid %s listen address 'unix:%s' (a path of 1 to %zu bytes)\n",
                l->proto->name, path, sizeof l->path - 1);
        return -1;
    }
    if (clear_stale_socket(path) != 0)
        return -1;
    uv_pipe_init(s->loop, &l->sock.pipe, 0);
    l->sock.handle.data = l;
    l->open = true;
    l->is_unix = true;
    mode_t old = umask(0117);
    int rc = uv_pipe_bind(&l->sock.pipe, path);
    umask(old);
    if (rc == 0) {
        snprintf(l->path, sizeof l->path, "%s", path);
        if (chmod(path, 0660) != 0)
            rc = uv_translate_sys_error(errno);
    }
    if (rc == 0)
        rc = uv_listen(&l->sock.stream, 1024, on_connection);
    if (rc != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot listen on unix:%s for %s: %s", path, l->proto->name,
                 uv_strerror(rc));
        return -1;
    }
    idms_log(IDMS_LOG_INFO, "listening for %s on unix:%s", l->proto->name, path);
    return 0;
}

/* A listening socket systemd passed (main.c found it by name): opened as
 * it is; it stays systemd's to bind and unlink. */
static int listen_passed(idms_net *s, idms_listener *l)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int rc = getsockname(l->sd_fd, (struct sockaddr *)&ss, &sl) == 0 ? 0 : UV_EBADF;
    if (rc == 0 && ss.ss_family == AF_UNIX) {
        uv_pipe_init(s->loop, &l->sock.pipe, 0);
        l->is_unix = true;
        rc = uv_pipe_open(&l->sock.pipe, l->sd_fd);
    } else if (rc == 0) {
        uv_tcp_init(s->loop, &l->sock.tcp);
        rc = uv_tcp_open(&l->sock.tcp, l->sd_fd);
    }
    if (rc == 0) {
        l->sock.handle.data = l;
        l->open = true;
        rc = uv_listen(&l->sock.stream, 1024, on_connection);
    }
    if (rc != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot listen on %s (passed by systemd) for %s: %s", l->addr,
                 l->proto->name, uv_strerror(rc));
        return -1;
    }
    idms_log(IDMS_LOG_INFO, "listening for %s on %s (a socket systemd passed)", l->proto->name,
             l->addr);
    return 0;
}

int idms_conn_listen(idms_net *s, idms_listener *l)
{
    const idms_proto *proto = l->proto;
    const char *addr = l->addr;
    l->net = s;
    if (l->sd_fd >= 0)
        return listen_passed(s, l);
    if (strncmp(addr, "unix:", 5) == 0)
        return listen_unix(s, l, addr + 5);
    struct sockaddr_storage sa;
    int rc = parse_addr(addr, &sa);
    if (rc != 0) {
        fprintf(stderr,
                "idmintd: invalid %s listen address '%s' (expected ADDR:PORT or unix:PATH)\n",
                proto->name, addr);
        return -1;
    }
    uv_tcp_init(s->loop, &l->sock.tcp);
    l->sock.handle.data = l;
    l->open = true;
    rc = uv_tcp_bind(&l->sock.tcp, (const struct sockaddr *)&sa, 0);
    if (rc == 0)
        rc = uv_listen(&l->sock.stream, 1024, on_connection);
    if (rc != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot listen on %s for %s: %s", addr, proto->name,
                 uv_strerror(rc));
        return -1;
    }
    idms_log(IDMS_LOG_INFO, "listening for %s on %s", proto->name, addr);
    return 0;
}

void idms_conn_close_listeners(idms_net *s)
{
    for (int i = 0; i < IDMS_PROTO_MAX; i++) {
        idms_listener *l = &s->listeners[i];
        if (l->open) {
            l->open = false;
            uv_close(&l->sock.handle, NULL);
            if (l->path[0] != '\0')
                unlink(l->path);
            l->path[0] = '\0';
        }
    }
}

bool idms_conn_close_after(idms_conn *c, bool close,
                           bool (*another)(idms_conn *c, const char *rest, size_t len),
                           const char *rest, size_t len)
{
    if (close || (c->net->draining && !another(c, rest, len))) {
        c->close_after_write = true;
        return true;
    }
    return false;
}

void idms_conn_close_idle(idms_net *s)
{
    /* Connections with requests buffered (complete, parked or
     * half-received) answer them: the adapters close after the last one
     * (HTTP with Connection: close). Those with only replies in flight
     * close once they are written; idle ones close now. */
    idms_conn *next;
    for (idms_conn *c = s->conns; c != NULL; c = next) {
        next = c->next;
        if (c->in_len > 0 || c->skip_body > 0 || c->lingering)
            continue;
        if (c->writes_pending == 0)
            conn_close(c);
        else
            c->close_after_write = true;
    }
}

void idms_conn_close_all(idms_net *s)
{
    /* Through conn_close, which closes a connection's handles once: a
     * write cancelled by the close then finds it closing. */
    while (s->conns != NULL)
        conn_close(s->conns);
}
