/*
 * server/http/http_parser.c - the HTTP/1.x request-head parser and helpers
 * declared in http_parser.h (RFC 9112, RFC 9110).
 *
 * The parser walks the head once, byte by byte, through a cursor that knows
 * where the input ends and where the head limit is. Running out of input is
 * "incomplete" below the limit and 431 at it, so no decision depends on how
 * much input happened to arrive: each one is taken at a fixed byte.
 *
 * Left out (see the header): chunked bodies, trailers, Host syntax.
 */
#include "http/http_parser.h"

#include <stdbool.h>
#include <string.h>

enum { STEP_OK = 0, STEP_BAD = -1, STEP_MORE = -2 };

struct cursor {
    const char *buf;
    size_t pos;
    size_t end; /* min(len, IDMS_HTTP_MAX_HEAD): nothing at or past it is read */
    int at_cap; /* 1 when end is the head limit rather than the input's end */
    int status; /* set with reason when a step returns STEP_BAD */
    const char *reason;
};

static int fail(struct cursor *c, int status, const char *reason)
{
    c->status = status;
    c->reason = reason;
    return STEP_BAD;
}

/* Called when the next byte is needed and c->pos == c->end. */
static int ran_out(struct cursor *c)
{
    if (c->at_cap) {
        return fail(c, 431, "request head too large");
    }
    return STEP_MORE;
}

/* RFC 9110 section 5.6.2: tchar. */
static int is_tchar(unsigned char ch)
{
    if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
        return 1;
    }
    switch (ch) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
        return 1;
    default:
        return 0;
    }
}

static int is_digit(unsigned char ch)
{
    return ch >= '0' && ch <= '9';
}

static int is_ows(unsigned char ch)
{
    return ch == ' ' || ch == '\t';
}

static unsigned char lower(unsigned char ch)
{
    return ch >= 'A' && ch <= 'Z' ? (unsigned char)(ch - 'A' + 'a') : ch;
}

/* 1 when s[0..len) equals the lowercase NUL-terminated word, ignoring case. */
static int equals_nocase(const char *s, size_t len, const char *word)
{
    size_t i = 0;
    for (; i < len; i++) {
        if (word[i] == '\0' || lower((unsigned char)s[i]) != (unsigned char)word[i]) {
            return 0;
        }
    }
    return word[i] == '\0';
}

/* Consumes one line end (CRLF or a bare LF) at c->pos, or fails with 400
 * and the caller's reason when the byte there is neither. */
static int line_end(struct cursor *c, const char *reason)
{
    if (c->pos == c->end) {
        return ran_out(c);
    }
    unsigned char ch = (unsigned char)c->buf[c->pos];
    if (ch == '\n') {
        c->pos++;
        return STEP_OK;
    }
    if (ch != '\r') {
        return fail(c, 400, reason);
    }
    c->pos++;
    if (c->pos == c->end) {
        return ran_out(c);
    }
    if (c->buf[c->pos] != '\n') {
        return fail(c, 400, "bare CR in request head");
    }
    c->pos++;
    return STEP_OK;
}

/* RFC 9112 section 2.2: empty lines before the request-line are skipped. */
static int skip_empty_lines(struct cursor *c)
{
    for (;;) {
        if (c->pos == c->end) {
            return ran_out(c);
        }
        unsigned char ch = (unsigned char)c->buf[c->pos];
        if (ch != '\r' && ch != '\n') {
            return STEP_OK;
        }
        int rc = line_end(c, "malformed request line");
        if (rc != STEP_OK) {
            return rc;
        }
    }
}

/* Consumes the exact byte want, or fails with 400 and reason. */
static int expect(struct cursor *c, char want, const char *reason)
{
    if (c->pos == c->end) {
        return ran_out(c);
    }
    if (c->buf[c->pos] != want) {
        return fail(c, 400, reason);
    }
    c->pos++;
    return STEP_OK;
}

/* Consumes one DIGIT into *digit, or fails with 400 and reason. */
static int expect_digit(struct cursor *c, int *digit, const char *reason)
{
    if (c->pos == c->end) {
        return ran_out(c);
    }
    unsigned char ch = (unsigned char)c->buf[c->pos];
    if (!is_digit(ch)) {
        return fail(c, 400, reason);
    }
    *digit = ch - '0';
    c->pos++;
    return STEP_OK;
}

