/*
 * http_server.c - the HTTP/1.1 adapter: routes parsed requests to the mint
 * service, the inspector, health and metrics, and writes responses with
 * Content-Length (keep-alive and pipelining: every complete request in the
 * buffer is answered in order, in one write).
 *
 *   GET /v1/ids/{format}?count=N[&prefix=P][&after=ID]
 *                                             one ID per line, or a JSON
 *                                             array with Accept: application/json;
 *                                             after=ID: every ID sorts after ID
 *                                             (causal minting, mint.h): 400 when
 *                                             it does not parse, 422 when further
 *                                             ahead of the clock than --max-offset
 *   GET /v1/inspect/{id}[?layout=L&epoch=E&as=KIND]
 *                                             idmint inspect --json's object
 *   GET /api/snowflake/get/{key}              Meituan Leaf: the bare decimal ID
 *   GET /v1/node                              the snowflake node held (node.h)
 *   GET /v1/segment/{tag}?count=N             a segment tag's next IDs (segments.h):
 *                                             one per line, or a JSON array of strings
 *   GET /api/segment/get/{tag}                Leaf's segment mode: the bare decimal
 *   GET /tinyid/id/nextIdSimple?bizType=T&batchSize=N
 *                                             tinyid: comma-joined
 *   GET /tinyid/id/nextId?bizType=T&batchSize=N
 *                                             tinyid: {"data":[...],"code":200,"message":""}
 *   GET /v1/obfuscate/{id}[?prefix=P]        the ID's obfuscated form under --key-file
 *                                             (keyed.h), or {"id":..,"token":..} with
 *                                             Accept: application/json
 *   GET /v1/reveal/{token}                    the decimal ID a token stands for; 422
 *                                             for a forged one, 404 without --key-file
 *   GET /v1/hlc                               a new hybrid logical clock stamp (hlc.h):
 *                                             16 hex digits and "\n", or with Accept:
 *                                             application/json {"stamp", "wall_ms",
 *                                             "time", "logical"}
 *   POST /v1/hlc (body: a stamp)              merges it; answers a stamp after it as GET
 *                                             does (400 malformed, 413 a body over
 *                                             HLC_BODY_MAX bytes, 422 more than
 *                                             --max-offset ahead)
 *   GET /healthz, /readyz, /metrics
 *
 * With --auth-token-file every route but /healthz and /readyz needs
 * "Authorization: Bearer TOKEN" (auth.h; route_access is the table's
 * access column): without it the answer is 401 with a Bearer challenge
 * (RFC 6750 section 3), before the method, the route or its parameters
 * are looked at, so that a client without the token learns nothing else.
 * Only a CORS preflight from an origin --cors-origin lists comes before it
 * (cors_reply): browsers send it without credentials, and its 204 is the
 * same for every path.
 *
 * A route answers 400 for a query parameter it does not take, or one given
 * twice. Absolute-form targets ("GET http://host/v1/ids/ulid") are routed
 * by their path (RFC 9112 section 3.2.2), in which escapes of unreserved
 * characters are decoded first (idms_http_path_unreserved: "uuid%76%37"
 * is "uuidv7"; other escapes are the route's to decode, once). "Accept:
 * application/json" stands for whatever Accept ranks JSON first
 * (idms_http_accepts_json: q-values, application/STAR). The HTTP/2
 * connection preface is refused in HTTP/2's framing (h2_refusal). HEAD is answered like GET without
 * a body; on the minting routes it makes the checks a GET would make and
 * mints nothing (head_of_mint); on /v1/hlc it answers a GET's headers
 * without touching the clock. Other methods get 405, but for POST on
 * /v1/hlc: the only route that reads a request body (Content-Length only;
 * others' bodies are skipped).
 *
 * Client input never gets a 5xx other than the 501 and 505 the parser
 * gives for what RFC 9112 says to answer so (a transfer coding, or an HTTP
 * major version other than 1); 500 and 503 come from the mint service
 * (out of memory, the clock, the durable mark).
 */
#include "http/http_server.h"
#include "auth.h"
#include "buf.h"
#include "conn.h"
#include "core/counters.h"
#include "formats.h"
#include "hlc.h"
#include "keyed.h"
#include "mint.h"
#include "node.h"
#include "optparse.h"
#include "segments.h"
#include "services.h"
#include "status.h"

#include "hlc_render.h"
#include "http/http_parser.h"
#include "inspect_render.h"
#include "json.h"
#include "optvalue.h"
#include "outbuf.h"
#include <idmint/segstore.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 422:
        return "Unprocessable Content"; /* RFC 9110 15.5.21 */
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented"; /* RFC 9110 15.6.2: the reason phrase of 501 */
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return "Unknown";
    }
}

/* The Date header, formatted once per second. */
static const char *http_date(void)
{
    static time_t cached_at = -1;
    static char text[40];
    time_t now = time(NULL);
    if (now != cached_at) {
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        cached_at = now;
    }
    return text;
}

typedef struct response {
    int status;
    const char *content_type;
    int64_t retry_after_s; /* > 0: Retry-After */
    bool allow;            /* 405: Allow header */
    bool allow_post;       /* ... with POST (/v1/hlc) */
    bool close;            /* close after this response (413: its body is not read) */
    /* An HTTP/1.0 request: a connection kept open says so
     * (Connection: keep-alive, RFC 9112 section 9.3), since HTTP/1.0
     * closes by default. */
    bool http10;
    /* The request's body as far as it is in the buffer (POST /v1/hlc):
     * body_incomplete when Content-Length says more is to come. */
    const char *req_body;
    size_t req_body_len;
    bool body_incomplete;
    const char *www_authenticate; /* 401 and a 400 for credentials: the challenge */
    bool parked;                  /* no response yet: the request waits (mint.h) */
    bool part;                    /* a part of the body; the rest follows (IDMS_MINT_PART) */
    bool cut;                     /* a body sent in parts was cut short: close */
    /* The body goes out in parts (in_parts): Content-Length is the whole
     * body's, length, sent with the first part (!continued). */
    bool in_parts;
    bool continued;
    /* A HEAD on a minting route: nothing was minted, so the body is empty
     * and Content-Length is length when length_known (the IDs have a
     * fixed length), else left out (RFC 9110 section 9.3.2). */
    bool head_of_mint;
    bool length_known;
    uint64_t length;
    /* CORS (--cors-origin): cors_on when origins are listed (every
     * response says Vary: Origin), cors the Access-Control-Allow-Origin
     * for the request's Origin (NULL when none matched; it points into
     * the options), preflight a 204 answering a preflight (cors_reply). */
    bool cors_on;
    const char *cors;
    bool preflight;
    idms_buf body;
} response;

/* The CORS headers of a response (Fetch standard, "CORS protocol"): a
 * preflight's answer says what the request may be - the methods idmintd
 * serves, Authorization for the token and Content-Type for POST /v1/hlc's
 * body, for CORS_MAX_AGE_S seconds (Chromium keeps it at most 7200) - and
 * any other response lets the page read Retry-After and WWW-Authenticate
 * besides the safelisted headers. No Allow-Credentials: the token goes in
 * Authorization, set by the page's script, and no cookie is ever asked
 * for, so "*" works too. */
#define CORS_MAX_AGE_S 600
static void cors_headers(idms_buf *out, const response *r)
{
    if (!r->cors_on)
        return;
    idms_buf_puts(out, "Vary: Origin\r\n");
    if (r->cors == NULL)
        return;
    idms_buf_printf(out, "Access-Control-Allow-Origin: %s\r\n", r->cors);
    if (r->preflight)
        idms_buf_printf(out,
                        "Access-Control-Allow-Methods: GET, HEAD, POST\r\n"
                        "Access-Control-Allow-Headers: Authorization, Content-Type\r\n"
                        "Access-Control-Max-Age: %d\r\n",
                        CORS_MAX_AGE_S);
    else
        idms_buf_puts(out, "Access-Control-Expose-Headers: Retry-After, WWW-Authenticate\r\n");
}

static void write_response(idms_buf *out, response *r, bool head_only, bool keep_alive)
{
    idms_buf_printf(out, "HTTP/1.1 %d %s\r\nServer: idmintd\r\nDate: %s\r\n", r->status,
                    reason_phrase(r->status), http_date());
    /* A 204 (a preflight's) has no content: neither a type nor a length
     * (RFC 9110 section 8.6). */
    bool content = r->status != 204;
    if (content)
        idms_buf_printf(out, "Content-Type: %s\r\n", r->content_type);
    if (content && !r->head_of_mint && !r->in_parts)
        idms_buf_printf(out, "Content-Length: %zu\r\n", r->body.len);
    else if (content && r->length_known)
        idms_buf_printf(out, "Content-Length: %" PRIu64 "\r\n", r->length);
    if (r->retry_after_s > 0)
        idms_buf_printf(out, "Retry-After: %" PRId64 "\r\n", r->retry_after_s);
    if (r->allow)
        idms_buf_puts(out, r->allow_post ? "Allow: GET, HEAD, POST\r\n" : "Allow: GET, HEAD\r\n");
    if (r->www_authenticate != NULL)
        idms_buf_printf(out, "WWW-Authenticate: %s\r\n", r->www_authenticate);
    cors_headers(out, r);
    if (!keep_alive)
        idms_buf_puts(out, "Connection: close\r\n");
    else if (r->http10)
        idms_buf_puts(out, "Connection: keep-alive\r\n");
    idms_buf_puts(out, "\r\n");
    if (!head_only)
        idms_buf_append(out, r->body.data, r->body.len);
}

/* outbuf's drain into a response body. */
static int drain_to_body(void *ctx, const char *data, size_t len)
{
    idms_buf *b = ctx;
    idms_buf_append(b, data, len);
    return b->failed ? IDM_ENOMEM : 0;
}

/* A JSON error body: {"error": "..."}. The message may quote client bytes
 * (a query value may decode to any byte but NUL), so it is escaped straight
 * into the body, whatever its length; a failed allocation sets body.failed
 * and closes the connection. */
static void json_error(response *r, int status, const char *message)
{
    r->status = status;
    r->content_type = "application/json";
    r->body.len = 0;
    char mem[512];
    idmx_outbuf ob;
    idmx_outbuf_init(&ob, mem, sizeof mem, drain_to_body, &r->body);
    idmx_outbuf_puts(&ob, "{\"error\": ");
    idmx_json_string(&ob, message, strlen(message));
    idmx_outbuf_puts(&ob, "}\n");
    if (idmx_outbuf_flush(&ob) != 0)
        r->body.failed = true;
}

