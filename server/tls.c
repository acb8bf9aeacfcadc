/*
 * tls.c - TLS 1.2 and 1.3 for idmintd's ports (OpenSSL; RFC 8446, RFC
 * 5246): the server's context, and a session per connection that never
 * touches the socket itself.
 *
 * Each session reads from one memory BIO and writes to another. conn.c
 * reads ciphertext from the socket as it reads plaintext without TLS, feeds
 * it in (idms_tls_feed), takes plaintext out into its input buffer
 * (idms_tls_read), and sends what comes back (handshake flights, alerts,
 * encrypted replies) through its usual write path. Until the client's
 * first record (its ClientHello) is complete, a session is no more than the
 * bytes received: the SSL object and what OpenSSL allocates as soon as it
 * reads (a record buffer for each direction, the handshake buffer and a
 * buffering BIO: 73 KB with OpenSSL 3.0 for 15 bytes of a ClientHello)
 * wait for idms_tls_start, which conn.c calls once it has a handshake slot
 * for it (conn.h). Memory stays bounded:
 * what is fed is at most one read (which conn.c sizes to its input buffer's
 * free space) plus a partial record; replies are encrypted a record at a
 * time, the output BIO drained after each; a BIO whose buffer grew past
 * SMALL_BIO is replaced once empty (a memory BIO keeps its largest buffer),
 * and SSL_MODE_RELEASE_BUFFERS frees OpenSSL's record buffers between
 * records, so that an idle connection holds little more than its SSL
 * object.
 *
 * Left out: client certificates, SNI with several certificates, ALPN (both
 * ports speak one protocol each; clients fall back to it), OCSP stapling,
 * TLS 1.3 early data, encrypted keys (no passphrase prompt: a key that
 * needs one is refused, rather than blocking the loop on a terminal), a
 * session cache (stateless tickets resume sessions instead; a reload makes
 * new ticket keys).
 */
#include "tls.h"

#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Plaintext per SSL_write: one record's worth (RFC 8446 section 5.1). */
#define RECORD_PLAIN 16384
/* Ciphertext a record adds at most, for reserving the output in one go:
 * header, IV or type byte, and tag of the AEAD suites (a CBC suite of TLS
 * 1.2 may need more; the buffer then grows). */
#define RECORD_OVERHEAD 64
#define SMALL_BIO       4096
/* A TLS record's header: type, version, length (RFC 8446 section 5.1). */
#define RECORD_HEADER    5
#define RECORD_HANDSHAKE 22

enum { RUNNING = 0 };

struct idms_tls {
    SSL_CTX *ctx;     /* a reference of its own until the session starts */
    SSL *ssl;         /* NULL until idms_tls_start */
    BIO *rbio, *wbio; /* owned by ssl */
    char *hello;      /* before the start: the ciphertext fed, exactly */
    size_t hello_len;
    int state; /* RUNNING, IDMS_TLS_EOF or IDMS_TLS_FAILED */
    bool big_in, big_out;
    char why[128];
};

/* OpenSSL's reason for the first error queued (the cause, before the
 * errors of the callers it went through), then an empty queue: the queue
 * is per thread, and a stale entry would be blamed on the next call. */
static void take_reason(char *dst, size_t cap)
{
    unsigned long e = ERR_peek_error();
    const char *r = e != 0 ? ERR_reason_error_string(e) : NULL;
    snprintf(dst, cap, "%s", r != NULL ? r : "unknown error");
    ERR_clear_error();
}

/* OpenSSL's reason, in plain words for the usual mistake: a file without
 * the PEM block wanted (the key given as the certificate, DER, garbage). */
static void load_reason(const char *what, char *dst, size_t cap)
{
    unsigned long e = ERR_peek_error();
    bool no_pem = ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
#ifdef ERR_R_UNSUPPORTED
    no_pem = no_pem || ERR_GET_REASON(e) == ERR_R_UNSUPPORTED; /* OpenSSL 3's decoders */
#endif
    if (!no_pem) {
        take_reason(dst, cap);
        return;
    }
    snprintf(dst, cap, "no PEM %s in it", what);
    ERR_clear_error();
}

/* A key that needs a passphrase is refused instead of prompting on the
 * terminal (which at SIGHUP would stop the loop); *user, when given,
 * records that one was asked for. */
static int no_passphrase(char *buf, int size, int rwflag, void *user)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    if (user != NULL)
        *(bool *)user = true;
    return -1;
}

/* Opens path for reading, or says why not with errno's words. */
static FILE *open_pem(const char *what, const char *path, char *err, size_t err_cap)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (f != NULL && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        f = NULL;
        errno = EISDIR;
    }
    if (f == NULL)
        snprintf(err, err_cap, "cannot open the TLS %s %s: %s", what, path, strerror(errno));
    return f;
}

