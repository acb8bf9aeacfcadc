/*
 * server/memcache/memcache_server.c - see memcache_server.h.
 *
 * The adapter parses with memcache_parser.c, mints through the mint
 * service (mint.h) one ID per key, and frames each as a memcached value
 * itself: the service hands it the ID's text, and nothing outside this
 * folder knows memcached's framing.
 */
#include "memcache/memcache_server.h"
#include "buf.h"
#include "conn.h"
#include "core/counters.h"
#include "formats.h"
#include "log.h"
#include "memcache/memcache_parser.h"
#include "mint.h"
#include "services.h"

#include <idmint/idmint.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Binary response statuses (the binary protocol's). */
enum {
    ST_OK = 0x0000,
    ST_INVALID = 0x0004,
    ST_UNKNOWN = 0x0081,
    ST_TEMPORARY = 0x0086,
};

/* A get that parked stays unconsumed at the head of the buffer until it
 * completes; what it needs to go on was parsed once, into this record
 * (its keys as offsets into its own bytes, which stay where they are),
 * and the resumed get goes on from it without being parsed again. */
typedef struct mc_held {
    uint32_t len; /* the request's bytes at the head of the buffer; 0: none held */
    int cmd;
    uint8_t opcode;
    uint32_t opaque;
    uint32_t nkeys;
    uint16_t key_off[IDMS_MC_MAX_KEYS];
    uint8_t key_len[IDMS_MC_MAX_KEYS];
} mc_held;
_Static_assert(IDMS_MC_MAX_REQUEST <= UINT16_MAX && IDMS_MC_KEY_MAX <= UINT8_MAX,
               "a held key's offset and length");

/* What a connection keeps between requests (idms_conn_session). */
typedef struct mc_session {
    bool decided; /* the first byte said which protocol */
    bool binary;
    /* The request at the head of the buffer parked: it was checked and
     * counted, and keys_done of its keys are answered (it resumes at the
     * next one). */
    bool started;
    uint32_t keys_done;
    mc_held held;
} mc_session;

/* Keeps q, whose bytes begin at start and are len long, as held. */
static void hold(mc_held *h, const idms_mc_request *q, const char *start, size_t len)
{
    h->len = (uint32_t)len;
    h->cmd = q->cmd;
    h->opcode = q->opcode;
    h->opaque = q->opaque;
    h->nkeys = (uint32_t)q->nkeys;
    for (size_t k = 0; k < q->nkeys; k++) {
        h->key_off[k] = (uint16_t)(q->keys[k].ptr - start);
        h->key_len[k] = (uint8_t)q->keys[k].len;
    }
}

/* The held request again, its bytes beginning at start (binary as the
 * connection's). */
static void unhold(const mc_held *h, bool binary, const char *start, idms_mc_request *q)
{
    q->cmd = h->cmd;
    q->binary = binary;
    q->opcode = h->opcode;
    q->opaque = h->opaque;
    q->nkeys = h->nkeys;
    for (size_t k = 0; k < h->nkeys; k++) {
        q->keys[k].ptr = start + h->key_off[k];
        q->keys[k].len = h->key_len[k];
    }
}

/* What VERSION and stats' version report: the memcached protocol level
 * served (doc/protocol.txt as of memcached 1.6), then idmint's own
 * version. Memcached clients read the leading numbers as the server's
 * version and libmemcached refuses a major version of 0 (idmint's own is
 * 0.x), so the protocol's comes first. */
#define MC_PROTOCOL_LEVEL "1.6.0"

static const char *version_text(void)
{
    static char text[64];
    if (text[0] == '\0')
        snprintf(text, sizeof text, MC_PROTOCOL_LEVEL "-idmint-%s", idm_version());
    return text;
}

/* The counters of stats (loop thread only). */
static uint64_t cmd_get, get_hits, get_misses;
/* The ID's text as the service renders it (one line), reused. */
static idms_buf id_text;

/* A request's outcome. */
enum { RUN_DONE, RUN_PARKED, RUN_CLOSE, RUN_CUT };

typedef struct key_format {
    const idmx_format *f;
    char prefix[IDMS_MC_KEY_MAX + 1]; /* after ':', NUL-terminated; "" for none */
    bool has_prefix;
} key_format;