static bool starts_with(const char *p, size_t len, const char *prefix, size_t *rest)
{
    size_t n = strlen(prefix);
    if (len < n || memcmp(p, prefix, n) != 0)
        return false;
    *rest = n;
    return true;
}

/* The mint service's answer as a response: parked (c waits on what the
 * service says), a part (more follows once it is written), cut short, an
 * error, or IDs. */
static void minted(idms_conn *c, const idms_mint_result *res, const char *content_type, response *r)
{
    r->parked = res->status == IDMS_MINT_PARKED;
    r->part = res->status == IDMS_MINT_PART;
    r->cut = res->status == IDMS_MINT_CUT;
    if (r->parked)
        idms_conn_park(c, &res->park);
    if (r->part)
        c->more = true;
    if (r->parked || r->part || r->cut) {
        r->status = 200;
        r->content_type = content_type;
    } else if (res->status != 200) {
        json_error(r, res->status, res->message);
        r->retry_after_s = res->retry_after_s;
    } else {
        r->status = 200;
        r->content_type = content_type;
    }
}

/* The query parameters each route takes (idms_http_query_check). */
static const char *const no_params[] = {NULL};
static const char *const ids_params[] = {"count", "prefix", "after", NULL};
static const char *const inspect_params[] = {"layout", "epoch", "as", NULL};
static const char *const segment_params[] = {"count", NULL};
static const char *const obfuscate_params[] = {"prefix", NULL};

/* Refuses (400, false) a query with a parameter the route does not take or
 * one given twice: a misspelt "cuont=5" must not quietly mint one ID.
 * takes names the route's parameters for the message. */
static bool query_ok(const char *query, size_t query_len, const char *const *names,
                     const char *takes, response *r)
{
    const char *name = NULL;
    size_t name_len = 0;
    int rc = idms_http_query_check(query, query_len, names, &name, &name_len);
    if (rc == 0)
        return true;
    /* The name as sent: visible ASCII (the parser's target rule), quoted
     * up to 64 bytes; json_error escapes it. */
    int shown = name_len > 64 ? 64 : (int)name_len;
    const char *more = name_len > 64 ? "..." : "";
    char msg[256];
    if (rc == IDMS_HTTP_QUERY_REPEATED)
        snprintf(msg, sizeof msg, "query parameter '%.*s%s' is given more than once", shown, name,
                 more);
    else
        snprintf(msg, sizeof msg, "unknown query parameter '%.*s%s' (this route takes %s)", shown,
                 name, more, takes);
    json_error(r, 400, msg);
    return false;
}

/* A JSON array of strings (the mint service's sink, mint.h), for
 * Accept: application/json. IDs are ASCII without quotes or backslashes:
 * no escaping. */
static void json_begin(idms_buf *out, uint64_t count)
{
    (void)count;
    idms_buf_puts(out, "[");
}

static void json_id(idms_buf *out, const char *text, size_t len, uint64_t index)
{
    idms_buf_puts(out, index > 0 ? ",\"" : "\"");
    idms_buf_append(out, text, len);
    idms_buf_puts(out, "\"");
}

static void json_end(idms_buf *out, uint64_t count)
{
    (void)count;
    idms_buf_puts(out, "]\n");
}

static const idms_sink json_array = {json_begin, json_id, json_end};

/* HEAD on a minting route: the checks idms_mint makes before it mints
 * (mint.c's start_job, in its order and words: the count's range, a prefix
 * the format does not take or must have, the prefix's syntax), so that a
 * HEAD gets the status and headers a GET would get without minting,
 * consuming IDs or counting them. A GET may still be parked or refused
 * (503) by the clock or the durable mark where HEAD answers 200: that
 * depends on minting. test_http.sh holds the two to the same answers.
 * Returns false with r filled (400) when the request is refused. */
/* The Content-Length of a GET's 200 for count IDs of f, when every such ID
 * has the same length: all formats but snowflakes, whose digits grow with
 * time (Leaf's route is a snowflake too). A prefix P adds "P_" (typeid,
 * token; an empty one adds nothing). Lines: count * (len + 1); a JSON
 * array ("[", the IDs quoted and joined by ",", "]\n"): count * (len + 3)
 * + 2. count is at most --max-count, so nothing wraps. */
static bool fixed_length(const idmx_format *f, const char *prefix, uint64_t count, bool json,
                         uint64_t *out)
{
    if (f->id == IDMX_FMT_SNOWFLAKE)
        return false;
    size_t plen = prefix != NULL ? strlen(prefix) : 0;
    uint64_t len = f->text_len + (plen > 0 ? plen + 1 : 0);
    *out = json ? count * (len + 3) + 2 : count * (len + 1);
    return true;
}

/* HEAD on a minting route that passed its checks: a 200 without minting. */
static void head_of_mint(response *r, const char *content_type, bool length_known, uint64_t length)
{
    r->status = 200;
    r->content_type = content_type;
    r->head_of_mint = true;
    r->length_known = length_known;
    r->length = length;
}

/* A request that parked, or sent a part of its body, stays unconsumed at
 * the head of the buffer until it completes. What it needs to go on was
 * parsed once, into this record (the connection's session), and the
 * resumed request goes on from it (http_feed): its head is not parsed,
 * checked or authorized again, only consumed (len) at the end. A request
 * whose route holds nothing (a POST /v1/hlc whose body is still coming)
 * is parsed again with the input that completes it. */
enum { HELD_NONE, HELD_IDS, HELD_SEGMENT, HELD_HLC, HELD_GRANT };
#define HELD_TEXT IDMSEG_TAG_MAX /* a held prefix (at most 63 bytes) or tag */

typedef struct http_held {
    int kind;                /* HELD_* */
    int route;               /* IDMS_ROUTE_*, for the metrics */
    size_t len;              /* the head's bytes at the head of the buffer */
    uint64_t content_length; /* the body's, after the head (skipped) */
    bool keep_alive;         /* the request's own wish (version, Connection:) */
    bool http10;             /* an HTTP/1.0 request (response.http10) */
    const char *cors;        /* response.cors */
    const char *type;        /* the Content-Type (static) */
    /* ids: the format, count and the reply's length when known; json
     * (a JSON array); leaf (Leaf's bare number: no line end) */
    int format;
    uint64_t count;
    bool json, leaf, length_known, has_prefix;
    uint64_t length;
    int style;       /* segment: IDMS_SEG_* */
    bool has_remote; /* hlc: the POST's stamp to merge */
    uint64_t remote;
    size_t text_len; /* the prefix's (has_prefix) or the tag's bytes in text */
    char text[HELD_TEXT + 1];
} http_held;

/* What an HTTP connection keeps between requests (idms_conn_session). */
typedef struct http_session {
    http_held held; /* kind HELD_NONE: no request held */
} http_session;

/* A request that parked or sent a part: its record h is kept in the
 * session, where the resumed request goes on from it; text (len bytes:
 * a prefix or a tag) is copied in when h is not the session's yet. A
 * text longer than the record holds (a tag refused long before it could
 * park) is not held: the request is then parsed again. */
static void hold(idms_conn *c, const http_held *h, const char *text, size_t len)
{
    http_held *mine = &((http_session *)idms_conn_session(c))->held;
    if (h == mine || len > HELD_TEXT)
        return;
    *mine = *h;
    if (text != mine->text)
        memcpy(mine->text, text, len);
    mine->text[len] = '\0';
    mine->text_len = len;
}

/* Spring Boot 1.5's error body, as Leaf's server (Spring Boot 1.5.18)
 * answers its exceptions: DefaultErrorAttributes' members in their order,
 * the time as epoch milliseconds (Jackson's default there), no line end.
 * path is what Spring names: the route and the key (decoded). */
static void spring_error(response *r, int status, const char *exception, const char *message,
                         const char *route, const char *key, size_t key_len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    r->status = status;
    r->retry_after_s = 0;
    r->content_type = "application/json;charset=UTF-8";
    r->body.len = 0;
    char mem[512];
    idmx_outbuf ob;
    idmx_outbuf_init(&ob, mem, sizeof mem, drain_to_body, &r->body);
    char head[160];
    snprintf(head, sizeof head, "{\"timestamp\":%" PRId64 ",\"status\":%d,\"error\":", now_ms,
             status);
    idmx_outbuf_puts(&ob, head);
    const char *reason = reason_phrase(status);
    idmx_json_string(&ob, reason, strlen(reason));
    idmx_outbuf_puts(&ob, ",\"exception\":");
    idmx_json_string(&ob, exception, strlen(exception));
    idmx_outbuf_puts(&ob, ",\"message\":");
    idmx_json_string(&ob, message, strlen(message));
    idmx_outbuf_puts(&ob, ",\"path\":");
    char path[96 + IDMSEG_TAG_MAX];
    int n = snprintf(path, sizeof path, "%s", route);
    size_t room = sizeof path - (size_t)n - 1;
    size_t k = key_len < room ? key_len : room;
    memcpy(path + n, key, k);
    idmx_json_string(&ob, path, (size_t)n + k);
    idmx_outbuf_puts(&ob, "}");
    if (idmx_outbuf_flush(&ob) != 0)
        r->body.failed = true;
}

/* Leaf's refusal of /api/segment/get/{key} or /api/snowflake/get/{key}:
 * 500, LeafServerException with Leaf's Result{id=N, status=EXCEPTION}.
 * Segments (SegmentIDGenImpl): -1 not initialised (no store, the tag
 * could not be loaded, the table full), -2 no such key, -3 both buffers
 * empty (the store fails and the IDs in memory are used up). Snowflakes
 * (SnowflakeIDGenImpl): -3 the clock stepped back past --max-rewind (Leaf:
 * more than 5 ms), -1 anything else (no node, the durable mark). */
static void leaf_error(response *r, bool segment, int cause, const char *key, size_t key_len)
{
    int id = -1;
    if (segment && cause == IDMS_CAUSE_NO_TAG)
        id = -2;
    else if ((segment && cause == IDMS_CAUSE_DRY) || (!segment && cause == IDMS_CAUSE_CLOCK))
        id = -3;
    char msg[64];
    snprintf(msg, sizeof msg, "Result{id=%d, status=EXCEPTION}", id);
    spring_error(r, 500, "com.sankuai.inf.leaf.server.exception.LeafServerException", msg,
                 segment ? "/api/segment/get/" : "/api/snowflake/get/", key, key_len);
}

