/*
 * reply.c - see reply.h. Only what idmintd sends is accepted: HTTP
 * replies carry Content-Length (idmintd never chunks), RESP replies are
 * one level deep. Anything else is FR_BAD, which the client counts as a
 * malformed reply.
 */
#include "reply.h"

#include <string.h>
#include <strings.h>

/* The index of the first "\r\n" at or after from, or -1. */
static long find_crlf(const char *buf, size_t len, size_t from)
{
    for (size_t i = from; i + 1 < len; i++) {
        if (buf[i] == '\r' && buf[i + 1] == '\n')
            return (long)i;
    }
    return -1;
}

/* Decimal digits [p, p + n) as a value at most max; -1 if not. */
static long long decimal(const char *p, size_t n, long long max)
{
    long long v = 0;
    if (n == 0 || n > 18)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v > max ? -1 : v;
}

long fr_http(const char *buf, size_t len, fr_reply *out)
{
    size_t head = 0;
    for (size_t i = 0; i + 3 < len; i++) {
        if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
            head = i + 4;
            break;
        }
    }
    if (head == 0)
        return len > FR_MAX_HEAD ? FR_BAD : FR_MORE;
    if (head < 17 || memcmp(buf, "HTTP/1.1 ", 9) != 0)
        return FR_BAD;
    long long status = decimal(buf + 9, 3, 999);
    if (status < 100 || buf[12] != ' ')
        return FR_BAD;
    long long clen = -1;
    size_t line = (size_t)find_crlf(buf, head, 0) + 2;
    while (line + 2 < head) {
        long end = find_crlf(buf, head, line);
        if (end < 0)
            return FR_BAD;
        static const char name[] = "content-length:";
        size_t nlen = sizeof name - 1;
        if ((size_t)end - line > nlen && strncasecmp(buf + line, name, nlen) == 0) {
            size_t v = line + nlen;
            while (v < (size_t)end && buf[v] == ' ')
                v++;
            clen = decimal(buf + v, (size_t)end - v, 1LL << 40);
            if (clen < 0)
                return FR_BAD;
        }
        line = (size_t)end + 2;
    }
    if (clen < 0)
        return FR_BAD;
    if (len - head < (size_t)clen)
        return FR_MORE;
    out->status = (int)status;
    out->body = buf + head;
    out->body_len = (size_t)clen;
    return (long)(head + (size_t)clen);
}

/* One RESP element at buf[*pos]: a bulk string, an integer or an error;
 * advances *pos. 0, FR_MORE or FR_BAD. */
static int resp_elem(const char *buf, size_t len, size_t *pos, int *is_error)
{
    if (*pos >= len)
        return FR_MORE;
    char t = buf[*pos];
    long end = find_crlf(buf, len, *pos);
    if (end < 0)
        return len - *pos > FR_MAX_HEAD ? FR_BAD : FR_MORE;
    if (t == '-' || t == ':' || t == '+') {
        *is_error = t == '-';
        *pos = (size_t)end + 2;
        return 0;
    }
    if (t != '$')
        return FR_BAD;
    long long n = decimal(buf + *pos + 1, (size_t)end - *pos - 1, FR_MAX_HEAD);
    if (n < 0)
        return FR_BAD;
    size_t data = (size_t)end + 2;
    if (len - data < (size_t)n + 2)
        return FR_MORE;
    if (buf[data + (size_t)n] != '\r' || buf[data + (size_t)n + 1] != '\n')
        return FR_BAD;
    *pos = data + (size_t)n + 2;
    return 0;
}

long fr_resp(const char *buf, size_t len, fr_reply *out)
{
    size_t pos = 0;
    int is_error = 0;
    int rc;
    if (len == 0)
        return FR_MORE;
    if (buf[0] == '*') {
        long end = find_crlf(buf, len, 0);
        if (end < 0)
            return len > FR_MAX_HEAD ? FR_BAD : FR_MORE;
        long long n = decimal(buf + 1, (size_t)end - 1, FR_MAX_ITEMS);
        if (n < 0)
            return FR_BAD;
        pos = (size_t)end + 2;
        for (long long i = 0; i < n; i++) {
            rc = resp_elem(buf, len, &pos, &is_error);
            if (rc != 0)
                return rc;
            if (is_error)
                return FR_BAD;
        }
    } else {
        rc = resp_elem(buf, len, &pos, &is_error);
        if (rc != 0)
            return rc;
    }
    out->status = is_error ? 503 : 200;
    out->body = buf;
    out->body_len = pos;
    return (long)pos;
}

