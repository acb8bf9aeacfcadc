/*
 * tls.h - TLS for idmintd's ports with OpenSSL (tls.c): the server's
 * certificate and key (an SSL_CTX, loaded at start and again on SIGHUP),
 * and one session per connection over memory BIOs, so that the connection
 * layer (conn.c) keeps its own non-blocking reads and writes: ciphertext
 * read from the socket goes in, plaintext comes out into the connection's
 * input buffer, and replies come back as ciphertext for the usual write
 * path. The SSL object waits for the client's first record (idms_tls_start).
 * Not installed.
 *
 * Thread-safe: no (the loop thread owns every object here).
 */
#ifndef IDMS_TLS_H
#define IDMS_TLS_H

#include "buf.h"

#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>

/* Room for a reason from OpenSSL and the file it concerns. */
#define IDMS_TLS_MSG_CAP 1280

/* Loads the certificate chain (PEM: the server's certificate first, then
 * its intermediates) and the private key (PEM, not encrypted), checks that
 * they belong together, and returns a context for TLS 1.2 and later with
 * OpenSSL's default ciphers (server preference), no compression, no
 * renegotiation and no session cache (stateless tickets still resume).
 * On failure returns NULL and says why in err, naming the file. The caller
 * owns the context (SSL_CTX_free); sessions made from it hold references of
 * their own, so it may be freed while they last. */
SSL_CTX *idms_tls_ctx_new(const char *cert_file, const char *key_file, char *err, size_t err_cap);

/* What a log line says of the context's certificate: its subject, serial
 * and expiry ("subject CN=localhost, serial 0x1F, valid until
 * 2027-01-01T00:00:00Z"), and whether it has expired already. */
void idms_tls_ctx_describe(SSL_CTX *ctx, char *dst, size_t cap, bool *expired);

/* What idms_tls_held counts for OpenSSL's heap (measured with OpenSSL 3.0
 * by tests/unit/test_tls.c, which checks that they cover it): a handshake
 * in progress (42 to 46 KB stalled after the ClientHello, 62 KB with a
 * partial record of the client's next flight), an established session
 * between records (14 KB), and the read buffer of a record begun and not
 * complete (16.5 KB). conn.c counts handshakes in progress against
 * --max-buffered at IDMS_TLS_HANDSHAKE_BYTES each. */
#define IDMS_TLS_HANDSHAKE_BYTES (64u << 10)
#define IDMS_TLS_SESSION_BYTES   (16u << 10)
#define IDMS_TLS_RECORD_BYTES    (17u << 10)

typedef struct idms_tls idms_tls;

/* A server session of ctx for one connection, or NULL (out of memory). It
 * holds a reference to ctx and the ciphertext fed until idms_tls_start
 * makes its SSL object: a client that never completes its first record
 * costs no more than what it sent. */
idms_tls *idms_tls_new(SSL_CTX *ctx);
/* NULL is a no-op. */
void idms_tls_free(idms_tls *t);

/* Takes len bytes of ciphertext read from the socket. Returns 0, or -1
 * when out of memory. */
int idms_tls_feed(idms_tls *t, const char *data, size_t len);

/* Whether a session not started yet has what it needs to start: the
 * client's first record (its ClientHello) complete, or a first record
 * that is no handshake (or too long for one), which the start then
 * refuses with OpenSSL's reason. */
bool idms_tls_ready(const idms_tls *t);
bool idms_tls_started(const idms_tls *t);
/* Makes the SSL object and hands it what was fed. Until then idms_tls_read
 * returns 0 and idms_tls_pending false. Returns 0, or -1 when out of
 * memory. */
int idms_tls_start(idms_tls *t);

/* The bytes the session holds, as counted in --max-buffered: what was fed
 * before the start, the memory BIOs' buffers, and OpenSSL's state by the
 * figures above. */
size_t idms_tls_held(const idms_tls *t);

/* What idms_tls_read returns besides a count of bytes. */
enum { IDMS_TLS_EOF = -1, IDMS_TLS_FAILED = -2 };

/* Runs the handshake as far as the ciphertext fed allows and decrypts up to
 * cap bytes of plaintext into dst. What the session has to send meanwhile
 * (handshake flights, alerts, session tickets) is appended to wire, also on
 * failure: it goes out before the connection closes. Returns the bytes
 * written to dst (0: more ciphertext is needed, or cap is 0),
 * IDMS_TLS_EOF once the client sent close_notify, or IDMS_TLS_FAILED (a
 * failed handshake, a bad record, out of memory; idms_tls_error says why).
 * Plaintext decrypted before an EOF or a failure is returned first; the
 * next call reports the end. */
ptrdiff_t idms_tls_read(idms_tls *t, char *dst, size_t cap, idms_buf *wire);

/* Whether idms_tls_read has something to give or to report without more
 * ciphertext: plaintext or ciphertext held, or the end. */
bool idms_tls_pending(const idms_tls *t);

/* Whether the handshake has completed. */
bool idms_tls_established(const idms_tls *t);

/* Encrypts len bytes of plaintext, appending the records to wire. Returns 0,
 * or -1 before the handshake has completed, after a failure, or when out
 * of memory. */
int idms_tls_write(idms_tls *t, const char *data, size_t len, idms_buf *wire);

/* Appends our close_notify to wire once the handshake has completed and
 * nothing failed; otherwise nothing (a failed session may not send one). */
void idms_tls_shutdown(idms_tls *t, idms_buf *wire);

/* Why the session failed ("unsupported protocol", "http request", ...); ""
 * while it has not. Points into t. */
const char *idms_tls_error(const idms_tls *t);

#endif