/* /v1/ids (and Leaf's snowflake route), parsed (h): mints, or goes on
 * with what it minted. after only when it starts (the service observes
 * it once). */
static void go_ids(idms_conn *c, const http_held *h, const char *after, response *r)
{
    const char *prefix = h->has_prefix ? h->text : NULL;
    idms_mint_result res;
    idms_req q = idms_conn_req(c);
    idms_mint_after(&q, h->format, prefix, after, h->count,
                    h->json ? &json_array : &idms_sink_lines,
                    h->length_known ? idms_conn_part(c) : 0, &r->body, &res);
    minted(c, &res, h->type, r);
    if (res.in_parts && (res.status == 200 || r->parked || r->part)) {
        r->in_parts = true;
        r->continued = res.continued;
        r->length_known = true;
        r->length = h->length;
    }
    if (h->leaf && res.status == 200 && r->body.len > 0)
        r->body.len--; /* Leaf answers the bare number, no newline */
    if (r->parked || r->part)
        hold(c, h, h->text, h->text_len);
    else if (h->leaf && res.status != 200)
        leaf_error(r, false, res.cause, h->text, h->text_len); /* the key, kept in text */
}

static int route_ids(idms_conn *c, const idms_http_request *req, bool head, const char *seg,
                     size_t seg_len, const char *query, size_t query_len, response *r)
{
    const idmx_format *f = idmx_format_by_name(seg, seg_len);
    if (f == NULL) {
        char names[IDMX_FORMAT_LIST_CAP], msg[IDMX_FORMAT_LIST_CAP + 32];
        if (idmx_format_list(names, sizeof names, IDMX_LIST_ALL, "or") == (size_t)-1)
            names[0] = '\0';
        snprintf(msg, sizeof msg, "unknown format (expected %s)", names);
        json_error(r, 400, msg);
        return IDMS_ROUTE_IDS;
    }
    if (!query_ok(query, query_len, ids_params, "count, prefix and after", r))
        return IDMS_ROUTE_IDS;
    char value[128];
    size_t vlen = 0;
    uint64_t count = 1;
    int got = idms_http_query_get(query, query_len, "count", value, sizeof value, &vlen);
    if (got < 0 || (got == 1 && (idmx_parse_u64(value, &count) != 0))) {
        json_error(r, 400, "count must be a whole number");
        return IDMS_ROUTE_IDS;
    }
    char prefix[IDM_TYPEID_PREFIX_MAX + 2];
    size_t plen = 0;
    int has_prefix = idms_http_query_get(query, query_len, "prefix", prefix, sizeof prefix, &plen);
    if (has_prefix < 0) {
        json_error(r, 400, "invalid prefix: at most 63 characters of [a-z_]");
        return IDMS_ROUTE_IDS;
    }
    /* after=ID: the longest ID is a TypeID's 90 bytes. */
    char after[IDM_TYPEID_STRLEN_MAX + 2];
    int has_after = idms_http_query_get(query, query_len, "after", after, sizeof after, NULL);
    if (has_after < 0) {
        json_error(r, 400, "after must be an ID (at most 90 characters)");
        return IDMS_ROUTE_IDS;
    }
    const char *a = has_after == 1 ? after : NULL;
    const char *accept = NULL;
    size_t accept_len = 0;
    bool json = idms_http_header_get(req, "Accept", &accept, &accept_len) &&
                idms_http_accepts_json(accept, accept_len);
    const char *type = json ? "application/json" : "text/plain; charset=utf-8";
    const char *p = has_prefix == 1 ? prefix : NULL;
    if (head) {
        idms_mint_result res;
        if ((a != NULL && !idms_mint_check_after(idms_conn_services(c)->mint, f->id, a, &res)) ||
            !idms_mint_check(idms_conn_services(c)->mint, f->id, p, count, &res)) {
            json_error(r, res.status, res.message);
        } else {
            uint64_t length = 0;
            bool known = fixed_length(f, p, count, json, &length);
            head_of_mint(r, type, known, length);
        }
        return IDMS_ROUTE_IDS;
    }
    /* A body of known length may go out in parts of a share (mint.h); a
     * snowflake body's length is known only once minted: whole. */
    http_held h = {.kind = HELD_IDS, .route = IDMS_ROUTE_IDS};
    h.type = type;
    h.format = f->id;
    h.count = count;
    h.json = json;
    h.length_known = fixed_length(f, p, count, json, &h.length);
    if (p != NULL) {
        /* prefix[] holds at most IDM_TYPEID_PREFIX_MAX + 1 bytes. */
        _Static_assert(IDM_TYPEID_PREFIX_MAX + 1 <= HELD_TEXT, "a held prefix");
        memcpy(h.text, p, plen + 1);
        h.text_len = plen;
        h.has_prefix = true;
    }
    go_ids(c, &h, a, r);
    return IDMS_ROUTE_IDS;
}

/* The longest decoded /v1/inspect input looked at. The longest ID text is
 * a TypeID's 90 bytes; this leaves room for surrounding junk to be named in
 * the error object while keeping that object small. */
#define INSPECT_INPUT_MAX 256

/* A query value for /v1/inspect into dst: 1 given, 0 absent, -1 refused
 * (r filled with a 400 naming the parameter). */
static int inspect_param(const char *query, size_t query_len, const char *key, char *dst,
                         size_t cap, response *r)
{
    int got = idms_http_query_get(query, query_len, key, dst, cap, NULL);
    if (got < 0) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "invalid %s: a malformed %%-escape, a %%00, or longer than %zu bytes", key,
                 cap - 1);
        json_error(r, 400, msg);
    }
    return got;
}

/* The layout and kind of /v1/inspect's query, as idmint inspect's --layout,
 * --epoch and --as take them (common/optvalue.h): layout a preset or a
 * spec, with epoch applied when given; without layout, the server's own
 * (--layout, --epoch) with epoch applied when given; as one of uuid, ulid,
 * ksuid, typeid or snowflake. Returns false with r filled (400) when one
 * is refused. */
static bool inspect_options(const idms_services *s, const char *query, size_t query_len,
                            idm_sf_layout *layout, int *kind, response *r)
{
    char ltext[256], etext[256], as[32], msg[IDMX_OPT_MSG_CAP];
    int has_layout = inspect_param(query, query_len, "layout", ltext, sizeof ltext, r);
    int has_epoch = inspect_param(query, query_len, "epoch", etext, sizeof etext, r);
    int has_as = inspect_param(query, query_len, "as", as, sizeof as, r);
    if (has_layout < 0 || has_epoch < 0 || has_as < 0)
        return false;
    *kind = IDM_KIND_AUTO;
    if (has_as == 1) {
        *kind = idm_kind_from_name(as, strlen(as));
        if (*kind <= IDM_KIND_AUTO) {
            snprintf(msg, sizeof msg,
                     "invalid kind '%.31s' (expected uuid, ulid, ksuid, typeid or snowflake)", as);
            json_error(r, 400, msg);
            return false;
        }
    }
    *layout = *s->mint->layout;
    if (has_layout == 1) {
        const char *epoch = has_epoch == 1 ? etext : NULL;
        if (idmx_layout_resolve(ltext, epoch, layout, msg, sizeof msg) != 0) {
            json_error(r, 400, msg);
            return false;
        }
    } else if (has_epoch == 1) {
        int64_t epoch_ms = 0;
        if (idmx_parse_epoch(etext, &epoch_ms, msg, sizeof msg) != 0) {
            json_error(r, 400, msg);
            return false;
        }
        idm_error err = {0};
        int rc = idm_sf_layout_set_epoch(layout, epoch_ms, &err);
        if (rc != IDM_OK) {
            char name[IDM_SF_SPEC_CAP];
            idmx_layout_name(s->mint->layout, name, sizeof name);
            snprintf(msg, sizeof msg, "invalid epoch '%.64s' for layout '%s': %s", etext, name,
                     err.msg[0] != '\0' ? err.msg : idm_strerror(rc));
            json_error(r, 400, msg);
            return false;
        }
    }
    return true;
}

static int route_inspect(const idms_services *s, const char *seg, size_t seg_len, const char *query,
                         size_t query_len, response *r)
{
    if (!query_ok(query, query_len, inspect_params, "layout, epoch and as", r))
        return IDMS_ROUTE_INSPECT;
    /* The segment fits the parser's target limit, so this buffer fits it
     * decoded: only a malformed escape or a %00 is refused here. */
    char id[IDMS_HTTP_MAX_TARGET + 1];
    ptrdiff_t n = idms_http_percent_decode(seg, seg_len, id, sizeof id);
    if (n < 0) {
        json_error(r, 400, "the ID is not a valid path segment (a malformed %-escape or a %00)");
        return IDMS_ROUTE_INSPECT;
    }
    if (n > INSPECT_INPUT_MAX) {
        char msg[128];
        snprintf(msg, sizeof msg, "the ID is too long: %td bytes decoded (at most %d)", n,
                 INSPECT_INPUT_MAX);
        json_error(r, 400, msg);
        return IDMS_ROUTE_INSPECT;
    }
    idm_sf_layout layout;
    int kind = IDM_KIND_AUTO;
    if (!inspect_options(s, query, query_len, &layout, &kind, r))
        return IDMS_ROUTE_INSPECT;
    idm_inspection in;
    idm_error err = {0};
    int rc = idm_inspect(id, (size_t)n, kind, &layout, &in, &err);
    /* Rendered straight into the body, so no input can overflow a fixed
     * buffer (a %01 is six bytes escaped); a failed allocation closes the
     * connection (body.failed). */
    char mem[2048];
    idmx_outbuf ob;
    idmx_outbuf_init(&ob, mem, sizeof mem, drain_to_body, &r->body);
    if (rc == IDM_OK)
        idmx_inspect_json(&ob, id, (size_t)n, &in, &layout);
    else
        idmx_inspect_json_error(&ob, id, (size_t)n,
                                err.msg[0] != '\0' ? err.msg : idm_strerror(rc));
    idmx_outbuf_putc(&ob, '\n');
    if (idmx_outbuf_flush(&ob) != 0)
        r->body.failed = true;
    r->status = rc == IDM_OK ? 200 : 400;
    r->content_type = "application/json";
    return IDMS_ROUTE_INSPECT;
}

/* tinyid's four routes under /tinyid/id/ (its IdContronller). */
enum { TINYID_NEXT_ID, TINYID_NEXT_ID_SIMPLE, TINYID_SEGMENT, TINYID_SEGMENT_SIMPLE };

