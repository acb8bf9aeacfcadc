/*
 * http_server.c - the HTTP/1.1 adapter: routes parsed requests to the mint
 * service, the inspector, health and metrics, and writes responses with
 * Content-Length (keep-alive and pipelining: every complete request in the
 * buffer is answered in order, in one write).
 *
 *   GET /v1/ids/{format}?count=N[&prefix=P]   one ID per line, or a JSON
 *                                             array with Accept: application/json
 *   GET /v1/inspect/{id}                      idmint inspect --json's object
 *   GET /api/snowflake/get/{key}              Meituan Leaf: the bare decimal ID
 *   GET /healthz, /readyz, /metrics
 *
 * HEAD is answered like GET without a body; other methods get 405.
 */
#include "idmintd.h"

#include "http/http_parser.h"
#include "inspect_render.h"
#include "json.h"
#include "outbuf.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 400:
        return "Bad Request";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 414:
        return "URI Too Long";
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
    bool parked;           /* no response yet: the request waits (mint.h) */
    idms_buf body;
} response;

static void write_response(idms_buf *out, response *r, bool head_only, bool keep_alive)
{
    idms_buf_printf(out,
                    "HTTP/1.1 %d %s\r\nServer: idmintd\r\nDate: %s\r\nContent-Type: %s\r\n"
                    "Content-Length: %zu\r\n",
                    r->status, reason_phrase(r->status), http_date(), r->content_type, r->body.len);
    if (r->retry_after_s > 0)
        idms_buf_printf(out, "Retry-After: %" PRId64 "\r\n", r->retry_after_s);
    if (r->allow)
        idms_buf_puts(out, "Allow: GET, HEAD\r\n");
    if (!keep_alive)
        idms_buf_puts(out, "Connection: close\r\n");
    idms_buf_puts(out, "\r\n");
    if (!head_only)
        idms_buf_append(out, r->body.data, r->body.len);
}

/* A JSON error body: {"error": "..."}. */
static void json_error(response *r, int status, const char *message)
{
    r->status = status;
    r->content_type = "application/json";
    char esc[2 * IDM_ERROR_MSG_CAP + 256];
    if (idmx_json_escape(message, strlen(message), esc, sizeof esc) == (size_t)-1)
        snprintf(esc, sizeof esc, "\"error\"");
    idms_buf_printf(&r->body, "{\"error\": %s}\n", esc);
}

static bool starts_with(const char *p, size_t len, const char *prefix, size_t *rest)
{
    size_t n = strlen(prefix);
    if (len < n || memcmp(p, prefix, n) != 0)
        return false;
    *rest = n;
    return true;
}

/* The mint service's answer as a response: parked, an error, or IDs. */
static void minted(const idms_mint_result *res, const char *content_type, response *r)
{
    if (res->status == IDMS_MINT_PARKED) {
        r->parked = true;
    } else if (res->status != 200) {
        json_error(r, res->status, res->message);
        r->retry_after_s = res->retry_after_s;
    } else {
        r->status = 200;
        r->content_type = content_type;
    }
}

static int route_ids(idms_conn *c, const idms_http_request *req, const char *seg, size_t seg_len,
                     const char *query, size_t query_len, response *r)
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
    const char *accept = NULL;
    size_t accept_len = 0;
    bool json = idms_http_header_get(req, "Accept", &accept, &accept_len) &&
                idms_http_accepts_json(accept, accept_len);
    idms_mint_result res;
    idms_mint(c, f->id, has_prefix == 1 ? prefix : NULL, count, json ? IDMS_OUT_JSON : IDMS_OUT_LINES,
              &r->body, &res);
    minted(&res, json ? "application/json" : "text/plain; charset=utf-8", r);
    return IDMS_ROUTE_IDS;
}

static int route_inspect(idms_server *s, const char *seg, size_t seg_len, response *r)
{
    char id[512];
    ptrdiff_t n = idms_http_percent_decode(seg, seg_len, id, sizeof id);
    if (n < 0) {
        json_error(r, 400, "the ID is not a valid path segment");
        return IDMS_ROUTE_INSPECT;
    }
    idm_inspection in;
    idm_error err = {0};
    char mem[2048];
    idmx_outbuf ob;
    idmx_outbuf_init(&ob, mem, sizeof mem, NULL, NULL);
    int rc = idm_inspect(id, (size_t)n, IDM_KIND_AUTO, &s->layout, &in, &err);
    if (rc == IDM_OK)
        idmx_inspect_json(&ob, id, (size_t)n, &in, &s->layout);
    else
        idmx_inspect_json_error(&ob, id, (size_t)n, err.msg);
    if (idmx_outbuf_flush(&ob) != 0) {
        json_error(r, 500, "inspection too large");
        return IDMS_ROUTE_INSPECT;
    }
    r->status = rc == IDM_OK ? 200 : 400;
    r->content_type = "application/json";
    idms_buf_append(&r->body, mem, ob.len);
    idms_buf_puts(&r->body, "\n");
    return IDMS_ROUTE_INSPECT;
}

