/*
 * auth.c - access control: the token of --auth-token-file, its constant-
 * time check, the failures' count and log, and protected mode. The
 * adapters decide what needs the token (http_server.c: every route but
 * the probes; resp_server.c: every command but those flagged no_auth) and
 * how it is presented (Authorization: Bearer, AUTH, HELLO ... AUTH).
 *
 * The token file follows ssh's rule for private keys: owned by the user
 * and unreadable to anyone else, or refused at start, since a token that
 * others can read protects nothing. The token is hashed as soon as it is
 * read and the bytes wiped; requests are checked by hashing what they
 * present and comparing the digests with CRYPTO_memcmp, so the comparison
 * takes the same time whatever the token's length or the first byte that
 * differs (a plain memcmp of unequal lengths would leak the length, and
 * its early exit the matching prefix).
 *
 * Left out: several tokens, users other than Redis's "default", per-client
 * rate limits, and reloading the token without a restart.
 */
#include "auth.h"
#include "conn.h"
#include "core/counters.h"
#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static bool digest(const void *data, size_t len, unsigned char out[IDMS_AUTH_DIGEST_LEN])
{
    unsigned int n = 0;
    return EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) == 1 && n == IDMS_AUTH_DIGEST_LEN;
}

/* The file's owner and mode, checked on the open descriptor (no window
 * between the check and the read for the path to be swapped). */
static int check_file(int fd, const char *path, char *err, size_t err_cap)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, err_cap, "--auth-token-file %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, err_cap, "--auth-token-file %s: not a regular file", path);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, err_cap,
                 "--auth-token-file %s: owned by uid %u, not by the user idmintd runs as (uid %u); "
                 "the token file must belong to that user",
                 path, (unsigned)st.st_uid, (unsigned)geteuid());
        return -1;
    }
    if ((st.st_mode & 077) != 0) {
        snprintf(err, err_cap,
                 "--auth-token-file %s: mode %04o lets other users read it; it must be 0600 or "
                 "stricter (chmod 600 %s)",
                 path, (unsigned)(st.st_mode & 07777), path);
        return -1;
    }
    return 0;
}

/* Reads at most cap bytes into buf; *len gets the count. One byte more
 * than the longest token and its line end tells "too long" apart. */
static int read_all(int fd, char *buf, size_t cap, size_t *len, const char *path, char *err,
                    size_t err_cap)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, err_cap, "--auth-token-file %s: %s", path, strerror(errno));
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    *len = got;
    return 0;
}

/* The rules of idms_auth_load for the token's bytes. */
static int check_token(const char *t, size_t len, const char *path, char *err, size_t err_cap)
{
    if (len == 0) {
        snprintf(err, err_cap,
                 "--auth-token-file %s: the file is empty; put a token of at least %d visible "
                 "ASCII characters in it (for instance: umask 077; openssl rand -hex 32 > %s)",
                 path, IDMS_AUTH_TOKEN_MIN, path);
        return -1;
    }
    if (len > IDMS_AUTH_TOKEN_MAX) {
        snprintf(err, err_cap, "--auth-token-file %s: the token is longer than %d bytes", path,
                 IDMS_AUTH_TOKEN_MAX);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)t[i];
        if (ch > 0x20 && ch < 0x7F)
            continue;
        const char *what = ch == ' '                 ? "a space"
                           : ch < 0x20 || ch == 0x7F ? "a control character"
                                                     : "a non-ASCII byte";
        snprintf(err, err_cap,
                 "--auth-token-file %s: the token holds %s (at byte %zu); only visible ASCII "
                 "(0x21-0x7E) is allowed, after one final line end",
                 path, what, i + 1);
        return -1;
    }
    if (len < IDMS_AUTH_TOKEN_MIN) {
        snprintf(err, err_cap,
                 "--auth-token-file %s: the token is %zu bytes; at least %d are needed (for "
                 "instance: umask 077; openssl rand -hex 32 > %s)",
                 path, len, IDMS_AUTH_TOKEN_MIN, path);
        return -1;
    }
    return 0;
}

int idms_auth_load(idms_auth *a, const char *path, char *err, size_t err_cap)
{
    struct idms_metrics *metrics = a->metrics; /* main.c's, kept */
    memset(a, 0, sizeof *a);
    a->metrics = metrics;
    a->logged_s = -1;
    /* O_NONBLOCK: a FIFO given by mistake must not hang the start; it is
     * refused as not a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, err_cap, "--auth-token-file %s: %s", path, strerror(errno));
        return -1;
    }
    char buf[IDMS_AUTH_TOKEN_MAX + 3];
    size_t len = 0;
    int rc = check_file(fd, path, err, err_cap);
    if (rc == 0)
        rc = read_all(fd, buf, sizeof buf, &len, path, err, err_cap);
    close(fd);
    if (rc == 0) {
        if (len > 0 && buf[len - 1] == '\n') {
            len--;
            if (len > 0 && buf[len - 1] == '\r')
                len--;
        }
        rc = check_token(buf, len, path, err, err_cap);
    }
    if (rc == 0 && !digest(buf, len, a->digest)) {
        snprintf(err, err_cap, "--auth-token-file %s: cannot compute the token's SHA-256 digest",
                 path);
        rc = -1;
    }
    OPENSSL_cleanse(buf, sizeof buf);
    a->required = rc == 0;
    return rc;
}

bool idms_auth_token_ok(const idms_auth *a, const char *token, size_t len)
{
    unsigned char d[IDMS_AUTH_DIGEST_LEN];
    if (!a->required || !digest(token, len, d))
        return false;
    bool ok = CRYPTO_memcmp(d, a->digest, sizeof d) == 0;
    OPENSSL_cleanse(d, sizeof d);
    return ok;
}

int idms_auth_bearer(const char *value, size_t len, const char **token, size_t *token_len)
{
    /* RFC 9110 section 11.1: the scheme is case-insensitive; section
     * 11.4: credentials = auth-scheme [ 1*SP token68 ]. */
    if (len < 6 || strncasecmp(value, "Bearer", 6) != 0 || (len > 6 && value[6] != ' '))
        return 0;
    size_t i = 6;
    while (i < len && value[i] == ' ')
        i++;
    if (i == len || memchr(value + i, ' ', len - i) != NULL || memchr(value + i, '\t', len - i))
        return -1;
    *token = value + i;
    *token_len = len - i;
    return 1;
}