/* The format key asks for: the format its name (or the part before ':')
 * names, with the rest as its prefix, else a snowflake. */
static void key_format_of(const idms_mc_token *key, key_format *kf)
{
    const char *colon = memchr(key->ptr, ':', key->len);
    size_t name_len = colon != NULL ? (size_t)(colon - key->ptr) : key->len;
    kf->f = idmx_format_by_name(key->ptr, name_len);
    kf->has_prefix = false;
    kf->prefix[0] = '\0';
    if (kf->f == NULL) {
        kf->f = &idmx_formats[IDMX_FMT_SNOWFLAKE];
        return;
    }
    if (colon != NULL) {
        size_t n = key->len - name_len - 1;
        memcpy(kf->prefix, colon + 1, n);
        kf->prefix[n] = '\0';
        kf->has_prefix = true;
    }
}

/* The prefix rule in the key's own terms (the service words it for
 * HTTP's ?prefix=): false with m's status 400 and the message. */
static bool key_ok(const key_format *kf, idms_mint_result *m)
{
    const char *name = kf->f->name;
    if (kf->f->prefix == IDMX_PREFIX_REQUIRED && (!kf->has_prefix || kf->prefix[0] == '\0'))
        snprintf(m->message, sizeof m->message, "%s needs a prefix: get %s:PREFIX", name, name);
    else if (kf->f->prefix == IDMX_PREFIX_NONE && kf->has_prefix)
        snprintf(m->message, sizeof m->message,
                 "%s takes no prefix (a key '%s:...' names %s; any other key is a snowflake)", name,
                 name, name);
    else
        return true;
    m->status = 400;
    return false;
}

static void bin_header(idms_buf *out, uint8_t opcode, uint16_t status, size_t key_len,
                       size_t extras, size_t body, uint32_t opaque)
{
    unsigned char h[IDMS_MC_HEADER] = {0};
    h[0] = IDMS_MC_BIN_RESPONSE;
    h[1] = opcode;
    h[2] = (unsigned char)(key_len >> 8);
    h[3] = (unsigned char)key_len;
    h[4] = (unsigned char)extras;
    h[6] = (unsigned char)(status >> 8);
    h[7] = (unsigned char)status;
    for (int i = 0; i < 4; i++) {
        h[8 + i] = (unsigned char)(body >> (24 - 8 * i));
        h[12 + i] = (unsigned char)(opaque >> (24 - 8 * i));
    }
    idms_buf_append(out, h, sizeof h);
}

/* A binary response with a text body (a version, an error's reason). */
static void bin_text(idms_buf *out, const idms_mc_request *q, uint16_t status, const char *text)
{
    size_t n = strlen(text);
    bin_header(out, q->opcode, status, 0, 0, n, q->opaque);
    idms_buf_append(out, text, n);
}

/* A refusal of the request: CLIENT_ERROR (400) or SERVER_ERROR (else).
 * Returns the status, for the metrics. */
static int refuse(idms_buf *out, const idms_mc_request *q, const idms_mint_result *m)
{
    int status = m->status == 400 ? 400 : 503;
    if (q->binary)
        bin_text(out, q, status == 400 ? ST_INVALID : ST_TEMPORARY, m->message);
    else
        idms_buf_printf(out, "%s %s\r\n", status == 400 ? "CLIENT_ERROR" : "SERVER_ERROR",
                        m->message);
    return status;
}

/* One value: key's ID, id[0..n). */
static void value(idms_buf *out, const idms_mc_request *q, size_t k, const char *id, size_t n)
{
    const idms_mc_token *key = &q->keys[k];
    if (q->binary) {
        size_t key_len = q->opcode == IDMS_MC_OP_GETK ? key->len : 0;
        static const unsigned char flags[4] = {0};
        bin_header(out, q->opcode, ST_OK, key_len, sizeof flags, sizeof flags + key_len + n,
                   q->opaque);
        idms_buf_append(out, flags, sizeof flags);
        idms_buf_append(out, key->ptr, key_len);
        idms_buf_append(out, id, n);
        return;
    }
    idms_buf_puts(out, "VALUE ");
    idms_buf_append(out, key->ptr, key->len);
    idms_buf_printf(out, " 0 %zu%s\r\n", n, q->cmd == IDMS_MC_GETS ? " 0" : "");
    idms_buf_append(out, id, n);
    idms_buf_puts(out, "\r\n");
}

