/*
 * outbuf.h - an output buffer over caller-supplied memory, shared by the
 * front ends (idmint, idmintd). Not library API: no promise beyond this tree.
 *
 * The buffer never allocates. It writes into the caller's array and, when
 * the array is full, hands the bytes to a drain callback (write(2) to a
 * file descriptor, a socket send queue, a copy into a larger heap buffer),
 * then starts over at the front. Without a drain callback it is a fixed
 * buffer: an append that does not fit fails with IDM_ENOSPC and the buffer
 * keeps what it had.
 *
 * Errors are sticky: after the first failure (no room, or a drain that
 * returned non-zero) every later call fails with the same code, so a
 * producer can append many times and check once.
 */
#ifndef IDMX_OUTBUF_H
#define IDMX_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

/* Takes len bytes (len > 0) and returns 0, or a non-zero code that becomes
 * the buffer's sticky error. */
typedef int (*idmx_drain_fn)(void *ctx, const char *data, size_t len);

typedef struct idmx_outbuf {
    char *data;
    size_t len;
    size_t cap;
    idmx_drain_fn drain; /* NULL: fixed buffer */
    void *ctx;
    int err; /* 0, IDM_ENOSPC, or the drain's code */
} idmx_outbuf;

/* Starts an empty buffer over data[0..cap-1]. drain may be NULL. */
void idmx_outbuf_init(idmx_outbuf *b, char *data, size_t cap, idmx_drain_fn drain, void *ctx);

/* Returns a pointer to at least n free contiguous bytes (draining first if
 * needed), or NULL when n exceeds cap, there is no room in a fixed buffer,
 * or the buffer has failed. Write into it, then idmx_outbuf_commit(). */
char *idmx_outbuf_reserve(idmx_outbuf *b, size_t n);

/* Marks n bytes written at the pointer the last reserve returned as used.
 * n must not exceed what was reserved. */
void idmx_outbuf_commit(idmx_outbuf *b, size_t n);

/* Appends bytes; data larger than the buffer goes straight to the drain.
 * Returns 0 or the sticky error. */
int idmx_outbuf_append(idmx_outbuf *b, const void *p, size_t n);
int idmx_outbuf_puts(idmx_outbuf *b, const char *s);
int idmx_outbuf_putc(idmx_outbuf *b, char c);

/* Appends an integer in decimal. */
int idmx_outbuf_u64(idmx_outbuf *b, uint64_t v);
int idmx_outbuf_i64(idmx_outbuf *b, int64_t v);

/* Appends n bytes as 2n lowercase hex digits. */
int idmx_outbuf_hex(idmx_outbuf *b, const uint8_t *p, size_t n);

/* Hands everything buffered to the drain. A fixed buffer keeps its bytes
 * (the caller reads data[0..len-1]) and returns 0 or its sticky error. */
int idmx_outbuf_flush(idmx_outbuf *b);

#endif