static int tinyid_kind(const char *name, size_t len)
{
    static const char *const names[] = {"nextId", "nextIdSimple", "nextSegmentId",
                                        "nextSegmentIdSimple"};
    for (int k = 0; k < 4; k++)
        if (len == strlen(names[k]) && memcmp(name, names[k], len) == 0)
            return k;
    return -1;
}

/* The route a path names (IDMS_ROUTE_*); *seg is where the last segment
 * ({format}, {id}, {key}) starts for the routes that have one. */
static int route_of(const char *path, size_t path_len, size_t *seg)
{
    size_t rest;
    if (starts_with(path, path_len, "/v1/ids/", &rest) && path_len > rest &&
        memchr(path + rest, '/', path_len - rest) == NULL) {
        *seg = rest;
        return IDMS_ROUTE_IDS;
    }
    if (starts_with(path, path_len, "/v1/inspect/", &rest) && path_len > rest &&
        memchr(path + rest, '/', path_len - rest) == NULL) {
        *seg = rest;
        return IDMS_ROUTE_INSPECT;
    }
    if (starts_with(path, path_len, "/api/snowflake/get/", &rest) && path_len > rest) {
        *seg = rest;
        return IDMS_ROUTE_LEAF;
    }
    if (path_len == 8 && memcmp(path, "/healthz", 8) == 0)
        return IDMS_ROUTE_HEALTHZ;
    if (path_len == 7 && memcmp(path, "/readyz", 7) == 0)
        return IDMS_ROUTE_READYZ;
    if (path_len == 8 && memcmp(path, "/metrics", 8) == 0)
        return IDMS_ROUTE_METRICS;
    if (path_len == 8 && memcmp(path, "/v1/node", 8) == 0)
        return IDMS_ROUTE_NODE;
    if (path_len == 7 && memcmp(path, "/v1/hlc", 7) == 0)
        return IDMS_ROUTE_HLC;
    if ((path_len == 18 && memcmp(path, "/decodeSnowflakeId", 18) == 0) ||
        (path_len == 6 && memcmp(path, "/cache", 6) == 0) ||
        (path_len == 3 && memcmp(path, "/db", 3) == 0))
        return IDMS_ROUTE_LEAF_MONITOR;
    if (starts_with(path, path_len, "/v1/segment/", &rest) && path_len > rest &&
        memchr(path + rest, '/', path_len - rest) == NULL) {
        *seg = rest;
        return IDMS_ROUTE_SEGMENT;
    }
    if (starts_with(path, path_len, "/api/segment/get/", &rest) && path_len > rest &&
        memchr(path + rest, '/', path_len - rest) == NULL) {
        *seg = rest;
        return IDMS_ROUTE_SEGMENT_LEAF;
    }
    if (starts_with(path, path_len, "/v1/obfuscate/", &rest) && path_len > rest &&
        memchr(path + rest, '/', path_len - rest) == NULL) {
        *seg = rest;
        return IDMS_ROUTE_OBFUSCATE;
    }
    if (starts_with(path, path_len, "/v1/reveal/", &rest) && path_len > rest &&
        memchr(path + rest, '/', path_len - rest) == NULL) {
        *seg = rest;
        return IDMS_ROUTE_REVEAL;
    }
    if (starts_with(path, path_len, "/tinyid/id/", &rest) &&
        tinyid_kind(path + rest, path_len - rest) >= 0) {
        *seg = rest;
        return IDMS_ROUTE_TINYID;
    }
    return IDMS_ROUTE_OTHER;
}

/* The route table's access column (IDMS_AUTH_* flags of auth.h). The
 * probes are open, so that a load balancer or a kubelet needs no secret;
 * every other route needs the token, unknown paths included (their 404
 * would tell a stranger which routes exist). tinyid's routes check the
 * token themselves (IDMS_AUTH_SELF: tinyid_token_ok), since tinyid's
 * clients send it as a parameter and are told of a wrong one in tinyid's
 * words, a 200 with code 5, not a 401. */
static unsigned route_access(int rt)
{
    switch (rt) {
    case IDMS_ROUTE_HEALTHZ:
    case IDMS_ROUTE_READYZ:
        return IDMS_AUTH_OPEN;
    case IDMS_ROUTE_TINYID:
        return IDMS_AUTH_SELF;
    default:
        return 0;
    }
}

/* The token a request presents (returns 1, *token set), none (0), or
 * credentials that are malformed (-1): more than one Authorization
 * header, or Bearer without a token. The header's Bearer credentials
 * count (another scheme is none). */
static int credentials(const idms_http_request *req, const char **token, size_t *token_len)
{
    const char *value = NULL;
    size_t value_len = 0, headers = 0;
    for (size_t i = 0; i < req->n_headers; i++) {
        const idms_http_header *h = &req->headers[i];
        if (h->name_len == 13 && strncasecmp(h->name, "Authorization", 13) == 0) {
            value = h->value;
            value_len = h->value_len;
            headers++;
        }
    }
    if (headers > 1)
        return -1;
    return headers == 1 ? idms_auth_bearer(value, value_len, token, token_len) : 0;
}

/* A request refused for its credentials (RFC 6750 section 3): 401 with
 * the challenge, which names an error only when a token was sent (section
 * 3.1: a client that sent none learns only that one is needed); 400
 * invalid_request for malformed credentials. */
static void refuse(response *r, int why)
{
    if (why == IDMS_AUTH_MISSING) {
        json_error(r, 401,
                   "a token is needed: send Authorization: Bearer TOKEN, with the token "
                   "of idmintd's --auth-token-file");
        r->www_authenticate = "Bearer realm=\"idmintd\"";
    } else if (why == IDMS_AUTH_WRONG) {
        json_error(r, 401, "invalid token");
        r->www_authenticate = "Bearer realm=\"idmintd\", error=\"invalid_token\", "
                              "error_description=\"the token is not valid\"";
    } else {
        json_error(r, 400, "malformed credentials: send one Authorization: Bearer TOKEN header");
        r->www_authenticate = "Bearer realm=\"idmintd\", error=\"invalid_request\"";
    }
}

/* Whether the request may use route rt: yes without --auth-token-file,
 * on an open route, or with the right token; else r is the refusal, and
 * the failure is counted and logged (auth.c). */
static bool authorized(idms_conn *c, const idms_http_request *req, int rt, response *r)
{
    idms_auth *a = c->net->auth;
    unsigned access = route_access(rt);
    if (!a->required || (access & (IDMS_AUTH_OPEN | IDMS_AUTH_SELF)) != 0)
        return true;
    const char *token = NULL;
    size_t token_len = 0;
    int got = credentials(req, &token, &token_len);
    int why = got < 0 ? IDMS_AUTH_MALFORMED : IDMS_AUTH_MISSING;
    if (got == 1 && idms_auth_token_ok(a, token, token_len))
        return true;
    if (got == 1)
        why = IDMS_AUTH_WRONG;
    refuse(r, why);
    idms_auth_failed(a, c, why);
    return false;
}

/* Leaf's snowflake route: any method, query parameters ignored (Leaf's
 * controller takes none), the key ignored too (Leaf's snowflake mode
 * does), kept only to name the path in an error. */
static int route_leaf(idms_conn *c, bool head, const char *key, size_t key_len, response *r)
{
    if (head) {
        head_of_mint(r, "text/plain; charset=utf-8", false, 0);
        return IDMS_ROUTE_LEAF;
    }
    /* Leaf's snowflake mode ignores the key; so do we. */
    http_held h = {.kind = HELD_IDS, .route = IDMS_ROUTE_LEAF};
    h.type = "text/plain; charset=utf-8";
    h.format = IDMX_FMT_SNOWFLAKE;
    h.count = 1;
    h.leaf = true;
    h.text_len = key_len < HELD_TEXT ? key_len : HELD_TEXT;
    memcpy(h.text, key, h.text_len);
    go_ids(c, &h, NULL, r);
    return IDMS_ROUTE_LEAF;
}

#define TINYID_BODY_MAX  4096
#define TINYID_TOKEN_ERR 5 /* tinyid's ErrorCode.TOKEN_ERR */
#define TINYID_SYS_ERR   6 /* ErrorCode.SYS_ERR */

/* tinyid's failure envelope, always 200: the Simple routes' empty body,
 * or {"data":null,"code":N,"message":"..."} (Jackson's order of
 * tinyid's Response: data, code, message; no line end). */
static void tinyid_error(response *r, bool simple, int code, const char *message)
{
    r->status = 200;
    r->retry_after_s = 0;
    r->body.len = 0;
    if (simple) {
        r->content_type = "text/plain; charset=utf-8";
        return;
    }
    r->content_type = "application/json";
    char mem[512];
    idmx_outbuf ob;
    idmx_outbuf_init(&ob, mem, sizeof mem, drain_to_body, &r->body);
    char head[48];
    snprintf(head, sizeof head, "{\"data\":null,\"code\":%d,\"message\":", code);
    idmx_outbuf_puts(&ob, head);
    idmx_json_string(&ob, message, strlen(message));
    idmx_outbuf_puts(&ob, "}");
    if (idmx_outbuf_flush(&ob) != 0)
        r->body.failed = true;
}

/* A request body over max bytes: 413, and the connection closes (the
 * body is not read); what names the body in the message. */
static bool body_too_large(const idms_http_request *req, uint64_t max, const char *what,
                           response *r)
{
    if (req->content_length <= max)
        return false;
    char msg[128];
    snprintf(msg, sizeof msg, "%s at most %" PRIu64 " bytes, got %" PRIu64, what, max,
             req->content_length);
    json_error(r, 413, msg);
    r->close = true;
    return true;
}

/* A segment route, parsed (h; the tag is tag_len bytes at tag, h's own
 * text once held): mints, or waits for the tag's range. */
static void go_segment(idms_conn *c, const http_held *h, const char *tag, size_t tag_len,
                       response *r)
{
    idms_mint_result res;
    idms_req q = idms_conn_req(c);
    idms_segment_mint(&q, tag, tag_len, h->count, h->style, &r->body, &res);
    minted(c, &res, h->type, r);
    if (r->parked || r->part)
        hold(c, h, tag, tag_len);
    else if (res.status != 200 && (h->style == IDMS_SEG_COMMAS || h->style == IDMS_SEG_TINYID_JSON))
        tinyid_error(r, h->style == IDMS_SEG_COMMAS, TINYID_SYS_ERR, res.message);
    else if (res.status != 200 && h->style == IDMS_SEG_BARE)
        leaf_error(r, true, res.cause, tag, tag_len);
}