static SSL_CTX *new_ctx(char *err, size_t err_cap)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL) {
        char why[128];
        take_reason(why, sizeof why);
        snprintf(err, err_cap, "cannot create a TLS context: %s", why);
        return NULL;
    }
    /* TLS 1.2 at least, whatever the system's OpenSSL configuration allows:
     * RFC 8996 deprecates 1.0 and 1.1. */
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    uint64_t opts = SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE;
#ifdef SSL_OP_NO_RENEGOTIATION
    opts |= SSL_OP_NO_RENEGOTIATION; /* OpenSSL 1.1.0h and later */
#endif
    SSL_CTX_set_options(ctx, opts);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    /* A cache of every client's session would grow with the clients;
     * stateless tickets resume without it. */
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
    return ctx;
}

static EVP_PKEY *read_key(const char *key_file, char *err, size_t err_cap)
{
    FILE *f = open_pem("private key", key_file, err, err_cap);
    if (f == NULL)
        return NULL;
    bool asked = false;
    EVP_PKEY *key = PEM_read_PrivateKey(f, NULL, no_passphrase, &asked);
    fclose(f);
    if (key == NULL) {
        char why[128];
        load_reason("private key", why, sizeof why);
        if (asked)
            snprintf(why, sizeof why, "it is encrypted, and idmintd takes no passphrase");
        snprintf(err, err_cap, "cannot read the TLS private key %s: %s", key_file, why);
    }
    return key;
}

SSL_CTX *idms_tls_ctx_new(const char *cert_file, const char *key_file, char *err, size_t err_cap)
{
    ERR_clear_error();
    EVP_PKEY *key = NULL;
    SSL_CTX *ctx = new_ctx(err, err_cap);
    if (ctx == NULL)
        return NULL;
    /* The file is opened first for errno's words ("No such file or
     * directory"); OpenSSL's own would be "system lib". */
    FILE *f = open_pem("certificate", cert_file, err, err_cap);
    if (f == NULL)
        goto fail;
    fclose(f);
    char why[128];
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
        load_reason("certificate", why, sizeof why);
        snprintf(err, err_cap, "cannot load the TLS certificate chain %s: %s", cert_file, why);
        goto fail;
    }
    key = read_key(key_file, err, err_cap);
    if (key == NULL)
        goto fail;
    /* SSL_CTX_use_PrivateKey compares the key with the certificate. */
    if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        take_reason(why, sizeof why);
        snprintf(err, err_cap, "the TLS private key %s does not match the certificate %s (%s)",
                 key_file, cert_file, why);
        goto fail;
    }
    EVP_PKEY_free(key);
    return ctx;
fail:
    EVP_PKEY_free(key);
    SSL_CTX_free(ctx);
    return NULL;
}

/* name in RFC 2253 form ("CN=localhost,O=example"). */
static void format_name(X509_NAME *name, char *dst, size_t cap)
{
    snprintf(dst, cap, "?");
    BIO *b = BIO_new(BIO_s_mem());
    if (b == NULL)
        return;
    if (X509_NAME_print_ex(b, name, 0, XN_FLAG_RFC2253) >= 0) {
        int n = BIO_read(b, dst, cap > INT_MAX ? INT_MAX : (int)cap - 1);
        if (n >= 0)
            dst[n] = '\0';
    }
    BIO_free(b);
}

void idms_tls_ctx_describe(SSL_CTX *ctx, char *dst, size_t cap, bool *expired)
{
    *expired = false;
    X509 *x = SSL_CTX_get0_certificate(ctx);
    if (x == NULL) {
        snprintf(dst, cap, "no certificate");
        return;
    }
    char subject[256], until[32] = "?";
    format_name(X509_get_subject_name(x), subject, sizeof subject);
    char *serial = NULL;
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
    if (bn != NULL)
        serial = BN_bn2hex(bn);
    BN_free(bn);
    const ASN1_TIME *not_after = X509_get0_notAfter(x);
    struct tm tm;
    if (ASN1_TIME_to_tm(not_after, &tm) == 1)
        strftime(until, sizeof until, "%Y-%m-%dT%H:%M:%SZ", &tm);
    *expired = X509_cmp_current_time(not_after) < 0;
    snprintf(dst, cap, "subject %s, serial 0x%s, valid until %s", subject,
             serial != NULL ? serial : "?", until);
    OPENSSL_free(serial);
    ERR_clear_error();
}

