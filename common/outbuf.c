/*
 * outbuf.c - the front ends' output buffer (see outbuf.h).
 *
 * Kept deliberately small: no formatting engine (callers format IDs with the
 * library's encoders straight into reserved space), no allocation.
 */
#include "outbuf.h"

#include <idmint/error.h>

#include <string.h>

void idmx_outbuf_init(idmx_outbuf *b, char *data, size_t cap, idmx_drain_fn drain, void *ctx)
{
    b->data = data;
    b->len = 0;
    b->cap = cap;
    b->drain = drain;
    b->ctx = ctx;
    b->err = 0;
}

/* Empties a drained buffer. Returns 0 or the sticky error. */
static int drain_all(idmx_outbuf *b)
{
    if (b->err != 0) {
        return b->err;
    }
    if (b->drain == NULL || b->len == 0) {
        return 0;
    }
    int rc = b->drain(b->ctx, b->data, b->len);
    if (rc != 0) {
        b->err = rc;
        return rc;
    }
    b->len = 0;
    return 0;
}

char *idmx_outbuf_reserve(idmx_outbuf *b, size_t n)
{
    if (b->err != 0) {
        return NULL;
    }
    if (n > b->cap - b->len) {
        if (b->drain == NULL || n > b->cap) {
            b->err = IDM_ENOSPC;
            return NULL;
        }
        if (drain_all(b) != 0) {
            return NULL;
        }
    }
    return b->data + b->len;
}

void idmx_outbuf_commit(idmx_outbuf *b, size_t n)
{
    /* The caller reserved at least n bytes, so this cannot pass cap. */
    if (n > b->cap - b->len) {
        b->err = IDM_ENOSPC;
        return;
    }
    b->len += n;
}

int idmx_outbuf_append(idmx_outbuf *b, const void *p, size_t n)
{
    if (b->err != 0) {
        return b->err;
    }
    if (n <= b->cap - b->len) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
        return 0;
    }
    if (b->drain == NULL) {
        b->err = IDM_ENOSPC;
        return b->err;
    }
    if (drain_all(b) != 0) {
        return b->err;
    }
    if (n > b->cap) {
        /* Too big to stage: pass it through, keeping the order of bytes. */
        int rc = b->drain(b->ctx, (const char *)p, n);
        if (rc != 0) {
            b->err = rc;
        }
        return b->err;
    }
    memcpy(b->data, p, n);
    b->len = n;
    return 0;
}

int idmx_outbuf_puts(idmx_outbuf *b, const char *s)
{
    return idmx_outbuf_append(b, s, strlen(s));
}

int idmx_outbuf_putc(idmx_outbuf *b, char c)
{
    return idmx_outbuf_append(b, &c, 1);
}

int idmx_outbuf_u64(idmx_outbuf *b, uint64_t v)
{
    char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return idmx_outbuf_append(b, tmp + i, sizeof tmp - i);
}

int idmx_outbuf_i64(idmx_outbuf *b, int64_t v)
{
    if (v < 0) {
        /* Negate in unsigned arithmetic: -INT64_MIN does not fit in int64_t. */
        uint64_t mag = (uint64_t)0 - (uint64_t)v;
        idmx_outbuf_putc(b, '-');
        return idmx_outbuf_u64(b, mag);
    }
    return idmx_outbuf_u64(b, (uint64_t)v);
}

int idmx_outbuf_hex(idmx_outbuf *b, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        char pair[2] = {digits[p[i] >> 4], digits[p[i] & 15]};
        if (idmx_outbuf_append(b, pair, 2) != 0) {
            return b->err;
        }
    }
    return b->err;
}

int idmx_outbuf_flush(idmx_outbuf *b)
{
    return drain_all(b);
}