static int run_get(idms_conn *c, mc_session *ss, const idms_mc_request *q, idms_buf *out,
                   int *status)
{
    idms_services *s = idms_conn_services(c);
    idms_mint_result m;
    key_format kf;
    if (!ss->started) {
        /* Every key's format and prefix first: a request is refused
         * whole, before any of it is minted. */
        cmd_get += q->nkeys;
        for (size_t k = 0; k < q->nkeys; k++) {
            key_format_of(&q->keys[k], &kf);
            if (!key_ok(&kf, &m) ||
                !idms_mint_check(s->mint, kf.f->id, kf.has_prefix ? kf.prefix : NULL, 1, &m)) {
                get_misses += q->nkeys;
                *status = refuse(out, q, &m);
                return RUN_DONE;
            }
        }
        ss->started = true;
    }
    idms_req rq = idms_conn_req(c);
    for (size_t k = ss->keys_done; k < q->nkeys; k++) {
        key_format_of(&q->keys[k], &kf);
        id_text.len = 0;
        idms_mint(&rq, kf.f->id, kf.has_prefix ? kf.prefix : NULL, 1, &idms_sink_lines, 0, &id_text,
                  &m);
        if (m.status == IDMS_MINT_PARKED) {
            idms_conn_park(c, &m.park);
            return RUN_PARKED;
        }
        if (m.status != 200 || id_text.failed || id_text.len < 2) {
            get_misses += q->nkeys - k;
            ss->started = false;
            ss->keys_done = 0;
            if (k > 0 || m.status == IDMS_MINT_CUT || id_text.failed) {
                /* Values went out (or a part would): the reply is cut
                 * short, never completed without them. */
                return RUN_CUT;
            }
            *status = refuse(out, q, &m);
            return RUN_DONE;
        }
        get_hits++;
        value(out, q, k, id_text.data, id_text.len - 1); /* less its line feed */
        ss->keys_done = (uint32_t)(k + 1);
    }
    ss->started = false;
    ss->keys_done = 0;
    if (!q->binary)
        idms_buf_puts(out, "END\r\n");
    return RUN_DONE;
}

static void run_stats(idms_conn *c, const idms_mc_request *q, idms_buf *out)
{
    if (q->nkeys > 0) {
        idms_buf_puts(out, "END\r\n"); /* a group idmintd does not keep */
        return;
    }
    const idms_services *s = idms_conn_services(c);
    const idms_listener *l = c->listener;
    int64_t now = (int64_t)time(NULL);
    int64_t uptime = now - s->start_ms / 1000;
    idms_buf_printf(out,
                    "STAT pid %d\r\n"
                    "STAT uptime %" PRId64 "\r\n"
                    "STAT time %" PRId64 "\r\n"
                    "STAT version %s\r\n"
                    "STAT curr_connections %" PRIu64 "\r\n"
                    "STAT total_connections %" PRIu64 "\r\n"
                    "STAT cmd_get %" PRIu64 "\r\n"
                    "STAT get_hits %" PRIu64 "\r\n"
                    "STAT get_misses %" PRIu64 "\r\n"
                    "END\r\n",
                    (int)getpid(), uptime > 0 ? uptime : 0, now, version_text(), l->conns_open,
                    l->conns_accepted, cmd_get, get_hits, get_misses);
}