/* A segment route's reply: count IDs of tag in style (segments.h). HEAD
 * makes the checks a GET would and mints nothing. tag is the decoded
 * bytes (a %00 a NUL among them), which idms_segment_check checks. */
static int segment_reply(idms_conn *c, bool head, int rt, const char *tag, size_t tag_len,
                         uint64_t count, int style, const char *type, response *r)
{
    idms_mint_result res;
    if (head) {
        if (!idms_segment_check(idms_conn_services(c)->segments, tag, tag_len, count, &res))
            json_error(r, res.status, res.message);
        else
            head_of_mint(r, type, false, 0);
        return rt;
    }
    http_held h = {.kind = HELD_SEGMENT, .route = rt};
    h.type = type;
    h.count = count;
    h.style = style;
    go_segment(c, &h, tag, tag_len, r);
    return rt;
}

/* A count parameter: 1 when absent; false (r a 400) when not a whole number. */
static bool count_param(const char *query, size_t query_len, const char *name, uint64_t *count,
                        response *r)
{
    char value[128];
    size_t vlen = 0;
    *count = 1;
    int got = idms_http_query_get(query, query_len, name, value, sizeof value, &vlen);
    if (got < 0 || (got == 1 && idmx_parse_u64(value, count) != 0)) {
        char msg[96];
        snprintf(msg, sizeof msg, "%s must be a whole number", name);
        json_error(r, 400, msg);
        return false;
    }
    return true;
}

/* A tag's path segment percent-decoded into dst (IDMS_HTTP_MAX_TARGET + 1
 * bytes: any segment fits), a %00 kept as a NUL byte for the tag's check
 * to name; false (r a 400) for a malformed escape. */
static bool tag_segment(const char *seg, size_t seg_len, char *dst, size_t *len, response *r)
{
    ptrdiff_t n = idms_http_percent_decode_bytes(seg, seg_len, dst, IDMS_HTTP_MAX_TARGET + 1);
    if (n < 0) {
        json_error(r, 400, "invalid tag: a malformed %-escape");
        return false;
    }
    *len = (size_t)n;
    return true;
}

static int route_segment(idms_conn *c, const idms_http_request *req, bool head, const char *seg,
                         size_t seg_len, const char *query, size_t query_len, response *r)
{
    uint64_t count;
    char tag[IDMS_HTTP_MAX_TARGET + 1];
    size_t tag_len;
    if (!query_ok(query, query_len, segment_params, "count", r) ||
        !count_param(query, query_len, "count", &count, r) ||
        !tag_segment(seg, seg_len, tag, &tag_len, r))
        return IDMS_ROUTE_SEGMENT;
    const char *accept = NULL;
    size_t accept_len = 0;
    bool json = idms_http_header_get(req, "Accept", &accept, &accept_len) &&
                idms_http_accepts_json(accept, accept_len);
    return segment_reply(c, head, IDMS_ROUTE_SEGMENT, tag, tag_len, count,
                         json ? IDMS_SEG_JSON : IDMS_SEG_LINES,
                         json ? "application/json" : "text/plain; charset=utf-8", r);
}

/* Meituan Leaf's segment mode: one ID, the bare decimal; any method,
 * query parameters ignored; Leaf's errors (leaf_error), a HEAD's too. */
static int route_segment_leaf(idms_conn *c, bool head, const char *seg, size_t seg_len, response *r)
{
    char tag[IDMS_HTTP_MAX_TARGET + 1];
    ptrdiff_t n = idms_http_percent_decode_bytes(seg, seg_len, tag, sizeof tag);
    if (n < 0) {
        /* No key Leaf could have. */
        leaf_error(r, true, IDMS_CAUSE_NO_TAG, seg, seg_len);
        return IDMS_ROUTE_SEGMENT_LEAF;
    }
    if (head) {
        idms_mint_result res;
        if (!idms_segment_check(idms_conn_services(c)->segments, tag, (size_t)n, 1, &res))
            leaf_error(r, true, res.cause, tag, (size_t)n);
        else
            head_of_mint(r, "text/plain; charset=utf-8", false, 0);
        return IDMS_ROUTE_SEGMENT_LEAF;
    }
    return segment_reply(c, false, IDMS_ROUTE_SEGMENT_LEAF, tag, (size_t)n, 1, IDMS_SEG_BARE,
                         "text/plain; charset=utf-8", r);
}

/* Leaf's monitor routes (its LeafMonitorController), any method (a HEAD
 * answers the same headers), as far as they mean something here
 * (docs/idmintd.md, "Leaf"):
 *
 *  /decodeSnowflakeId?snowflakeId=ID  Leaf's members, strings, in the
 *      order Leaf's HashMap gives them: {"workerId", "sequenceId",
 *      "timestamp": "MS(yyyy-MM-dd HH:mm:ss.SSS)" in local time}, decoded
 *      by idmintd's layout (Leaf's is fixed: 41/10/12 bits, Twitter's
 *      epoch); an ID that is not a non-negative Java long, or has bits
 *      above the layout's fields, is {"errorMsg": Leaf's text}; without
 *      the parameter, Spring's 400;
 *  /cache  the segment tags in memory as JSON (idms_segments_cache_json;
 *      Leaf renders its buffers as an HTML page);
 *  /db     not served (404): the rows are the store's, read off the loop
 *      only; `idmint segment list --store URL` shows them. */
static int route_leaf_monitor(const idms_services *s, size_t path_len, const char *query,
                              size_t query_len, response *r)
{
    if (path_len == 3) {
        json_error(r, 404,
                   "Leaf's /db is not served: list the store with idmint segment list "
                   "--store URL");
        return IDMS_ROUTE_LEAF_MONITOR;
    }
    r->status = 200;
    r->content_type = "application/json;charset=UTF-8";
    if (path_len == 6) {
        idms_segments_cache_json(s->segments, &r->body);
        return IDMS_ROUTE_LEAF_MONITOR;
    }
    char text[64];
    size_t len = 0;
    int got = idms_http_query_get(query, query_len, "snowflakeId", text, sizeof text, &len);
    if (got == 0) {
        spring_error(r, 400, "org.springframework.web.bind.MissingServletRequestParameterException",
                     "Required String parameter 'snowflakeId' is not present", "/decodeSnowflakeId",
                     "", 0);
        return IDMS_ROUTE_LEAF_MONITOR;
    }
    /* Java's Long.parseLong: an optional '+' (a '-' is no ID), digits. */
    uint64_t id = 0;
    idm_error err = {0};
    size_t skip = got == 1 && len > 0 && text[0] == '+';
    idm_sf_parts parts;
    if (got < 0 || len == skip || len - skip > 19 ||
        idm_sf_parse_decimal(text + skip, len - skip, &id, &err) != IDM_OK || id > INT64_MAX ||
        idm_sf_decode(s->mint->layout, id, &parts, &err) != IDM_OK) {
        idms_buf_puts(&r->body, "{\"errorMsg\":\"snowflake Id\u53cd\u89e3\u6790\u53d1\u751f"
                                "\u5f02\u5e38!\"}");
        return IDMS_ROUTE_LEAF_MONITOR;
    }
    time_t secs = (time_t)(parts.unix_ms / 1000);
    struct tm tm;
    char when[40] = "";
    if (localtime_r(&secs, &tm) != NULL)
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    idms_buf_printf(&r->body,
                    "{\"workerId\":\"%" PRIu64 "\",\"sequenceId\":\"%" PRIu64
                    "\",\"timestamp\":\"%" PRId64 "(%s.%03d)\"}",
                    parts.node, parts.sequence, parts.unix_ms, when, (int)(parts.unix_ms % 1000));
    return IDMS_ROUTE_LEAF_MONITOR;
}

/* Didi's tinyid, as its server (tinyid-server's IdContronller) and its
 * client (tinyid-client, which POSTs nextSegmentIdSimple and mints from
 * the segment itself) behave; docs/idmintd.md, "tinyid":
 *
 *  - any method; bizType, batchSize and token from the query or an
 *    application/x-www-form-urlencoded body (at most TINYID_BODY_MAX
 *    bytes: 413 past it, the connection closed), the first value of each,
 *    the query's before the body's; other parameters ignored;
 *  - always 200: a missing, repeated or wrong token, and a missing
 *    bizType (tinyid's canVisit) are {"data":null,"code":5,"message":
 *    "token is error"}; any other failure code 6 with the reason; the
 *    Simple routes answer an empty body instead (tinyid's "");
 *  - batchSize: absent or empty 1; 0 or less an empty list (after the
 *    tag's name is checked); above --max-count, --max-count (tinyid clamps
 *    to its batch.size.max); not a Java int: code 6;
 *  - nextSegmentId(Simple) leases a whole segment of the tag for the
 *    client (idms_segment_grant): currentId,loadingId,maxId,delta,remainder
 *    with tinyid's meaning (its IDs are currentId + k * delta up to maxId;
 *    the client loads the next one past loadingId, a fifth of the way);
 *  - no line end after a body (tinyid's have none).
 */
/* tinyid's token rule: with --tinyid-open every request is served; else
 * the token parameter (query or body), or an Authorization: Bearer header
 * instead, given once, must be the token of --auth-token-file, and
 * without a token file none can be (tinyid always requires one: the start
 * says so in the log). A failure is counted and logged as any (auth.c). */
static bool tinyid_token_ok(idms_conn *c, const idms_http_request *req,
                            const idms_http_field *param)
{
    idms_auth *a = c->net->auth;
    if (a->tinyid_open)
        return true;
    const char *token = NULL;
    size_t token_len = 0;
    int got = credentials(req, &token, &token_len);
    int why = IDMS_AUTH_MISSING;
    if (got < 0 || param->given > 1 || param->bad || (param->given == 1 && got == 1)) {
        why = IDMS_AUTH_MALFORMED;
    } else if (param->given == 1 || got == 1) {
        if (param->given == 1) {
            token = param->dst;
            token_len = param->len;
        }
        if (idms_auth_token_ok(a, token, token_len))
            return true;
        why = IDMS_AUTH_WRONG;
    }
    if (a->required)
        idms_auth_failed(a, c, why);
    return false;
}

