/*
 * server/memcache/memcache_parser.c - see memcache_parser.h.
 */
#include "memcache/memcache_parser.h"

#include <string.h>

static ptrdiff_t invalid(const char **reason, const char *why)
{
    if (reason != NULL)
        *reason = why;
    return IDMS_MC_INVALID;
}

static bool token_is(const idms_mc_token *t, const char *word)
{
    size_t n = strlen(word);
    return t->len == n && memcmp(t->ptr, word, n) == 0;
}

/* memcached refuses keys with control characters (and space ends one). */
static bool key_ok(const idms_mc_token *t)
{
    if (t->len == 0 || t->len > IDMS_MC_KEY_MAX)
        return false;
    for (size_t i = 0; i < t->len; i++) {
        unsigned char c = (unsigned char)t->ptr[i];
        if (c <= 32 || c == 127)
            return false;
    }
    return true;
}

static ptrdiff_t parse_text(const char *buf, size_t len, idms_mc_request *req, const char **reason)
{
    size_t scan = len < IDMS_MC_MAX_LINE + 1 ? len : IDMS_MC_MAX_LINE + 1;
    const char *lf = memchr(buf, '\n', scan);
    if (lf == NULL)
        return len > IDMS_MC_MAX_LINE ? invalid(reason, "CLIENT_ERROR line too long")
                                      : IDMS_MC_INCOMPLETE;
    size_t end = (size_t)(lf - buf), consumed = end + 1;
    if (end > 0 && buf[end - 1] == '\r')
        end--;
    /* Tokens: runs of non-space; the first is the command. */
    idms_mc_token cmd = {NULL, 0};
    size_t i = 0, nkeys = 0;
    bool too_many = false;
    while (i < end) {
        while (i < end && buf[i] == ' ')
            i++;
        if (i == end)
            break;
        size_t start = i;
        while (i < end && buf[i] != ' ')
            i++;
        idms_mc_token t = {buf + start, i - start};
        if (cmd.ptr == NULL)
            cmd = t;
        else if (nkeys < IDMS_MC_MAX_KEYS)
            req->keys[nkeys++] = t;
        else
            too_many = true;
    }
    if (cmd.ptr == NULL) {
        req->cmd = IDMS_MC_EMPTY;
        return (ptrdiff_t)consumed;
    }
    if (token_is(&cmd, "get") || token_is(&cmd, "gets")) {
        if (nkeys == 0) {
            req->cmd = IDMS_MC_UNKNOWN; /* memcached: "ERROR" */
            return (ptrdiff_t)consumed;
        }
        if (too_many)
            return invalid(reason, "CLIENT_ERROR too many keys");
        for (size_t k = 0; k < nkeys; k++)
            if (!key_ok(&req->keys[k]))
                return invalid(reason, "CLIENT_ERROR bad command line format");
        req->cmd = cmd.len == 3 ? IDMS_MC_GET : IDMS_MC_GETS;
        req->nkeys = nkeys;
        return (ptrdiff_t)consumed;
    }
    if (token_is(&cmd, "stats")) {
        req->cmd = IDMS_MC_STATS;
        req->nkeys = nkeys;
    } else if (token_is(&cmd, "version") && nkeys == 0) {
        req->cmd = IDMS_MC_VERSION;
    } else if (token_is(&cmd, "quit") && nkeys == 0) {
        req->cmd = IDMS_MC_QUIT;
    } else {
        req->cmd = IDMS_MC_UNKNOWN;
    }
    return (ptrdiff_t)consumed;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static ptrdiff_t parse_binary(const char *buf, size_t len, idms_mc_request *req,
                              const char **reason)
{
    const unsigned char *h = (const unsigned char *)buf;
    if (len >= 1 && h[0] != IDMS_MC_BIN_REQUEST)
        return invalid(reason, "bad magic");
    if (len < IDMS_MC_HEADER)
        return IDMS_MC_INCOMPLETE;
    size_t key_len = (size_t)h[2] << 8 | h[3], extras = h[4];
    uint32_t body = be32(h + 8);
    if (body > IDMS_MC_MAX_BODY)
        return invalid(reason, "body too large");
    if (extras + key_len > body)
        return invalid(reason, "bad lengths");
    uint8_t op = h[1];
    bool bare = op == IDMS_MC_OP_VERSION || op == IDMS_MC_OP_NOOP || op == IDMS_MC_OP_QUIT;
    bool get = op == IDMS_MC_OP_GET || op == IDMS_MC_OP_GETK;
    if ((get && (key_len == 0 || extras != 0 || body != key_len)) || (bare && body != 0))
        return invalid(reason, "bad lengths");
    if (len < IDMS_MC_HEADER + (size_t)body)
        return IDMS_MC_INCOMPLETE;
    req->binary = true;
    req->opcode = op;
    req->opaque = be32(h + 12);
    switch (op) {
    case IDMS_MC_OP_GET:
    case IDMS_MC_OP_GETK:
        req->cmd = IDMS_MC_GET;
        req->keys[0] = (idms_mc_token){buf + IDMS_MC_HEADER, key_len};
        req->nkeys = 1;
        break;
    case IDMS_MC_OP_VERSION:
        req->cmd = IDMS_MC_VERSION;
        break;
    case IDMS_MC_OP_NOOP:
        req->cmd = IDMS_MC_NOOP;
        break;
    case IDMS_MC_OP_QUIT:
        req->cmd = IDMS_MC_QUIT;
        break;
    default:
        req->cmd = IDMS_MC_UNKNOWN;
        break;
    }
    return (ptrdiff_t)(IDMS_MC_HEADER + body);
}

ptrdiff_t idms_mc_parse(const char *buf, size_t len, bool binary, idms_mc_request *req,
                        const char **reason)
{
    if (reason != NULL)
        *reason = NULL;
    req->cmd = IDMS_MC_EMPTY;
    req->binary = false;
    req->opcode = 0;
    req->opaque = 0;
    req->nkeys = 0;
    ptrdiff_t r = binary ? parse_binary(buf, len, req, reason) : parse_text(buf, len, req, reason);
    if (r <= 0)
        req->nkeys = 0;
    return r;
}