/* Decimal [p, p + n) as 64 bits; 0 or FR_BAD. */
static int u64_of(const char *p, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    if (n == 0 || n > 20)
        return FR_BAD;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return FR_BAD;
        uint64_t d = (uint64_t)(p[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return FR_BAD;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

int fr_next_id(const fr_reply *r, int resp, size_t *pos, uint64_t *id)
{
    const char *b = r->body;
    size_t n = r->body_len;
    if (!resp) {
        if (*pos >= n)
            return 0;
        size_t e = *pos;
        while (e < n && b[e] != '\n')
            e++;
        size_t s = *pos;
        *pos = e < n ? e + 1 : e;
        return u64_of(b + s, e - s, id) == 0 ? 1 : FR_BAD;
    }
    /* Skips an array header, then reads bulk strings or integers. */
    while (*pos < n) {
        long end = find_crlf(b, n, *pos);
        if (end < 0)
            return FR_BAD;
        char t = b[*pos];
        size_t s = *pos + 1;
        if (t == '*') {
            *pos = (size_t)end + 2;
            continue;
        }
        if (t == ':') {
            *pos = (size_t)end + 2;
            return u64_of(b + s, (size_t)end - s, id) == 0 ? 1 : FR_BAD;
        }
        if (t != '$')
            return FR_BAD;
        uint64_t blen;
        if (u64_of(b + s, (size_t)end - s, &blen) != 0 || blen > n - (size_t)end - 2)
            return FR_BAD;
        size_t data = (size_t)end + 2;
        *pos = data + (size_t)blen + 2;
        if (*pos > n)
            return FR_BAD;
        return u64_of(b + data, (size_t)blen, id) == 0 ? 1 : FR_BAD;
    }
    return 0;
}

/* The value of member "name" in a flat JSON object: start and length of
 * its text (a string's without the quotes). 0, or FR_BAD when absent. */
static int member(const char *body, size_t len, const char *name, size_t *vs, size_t *vn)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i + nl + 2 < len; i++) {
        if (body[i] != '"' || memcmp(body + i + 1, name, nl) != 0 || body[i + 1 + nl] != '"')
            continue;
        size_t p = i + nl + 2;
        while (p < len && (body[p] == ' ' || body[p] == ':'))
            p++;
        if (p < len && body[p] == '"') {
            size_t e = p + 1;
            while (e < len && body[e] != '"')
                e++;
            if (e >= len)
                return FR_BAD;
            *vs = p + 1;
            *vn = e - p - 1;
            return 0;
        }
        size_t e = p;
        while (e < len && body[e] != ',' && body[e] != '}' && body[e] != ' ')
            e++;
        *vs = p;
        *vn = e - p;
        return 0;
    }
    return FR_BAD;
}

int fr_node_json(const char *body, size_t len, fr_node *out)
{
    size_t s, n;
    uint64_t v;
    if (member(body, len, "state", &s, &n) != 0)
        return FR_BAD;
    if (n >= sizeof out->state)
        n = sizeof out->state - 1;
    memcpy(out->state, body + s, n);
    out->state[n] = '\0';
    out->node = -1;
    out->generation = 0;
    out->lease_ms_left = -1;
    if (member(body, len, "node", &s, &n) == 0 && u64_of(body + s, n, &v) == 0 && v <= INT64_MAX)
        out->node = (int64_t)v;
    if (member(body, len, "generation", &s, &n) == 0 && u64_of(body + s, n, &v) == 0)
        out->generation = v;
    if (member(body, len, "lease_ms_left", &s, &n) == 0 && u64_of(body + s, n, &v) == 0 &&
        v <= INT64_MAX)
        out->lease_ms_left = (int64_t)v;
    return 0;
}
