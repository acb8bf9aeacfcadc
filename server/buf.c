/*
 * buf.c - growable output buffers for replies. A failed allocation marks
 * the buffer failed; the connection is then closed rather than sending a
 * truncated reply.
 */
#include "buf.h"

#include <idmint/snowflake.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void idms_buf_init(idms_buf *b)
{
    memset(b, 0, sizeof *b);
}

void idms_buf_free(idms_buf *b)
{
    free(b->data);
    idms_buf_init(b);
}

char *idms_buf_reserve(idms_buf *b, size_t n)
{
    if (b->failed)
        return NULL;
    /* An empty buffer has no memory yet: even a reservation of 0 bytes
     * makes some, so that the pointer returned is one (NULL + 0 is
     * undefined, and NULL means failure to the callers). */
    if (n > b->cap - b->len || b->data == NULL) {
        size_t want = b->cap ? b->cap : 4096;
        while (want - b->len < n) {
            if (want > SIZE_MAX / 2) {
                b->failed = true;
                return NULL;
            }
            want *= 2;
        }
        char *p = realloc(b->data, want);
        if (p == NULL) {
            b->failed = true;
            return NULL;
        }
        b->data = p;
        b->cap = want;
    }
    return b->data + b->len;
}

void idms_buf_append(idms_buf *b, const void *p, size_t n)
{
    /* Nothing to copy: the source may be an empty buffer's NULL data (a
     * 204's body, the text of INFO with an unknown section), which
     * memcpy must not be given even for 0 bytes. */
    if (n == 0)
        return;
    char *dst = idms_buf_reserve(b, n);
    if (dst != NULL) {
        memcpy(dst, p, n);
        b->len += n;
    }
}

void idms_buf_puts(idms_buf *b, const char *s)
{
    idms_buf_append(b, s, strlen(s));
}

void idms_buf_printf(idms_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        idms_buf_append(b, tmp, (size_t)n);
        return;
    }
    char *dst = idms_buf_reserve(b, (size_t)n + 1);
    if (dst == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(dst, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void idms_buf_u64(idms_buf *b, uint64_t v)
{
    char *dst = idms_buf_reserve(b, 21);
    if (dst != NULL)
        b->len += idm_sf_format_decimal(v, dst, 21);
}