/* An empty memory BIO says "retry later", not "end of input". */
static BIO *mem_bio(void)
{
    BIO *b = BIO_new(BIO_s_mem());
    if (b != NULL)
        BIO_set_mem_eof_return(b, -1);
    return b;
}

idms_tls *idms_tls_new(SSL_CTX *ctx)
{
    idms_tls *t = calloc(1, sizeof *t);
    if (t == NULL || SSL_CTX_up_ref(ctx) != 1) {
        free(t);
        ERR_clear_error();
        return NULL;
    }
    t->ctx = ctx;
    return t;
}

bool idms_tls_ready(const idms_tls *t)
{
    if (t->ssl != NULL || t->hello_len < RECORD_HEADER)
        return false;
    const unsigned char *h = (const unsigned char *)t->hello;
    size_t len = (size_t)h[3] << 8 | h[4];
    /* Not a handshake record, or longer than a record may be: OpenSSL
     * says why not (plain text sent to the port: "http request"). */
    if (h[0] != RECORD_HANDSHAKE || len > RECORD_PLAIN)
        return true;
    return t->hello_len >= RECORD_HEADER + len;
}

bool idms_tls_started(const idms_tls *t)
{
    return t->ssl != NULL;
}

int idms_tls_start(idms_tls *t)
{
    if (t->ssl != NULL)
        return 0;
    t->ssl = SSL_new(t->ctx);
    t->rbio = mem_bio();
    t->wbio = mem_bio();
    if (t->ssl == NULL || t->rbio == NULL || t->wbio == NULL ||
        (t->hello_len > 0 &&
         BIO_write(t->rbio, t->hello, (int)t->hello_len) != (int)t->hello_len)) {
        BIO_free(t->rbio);
        BIO_free(t->wbio);
        SSL_free(t->ssl);
        t->ssl = NULL;
        t->rbio = t->wbio = NULL;
        ERR_clear_error();
        return -1;
    }
    SSL_set_bio(t->ssl, t->rbio, t->wbio);
    SSL_set_accept_state(t->ssl);
    /* The session holds its own reference to the context now. */
    SSL_CTX_free(t->ctx);
    t->ctx = NULL;
    free(t->hello);
    t->hello = NULL;
    t->hello_len = 0;
    return 0;
}

void idms_tls_free(idms_tls *t)
{
    if (t == NULL)
        return;
    SSL_free(t->ssl); /* and both BIOs, and its reference to the context */
    SSL_CTX_free(t->ctx);
    free(t->hello);
    free(t);
}

/* What a memory BIO's buffer takes. */
static size_t bio_held(BIO *b)
{
    BUF_MEM *m = NULL;
    BIO_get_mem_ptr(b, &m);
    return m != NULL ? m->max : 0;
}

size_t idms_tls_held(const idms_tls *t)
{
    size_t n = sizeof *t + t->hello_len;
    if (t->ssl == NULL)
        return n;
    n += bio_held(t->rbio) + bio_held(t->wbio);
    if (!SSL_is_init_finished(t->ssl))
        return n + IDMS_TLS_HANDSHAKE_BYTES;
    n += IDMS_TLS_SESSION_BYTES;
    /* A record begun and not complete keeps its read buffer. */
    if (SSL_has_pending(t->ssl))
        n += IDMS_TLS_RECORD_BYTES;
    return n;
}

/* A fresh BIO for b if b grew past SMALL_BIO and is empty now, else NULL. */
static BIO *fresh(BIO *b, bool *big)
{
    if (!*big || BIO_ctrl_pending(b) != 0)
        return NULL;
    BIO *n = mem_bio();
    if (n != NULL)
        *big = false;
    return n;
}

static void release_buffers(idms_tls *t)
{
    BIO *b = fresh(t->rbio, &t->big_in);
    if (b != NULL) {
        SSL_set0_rbio(t->ssl, b); /* frees the old one */
        t->rbio = b;
    }
    b = fresh(t->wbio, &t->big_out);
    if (b != NULL) {
        SSL_set0_wbio(t->ssl, b);
        t->wbio = b;
    }
}

int idms_tls_feed(idms_tls *t, const char *data, size_t len)
{
    if (t->ssl == NULL) {
        /* Kept exactly, until the session starts. */
        if (len == 0)
            return 0;
        if (len > INT_MAX - t->hello_len)
            return -1;
        char *p = realloc(t->hello, t->hello_len + len);
        if (p == NULL)
            return -1;
        memcpy(p + t->hello_len, data, len);
        t->hello = p;
        t->hello_len += len;
        return 0;
    }
    if (len > INT_MAX || BIO_write(t->rbio, data, (int)len) != (int)len) {
        ERR_clear_error();
        return -1;
    }
    if (BIO_ctrl_pending(t->rbio) > SMALL_BIO)
        t->big_in = true;
    return 0;
}

