/*
 * coord.c - coordinator URLs and the dispatch to the backends (backend.h):
 * etcd.c and zk.c do the talking.
 */
#include "backend.h"
#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_port(const char *s, size_t len, int *port)
{
    if (len == 0 || len > 5)
        return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > 65535)
        return -1;
    *port = v;
    return 0;
}

static bool host_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '-' || ch == '_';
}

static bool path_char(char ch)
{
    return host_char(ch) || ch == '/';
}

/* Parses "EP[,EP...]/PATH" (after the scheme). */
static int parse_target(const char *s, idmc_target *t, char *msg, size_t cap)
{
    memset(t, 0, sizeof *t);
    const char *slash = strchr(s, '/');
    if (slash == NULL || slash == s) {
        snprintf(msg, cap, "expected HOST:PORT[,HOST:PORT...]/PATH after the scheme");
        return IDMC_USAGE;
    }
    const char *p = s;
    while (p < slash) {
        const char *end = memchr(p, ',', (size_t)(slash - p));
        if (end == NULL)
            end = slash;
        const char *colon = NULL;
        for (const char *q = p; q < end; q++)
            if (*q == ':')
                colon = q;
        if (t->n == IDMC_ENDPOINTS_MAX) {
            snprintf(msg, cap, "at most %d servers", IDMC_ENDPOINTS_MAX);
            return IDMC_USAGE;
        }
        idmc_endpoint *ep = &t->ep[t->n];
        size_t hlen = colon != NULL ? (size_t)(colon - p) : 0;
        if (colon == NULL || hlen == 0 || hlen >= sizeof ep->host ||
            parse_port(colon + 1, (size_t)(end - colon - 1), &ep->port) != 0) {
            snprintf(msg, cap, "'%.*s' is not HOST:PORT (a port from 1 to 65535)",
                     (int)(end - p > 200 ? 200 : end - p), p);
            return IDMC_USAGE;
        }
        for (size_t i = 0; i < hlen; i++)
            if (!host_char(p[i])) {
                snprintf(msg, cap, "'%.*s' is not a host name or IPv4 address",
                         (int)(hlen > 200 ? 200 : hlen), p);
                return IDMC_USAGE;
            }
        memcpy(ep->host, p, hlen);
        ep->host[hlen] = '\0';
        t->n++;
        p = end + (end < slash);
        if (end < slash && p == slash) {
            snprintf(msg, cap, "an empty server in the list");
            return IDMC_USAGE;
        }
    }
    size_t plen = strlen(slash);
    while (plen > 1 && slash[plen - 1] == '/')
        plen--;
    if (plen <= 1) {
        snprintf(msg, cap,
                 "a path is needed after the servers (e.g. /idmint/twitter): the "
                 "root is not a place for slots");
        return IDMC_USAGE;
    }
    if (plen >= sizeof t->path) {
        snprintf(msg, cap, "the path is longer than %zu bytes", sizeof t->path - 1);
        return IDMC_USAGE;
    }
    for (size_t i = 0; i < plen; i++)
        if (!path_char(slash[i]) || (slash[i] == '/' && i + 1 < plen && slash[i + 1] == '/')) {
            snprintf(msg, cap,
                     "the path may hold only letters, digits, '.', '-', '_' and "
                     "single '/'");
            return IDMC_USAGE;
        }
    memcpy(t->path, slash, plen);
    t->path[plen] = '\0';
    return 0;
}

