/*
 * auth.h - access control (auth.c): the token of --auth-token-file, the
 * check the protocol adapters make before they serve a request, the count
 * and log of failures, and protected mode (a listener other hosts can
 * reach needs a token, or --allow-unauthenticated). Not installed.
 *
 * The token is a secret: only its SHA-256 digest is kept once loaded, it
 * is compared in constant time, and nothing here or in the adapters logs
 * it, an Authorization header or an AUTH argument.
 */
#ifndef IDMS_AUTH_H
#define IDMS_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idms_conn;
struct idms_listener;

#define IDMS_AUTH_TOKEN_MIN  16   /* bytes: shorter tokens are refused at start */
#define IDMS_AUTH_TOKEN_MAX  1024 /* bytes: fits a header line, a URL, a RESP argument */
#define IDMS_AUTH_DIGEST_LEN 32   /* SHA-256 */

typedef struct idms_auth {
    bool required; /* a token was loaded: every request needs it */
    /* --tinyid-open: tinyid's routes are served without a token (tinyid
     * requires one; without this and a token file they refuse all). */
    bool tinyid_open;
    unsigned char digest[IDMS_AUTH_DIGEST_LEN];
    int64_t logged_s;  /* the last second (loop time) a failure was logged; -1 never */
    uint64_t unlogged; /* failures since then, not logged one by one */
    /* Where failures are counted (auth_failures, by the listener's slot):
     * main.c sets it. */
    struct idms_metrics *metrics;
} idms_auth;

/* A route's access, as the HTTP route table gives it (http_server.c).
 * Without a flag a route needs "Authorization: Bearer TOKEN". */
enum {
    IDMS_AUTH_OPEN = 1u << 0, /* served without a token: the probes /healthz, /readyz */
    /* The route checks the token itself and refuses in its protocol's
     * words: tinyid's routes (its clients send the token as a parameter,
     * and are told of a wrong one with a 200 and code 5). */
    IDMS_AUTH_SELF = 1u << 1,
};

/* Why a request was refused (idms_auth_failed). */
enum { IDMS_AUTH_MISSING, IDMS_AUTH_WRONG, IDMS_AUTH_MALFORMED };

/*
 * Loads the token from path: the file must be a regular file owned by the
 * effective user with no permission bits for group or others (0600 or
 * stricter); the token is its content less one final line end (LF or CR
 * LF), IDMS_AUTH_TOKEN_MIN to IDMS_AUTH_TOKEN_MAX bytes of visible ASCII
 * (0x21-0x7E: no spaces, control characters or other bytes, so that it
 * travels unchanged in an HTTP header, a RESP argument and a URL query).
 * Returns 0 with a->required set, or -1 with the reason in err (the path
 * and the rule broken, never the token's bytes). a is zeroed first.
 */
int idms_auth_load(idms_auth *a, const char *path, char *err, size_t err_cap);

/* Whether token[0..len) is the token, in time that depends on len only
 * (SHA-256 digests compared with CRYPTO_memcmp): neither the token's
 * bytes nor its length leak through timing. False when no token is
 * loaded, or the digest cannot be computed (refused rather than let in). */
bool idms_auth_token_ok(const idms_auth *a, const char *token, size_t len);

/*
 * An Authorization header value (OWS-trimmed) as Bearer credentials (RFC
 * 6750 section 2.1: "Bearer" case-insensitively, one or more spaces, the
 * token). Returns 1 with *token and *token_len pointing into value, 0 for
 * another scheme (no Bearer credentials: treated as none), or -1 for
 * "Bearer" without a token or with a space inside it.
 */
int idms_auth_bearer(const char *value, size_t len, const char **token, size_t *token_len);

/* Whether a listen address (ADDR:PORT, [v6]:PORT or unix:PATH) can be
 * reached from this host only: a unix socket, 127.0.0.0/8 or ::1 (also as
 * ::ffff:127.x.x.x). Anything else counts as reachable from others, an
 * address that does not parse included. */
bool idms_auth_addr_local(const char *addr);

/* Protected mode, over the n listeners ls (those whose address is "" are
 * off): -1 with err set when one is not local (idms_auth_addr_local), no
 * token is required and allow_unauthenticated is false; or when a token
 * is required and a listener whose protocol cannot carry it
 * (idms_proto.tokenless: memcached) is not local. Else 0. */
int idms_auth_check_exposure(const struct idms_listener *ls, size_t n, bool token,
                             bool allow_unauthenticated, char *err, size_t err_cap);

/* Counts a refused request in idmint_auth_failures_total{protocol} (c's
 * front end) and logs it, at most once a second, with the peer's address
 * and why (IDMS_AUTH_*); the failures in between are counted in the next
 * message. Loop thread only. */
void idms_auth_failed(idms_auth *a, struct idms_conn *c, int why);

#endif