/* batchSize as Spring binds tinyid's Integer parameter (NumberUtils'
 * parseNumber): whitespace anywhere dropped, then an optional sign and
 * decimal digits, or hex after "0x", "0X" or "#"; absent or empty is 1.
 * False when it is not a Java int. */
static bool tinyid_batch(const idms_http_field *f, int64_t *n)
{
    *n = 1;
    if (f->bad)
        return false;
    char t[sizeof "-2147483648" + 2];
    size_t len = 0;
    for (size_t i = 0; i < f->len; i++) {
        if (strchr(" \t\n\r\f\v", f->dst[i]) != NULL && f->dst[i] != '\0')
            continue;
        if (len + 1 >= sizeof t)
            return false;
        t[len++] = f->dst[i];
    }
    t[len] = '\0';
    if (len == 0)
        return true;
    size_t i = t[0] == '-' || t[0] == '+';
    bool neg = t[0] == '-';
    unsigned base = 10;
    if (t[i] == '#' || (t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X'))) {
        i += t[i] == '#' ? 1 : 2;
        base = 16;
    }
    if (t[i] == '\0')
        return false;
    int64_t v = 0;
    for (; t[i] != '\0'; i++) {
        int d = t[i] >= '0' && t[i] <= '9'   ? t[i] - '0'
                : t[i] >= 'a' && t[i] <= 'f' ? t[i] - 'a' + 10
                : t[i] >= 'A' && t[i] <= 'F' ? t[i] - 'A' + 10
                                             : 99;
        if (d >= (int)base)
            return false;
        v = v * base + d;
        if (v > (int64_t)INT32_MAX + 1)
            return false;
    }
    if (!neg && v > INT32_MAX)
        return false;
    *n = neg ? -v : v;
    return true;
}

/* A whole segment for tinyid's client (h: the tag held, the style), or
 * the wait for it, or tinyid's failure. */
static void go_grant(idms_conn *c, const http_held *h, const char *tag, size_t tag_len, response *r)
{
    bool simple = h->style == IDMS_SEG_COMMAS;
    idms_mint_result res;
    idms_seg_grant sg;
    idms_req q = idms_conn_req(c);
    idms_segment_grant(&q, tag, tag_len, &sg, &res);
    if (res.status == IDMS_MINT_PARKED) {
        minted(c, &res, h->type, r);
        hold(c, h, tag, tag_len);
        return;
    }
    if (res.status != 200) {
        tinyid_error(r, simple, TINYID_SYS_ERR, res.message);
        return;
    }
    if (sg.stride > INT32_MAX) {
        /* tinyid's delta is a Java int: the segment is dropped (never
         * handed out). */
        tinyid_error(r, simple, TINYID_SYS_ERR,
                     "the tag's stride does not fit tinyid's delta (a Java int)");
        return;
    }
    /* tinyid's SegmentId: IDs currentId + delta, + 2 delta, ... up to
     * maxId, each = remainder (mod delta); the client loads the next
     * segment once an ID reaches loadingId (tinyid's server puts it a
     * fifth of the way: step * 20 / 100). The store keeps first + (count
     * - 1) * stride within 2^63 - 1, so nothing here wraps. */
    int64_t current = (int64_t)sg.first - (int64_t)sg.stride;
    uint64_t span = sg.count * sg.stride;
    int64_t loading = current + (int64_t)(span / 5);
    int64_t max = (int64_t)(sg.first + (sg.count - 1) * sg.stride);
    unsigned delta = (unsigned)sg.stride;
    unsigned remainder = (unsigned)(sg.first % sg.stride);
    r->status = 200;
    r->content_type = h->type;
    if (simple)
        idms_buf_printf(&r->body, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%u,%u", current, loading,
                        max, delta, remainder);
    else
        idms_buf_printf(&r->body,
                        "{\"data\":{\"maxId\":%" PRId64 ",\"loadingId\":%" PRId64
                        ",\"currentId\":%" PRId64 ",\"delta\":%u,\"remainder\":%u},\"code\":200,"
                        "\"message\":\"\"}",
                        max, loading, current, delta, remainder);
}

static int route_tinyid(idms_conn *c, const idms_http_request *req, bool head, const char *which,
                        size_t which_len, const char *query, size_t query_len, response *r)
{
    int kind = tinyid_kind(which, which_len);
    bool simple = kind == TINYID_NEXT_ID_SIMPLE || kind == TINYID_SEGMENT_SIMPLE;
    const char *type = simple ? "text/plain; charset=utf-8" : "application/json";
    const char *body = NULL;
    size_t body_len = 0;
    const char *ctype = NULL;
    size_t ctype_len = 0;
    if (req->content_length > 0 && idms_http_header_get(req, "Content-Type", &ctype, &ctype_len) &&
        idms_http_is_form(ctype, ctype_len)) {
        if (body_too_large(req, TINYID_BODY_MAX, "a form body has", r))
            return IDMS_ROUTE_TINYID;
        if (r->body_incomplete) {
            r->parked = true; /* not consumed: offered again with more input */
            return IDMS_ROUTE_TINYID;
        }
        body = r->req_body;
        body_len = r->req_body_len;
    }
    char tag[IDMSEG_TAG_MAX + 1], batch[16], token[IDMS_AUTH_TOKEN_MAX + 1];
    idms_http_field f[3] = {{.key = "bizType", .dst = tag, .cap = sizeof tag},
                            {.key = "batchSize", .dst = batch, .cap = sizeof batch},
                            {.key = "token", .dst = token, .cap = sizeof token}};
    idms_http_form_fields(query, query_len, body, body_len, f, 3);
    bool allowed = tinyid_token_ok(c, req, &f[2]);
    explicit_bzero(token, sizeof token);
    if (!allowed || f[0].given != 1 || f[0].bad || f[0].len == 0) {
        tinyid_error(r, simple, TINYID_TOKEN_ERR, "token is error");
        return IDMS_ROUTE_TINYID;
    }
    idms_mint_result res;
    const idms_segments *g = idms_conn_services(c)->segments;
    int64_t batch_size = 1;
    bool batch_ok = kind >= TINYID_SEGMENT || tinyid_batch(&f[1], &batch_size);
    if (!batch_ok || !idms_segment_check(g, tag, f[0].len, 1, &res)) {
        tinyid_error(r, simple, TINYID_SYS_ERR,
                     batch_ok ? res.message : "batchSize must be a whole number (a Java int)");
        return IDMS_ROUTE_TINYID;
    }
    if (head || (kind < TINYID_SEGMENT && batch_size <= 0)) {
        /* HEAD mints nothing; tinyid answers a batch of 0 or less with an
         * empty list ("" from nextIdSimple). */
        r->status = 200;
        r->content_type = type;
        r->head_of_mint = head;
        if (!head && !simple)
            idms_buf_puts(&r->body, "{\"data\":[],\"code\":200,\"message\":\"\"}");
        return IDMS_ROUTE_TINYID;
    }
    http_held h = {.route = IDMS_ROUTE_TINYID};
    h.type = type;
    h.style = simple ? IDMS_SEG_COMMAS : IDMS_SEG_TINYID_JSON;
    if (kind >= TINYID_SEGMENT) {
        h.kind = HELD_GRANT;
        go_grant(c, &h, tag, f[0].len, r);
        return IDMS_ROUTE_TINYID;
    }
    h.kind = HELD_SEGMENT;
    h.count = (uint64_t)batch_size > g->max_count ? g->max_count : (uint64_t)batch_size;
    go_segment(c, &h, tag, f[0].len, r);
    return IDMS_ROUTE_TINYID;
}

static void go_hlc(idms_conn *c, const http_held *h, response *r);

/* The most a POST /v1/hlc body may hold: a stamp is 16 bytes (and a line
 * end); more is 413, and that body is not read. */
#define HLC_BODY_MAX 64

/* GET /v1/hlc (a local event), POST /v1/hlc (the body's stamp merged),
 * HEAD (a GET's headers, the clock untouched: a HEAD must not advance
 * it). The service may park the request until the mark is durable (hlc.h). */
static int route_hlc(idms_conn *c, const idms_http_request *req, bool head, bool get,
                     const char *query, size_t query_len, response *r)
{
    bool post = req->method_len == 4 && memcmp(req->method, "POST", 4) == 0;
    if (!get && !head && !post) {
        json_error(r, 405, "only GET, HEAD and POST are served on /v1/hlc");
        r->allow = true;
        r->allow_post = true;
        return IDMS_ROUTE_HLC;
    }
    if (post && body_too_large(req, HLC_BODY_MAX, "the body is a stamp:", r))
        return IDMS_ROUTE_HLC;
    if (!query_ok(query, query_len, no_params, "no query parameters", r))
        return IDMS_ROUTE_HLC;
    const char *accept = NULL;
    size_t accept_len = 0;
    bool json = idms_http_header_get(req, "Accept", &accept, &accept_len) &&
                idms_http_accepts_json(accept, accept_len);
    const char *type = json ? "application/json" : "text/plain; charset=utf-8";
    if (head) {
        head_of_mint(r, type, !json, IDM_HLC_STRLEN + 1);
        return IDMS_ROUTE_HLC;
    }
    uint64_t remote = 0;
    if (post) {
        if (r->body_incomplete) {
            r->parked = true; /* not consumed: offered again with more input */
            return IDMS_ROUTE_HLC;
        }
        char msg[IDM_ERROR_MSG_CAP + 32];
        if (!idms_hlc_parse(r->req_body, r->req_body_len, &remote, msg, sizeof msg)) {
            json_error(r, 400, msg);
            return IDMS_ROUTE_HLC;
        }
    }
    http_held h = {.kind = HELD_HLC, .route = IDMS_ROUTE_HLC};
    h.type = type;
    h.json = json;
    h.has_remote = post;
    h.remote = remote;
    go_hlc(c, &h, r);
    return IDMS_ROUTE_HLC;
}

/* /v1/hlc, parsed (h): a stamp, or the wait for the ceiling. */
static void go_hlc(idms_conn *c, const http_held *h, response *r)
{
    idms_hlc_result res;
    idms_req q = idms_conn_req(c);
    idms_hlc_stamp(&q, h->has_remote ? &h->remote : NULL, &res);
    if (res.status == IDMS_HLC_PARKED) {
        idms_conn_park(c, &res.park);
        r->parked = true;
        r->status = 200;
        r->content_type = h->type;
        hold(c, h, h->text, 0);
        return;
    }
    if (res.status != 200) {
        json_error(r, res.status, res.message);
        r->retry_after_s = res.retry_after_s;
        return;
    }
    r->status = 200;
    r->content_type = h->type;
    char mem[128];
    idmx_outbuf ob;
    idmx_outbuf_init(&ob, mem, sizeof mem, drain_to_body, &r->body);
    if (h->json) {
        idmx_hlc_json(&ob, res.stamp);
    } else {
        char text[IDM_HLC_STRLEN + 1];
        if (idm_hlc_format(res.stamp, text, sizeof text) == IDM_OK)
            idmx_outbuf_puts(&ob, text);
    }
    idmx_outbuf_putc(&ob, '\n');
    if (idmx_outbuf_flush(&ob) != 0)
        r->body.failed = true;
}

/* /healthz, /readyz and /metrics. */
/* GET /v1/obfuscate/{id}[?prefix=P] and GET /v1/reveal/{token}
 * (server/keyed.c does the work): text/plain with the result and "\n", or
 * one JSON object with Accept: application/json; errors as {"error": ...}
 * (400 bad input, 404 no --key-file, 422 a forged token). HEAD answers
 * the same without the body. */
static int route_keyed(idms_conn *c, const idms_http_request *req, int rt, const char *seg,
                       size_t seg_len, const char *query, size_t query_len, response *r)
{
    bool obf = rt == IDMS_ROUTE_OBFUSCATE;
    if (!query_ok(query, query_len, obf ? obfuscate_params : no_params, obf ? "prefix" : "none", r))
        return rt;
    char in[IDM_STOKEN_STRLEN_MAX + 1];
    ptrdiff_t n = idms_http_percent_decode(seg, seg_len, in, sizeof in);
    if (n < 0) {
        json_error(r, 400,
                   obf ? "the ID must be a decimal 64-bit number"
                       : "not an obfuscated ID (too long, or a malformed %-escape)");
        return rt;
    }
    char prefix[IDM_TYPEID_PREFIX_MAX + 2];
    size_t plen = 0;
    if (obf && idms_http_query_get(query, query_len, "prefix", prefix, sizeof prefix, &plen) < 0) {
        json_error(r, 400, "invalid prefix: at most 63 characters of [a-z_]");
        return rt;
    }
    char msg[IDMS_KEYED_MSG_CAP];
    char token[IDM_OBF_STRLEN_MAX + 1];
    char id_text[24];
    int status;
    if (obf) {
        status = idms_keyed_obfuscate(idms_conn_services(c)->keyed, in, (size_t)n, prefix, plen,
                                      token, sizeof token, msg, sizeof msg);
        if (status == 200) {
            memcpy(id_text, in, (size_t)n);
            id_text[n] = '\0';
        }
    } else {
        uint64_t id = 0;
        status =
            idms_keyed_reveal(idms_conn_services(c)->keyed, in, (size_t)n, &id, msg, sizeof msg);
        if (status == 200) {
            snprintf(id_text, sizeof id_text, "%" PRIu64, id);
            memcpy(token, in, (size_t)n);
            token[n] = '\0';
        }
    }
    if (status != 200) {
        json_error(r, status, msg);
        return rt;
    }
    const char *accept = NULL;
    size_t accept_len = 0;
    bool json = idms_http_header_get(req, "Accept", &accept, &accept_len) &&
                idms_http_accepts_json(accept, accept_len);
    r->status = 200;
    if (json) {
        /* Both are digits or base62 and a prefix of [a-z_]: nothing to escape. */
        r->content_type = "application/json";
        idms_buf_printf(&r->body, "{\"id\": \"%s\", \"token\": \"%s\"}\n", id_text, token);
    } else {
        r->content_type = "text/plain; charset=utf-8";
        idms_buf_printf(&r->body, "%s\n", obf ? token : id_text);
    }
    return rt;
}

/* Whether the request carries the right token (an open route's request
 * may, and then sees more: /readyz's details). */
static bool has_token(const idms_auth *a, const idms_http_request *req)
{
    const char *token = NULL;
    size_t token_len = 0;
    return credentials(req, &token, &token_len) == 1 && idms_auth_token_ok(a, token, token_len);
}

static int route_status(const idms_services *s, const idms_auth *a, const idms_http_request *req,
                        int rt, const char *query, size_t query_len, response *r)
{
    if (!query_ok(query, query_len, no_params, "no query parameters", r))
        return rt;
    if (rt == IDMS_ROUTE_HEALTHZ) {
        r->status = 200;
        r->content_type = "text/plain; charset=utf-8";
        idms_buf_puts(&r->body, "ok\n");
    } else if (rt == IDMS_ROUTE_READYZ) {
        /* The probe is open: without the token it says only a class of
         * the reason, never whose pid, host, address or path (the details
         * are for whoever may read /v1/node). */
        int64_t now;
        const idms_pauses *p = idms_status_poll(s->status, &now);
        bool ready = p->cause == IDMS_PAUSE_NONE;
        bool detail = !a->required || has_token(a, req);
        r->status = ready ? 200 : 503;
        if (!ready)
            r->retry_after_s = 1;
        const char *accept = NULL;
        size_t accept_len = 0;
        if (idms_http_header_get(req, "Accept", &accept, &accept_len) &&
            idms_http_accepts_json(accept, accept_len)) {
            r->content_type = "application/json";
            idms_buf_printf(&r->body, "{\"ready\": %s, \"pause\": ", ready ? "true" : "false");
            idms_pauses_json(p, now, detail, &r->body);
            idms_buf_puts(&r->body, "}\n");
        } else {
            r->content_type = "text/plain; charset=utf-8";
            idms_pauses_text(p, now, detail, &r->body);
        }
    } else if (rt == IDMS_ROUTE_NODE) {
        int64_t now;
        const idms_pauses *p = idms_status_poll(s->status, &now);
        r->status = 200;
        r->content_type = "application/json";
        idms_node_json(s->node, p, now, &r->body);
    } else {
        r->status = 200;
        r->content_type = "text/plain; version=0.0.4; charset=utf-8";
        s->render_metrics(s->ctx, &r->body);
    }
    return rt;
}

static int route(idms_conn *c, const idms_http_request *req, response *r)
{
    const idms_services *s = idms_conn_services(c);
    const char *target, *authority, *path, *query;
    size_t target_len, authority_len, path_len, query_len, seg = 0;
    /* RFC 9112 section 3.2.2: absolute-form is routed by its path; the
     * authority names this server (or whatever the client thinks it is)
     * and is not checked, as Host is not. */
    if (idms_http_target_form(req->target, req->target_len, &target, &target_len, &authority,
                              &authority_len) == IDMS_HTTP_INVALID) {
        json_error(r, 400, "an http URI with an empty host (RFC 9110 section 4.2.1)");
        return IDMS_ROUTE_OTHER;
    }
    idms_http_split_target(target, target_len, &path, &path_len, &query, &query_len);
    /* Escapes of unreserved characters are the characters (RFC 3986
     * section 6.2.2.2): decoded before routing, every other escape left for
     * the route's own decoder (idms_http_path_unreserved). A path with a
     * malformed escape is routed as sent. A path without a '%' (nearly
     * every one) is itself: not copied. */
    char unreserved[IDMS_HTTP_MAX_TARGET + 1];
    if (memchr(path, '%', path_len) != NULL) {
        ptrdiff_t unreserved_len =
            idms_http_path_unreserved(path, path_len, unreserved, sizeof unreserved);
        if (unreserved_len >= 0) {
            path = unreserved;
            path_len = (size_t)unreserved_len;
        }
    }
    int rt = route_of(path, path_len, &seg);
    if (!authorized(c, req, rt, r))
        return rt;
    bool head = req->method_len == 4 && memcmp(req->method, "HEAD", 4) == 0;
    bool get = req->method_len == 3 && memcmp(req->method, "GET", 3) == 0;
    if (rt == IDMS_ROUTE_HLC)
        return route_hlc(c, req, head, get, query, query_len, r);
    /* tinyid's and Leaf's routes take any method, as their Spring
     * controllers' @RequestMapping without a method does. */
    bool any_method = rt == IDMS_ROUTE_TINYID || rt == IDMS_ROUTE_LEAF ||
                      rt == IDMS_ROUTE_SEGMENT_LEAF || rt == IDMS_ROUTE_LEAF_MONITOR;
    if (!get && !head && !any_method) {
        json_error(r, 405, "only GET and HEAD are served");
        r->allow = true;
        return IDMS_ROUTE_OTHER;
    }
    switch (rt) {
    case IDMS_ROUTE_IDS:
        return route_ids(c, req, head, path + seg, path_len - seg, query, query_len, r);
    case IDMS_ROUTE_INSPECT:
        return route_inspect(s, path + seg, path_len - seg, query, query_len, r);
    case IDMS_ROUTE_LEAF:
        return route_leaf(c, head, path + seg, path_len - seg, r);
    case IDMS_ROUTE_SEGMENT:
        return route_segment(c, req, head, path + seg, path_len - seg, query, query_len, r);
    case IDMS_ROUTE_SEGMENT_LEAF:
        return route_segment_leaf(c, head, path + seg, path_len - seg, r);
    case IDMS_ROUTE_TINYID:
        return route_tinyid(c, req, head, path + seg, path_len - seg, query, query_len, r);
    case IDMS_ROUTE_LEAF_MONITOR:
        return route_leaf_monitor(s, path_len, query, query_len, r);
    case IDMS_ROUTE_OBFUSCATE:
    case IDMS_ROUTE_REVEAL:
        return route_keyed(c, req, rt, path + seg, path_len - seg, query, query_len, r);
    case IDMS_ROUTE_OTHER:
        json_error(r, 404,
                   "no such route (try /v1/ids/uuidv7, /v1/inspect/ID, /v1/segment/TAG, /v1/node, "
                   "/v1/hlc, "
                   "/v1/obfuscate/ID, /v1/reveal/TOKEN, /healthz, /readyz, /metrics)");
        return rt;
    default:
        return route_status(s, c->net->auth, req, rt, query, query_len, r);
    }
}

/* Whether buf[0..len) holds another request (complete or malformed) after
 * the one whose head ends at used and whose body is content_length bytes. */
static bool another_request(const char *buf, size_t len, size_t used, uint64_t content_length)
{
    if (content_length > len - used)
        return false;
    size_t next = used + (size_t)content_length;
    idms_http_request tmp;
    return next < len && idms_http_parse_request(buf + next, len - next, &tmp, NULL, NULL) !=
                             IDMS_HTTP_INCOMPLETE;
}

/* The request held at the head of the buffer goes on from its record:
 * not parsed, checked or authorized again. */
static int resume_held(idms_conn *c, http_held *h, response *r)
{
    switch (h->kind) {
    case HELD_IDS:
        go_ids(c, h, NULL, r);
        break;
    case HELD_SEGMENT:
        go_segment(c, h, h->text, h->text_len, r);
        break;
    case HELD_GRANT:
        go_grant(c, h, h->text, h->text_len, r);
        break;
    default:
        go_hlc(c, h, r);
    }
    return h->route;
}

/* CORS (idmintd(8), HTTP, "Cross-origin requests"): r->cors is the
 * Access-Control-Allow-Origin for the request's Origin - "*" when --cors-origin
 * lists it, else the listed origin the Origin header names (compared
 * without regard to case: browsers send it in lower case, as the list
 * holds it), else NULL. A preflight (OPTIONS with Origin and
 * Access-Control-Request-Method) from such an origin is answered here,
 * 204 with cors_headers, before the route or the token is looked at: the
 * Fetch standard sends a preflight without credentials, and the answer is
 * the same for every path, so it tells nothing about the routes; the
 * request that follows needs its token as any other. Returns true when r
 * is that answer. A preflight from an origin not listed, and any OPTIONS
 * when no origin is, is routed as before (401 without the token, else
 * 405): the browser then refuses the call. */
static bool cors_reply(const idms_options *o, const idms_http_request *req, response *r)
{
    const char *origin = NULL;
    size_t origin_len = 0;
    if (o->n_cors_origins == 0 || !idms_http_header_get(req, "Origin", &origin, &origin_len))
        return false;
    for (size_t i = 0; i < o->n_cors_origins && r->cors == NULL; i++) {
        const char *allowed = o->cors_origins[i];
        if (strcmp(allowed, "*") == 0 ||
            (strlen(allowed) == origin_len && strncasecmp(allowed, origin, origin_len) == 0))
            r->cors = allowed;
    }
    const char *method = NULL;
    size_t method_len = 0;
    if (r->cors == NULL || req->method_len != 7 || memcmp(req->method, "OPTIONS", 7) != 0 ||
        !idms_http_header_get(req, "Access-Control-Request-Method", &method, &method_len))
        return false;
    r->status = 204;
    r->preflight = true;
    return true;
}

/* The answer to the HTTP/2 connection preface (idms_http_h2_preface): a
 * client with prior knowledge (curl --http2-prior-knowledge, gRPC) reads
 * only HTTP/2 frames, so an HTTP/1.1 505 would be garbage to it. RFC 9113's
 * clean refusal instead: the server's connection preface, an empty
 * SETTINGS frame (section 3.4), then GOAWAY (section 6.8) for last stream
 * 0 with HTTP_1_1_REQUIRED (0xd, section 7) and a text for the debug data;
 * then the connection closes. A frame header is the payload's length (24
 * bits), the type, the flags and the stream (31 bits). */
#define H2_DEBUG "idmintd speaks HTTP/1.1 only"
/* clang-format off */
static const char h2_refusal[] =
    "\x00\x00\x00" "\x04" "\x00" "\x00\x00\x00\x00" /* SETTINGS, empty */
    "\x00\x00\x24" "\x07" "\x00" "\x00\x00\x00\x00" /* GOAWAY, 8 + 28 bytes */
    "\x00\x00\x00\x00"                             /* last stream: none */
    "\x00\x00\x00\x0d"                             /* HTTP_1_1_REQUIRED */
    H2_DEBUG;
/* clang-format on */
_Static_assert(sizeof H2_DEBUG - 1 == 0x24 - 8, "GOAWAY's length");

static ptrdiff_t http_feed(idms_conn *c, const char *buf, size_t len, idms_buf *out)
{
    idms_metrics *m = idms_conn_services(c)->metrics;
    http_held *held = &((http_session *)idms_conn_session(c))->held;
    size_t used = 0;
    while (used < len) {
        if (out->len >= idms_conn_batch(c)) {
            c->more = true;
            break;
        }
        response r = {0};
        idms_buf_init(&r.body);
        ptrdiff_t n;
        bool head = false, wants_keep_alive;
        uint64_t content_length;
        int rt;
        r.cors_on = idms_conn_services(c)->opt->n_cors_origins > 0;
        if (used == 0 && held->kind != HELD_NONE) {
            /* A request held (it parked, or sent a part; never a HEAD):
             * still at the head of the buffer, it goes on from its record. */
            n = (ptrdiff_t)held->len;
            used += (size_t)n;
            wants_keep_alive = held->keep_alive;
            r.http10 = held->http10;
            r.cors = held->cors;
            content_length = held->content_length;
            rt = resume_held(c, held, &r);
        } else {
            int h2 = idms_http_h2_preface(buf + used, len - used);
            if (h2 == IDMS_HTTP_INCOMPLETE) {
                idms_buf_free(&r.body);
                break;
            }
            if (h2 == 1) {
                m->protocol_errors++;
                idms_buf_append(out, h2_refusal, sizeof h2_refusal - 1);
                idms_buf_free(&r.body);
                idms_metrics_count_request(m, IDMS_ROUTE_OTHER, 505);
                return -1;
            }
            idms_http_request req;
            int status = 400;
            const char *why = "bad request";
            n = idms_http_parse_request(buf + used, len - used, &req, &status, &why);
            if (n == IDMS_HTTP_INCOMPLETE) {
                idms_buf_free(&r.body);
                break;
            }
            if (n < 0) {
                m->protocol_errors++;
                json_error(&r, status, why);
                write_response(out, &r, false, false);
                idms_buf_free(&r.body);
                idms_metrics_count_request(m, IDMS_ROUTE_OTHER, status);
                return -1;
            }
            used += (size_t)n;
            head = req.method_len == 4 && memcmp(req.method, "HEAD", 4) == 0;
            wants_keep_alive = req.keep_alive;
            r.http10 = req.minor_version == 0;
            content_length = req.content_length;
            r.req_body = buf + used;
            r.req_body_len =
                req.content_length < len - used ? (size_t)req.content_length : len - used;
            r.body_incomplete = req.content_length > len - used;
            rt = cors_reply(idms_conn_services(c)->opt, &req, &r) ? IDMS_ROUTE_OTHER
                                                                  : route(c, &req, &r);
        }
        /* Draining answers every request already received: the close goes
         * on the last complete one in the buffer (RFC 9112 section 9.6
         * forbids processing any after it). */
        bool keep_alive = wants_keep_alive && !c->over_limit &&
                          (!c->net->draining || another_request(buf, len, used, content_length));
        if (r.close)
            keep_alive = false;
        if (r.body.failed || r.cut) {
            /* Out of memory, or a body sent in parts cut short: the
             * connection closes after what was sent. */
            idms_buf_free(&r.body);
            held->kind = HELD_NONE;
            if (r.cut)
                idms_metrics_count_request(m, rt, 503);
            return -1;
        }
        bool unfinished = r.parked || r.part;
        if (r.in_parts && r.continued)
            idms_buf_append(out, r.body.data, r.body.len);
        else if (!unfinished || (r.in_parts && r.body.len > 0))
            write_response(out, &r, head, keep_alive); /* the head with the first part */
        if (unfinished) {
            /* Not consumed: held (hold) and gone on with when the
             * connection resumes, or (a body still coming: nothing held)
             * parsed again with the next input. */
            if (r.body_incomplete && c->park == IDMS_PARK_NONE)
                c->body_wait = true;
            if (held->kind != HELD_NONE) {
                held->len = (size_t)n;
                held->keep_alive = wants_keep_alive;
                held->http10 = r.http10;
                held->cors = r.cors;
                held->content_length = content_length;
            }
            idms_buf_free(&r.body);
            used -= (size_t)n;
            break;
        }
        held->kind = HELD_NONE;
        idms_metrics_count_request(m, rt, r.status);
        idms_buf_free(&r.body);
        /* A body we do not read is skipped, to find the next request. */
        if (content_length > 0) {
            uint64_t avail = len - used;
            uint64_t skip = content_length < avail ? content_length : avail;
            used += (size_t)skip;
            c->skip_body = content_length - skip;
            if (c->skip_body > 0)
                return keep_alive ? (ptrdiff_t)used : -1;
        }
        if (!keep_alive) {
            c->close_after_write = true;
            return (ptrdiff_t)used;
        }
    }
    return (ptrdiff_t)used;
}

/* A request head (or body) not complete within --header-timeout of its
 * first byte: 408 (RFC 9110 section 15.5.9), and the connection closes. */
static void http_too_slow(idms_buf *out, uint32_t ms)
{
    char msg[96];
    snprintf(msg, sizeof msg, "request not complete within %" PRIu32 " ms (--header-timeout)", ms);
    response r = {0};
    idms_buf_init(&r.body);
    json_error(&r, 408, msg);
    write_response(out, &r, false, false);
    out->failed |= r.body.failed;
    idms_buf_free(&r.body);
}

/* A health probe (conn.h): GET or HEAD of /healthz or /readyz, whose
 * answers /healthz's promise ("whenever the process is alive") and a load
 * balancer need even while every connection of the port is taken. */
static int http_probe(const char *buf, size_t len)
{
    idms_http_request req;
    ptrdiff_t n = idms_http_parse_request(buf, len, &req, NULL, NULL);
    if (n == IDMS_HTTP_INCOMPLETE)
        return -1;
    if (n < 0)
        return 0;
    bool get = (req.method_len == 3 && memcmp(req.method, "GET", 3) == 0) ||
               (req.method_len == 4 && memcmp(req.method, "HEAD", 4) == 0);
    return get && ((req.target_len == 8 && memcmp(req.target, "/healthz", 8) == 0) ||
                   (req.target_len == 7 && memcmp(req.target, "/readyz", 7) == 0));
}

const idms_proto idms_http_proto = {
    "http",
    http_feed,
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 40\r\n"
    "Connection: close\r\nRetry-After: 1\r\n\r\n{\"error\": \"too many open connections\"}\r\n",
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: "
    "close\r\n\r\n",
    http_too_slow,
    IDMS_HTTP_MAX_HEAD,
    "an HTTP request",
    sizeof(http_session), /* the request held while it waits */
    false,                /* counted by route */
    false,                /* carries the token (Authorization: Bearer) */
    http_probe,
    true,
    NULL, /* the session holds no allocation */
};