/* Runs one request; RUN_*, with *status its class for the metrics. */
static int run(idms_conn *c, mc_session *ss, const idms_mc_request *q, idms_buf *out, int *status)
{
    *status = 200;
    switch (q->cmd) {
    case IDMS_MC_GET:
    case IDMS_MC_GETS:
        return run_get(c, ss, q, out, status);
    case IDMS_MC_STATS:
        run_stats(c, q, out);
        return RUN_DONE;
    case IDMS_MC_VERSION:
        if (q->binary)
            bin_text(out, q, ST_OK, version_text());
        else
            idms_buf_printf(out, "VERSION %s\r\n", version_text());
        return RUN_DONE;
    case IDMS_MC_NOOP:
        bin_header(out, q->opcode, ST_OK, 0, 0, 0, q->opaque);
        return RUN_DONE;
    case IDMS_MC_QUIT:
        if (q->binary)
            bin_header(out, q->opcode, ST_OK, 0, 0, 0, q->opaque);
        return RUN_CLOSE;
    default:
        *status = 400;
        if (q->binary)
            bin_text(out, q, ST_UNKNOWN, "Unknown command");
        else
            idms_buf_puts(out, "ERROR\r\n");
        return RUN_DONE;
    }
}

/* Whether buf[0..len) starts with another request (complete or not). */
static bool another_request(idms_conn *c, const char *buf, size_t len)
{
    const mc_session *ss = idms_conn_session(c);
    idms_mc_request q;
    return len > 0 && idms_mc_parse(buf, len, ss->binary, &q, NULL) != IDMS_MC_INCOMPLETE;
}

static ptrdiff_t mc_feed(idms_conn *c, const char *buf, size_t len, idms_buf *out)
{
    idms_services *s = idms_conn_services(c);
    mc_session *ss = idms_conn_session(c);
    if (!ss->decided && len > 0) {
        ss->decided = true;
        ss->binary = (unsigned char)buf[0] == IDMS_MC_BIN_REQUEST;
    }
    size_t used = 0;
    /* One request at a time: idms_mc_request is large (its keys). */
    idms_mc_request q;
    while (used < len) {
        if (out->len >= idms_conn_batch(c)) {
            c->more = true;
            break;
        }
        ptrdiff_t n;
        if (used == 0 && ss->held.len > 0) {
            /* A get held (it parked): still at the head of the buffer, it
             * goes on from its record. */
            n = (ptrdiff_t)ss->held.len;
            unhold(&ss->held, ss->binary, buf, &q);
        } else {
            const char *why = NULL;
            n = idms_mc_parse(buf + used, len - used, ss->binary, &q, &why);
            if (n == IDMS_MC_INCOMPLETE)
                break;
            if (n < 0) {
                s->metrics->protocol_errors++;
                idms_metrics_count_command(s->metrics, c->listener->slot, 400);
                if (!ss->binary)
                    idms_buf_printf(out, "%s\r\n", why);
                return -1;
            }
            if (q.cmd == IDMS_MC_EMPTY) {
                used += (size_t)n;
                continue;
            }
        }
        int status;
        int rc = run(c, ss, &q, out, &status);
        if (rc == RUN_PARKED) {
            /* Not consumed: held, and gone on with on resume. */
            hold(&ss->held, &q, buf + used, (size_t)n);
            break;
        }
        ss->held.len = 0;
        if (rc == RUN_CUT) {
            idms_metrics_count_command(s->metrics, c->listener->slot, 503);
            return -1;
        }
        used += (size_t)n;
        idms_metrics_count_command(s->metrics, c->listener->slot, status);
        if (idms_conn_close_after(c, rc == RUN_CLOSE, another_request, buf + used, len - used))
            return (ptrdiff_t)used;
    }
    return (ptrdiff_t)used;
}

/* A request not complete within --header-timeout of its first byte. */
static void mc_too_slow(idms_buf *out, uint32_t ms)
{
    idms_buf_printf(out, "CLIENT_ERROR request incomplete after %" PRIu32 " ms\r\n", ms);
}

const idms_proto idms_memcache_proto = {
    "memcache",
    mc_feed,
    "SERVER_ERROR too many open connections\r\n",
    "CLIENT_ERROR line too long\r\n",
    mc_too_slow,
    IDMS_MC_MAX_REQUEST,
    "a memcached command",
    sizeof(mc_session),
    true,  /* counts commands: route="memcache" */
    true,  /* no token in the protocol: local listeners only with one */
    NULL,  /* no probes over the limit: refused at once */
    false, /* binary requests need no line feed */
    NULL,  /* the session holds no allocation */
};