static int open_msg(const char *url, int64_t ttl_ms, idmc_coord **out, char *msg, size_t cap)
{
    *out = NULL;
    msg[0] = '\0';
    const idmc_ops *ops = NULL;
    const char *rest = NULL;
    if (strncmp(url, "etcd://", 7) == 0) {
        ops = idmc_etcd_ops;
        rest = url + 7;
        if (ops == NULL) {
            snprintf(msg, cap,
                     "this build has no etcd client (configure with libcurl and jansson)");
            return IDMC_USAGE;
        }
    } else if (strncmp(url, "zk://", 5) == 0) {
        ops = idmc_zk_ops;
        rest = url + 5;
        if (ops == NULL) {
            snprintf(msg, cap,
                     "this build has no ZooKeeper client (configure with libzookeeper-mt)");
            return IDMC_USAGE;
        }
    } else {
        snprintf(msg, cap,
                 "'%.200s' is not a coordinator URL (etcd://HOST:PORT/PREFIX or "
                 "zk://HOST:PORT/PATH)",
                 url);
        return IDMC_USAGE;
    }
    if (ttl_ms < 2000) {
        snprintf(msg, cap, "a lease's TTL must be at least 2 s");
        return IDMC_USAGE;
    }
    idmc_coord *c = calloc(1, sizeof *c);
    if (c == NULL) {
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    if (strlen(url) >= sizeof c->url) {
        free(c);
        snprintf(msg, cap, "the coordinator URL is longer than %zu bytes", sizeof c->url - 1);
        return IDMC_USAGE;
    }
    snprintf(c->url, sizeof c->url, "%s", url);
    c->ops = ops;
    c->ttl_ms = ttl_ms;
    int rc = parse_target(rest, &c->target, msg, cap);
    if (rc == 0)
        rc = ops->open(c, msg, cap);
    if (rc != 0) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

const char *idmc_kind(const idmc_coord *c)
{
    return c->ops->kind;
}

const char *idmc_url(const idmc_coord *c)
{
    return c->url;
}

void idmc_close(idmc_coord *c)
{
    if (c == NULL)
        return;
    c->ops->close(c);
    free(c);
}

static int claim_msg(idmc_coord *c, uint64_t lo, uint64_t hi, const char *holder, idmc_lease **out,
                     char *msg, size_t cap)
{
    *out = NULL;
    msg[0] = '\0';
    if (lo > hi) {
        snprintf(msg, cap, "an empty node range %" PRIu64 "..%" PRIu64, lo, hi);
        return IDMC_USAGE;
    }
    idmc_lease *l = calloc(1, sizeof *l);
    if (l == NULL) {
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    l->coord = c;
    int rc = c->ops->claim(c, lo, hi, holder, l, msg, cap);
    if (rc != 0) {
        free(l);
        return rc;
    }
    *out = l;
    return 0;
}

uint64_t idmc_lease_node(const idmc_lease *l)
{
    return l->node;
}

const char *idmc_lease_generation(const idmc_lease *l)
{
    return l->generation;
}

int64_t idmc_lease_mark_ms(const idmc_lease *l)
{
    return l->mark_ms;
}

int64_t idmc_lease_ttl_ms(const idmc_lease *l)
{
    return l->ttl_ms;
}

static int lost(idmc_lease *l, int rc)
{
    if (rc == IDMC_LOST)
        l->lost = true;
    return rc;
}

static int keepalive_msg(idmc_lease *l, int64_t *ttl_ms, char *msg, size_t cap)
{
    msg[0] = '\0';
    if (l->lost) {
        snprintf(msg, cap, "the lease was lost");
        return IDMC_LOST;
    }
    return lost(l, l->coord->ops->keepalive(l, ttl_ms, msg, cap));
}

static int record_mark_msg(idmc_lease *l, int64_t ms, char *msg, size_t cap)
{
    msg[0] = '\0';
    if (l->lost) {
        snprintf(msg, cap, "the lease was lost");
        return IDMC_LOST;
    }
    return lost(l, l->coord->ops->write_mark(l, ms, false, msg, cap));
}

static int shrink_mark_msg(idmc_lease *l, int64_t ms, char *msg, size_t cap)
{
    msg[0] = '\0';
    if (l->lost) {
        snprintf(msg, cap, "the lease was lost");
        return IDMC_LOST;
    }
    return lost(l, l->coord->ops->write_mark(l, ms, true, msg, cap));
}

void idmc_release(idmc_lease *l)
{
    if (l == NULL)
        return;
    l->coord->ops->release(l);
    free(l);
}

static int list_msg(idmc_coord *c, void (*fn)(void *ctx, const idmc_slot_info *slot), void *ctx,
                    char *msg, size_t cap)
{
    msg[0] = '\0';
    return c->ops->list(c, fn, ctx, msg, cap);
}

/* ---- helpers for the backends -------------------------------------------- */

int idmc_slot_key(const idmc_target *t, const char *what, uint64_t node, char *dst, size_t cap)
{
    int n = snprintf(dst, cap, "%s/%s/%04" PRIu64, t->path, what, node);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int idmc_parse_node(const char *s, uint64_t *node)
{
    if (*s == '\0' || strlen(s) > 19)
        return -1;
    uint64_t v = 0;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *node = v;
    return 0;
}

int64_t idmc_request_timeout_ms(int64_t ttl_ms)
{
    int64_t t = ttl_ms / 4;
    return t < 500 ? 500 : t > 2000 ? 2000 : t;
}

#ifndef IDMC_HAVE_ETCD
const idmc_ops *const idmc_etcd_ops = NULL;
#endif
#ifndef IDMC_HAVE_ZK
const idmc_ops *const idmc_zk_ops = NULL;
#endif

/* The public calls: each fills the caller's record (idmc_error) from the
 * (msg, cap) the backends write. */
int idmc_open(const char *url, int64_t ttl_ms, idmc_coord **out, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    return e->code = open_msg(url, ttl_ms, out, e->msg, sizeof e->msg);
}

int idmc_claim(idmc_coord *c, uint64_t lo, uint64_t hi, const char *holder, idmc_lease **out,
               idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    return e->code = claim_msg(c, lo, hi, holder, out, e->msg, sizeof e->msg);
}

int idmc_keepalive(idmc_lease *l, int64_t *ttl_ms, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    return e->code = keepalive_msg(l, ttl_ms, e->msg, sizeof e->msg);
}

int idmc_record_mark(idmc_lease *l, int64_t ms, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    return e->code = record_mark_msg(l, ms, e->msg, sizeof e->msg);
}

int idmc_shrink_mark(idmc_lease *l, int64_t ms, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    return e->code = shrink_mark_msg(l, ms, e->msg, sizeof e->msg);
}

int idmc_list(idmc_coord *c, void (*fn)(void *ctx, const idmc_slot_info *slot), void *ctx,
              idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    int n = list_msg(c, fn, ctx, e->msg, sizeof e->msg);
    e->code = n < 0 ? IDMC_ERROR : 0;
    return n;
}

const char *idmc_strerror(int code)
{
    switch (code) {
    case 0:
        return "ok";
    case IDMC_BUSY:
        return "busy: every node of the range is held";
    case IDMC_ERROR:
        return "error: try again";
    case IDMC_LOST:
        return "lost: the lease or its slot is no longer this holder's";
    case IDMC_USAGE:
        return "usage: a bad URL or argument";
    default:
        return "unknown result";
    }
}