/* Moves what the session wrote into wire. Returns 0 or -1 (out of memory). */
static int drain(idms_tls *t, idms_buf *wire)
{
    size_t n = BIO_ctrl_pending(t->wbio);
    if (n == 0)
        return 0;
    if (n > SMALL_BIO)
        t->big_out = true;
    char *dst = idms_buf_reserve(wire, n);
    if (dst == NULL || n > INT_MAX)
        return -1;
    int got = BIO_read(t->wbio, dst, (int)n);
    if (got > 0)
        wire->len += (size_t)got;
    return 0;
}

static void fail(idms_tls *t, const char *why)
{
    t->state = IDMS_TLS_FAILED;
    if (why != NULL) {
        snprintf(t->why, sizeof t->why, "%s", why);
        ERR_clear_error();
    } else {
        take_reason(t->why, sizeof t->why);
    }
}

/* After an SSL call that did not complete (rc <= 0): WANT_READ is no
 * error (more ciphertext continues it), close_notify ends the session, and
 * anything else fails it. */
static void settle(idms_tls *t, int rc)
{
    int e = SSL_get_error(t->ssl, rc);
    if (e == SSL_ERROR_WANT_READ)
        return;
    if (e == SSL_ERROR_ZERO_RETURN) {
        t->state = IDMS_TLS_EOF;
        ERR_clear_error();
        return;
    }
    /* SSL_ERROR_SYSCALL cannot come from memory BIOs but for a lack of
     * memory; WANT_WRITE neither (they take any amount). */
    fail(t, e == SSL_ERROR_SSL ? NULL : "internal error");
}

ptrdiff_t idms_tls_read(idms_tls *t, char *dst, size_t cap, idms_buf *wire)
{
    if (t->ssl == NULL)
        return 0; /* not started: nothing to say yet */
    ERR_clear_error();
    bool go_on = t->state == RUNNING;
    if (go_on && !SSL_is_init_finished(t->ssl)) {
        int rc = SSL_do_handshake(t->ssl);
        if (rc != 1) {
            settle(t, rc);
            go_on = false;
        } else {
            /* The BIOs' buffers held the handshake's flights: released
             * once empty, as after a large read or write. */
            t->big_in = t->big_out = true;
        }
    }
    size_t got = 0;
    while (go_on && got < cap) {
        size_t room = cap - got;
        int n = SSL_read(t->ssl, dst + got, room > INT_MAX ? INT_MAX : (int)room);
        if (n <= 0) {
            settle(t, n);
            break;
        }
        got += (size_t)n;
    }
    if (drain(t, wire) != 0 && t->state == RUNNING)
        fail(t, "out of memory");
    release_buffers(t);
    if (got > 0)
        return (ptrdiff_t)got;
    return t->state;
}

bool idms_tls_pending(const idms_tls *t)
{
    if (t->ssl == NULL)
        return false;
    return t->state != RUNNING || SSL_has_pending(t->ssl) || BIO_ctrl_pending(t->rbio) > 0;
}

bool idms_tls_established(const idms_tls *t)
{
    return t->ssl != NULL && SSL_is_init_finished(t->ssl);
}

int idms_tls_write(idms_tls *t, const char *data, size_t len, idms_buf *wire)
{
    if (t->state == IDMS_TLS_FAILED || !idms_tls_established(t))
        return -1;
    ERR_clear_error();
    size_t records = len / RECORD_PLAIN + 1;
    if (idms_buf_reserve(wire, len + records * RECORD_OVERHEAD) == NULL)
        return -1;
    while (len > 0) {
        int n = SSL_write(t->ssl, data, len > RECORD_PLAIN ? RECORD_PLAIN : (int)len);
        if (n <= 0) {
            settle(t, n);
            if (t->state != IDMS_TLS_FAILED)
                fail(t, "cannot encrypt");
            return -1;
        }
        data += n;
        len -= (size_t)n;
        if (drain(t, wire) != 0)
            return -1;
    }
    release_buffers(t);
    return 0;
}

void idms_tls_shutdown(idms_tls *t, idms_buf *wire)
{
    if (t->state == IDMS_TLS_FAILED || !idms_tls_established(t))
        return;
    ERR_clear_error();
    /* 0 means ours went and theirs has not come: the connection closes
     * without waiting for it (RFC 8446 section 6.1 allows that). */
    (void)SSL_shutdown(t->ssl);
    (void)drain(t, wire);
    ERR_clear_error();
}

const char *idms_tls_error(const idms_tls *t)
{
    return t->why;
}
