/*
 * buf.h - a growable output buffer (buf.c). Not installed.
 */
#ifndef IDMS_BUF_H
#define IDMS_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct idms_buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: the connection is closed */
} idms_buf;

void idms_buf_init(idms_buf *b);
void idms_buf_free(idms_buf *b);
/* Room for n more bytes at data + len, or NULL (failed set). */
char *idms_buf_reserve(idms_buf *b, size_t n);
/* Appends n bytes at p; n 0 is a no-op, whatever p (NULL too). */
void idms_buf_append(idms_buf *b, const void *p, size_t n);
void idms_buf_puts(idms_buf *b, const char *s);
void idms_buf_printf(idms_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void idms_buf_u64(idms_buf *b, uint64_t v);

#endif