bool idms_auth_addr_local(const char *addr)
{
    /* A Unix socket is local: conn.c makes it with mode 0660, so only
     * idmintd's user and group can connect, and that mode is its access
     * control (idmintd(8), ACCESS CONTROL: protected mode). */
    if (strncmp(addr, "unix:", 5) == 0)
        return true;
    /* The host as conn.c's parse_addr takes it: before the last ':',
     * without the brackets of [v6]. */
    const char *colon = strrchr(addr, ':');
    if (colon == NULL)
        return false;
    size_t hlen = (size_t)(colon - addr);
    const char *h = addr;
    if (addr[0] == '[' && hlen >= 2 && addr[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    char host[INET6_ADDRSTRLEN + 1];
    if (hlen >= sizeof host)
        return false;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, host, &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &v6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
    return false;
}

int idms_auth_check_exposure(const idms_listener *ls, size_t n, bool token,
                             bool allow_unauthenticated, char *err, size_t err_cap)
{
    for (size_t i = 0; i < n; i++) {
        const char *addr = ls[i].addr;
        if (addr == NULL || addr[0] == '\0' || idms_auth_addr_local(addr))
            continue;
        if (token && ls[i].proto->tokenless) {
            /* memcached's text protocol has no authentication: the token
             * cannot be asked for, so the port must not be reachable. */
            snprintf(err, err_cap,
                     "refusing to listen on %s for %s with --auth-token-file: the protocol "
                     "cannot carry the token, so it may listen on loopback or a Unix socket only",
                     addr, ls[i].proto->name);
            return -1;
        }
        if (token || allow_unauthenticated)
            continue;
        /* Redis's protected mode, as a refusal to start rather than a
         * reply to every client: the operator sees it at once. */
        snprintf(err, err_cap,
                 "refusing to listen on %s without --auth-token-file: anyone who can connect "
                 "could mint IDs; give --allow-unauthenticated to do it anyway",
                 addr);
        return -1;
    }
    return 0;
}

/* The peer's address for the log: "1.2.3.4:5", "[::1]:5", or a word. */
static void peer_name(idms_conn *c, char *dst, size_t cap)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof sa;
    uv_os_fd_t fd;
    snprintf(dst, cap, "an unknown peer");
    if (uv_fileno((const uv_handle_t *)&c->sock.handle, &fd) != 0 ||
        getpeername(fd, (struct sockaddr *)&sa, &len) != 0)
        return;
    char host[INET6_ADDRSTRLEN];
    if (sa.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&sa;
        if (inet_ntop(AF_INET, &in->sin_addr, host, sizeof host) != NULL)
            snprintf(dst, cap, "%s:%u", host, (unsigned)ntohs(in->sin_port));
    } else if (sa.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sa;
        if (inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host) != NULL)
            snprintf(dst, cap, "[%s]:%u", host, (unsigned)ntohs(in6->sin6_port));
    } else if (sa.ss_family == AF_UNIX) {
        snprintf(dst, cap, "a unix socket");
    }
}

void idms_auth_failed(idms_auth *a, idms_conn *c, int why)
{
    static const char *const whys[] = {
        [IDMS_AUTH_MISSING] = "no token",
        [IDMS_AUTH_WRONG] = "a wrong token",
        [IDMS_AUTH_MALFORMED] = "malformed credentials",
    };
    uint64_t total = ++a->metrics->auth_failures[c->listener->slot];
    /* At most once a second: a client guessing tokens, or one that forgot
     * its token and pipelines, must not flood the log. */
    int64_t now_s = (int64_t)(uv_now(c->sock.handle.loop) / 1000);
    if (now_s == a->logged_s) {
        a->unlogged++;
        return;
    }
    char peer[INET6_ADDRSTRLEN + 16];
    peer_name(c, peer, sizeof peer);
    char more[64] = "";
    if (a->unlogged > 0)
        snprintf(more, sizeof more, ", %" PRIu64 " more since the last message", a->unlogged);
    const char *what = c->proto->request_noun;
    idms_log(IDMS_LOG_WARN, "refused %s from %s: %s (%" PRIu64 " refused on %s so far%s)", what,
             peer, whys[why], total, c->proto->name, more);
    a->logged_s = now_s;
    a->unlogged = 0;
}