/* request-line = method SP request-target SP HTTP-version CRLF
 * (RFC 9112 section 3), with single spaces. */
static int request_line(struct cursor *c, idms_http_request *req)
{
    size_t start = c->pos;
    for (;;) {
        if (c->pos == c->end) {
            return ran_out(c);
        }
        unsigned char ch = (unsigned char)c->buf[c->pos];
        if (ch == ' ') {
            break;
        }
        if (!is_tchar(ch)) {
            return fail(c, 400, "invalid character in method");
        }
        c->pos++;
    }
    if (c->pos == start) {
        return fail(c, 400, "malformed request line");
    }
    req->method = c->buf + start;
    req->method_len = c->pos - start;
    c->pos++; /* the SP */

    start = c->pos;
    for (;;) {
        if (c->pos == c->end) {
            return ran_out(c);
        }
        unsigned char ch = (unsigned char)c->buf[c->pos];
        if (ch == ' ') {
            break;
        }
        if (ch < 0x21 || ch > 0x7E) {
            return fail(c, 400, "invalid character in request target");
        }
        if (c->pos - start == IDMS_HTTP_MAX_TARGET) {
            return fail(c, 414, "request target too long");
        }
        c->pos++;
    }
    if (c->pos == start) {
        return fail(c, 400, "malformed request line");
    }
    req->target = c->buf + start;
    req->target_len = c->pos - start;
    c->pos++; /* the SP */

    /* HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive. */
    static const char name[] = "HTTP/";
    for (size_t i = 0; i < sizeof name - 1; i++) {
        int rc = expect(c, name[i], "malformed HTTP version");
        if (rc != STEP_OK) {
            return rc;
        }
    }
    int major = 0;
    int minor = 0;
    int rc = expect_digit(c, &major, "malformed HTTP version");
    if (rc == STEP_OK) {
        rc = expect(c, '.', "malformed HTTP version");
    }
    if (rc == STEP_OK) {
        rc = expect_digit(c, &minor, "malformed HTTP version");
    }
    if (rc == STEP_OK) {
        rc = line_end(c, "malformed HTTP version");
    }
    if (rc != STEP_OK) {
        return rc;
    }
    if (major != 1) {
        return fail(c, 505, "HTTP version not supported");
    }
    /* RFC 9110 section 6.2: a higher minor version is handled as the
     * highest one implemented. */
    req->minor_version = minor >= 1 ? 1 : 0;
    return STEP_OK;
}

/* Facts gathered from the special headers. */
struct framing {
    int have_length;
    int hosts;
    int conn_close;
    int conn_keep_alive;
};

/* Content-Length = 1*DIGIT (RFC 9110 section 8.6). Returns 0 for a value
 * that is not one number of at most 64 bits. */