static int route(idms_conn *c, const idms_http_request *req, response *r)
{
    idms_server *s = c->server;
    const char *path, *query;
    size_t path_len, query_len, rest;
    idms_http_split_target(req->target, req->target_len, &path, &path_len, &query, &query_len);
    if (starts_with(path, path_len, "/v1/ids/", &rest) && path_len > rest &&
        memchr(path + rest, '/', path_len - rest) == NULL)
        return route_ids(c, req, path + rest, path_len - rest, query, query_len, r);
    if (starts_with(path, path_len, "/v1/inspect/", &rest) && path_len > rest &&
        memchr(path + rest, '/', path_len - rest) == NULL)
        return route_inspect(s, path + rest, path_len - rest, r);
    if (starts_with(path, path_len, "/api/snowflake/get/", &rest) && path_len > rest) {
        /* Leaf's snowflake mode ignores the key; so do we. */
        idms_mint_result res;
        idms_mint(c, IDMX_FMT_SNOWFLAKE, NULL, 1, IDMS_OUT_LINES, &r->body, &res);
        minted(&res, "text/plain; charset=utf-8", r);
        if (res.status == 200 && r->body.len > 0)
            r->body.len--; /* Leaf answers the bare number, no newline */
        return IDMS_ROUTE_LEAF;
    }
    if (path_len == 8 && memcmp(path, "/healthz", 8) == 0) {
        r->status = 200;
        r->content_type = "text/plain; charset=utf-8";
        idms_buf_puts(&r->body, "ok\n");
        return IDMS_ROUTE_HEALTHZ;
    }
    if (path_len == 7 && memcmp(path, "/readyz", 7) == 0) {
        char why[256];
        bool ready = idms_ready(s, why, sizeof why);
        r->status = ready ? 200 : 503;
        r->content_type = "text/plain; charset=utf-8";
        idms_buf_printf(&r->body, "%s\n", why);
        if (!ready)
            r->retry_after_s = 1;
        return IDMS_ROUTE_READYZ;
    }
    if (path_len == 8 && memcmp(path, "/metrics", 8) == 0) {
        r->status = 200;
        r->content_type = "text/plain; version=0.0.4; charset=utf-8";
        idms_metrics_render(s, &r->body);
        return IDMS_ROUTE_METRICS;
    }
    json_error(r, 404, "no such route (try /v1/ids/uuidv7, /v1/inspect/ID, /healthz, /readyz, /metrics)");
    return IDMS_ROUTE_OTHER;
}

/* Whether buf[0..len) holds another request (complete or malformed) after
 * the one whose head ends at used. */
static bool another_request(const char *buf, size_t len, size_t used, const idms_http_request *req)
{
    if (req->content_length > len - used)
        return false;
    size_t next = used + (size_t)req->content_length;
    idms_http_request tmp;
    return next < len &&
           idms_http_parse_request(buf + next, len - next, &tmp, NULL, NULL) != IDMS_HTTP_INCOMPLETE;
}

static ptrdiff_t http_feed(idms_conn *c, const char *buf, size_t len, idms_buf *out)
{
    idms_server *s = c->server;
    size_t used = 0;
    while (used < len) {
        if (out->len >= IDMS_OUT_BATCH) {
            c->more = true;
            break;
        }
        idms_http_request req;
        int status = 400;
        const char *why = "bad request";
        ptrdiff_t n = idms_http_parse_request(buf + used, len - used, &req, &status, &why);
        if (n == IDMS_HTTP_INCOMPLETE)
            break;
        if (n < 0) {
            s->metrics.protocol_errors++;
            response r = {0};
            idms_buf_init(&r.body);
            json_error(&r, status, why);
            write_response(out, &r, false, false);
            idms_buf_free(&r.body);
            idms_metrics_count_request(s, IDMS_ROUTE_OTHER, status);
            return -1;
        }
        used += (size_t)n;
        response r = {0};
        idms_buf_init(&r.body);
        int rt;
        bool head = req.method_len == 4 && memcmp(req.method, "HEAD", 4) == 0;
        bool get = req.method_len == 3 && memcmp(req.method, "GET", 3) == 0;
        /* Draining answers every request already received: the close goes
         * on the last complete one in the buffer (RFC 9112 section 9.6
         * forbids processing any after it). */
        bool keep_alive = req.keep_alive && (!s->draining || another_request(buf, len, used, &req));
        if (!get && !head) {
            json_error(&r, 405, "only GET and HEAD are served");
            r.allow = true;
            rt = IDMS_ROUTE_OTHER;
        } else {
            rt = route(c, &req, &r);
        }
        if (r.parked) {
            /* Not consumed: offered again when the connection resumes. */
            idms_buf_free(&r.body);
            used -= (size_t)n;
            break;
        }
        if (r.body.failed) {
            idms_buf_free(&r.body);
            return -1;
        }
        write_response(out, &r, head, keep_alive);
        idms_metrics_count_request(s, rt, r.status);
        idms_buf_free(&r.body);
        /* A body we do not read is skipped, to find the next request. */
        if (req.content_length > 0) {
            uint64_t avail = len - used;
            uint64_t skip = req.content_length < avail ? req.content_length : avail;
            used += (size_t)skip;
            c->skip_body = req.content_length - skip;
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

const idms_proto idms_http_proto = {
    "http",
    http_feed,
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 40\r\n"
    "Connection: close\r\nRetry-After: 1\r\n\r\n{\"error\": \"too many open connections\"}\r\n",
    IDMS_HTTP_MAX_HEAD,
};