static int parse_length(const char *s, size_t len, uint64_t *out)
{
    if (len == 0) {
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!is_digit(ch)) {
            return 0;
        }
        unsigned d = (unsigned)(ch - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return 0;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* Connection = #connection-option: notes "close" and "keep-alive". */
static void connection_tokens(const char *s, size_t len, struct framing *f)
{
    size_t i = 0;
    while (i < len) {
        size_t start = i;
        while (i < len && s[i] != ',') {
            i++;
        }
        size_t a = start;
        size_t b = i;
        while (a < b && is_ows((unsigned char)s[a])) {
            a++;
        }
        while (b > a && is_ows((unsigned char)s[b - 1])) {
            b--;
        }
        if (equals_nocase(s + a, b - a, "close")) {
            f->conn_close = 1;
        } else if (equals_nocase(s + a, b - a, "keep-alive")) {
            f->conn_keep_alive = 1;
        }
        i++; /* past the ',' (or the end) */
    }
}

/* Applies the headers that change framing or the connection, as the line
 * that holds them ends. */
static int special_header(struct cursor *c, idms_http_request *req, struct framing *f,
                          const idms_http_header *h)
{
    if (equals_nocase(h->name, h->name_len, "content-length")) {
        uint64_t v = 0;
        if (!parse_length(h->value, h->value_len, &v)) {
            return fail(c, 400, "invalid Content-Length");
        }
        /* RFC 9110 section 8.6: repeated identical values may be accepted;
         * different ones are an error (a smuggling vector otherwise). */
        if (f->have_length && v != req->content_length) {
            return fail(c, 400, "conflicting Content-Length");
        }
        f->have_length = 1;
        req->content_length = v;
    } else if (equals_nocase(h->name, h->name_len, "transfer-encoding")) {
        if (h->value_len == 0) {
            return fail(c, 400, "empty Transfer-Encoding");
        }
        if (!equals_nocase(h->value, h->value_len, "identity")) {
            return fail(c, 501,
                        "Transfer-Encoding is not supported: idmintd takes no request bodies");
        }
    } else if (equals_nocase(h->name, h->name_len, "host")) {
        f->hosts++;
        if (f->hosts > 1) {
            return fail(c, 400, "more than one Host header");
        }
    } else if (equals_nocase(h->name, h->name_len, "connection")) {
        connection_tokens(h->value, h->value_len, f);
    }
    return STEP_OK;
}

/* field-line = field-name ":" OWS field-value OWS (RFC 9112 section 5).
 * The cursor is at the first byte of the line, which is not CR or LF. */
static int header_line(struct cursor *c, idms_http_request *req, struct framing *f)
{
    unsigned char ch = (unsigned char)c->buf[c->pos];
    if (is_ows(ch)) {
        /* RFC 9112 sections 2.2 and 5.2: obs-fold, or whitespace between the
         * start-line and the first field; a server may refuse both. */
        return fail(c, 400, "header line starts with whitespace (obs-fold)");
    }
    if (req->n_headers == IDMS_HTTP_MAX_HEADERS) {
        return fail(c, 431, "too many header fields");
    }
    size_t start = c->pos;
    for (;;) {
        if (c->pos == c->end) {
            return ran_out(c);
        }
        ch = (unsigned char)c->buf[c->pos];
        if (ch == ':') {
            break;
        }
        if (is_ows(ch)) {
            /* RFC 9112 section 5.1: a server MUST reject this with 400. */
            return fail(c, 400, "whitespace before colon in header field");
        }
        if (!is_tchar(ch)) {
            return fail(c, 400, "invalid character in header field name");
        }
        c->pos++;
    }
    if (c->pos == start) {
        return fail(c, 400, "empty header field name");
    }
    idms_http_header h;
    h.name = c->buf + start;
    h.name_len = c->pos - start;
    c->pos++; /* the ':' */

    for (;;) {
        if (c->pos == c->end) {
            return ran_out(c);
        }
        if (!is_ows((unsigned char)c->buf[c->pos])) {
            break;
        }
        c->pos++;
    }
    size_t value_start = c->pos;
    size_t value_end = c->pos; /* one past the last non-OWS byte */
    for (;;) {
        if (c->pos == c->end) {
            return ran_out(c);
        }
        ch = (unsigned char)c->buf[c->pos];
        if (ch == '\r' || ch == '\n') {
            break;
        }
        /* field-vchar = VCHAR / obs-text, plus SP and HTAB inside. */
        if (ch == 0x7F || (ch < 0x20 && ch != '\t')) {
            return fail(c, 400, "invalid character in header field value");
        }
        c->pos++;
        if (!is_ows(ch)) {
            value_end = c->pos;
        }
    }
    int rc = line_end(c, "malformed header line");
    if (rc != STEP_OK) {
        return rc;
    }
    h.value = c->buf + value_start;
    h.value_len = value_end - value_start;
    req->headers[req->n_headers++] = h;
    return special_header(c, req, f, &h);
}

static int request_head(struct cursor *c, idms_http_request *req)
{
    struct framing f = {0, 0, 0, 0};
    int rc = skip_empty_lines(c);
    if (rc == STEP_OK) {
        rc = request_line(c, req);
    }
    while (rc == STEP_OK) {
        if (c->pos == c->end) {
            return ran_out(c);
        }
        unsigned char ch = (unsigned char)c->buf[c->pos];
        if (ch == '\r' || ch == '\n') {
            rc = line_end(c, "malformed header line");
            break;
        }
        rc = header_line(c, req, &f);
    }
    if (rc != STEP_OK) {
        return rc;
    }
    if (req->minor_version == 1 && f.hosts == 0) {
        /* RFC 9112 section 3.2: a server MUST answer 400. */
        return fail(c, 400, "missing Host header");
    }
    if (req->minor_version == 1) {
        req->keep_alive = !f.conn_close;
    } else {
        req->keep_alive = f.conn_keep_alive && !f.conn_close;
    }
    return STEP_OK;
}

ptrdiff_t idms_http_parse_request(const char *buf, size_t len, idms_http_request *req, int *status,
                                  const char **reason)
{
    struct cursor c;
    c.buf = buf;
    c.pos = 0;
    c.at_cap = len >= IDMS_HTTP_MAX_HEAD;
    c.end = c.at_cap ? IDMS_HTTP_MAX_HEAD : len;
    c.status = 0;
    c.reason = NULL;

    req->method = NULL;
    req->method_len = 0;
    req->target = NULL;
    req->target_len = 0;
    req->minor_version = 0;
    req->n_headers = 0;
    req->keep_alive = 0;
    req->content_length = 0;

    int rc = request_head(&c, req);
    if (status != NULL) {
        *status = rc == STEP_BAD ? c.status : 0;
    }
    if (reason != NULL) {
        *reason = rc == STEP_BAD ? c.reason : NULL;
    }
    if (rc == STEP_BAD) {
        return IDMS_HTTP_INVALID;
    }
    if (rc == STEP_MORE) {
        return IDMS_HTTP_INCOMPLETE;
    }
    return (ptrdiff_t)c.pos;
}

int idms_http_header_get(const idms_http_request *req, const char *name, const char **value,
                         size_t *value_len)
{
    size_t name_len = strlen(name);
    for (size_t i = 0; i < req->n_headers; i++) {
        const idms_http_header *h = &req->headers[i];
        if (h->name_len != name_len) {
            continue;
        }
        size_t k = 0;
        while (k < name_len && lower((unsigned char)h->name[k]) == lower((unsigned char)name[k])) {
            k++;
        }
        if (k == name_len) {
            *value = h->value;
            *value_len = h->value_len;
            return 1;
        }
    }
    return 0;
}

void idms_http_split_target(const char *target, size_t len, const char **path, size_t *path_len,
                            const char **query, size_t *query_len)
{
    size_t i = 0;
    while (i < len && target[i] != '?' && target[i] != '#') {
        i++;
    }
    *path = target;
    *path_len = i;
    if (i < len && target[i] == '?') {
        size_t q = i + 1;
        size_t e = q;
        while (e < len && target[e] != '#') {
            e++;
        }
        *query = target + q;
        *query_len = e - q;
    } else {
        *query = target + i;
        *query_len = 0;
    }
}

static int hex_value(unsigned char ch)
{
    if (ch >= '0' && ch <= '9') {
        return ch - '0';
    }
    if (ch >= 'a' && ch <= 'f') {
        return ch - 'a' + 10;
    }
    if (ch >= 'A' && ch <= 'F') {
        return ch - 'A' + 10;
    }
    return -1;
}

/* Decodes the byte that starts at src[*i] (an escape, '+' when plus is set,
 * or itself) and advances *i past it. Returns the byte, or -1 for a
 * malformed escape. */
static int decode_one(const char *src, size_t len, size_t *i, int plus)
{
    unsigned char ch = (unsigned char)src[*i];
    if (ch == '%') {
        if (len - *i < 3) {
            return -1;
        }
        int hi = hex_value((unsigned char)src[*i + 1]);
        int lo = hex_value((unsigned char)src[*i + 2]);
        if (hi < 0 || lo < 0) {
            return -1;
        }
        *i += 3;
        return hi * 16 + lo;
    }
    *i += 1;
    if (plus && ch == '+') {
        return ' ';
    }
    return ch;
}

/* Decodes src[0..len) into dst (cap bytes, NUL-terminated). Returns the
 * length, or -1 (dst "" when cap > 0) for a malformed escape, a NUL byte
 * (unless nul_ok) or no room. */
static ptrdiff_t decode(const char *src, size_t len, char *dst, size_t cap, int plus, int nul_ok)
{
    if (cap == 0) {
        return -1;
    }
    size_t n = 0;
    size_t i = 0;
    while (i < len) {
        int b = decode_one(src, len, &i, plus);
        if (b < 0 || (b == 0 && !nul_ok) || n + 1 >= cap) {
            dst[0] = '\0';
            return -1;
        }
        dst[n++] = (char)b;
    }
    dst[n] = '\0';
    return (ptrdiff_t)n;
}

ptrdiff_t idms_http_percent_decode(const char *src, size_t len, char *dst, size_t cap)
{
    return decode(src, len, dst, cap, 0, 0);
}

ptrdiff_t idms_http_percent_decode_bytes(const char *src, size_t len, char *dst, size_t cap)
{
    return decode(src, len, dst, cap, 0, 1);
}

/* 1 when the encoded name enc[0..len) decodes to exactly key. */
static int name_matches(const char *enc, size_t len, const char *key)
{
    size_t i = 0;
    size_t k = 0;
    while (i < len) {
        int b = decode_one(enc, len, &i, 1);
        if (b < 0 || key[k] == '\0' || (unsigned char)key[k] != (unsigned)b) {
            return 0;
        }
        k++;
    }
    return key[k] == '\0';
}

int idms_http_target_form(const char *target, size_t len, const char **rest, size_t *rest_len,
                          const char **authority, size_t *authority_len)
{
    *rest = target;
    *rest_len = len;
    *authority = target;
    *authority_len = 0;
    /* absolute-URI = scheme ":" hier-part; only http and https, whose
     * hier-part is "//" authority path-abempty (RFC 9110 section 4.2). */
    size_t scheme = 0;
    if (len >= 7 && equals_nocase(target, 4, "http")) {
        scheme = 4;
        if (lower((unsigned char)target[4]) == 's') {
            scheme = 5;
        }
    }
    if (scheme == 0 || len < scheme + 3 || memcmp(target + scheme, "://", 3) != 0) {
        return IDMS_HTTP_ORIGIN_FORM;
    }
    size_t a = scheme + 3;
    size_t e = a;
    while (e < len && target[e] != '/' && target[e] != '?' && target[e] != '#') {
        e++;
    }
    if (e == a) {
        return IDMS_HTTP_INVALID;
    }
    *authority = target + a;
    *authority_len = e - a;
    *rest = target + e;
    *rest_len = len - e;
    return IDMS_HTTP_ABSOLUTE_FORM;
}

/* The next non-empty pair of a query from *i on: name at [start, eq),
 * value (after the '=', if any) at (eq, end). Empty pairs ("a=1&&b=2",
 * "") are skipped, as WHATWG does. False when there is none left. */
static bool next_pair(const char *query, size_t len, size_t *i, size_t *start, size_t *eq,
                      size_t *end)
{
    while (*i <= len) {
        size_t s = *i, e = s;
        while (e < len && query[e] != '&') {
            e++;
        }
        *i = e + 1; /* past the '&'; past len ends the iteration */
        if (s == e) {
            continue;
        }
        size_t q = s;
        while (q < e && query[q] != '=') {
            q++;
        }
        *start = s;
        *eq = q;
        *end = e;
        return true;
    }
    return false;
}

int idms_http_query_check(const char *query, size_t len, const char *const *names,
                          const char **name, size_t *name_len)
{
    uint64_t seen = 0;
    size_t i = 0, start, eq, end;
    while (next_pair(query, len, &i, &start, &eq, &end)) {
        int result = IDMS_HTTP_QUERY_UNKNOWN;
        for (size_t k = 0; names[k] != NULL && k < IDMS_HTTP_QUERY_MAX_KEYS; k++) {
            if (name_matches(query + start, eq - start, names[k])) {
                uint64_t bit = (uint64_t)1 << k;
                result = (seen & bit) ? IDMS_HTTP_QUERY_REPEATED : 0;
                seen |= bit;
                break;
            }
        }
        if (result != 0) {
            *name = query + start;
            *name_len = eq - start;
            return result;
        }
    }
    return 0;
}

/* RFC 3986 section 2.3: unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~". */
static int is_unreserved(int ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

ptrdiff_t idms_http_path_unreserved(const char *src, size_t len, char *dst, size_t cap)
{
    if (cap == 0) {
        return -1;
    }
    size_t n = 0;
    size_t i = 0;
    while (i < len) {
        size_t at = i;
        int b = decode_one(src, len, &i, 0);
        if (b < 0 || n + (is_unreserved(b) ? 1 : i - at) >= cap) {
            dst[0] = '\0';
            return -1;
        }
        if (is_unreserved(b)) {
            dst[n++] = (char)b;
        } else {
            /* An escape of anything else, or a byte as sent. */
            memcpy(dst + n, src + at, i - at);
            n += i - at;
        }
    }
    dst[n] = '\0';
    return (ptrdiff_t)n;
}

int idms_http_h2_preface(const char *buf, size_t len)
{
    size_t n = len < IDMS_HTTP_H2_PREFACE_LEN ? len : IDMS_HTTP_H2_PREFACE_LEN;
    if (memcmp(buf, IDMS_HTTP_H2_PREFACE, n) != 0) {
        return 0;
    }
    return n == IDMS_HTTP_H2_PREFACE_LEN ? 1 : IDMS_HTTP_INCOMPLETE;
}

static int query_get(const char *query, size_t len, const char *key, char *dst, size_t cap,
                     size_t *out_len, int nul_ok)
{
    if (out_len != NULL) {
        *out_len = 0;
    }
    size_t i = 0, start, eq, end;
    while (next_pair(query, len, &i, &start, &eq, &end)) {
        if (name_matches(query + start, eq - start, key)) {
            size_t vstart = eq < end ? eq + 1 : end;
            ptrdiff_t n = decode(query + vstart, end - vstart, dst, cap, 1, nul_ok);
            if (n < 0) {
                return -1;
            }
            if (out_len != NULL) {
                *out_len = (size_t)n;
            }
            return 1;
        }
    }
    if (cap > 0) {
        dst[0] = '\0';
    }
    return 0;
}

int idms_http_query_get(const char *query, size_t len, const char *key, char *dst, size_t cap,
                        size_t *out_len)
{
    return query_get(query, len, key, dst, cap, out_len, 0);
}

int idms_http_query_get_bytes(const char *query, size_t len, const char *key, char *dst, size_t cap,
                              size_t *out_len)
{
    return query_get(query, len, key, dst, cap, out_len, 1);
}

/* ---- form fields -------------------------------------------------------- */

/* One pair's value into its field: the first pair named key is decoded
 * (a %00 kept as a byte), every later one only counted. */
static void take_pairs(const char *src, size_t len, idms_http_field *fields, size_t n)
{
    size_t i = 0, start, eq, end;
    while (next_pair(src, len, &i, &start, &eq, &end)) {
        for (size_t k = 0; k < n; k++) {
            idms_http_field *f = &fields[k];
            if (!name_matches(src + start, eq - start, f->key)) {
                continue;
            }
            if (f->given++ == 0) {
                size_t vstart = eq < end ? eq + 1 : end;
                ptrdiff_t got = decode(src + vstart, end - vstart, f->dst, f->cap, 1, 1);
                f->bad = got < 0;
                f->len = got < 0 ? 0 : (size_t)got;
            }
            if (f->given == UINT32_MAX) {
                f->given--; /* saturates: "more than once" is all a caller asks */
            }
            break;
        }
    }
}

void idms_http_form_fields(const char *query, size_t query_len, const char *body, size_t body_len,
                           idms_http_field *fields, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        fields[k].len = 0;
        fields[k].given = 0;
        fields[k].bad = 0;
        if (fields[k].cap > 0) {
            fields[k].dst[0] = '\0';
        }
    }
    take_pairs(query, query_len, fields, n);
    take_pairs(body, body_len, fields, n);
}

int idms_http_is_form(const char *value, size_t len)
{
    static const char type[] = "application/x-www-form-urlencoded";
    size_t e = 0;
    while (e < len && value[e] != ';' && value[e] != ' ' && value[e] != '\t') {
        e++;
    }
    return equals_nocase(value, e, type);
}

/* ---- Accept ------------------------------------------------------------ */

/* One past the end of the list element or parameter that starts at s[i]:
 * the next sep outside a quoted-string (RFC 9110 section 5.6.4), or len. */
static size_t scan_to(const char *s, size_t len, size_t i, char sep)
{
    int quoted = 0;
    while (i < len) {
        char ch = s[i];
        if (quoted) {
            if (ch == '\\' && i + 1 < len) {
                i++;
            } else if (ch == '"') {
                quoted = 0;
            }
        } else if (ch == '"') {
            quoted = 1;
        } else if (ch == sep) {
            return i;
        }
        i++;
    }
    return len;
}

static void trim(const char *s, size_t *a, size_t *b)
{
    while (*a < *b && is_ows((unsigned char)s[*a])) {
        (*a)++;
    }
    while (*b > *a && is_ows((unsigned char)s[*b - 1])) {
        (*b)--;
    }
}

/* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) (RFC 9110
 * section 12.4.2), in thousandths; -1 when malformed. */
static int parse_qvalue(const char *s, size_t len)
{
    if (len == 0 || (s[0] != '0' && s[0] != '1')) {
        return -1;
    }
    int q = (s[0] - '0') * 1000;
    if (len == 1) {
        return q;
    }
    if (s[1] != '.' || len > 5) {
        return -1;
    }
    int scale = 100;
    for (size_t i = 2; i < len; i++) {
        if (!is_digit((unsigned char)s[i])) {
            return -1;
        }
        q += (s[i] - '0') * scale;
        scale /= 10;
    }
    return q > 1000 ? -1 : q;
}

/* The q of one media-range element's parameters s[a..b) (after the range):
 * 1000 when absent, -1 when malformed. */
static int element_q(const char *s, size_t a, size_t b)
{
    int q = 1000;
    while (a < b) {
        /* s[a] is ';' */
        size_t pa = a + 1;
        size_t pb = scan_to(s, b, pa, ';');
        a = pb;
        trim(s, &pa, &pb);
        if (pb - pa >= 2 && lower((unsigned char)s[pa]) == 'q' && s[pa + 1] == '=') {
            q = parse_qvalue(s + pa + 2, pb - pa - 2);
            if (q < 0) {
                return -1;
            }
        }
    }
    return q;
}

/* The offers a route chooses between, by idms_http_accepts_json. */
enum { OFFER_JSON, OFFER_TEXT, OFFERS };
static const char *const offer_type[OFFERS] = {"application", "text"};
static const char *const offer_subtype[OFFERS] = {"json", "plain"};

/* How specifically the media range s[0..len) matches an offer: 3 by type
 * and subtype, 2 by the type's wildcard, 1 by the full wildcard, 0 not at
 * all; -1 when s is not a media range: "STAR/STAR", type "/STAR" or type
 * "/" subtype, each a non-empty token (RFC 9110 section 12.5.1). */
static int range_match(const char *s, size_t len, int offer)
{
    size_t slash = 0;
    while (slash < len && s[slash] != '/') {
        slash++;
    }
    if (slash == 0 || slash + 1 >= len) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (i != slash && !is_tchar((unsigned char)s[i])) {
            return -1;
        }
    }
    const char *type = s;
    size_t type_len = slash;
    const char *sub = s + slash + 1;
    size_t sub_len = len - slash - 1;
    bool any_sub = sub_len == 1 && sub[0] == '*';
    if (type_len == 1 && type[0] == '*') {
        return any_sub ? 1 : -1;
    }
    if (!equals_nocase(type, type_len, offer_type[offer])) {
        return 0;
    }
    if (any_sub) {
        return 2;
    }
    return equals_nocase(sub, sub_len, offer_subtype[offer]) ? 3 : 0;
}

int idms_http_accepts_json(const char *accept, size_t len)
{
    /* Per offer: the specificity of the best range that matched (0: none)
     * and its q in thousandths. */
    int kind[OFFERS] = {0, 0};
    int q_of[OFFERS] = {0, 0};
    size_t i = 0;
    while (i < len) {
        size_t e = scan_to(accept, len, i, ',');
        size_t a = i;
        size_t b = e;
        i = e + 1;
        trim(accept, &a, &b);
        size_t r = a;
        while (r < b && accept[r] != ';' && !is_ows((unsigned char)accept[r])) {
            r++;
        }
        size_t p = r;
        while (p < b && is_ows((unsigned char)accept[p])) {
            p++;
        }
        if (p < b && accept[p] != ';') {
            continue; /* junk after the range */
        }
        int q = element_q(accept, p, b);
        if (q < 0) {
            continue;
        }
        for (int o = 0; o < OFFERS; o++) {
            int k = range_match(accept + a, r - a, o);
            if (k < 0) {
                break; /* not a media range: ignored */
            }
            if (k > kind[o] || (k == kind[o] && k > 0 && q > q_of[o])) {
                kind[o] = k;
                q_of[o] = q;
            }
        }
    }
    int json = q_of[OFFER_JSON];
    int text = q_of[OFFER_TEXT];
    if (json == 0 || json < text) {
        return 0;
    }
    return json > text || (kind[OFFER_JSON] >= kind[OFFER_TEXT] && kind[OFFER_JSON] > 1);
}
