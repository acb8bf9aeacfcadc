/*
 * etcd.c - the etcd coordinator (idmint_coord.h, backend.h), spoken
 * through etcd v3's JSON gateway (POST /v3/..., etcd_gw.c: libcurl,
 * jansson).
 *
 * The slots of PREFIX are two keys per node:
 *
 *   PREFIX/workers/NNNN  the hold: created by a transaction only if absent
 *                        (create_revision == 0), attached to the holder's
 *                        lease, so that it goes when the lease expires;
 *                        value: the holder line. Its create_revision is
 *                        the generation (fencing token).
 *   PREFIX/marks/NNNN    the mark (decimal Unix ms), without a lease: it
 *                        outlives its holders.
 *
 * Every write of a mark is a transaction that first compares the hold's
 * create_revision with the generation, so that a holder whose lease expired
 * and whose node someone else claimed can no longer write it. etcd answers
 * a write only once it is committed in a quorum's fsynced WAL, which is what
 * "durable when this returns 0" asks.
 *
 * Traps of the gateway (etcd 3.4), all relied on below:
 * - proto3's JSON leaves out false and zero fields: a transaction whose
 *   comparison failed has no "succeeded" member at all, a range with
 *   nothing in it has no "kvs", and a key's missing "lease" means 0.
 * - 64-bit numbers (revisions, lease IDs, TTLs) arrive as JSON strings.
 * - /v3/lease/keepalive is a stream: its one answer is wrapped in
 *   {"result": {...}}, and a lease that has expired gets HTTP 200 with no
 *   "TTL" in it.
 *
 * Left out: watches (a holder learns of a lost lease from its keepalives and
 * fenced writes, which is all that safety needs), and a lease per process
 * shared by several nodes (one lease is one claim).
 *
 * Thread-safety: no (one thread per coordinator and its leases).
 */
#include "etcd_gw.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys are PREFIX/workers/NNNN with PREFIX under 512 bytes. */
#define KEY_CAP 600
/* How often a raised mark is retried when another write moved it between
 * our read and our transaction (only the holder writes it, so one retry
 * covers a duplicate of our own write after a fail-over). */
#define MARK_TRIES 4

/* l->impl. */
typedef struct etcd_lease {
    int64_t id;
    int64_t gen;
} etcd_lease;

/* ---- transactions, as the gateway takes them --------------------------- */

static json_t *cmp_rev(const char *key, const char *target, const char *field, int64_t rev)
{
    return json_pack("{s:o, s:s, s:s, s:o}", "key", idmc_gw_b64(key), "target", target, "result",
                     "EQUAL", field, idmc_gw_i64(rev));
}

/* create_revision(key) == rev; rev 0: the key does not exist. */
static json_t *cmp_created(const char *key, int64_t rev)
{
    return cmp_rev(key, "CREATE", "create_revision", rev);
}

/* mod_revision(key) == rev; a missing key compares as 0. */
static json_t *cmp_modified(const char *key, int64_t rev)
{
    return cmp_rev(key, "MOD", "mod_revision", rev);
}

static json_t *op_put(const char *key, const char *value, int64_t lease)
{
    json_t *put = json_pack("{s:o, s:o}", "key", idmc_gw_b64(key), "value", idmc_gw_b64(value));
    if (put != NULL && lease != 0 && json_object_set_new(put, "lease", idmc_gw_i64(lease)) != 0) {
        json_decref(put);
        put = NULL;
    }
    return json_pack("{s:o}", "request_put", put);
}

static json_t *op_range(const char *key)
{
    return json_pack("{s:{s:o}}", "request_range", "key", idmc_gw_b64(key));
}

static json_t *op_delete(const char *key)
{
    return json_pack("{s:{s:o}}", "request_delete_range", "key", idmc_gw_b64(key));
}

/* A transaction's request; any part NULL (out of memory) makes it NULL. */
static json_t *txn(json_t *compare, json_t *success, json_t *failure)
{
    return json_pack("{s:o, s:o, s:o}", "compare", compare, "success", success, "failure", failure);
}

static bool txn_succeeded(const json_t *resp)
{
    return json_is_true(json_object_get(resp, "succeeded"));
}

/* The first key-value of the i-th answer of a transaction (a range), or
 * NULL when it found nothing. */
static json_t *txn_kv(const json_t *resp, size_t i)
{
    json_t *r = json_array_get(json_object_get(resp, "responses"), i);
    json_t *range = json_object_get(r, "response_range");
    return json_array_get(json_object_get(range, "kvs"), 0);
}

/* ---- leases ------------------------------------------------------------ */

static int grant(idmc_coord *c, int64_t *id, int64_t *ttl_s, char *msg, size_t cap)
{
    int64_t want = (c->ttl_ms + 999) / 1000;
    json_t *resp;
    int rc = idmc_gw_call(c->impl, "/v3/lease/grant", json_pack("{s:o}", "TTL", idmc_gw_i64(want)),
                          &resp, msg, cap);
    if (rc != 0)
        return rc;
    if (idmc_gw_get_i64(resp, "ID", id) != 0 || idmc_gw_get_i64(resp, "TTL", ttl_s) != 0 ||
        *id == 0 || *ttl_s <= 0) {
        idmc_gw_unexpected(c->impl, "a lease grant without an ID or TTL", msg, cap);
        rc = IDMC_ERROR;
    }
    json_decref(resp);
    return rc;
}

/* Best effort: a lease we cannot revoke expires by itself. */
static void revoke(idmc_coord *c, int64_t id)
{
    char msg[IDMC_MSG_CAP];
    json_t *resp;
    json_t *req = json_pack("{s:o}", "ID", idmc_gw_i64(id));
    if (idmc_gw_call(c->impl, "/v3/lease/revoke", req, &resp, msg, sizeof msg) == 0)
        json_decref(resp);
}

/* The TTL left on a lease in ms, -1 when it has expired or is unknown. */
static int64_t time_to_live_ms(idmc_coord *c, int64_t id)
{
    char msg[IDMC_MSG_CAP];
    json_t *resp;
    int64_t ttl = -1;
    if (idmc_gw_call(c->impl, "/v3/lease/timetolive", json_pack("{s:o}", "ID", idmc_gw_i64(id)),
                     &resp, msg, sizeof msg) != 0)
        return -1;
    if (idmc_gw_get_i64(resp, "TTL", &ttl) != 0 || ttl < 0)
        ttl = -1;
    else
        ttl *= 1000;
    json_decref(resp);
    return ttl;
}

/* ---- the backend ------------------------------------------------------- */

static int etcd_open(idmc_coord *c, char *msg, size_t cap)
{
    idmc_gw *g;
    int rc = idmc_gw_new(&c->target, idmc_request_timeout_ms(c->ttl_ms), &g, msg, cap);
    if (rc == 0)
        c->impl = g;
    return rc;
}

static void etcd_close(idmc_coord *c)
{
    idmc_gw_free(c->impl);
    c->impl = NULL;
}

static int prefix_of(const idmc_coord *c, const char *what, char *dst, size_t cap)
{
    int n = snprintf(dst, cap, "%s/%s/", c->target.path, what);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Ranges over every key under PREFIX/what/ (range_end: the prefix with its
 * last byte, '/', raised by one). */
static int range_prefix(idmc_coord *c, const char *what, bool keys_only, json_t **out, char *msg,
                        size_t cap)
{
    char from[KEY_CAP], to[KEY_CAP];
    if (prefix_of(c, what, from, sizeof from) != 0) {
        snprintf(msg, cap, "the key prefix is too long");
        return IDMC_USAGE;
    }
    memcpy(to, from, sizeof to);
    to[strlen(to) - 1]++;
    json_t *req = json_pack("{s:o, s:o}", "key", idmc_gw_b64(from), "range_end", idmc_gw_b64(to));
    if (req != NULL && keys_only)
        json_object_set_new(req, "keys_only", json_true());
    return idmc_gw_call(c->impl, "/v3/kv/range", req, out, msg, cap);
}

/* The node of a key under prefix, or -1 (a key of a shape we did not make). */
static int key_node(const json_t *kv, const char *prefix, uint64_t *node)
{
    char *key = idmc_gw_unb64(json_object_get(kv, "key"));
    size_t plen = strlen(prefix);
    int rc =
        key != NULL && strncmp(key, prefix, plen) == 0 ? idmc_parse_node(key + plen, node) : -1;
    free(key);
    return rc;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The held nodes in [lo, hi], sorted, into *held (free it). */
static int held_nodes(idmc_coord *c, uint64_t lo, uint64_t hi, uint64_t **held, size_t *n,
                      char *msg, size_t cap)
{
    *held = NULL;
    *n = 0;
    json_t *resp;
    int rc = range_prefix(c, "workers", true, &resp, msg, cap);
    if (rc != 0)
        return rc;
    char prefix[KEY_CAP];
    prefix_of(c, "workers", prefix, sizeof prefix);
    json_t *kvs = json_object_get(resp, "kvs");
    size_t total = json_array_size(kvs);
    uint64_t *v = total > 0 ? malloc(total * sizeof *v) : NULL;
    if (total > 0 && v == NULL) {
        json_decref(resp);
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    size_t k = 0;
    for (size_t i = 0; i < total; i++) {
        uint64_t node;
        if (key_node(json_array_get(kvs, i), prefix, &node) == 0 && node >= lo && node <= hi)
            v[k++] = node;
    }
    json_decref(resp);
    if (k > 1)
        qsort(v, k, sizeof *v, cmp_u64);
    *held = v;
    *n = k;
    return 0;
}

/* A mark's value: decimal Unix ms. 0 or -1. */
static int kv_mark(const json_t *kv, int64_t *ms)
{
    *ms = 0;
    if (kv == NULL)
        return 0;
    char *s = idmc_gw_unb64(json_object_get(kv, "value"));
    int rc = s != NULL ? idmc_gw_parse_i64(s, ms) : -1;
    free(s);
    return rc;
}

static int bad_mark(idmc_coord *c, uint64_t node, char *msg, size_t cap)
{
    char w[300];
    idmc_gw_where(c->impl, w, sizeof w);
    snprintf(msg, cap, "%s: the mark %s/marks/%04" PRIu64 " is not a decimal time in ms", w,
             c->target.path, node);
    return IDMC_ERROR;
}

/* Reads PATH/marks/NODE. */
static int read_mark(idmc_coord *c, uint64_t node, int64_t *ms, int64_t *mod_rev, char *msg,
                     size_t cap)
{
    char mk[KEY_CAP];
    idmc_slot_key(&c->target, "marks", node, mk, sizeof mk);
    json_t *resp;
    int rc = idmc_gw_call(c->impl, "/v3/kv/range", json_pack("{s:o}", "key", idmc_gw_b64(mk)),
                          &resp, msg, cap);
    if (rc != 0)
        return rc;
    json_t *kv = json_array_get(json_object_get(resp, "kvs"), 0);
    if (kv_mark(kv, ms) != 0 || idmc_gw_get_i64(kv, "mod_revision", mod_rev) != 0)
        rc = bad_mark(c, node, msg, cap);
    json_decref(resp);
    return rc;
}

/*
 * Tries to take node with the lease: one transaction creates the hold if
 * absent and reads the mark. 0 with l filled; IDMC_BUSY (someone holds it;
 * msg names the holder); IDMC_ERROR.
 */
static int try_node(idmc_coord *c, uint64_t node, const char *holder, int64_t lease, idmc_lease *l,
                    char *msg, size_t cap)
{
    char wk[KEY_CAP], mk[KEY_CAP];
    if (idmc_slot_key(&c->target, "workers", node, wk, sizeof wk) != 0 ||
        idmc_slot_key(&c->target, "marks", node, mk, sizeof mk) != 0) {
        snprintf(msg, cap, "the key prefix is too long");
        return IDMC_USAGE;
    }
    json_t *resp;
    int rc = idmc_gw_call(c->impl, "/v3/kv/txn",
                          txn(json_pack("[o]", cmp_created(wk, 0)),
                              json_pack("[o, o]", op_put(wk, holder, lease), op_range(mk)),
                              json_pack("[o]", op_range(wk))),
                          &resp, msg, cap);
    if (rc != 0)
        return rc;
    int64_t gen = 0, mark = 0, mod_rev;
    json_t *header = json_object_get(resp, "header");
    if (txn_succeeded(resp)) {
        /* The put happened at the transaction's revision, which is thus
         * the hold's create_revision. */
        if (idmc_gw_get_i64(header, "revision", &gen) != 0 || gen <= 0) {
            idmc_gw_unexpected(c->impl, "a transaction without a revision", msg, cap);
            rc = IDMC_ERROR;
        } else if (kv_mark(txn_kv(resp, 1), &mark) != 0) {
            rc = bad_mark(c, node, msg, cap);
        }
    } else {
        json_t *kv = txn_kv(resp, 0);
        int64_t owner = 0;
        idmc_gw_get_i64(kv, "lease", &owner);
        if (kv != NULL && owner == lease) {
            /* Ours already: a first attempt that timed out on one server
             * was applied, and this is its repetition on another. */
            if (idmc_gw_get_i64(kv, "create_revision", &gen) != 0 || gen <= 0) {
                idmc_gw_unexpected(c->impl, "a key without a create_revision", msg, cap);
                rc = IDMC_ERROR;
            } else {
                rc = read_mark(c, node, &mark, &mod_rev, msg, cap);
            }
        } else {
            char *who = kv != NULL ? idmc_gw_unb64(json_object_get(kv, "value")) : NULL;
            snprintf(msg, cap, "node %" PRIu64 " is held by %s", node,
                     who != NULL && who[0] != '\0' ? who : "another holder");
            free(who);
            rc = IDMC_BUSY;
        }
    }
    json_decref(resp);
    if (rc != 0)
        return rc;
    etcd_lease *el = malloc(sizeof *el);
    if (el == NULL) {
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    el->id = lease;
    el->gen = gen;
    l->impl = el;
    l->node = node;
    l->mark_ms = mark;
    snprintf(l->generation, sizeof l->generation, "%" PRId64, gen);
    return 0;
}

static int etcd_claim(idmc_coord *c, uint64_t lo, uint64_t hi, const char *holder, idmc_lease *l,
                      char *msg, size_t cap)
{
    int64_t lease, ttl_s;
    int rc = grant(c, &lease, &ttl_s, msg, cap);
    if (rc != 0)
        return rc;
    uint64_t *held = NULL;
    size_t nheld = 0;
    /* An exact claim goes straight to its transaction, whose failure
     * names the holder; a range first learns which nodes are held, so
     * that a full range costs one read rather than a transaction a node. */
    if (lo != hi)
        rc = held_nodes(c, lo, hi, &held, &nheld, msg, cap);
    size_t i = 0;
    for (uint64_t node = lo; rc == 0; node++) {
        while (i < nheld && held[i] < node)
            i++;
        if (i == nheld || held[i] != node) {
            rc = try_node(c, node, holder, lease, l, msg, cap);
            /* Won, or an error; busy: taken since our read, on to the next. */
            if (rc != IDMC_BUSY)
                break;
            rc = 0;
        }
        if (node == hi) {
            rc = IDMC_BUSY;
            break;
        }
    }
    free(held);
    if (rc == 0) {
        l->ttl_ms = ttl_s * 1000;
        return 0;
    }
    /* The lease holds nothing (a hold made under it, if any, goes with it). */
    revoke(c, lease);
    if (rc == IDMC_BUSY && lo != hi)
        snprintf(msg, cap, "every node from %" PRIu64 " to %" PRIu64 " is held", lo, hi);
    return rc;
}

static const char *lease_path(const idmc_lease *l, char *dst, size_t cap)
{
    idmc_slot_key(&l->coord->target, "workers", l->node, dst, cap);
    return dst;
}

/* Whether kv (the hold as read now) is still ours; msg says why not. */
static bool still_ours(const idmc_lease *l, const json_t *kv, char *msg, size_t cap)
{
    const etcd_lease *el = l->impl;
    int64_t created = 0, owner = 0;
    if (kv == NULL) {
        snprintf(msg, cap,
                 "node %" PRIu64 " is no longer held (the lease expired or the hold was deleted)",
                 l->node);
        return false;
    }
    idmc_gw_get_i64(kv, "create_revision", &created);
    idmc_gw_get_i64(kv, "lease", &owner);
    if (created != el->gen) {
        snprintf(msg, cap, "node %" PRIu64 " was taken over (generation %" PRId64 ")", l->node,
                 created);
        return false;
    }
    if (owner != el->id) {
        snprintf(msg, cap, "node %" PRIu64 "'s hold is no longer on our lease", l->node);
        return false;
    }
    return true;
}

static int etcd_keepalive(idmc_lease *l, int64_t *ttl_ms, char *msg, size_t cap)
{
    idmc_coord *c = l->coord;
    etcd_lease *el = l->impl;
    json_t *resp;
    int rc = idmc_gw_call(c->impl, "/v3/lease/keepalive",
                          json_pack("{s:o}", "ID", idmc_gw_i64(el->id)), &resp, msg, cap);
    if (rc != 0)
        return rc;
    int64_t ttl = 0;
    json_t *result = json_object_get(resp, "result");
    if (!json_is_object(result) || idmc_gw_get_i64(result, "TTL", &ttl) != 0) {
        idmc_gw_unexpected(c->impl, "a keepalive answer without a result", msg, cap);
        json_decref(resp);
        return IDMC_ERROR;
    }
    json_decref(resp);
    if (ttl <= 0) {
        snprintf(msg, cap, "the lease expired");
        return IDMC_LOST;
    }
    /* The lease is alive; is the hold still this generation's? (Someone
     * may have deleted it, or it may have gone with an earlier expiry.) */
    char wk[KEY_CAP];
    rc = idmc_gw_call(c->impl, "/v3/kv/range",
                      json_pack("{s:o}", "key", idmc_gw_b64(lease_path(l, wk, sizeof wk))), &resp,
                      msg, cap);
    if (rc != 0)
        return rc;
    if (!still_ours(l, json_array_get(json_object_get(resp, "kvs"), 0), msg, cap))
        rc = IDMC_LOST;
    json_decref(resp);
    if (rc == 0)
        *ttl_ms = ttl * 1000;
    return rc;
}

static int etcd_write_mark(idmc_lease *l, int64_t ms, bool shrink, char *msg, size_t cap)
{
    idmc_coord *c = l->coord;
    etcd_lease *el = l->impl;
    char wk[KEY_CAP], mk[KEY_CAP], value[24];
    lease_path(l, wk, sizeof wk);
    idmc_slot_key(&c->target, "marks", l->node, mk, sizeof mk);
    snprintf(value, sizeof value, "%" PRId64, ms);
    if (shrink) {
        json_t *resp;
        int rc = idmc_gw_call(c->impl, "/v3/kv/txn",
                              txn(json_pack("[o]", cmp_created(wk, el->gen)),
                                  json_pack("[o]", op_put(mk, value, 0)),
                                  json_pack("[o]", op_range(wk))),
                              &resp, msg, cap);
        if (rc != 0)
            return rc;
        if (!txn_succeeded(resp)) {
            /* Only the hold's comparison can fail: it is not ours. */
            if (still_ours(l, txn_kv(resp, 0), msg, cap))
                snprintf(msg, cap, "node %" PRIu64 " changed hands during the write", l->node);
            rc = IDMC_LOST;
        }
        json_decref(resp);
        return rc;
    }
    /*
     * Raise only: etcd compares values byte by byte, which does not order
     * decimal numbers, so read the mark, then write it in a transaction
     * that also requires it unchanged since (its mod_revision; 0 when
     * absent). When ms is not above the mark the transaction writes
     * nothing but still checks the hold: 0 must mean it is ours.
     */
    int64_t cur, mod_rev;
    int rc = read_mark(c, l->node, &cur, &mod_rev, msg, cap);
    for (int tries = 0; rc == 0; tries++) {
        if (tries == MARK_TRIES) {
            char w[300];
            idmc_gw_where(c->impl, w, sizeof w);
            snprintf(msg, cap, "%s: %s kept changing under our writes", w, mk);
            return IDMC_ERROR;
        }
        json_t *success = ms > cur ? json_pack("[o]", op_put(mk, value, 0)) : json_array();
        json_t *resp;
        rc = idmc_gw_call(
            c->impl, "/v3/kv/txn",
            txn(json_pack("[o, o]", cmp_created(wk, el->gen), cmp_modified(mk, mod_rev)), success,
                json_pack("[o, o]", op_range(wk), op_range(mk))),
            &resp, msg, cap);
        if (rc != 0)
            return rc;
        if (txn_succeeded(resp)) {
            json_decref(resp);
            return 0;
        }
        json_t *mkv = txn_kv(resp, 1);
        if (!still_ours(l, txn_kv(resp, 0), msg, cap))
            rc = IDMC_LOST;
        else if (kv_mark(mkv, &cur) != 0 || idmc_gw_get_i64(mkv, "mod_revision", &mod_rev) != 0)
            rc = bad_mark(c, l->node, msg, cap);
        json_decref(resp);
    }
    return rc;
}

static void etcd_release(idmc_lease *l)
{
    idmc_coord *c = l->coord;
    etcd_lease *el = l->impl;
    if (el == NULL)
        return;
    if (!l->lost) {
        /* Delete the hold if it is still this generation's, then end the
         * lease (which would take the hold with it anyway, unless someone
         * moved it off the lease). When no server answered the first
         * request, the second is not tried: release stays bounded. */
        char wk[KEY_CAP], msg[IDMC_MSG_CAP];
        lease_path(l, wk, sizeof wk);
        json_t *resp;
        int rc = idmc_gw_call(c->impl, "/v3/kv/txn",
                              txn(json_pack("[o]", cmp_created(wk, el->gen)),
                                  json_pack("[o]", op_delete(wk)), json_array()),
                              &resp, msg, sizeof msg);
        json_decref(resp);
        if (rc == 0 || idmc_gw_answered(c->impl))
            revoke(c, el->id);
    }
    free(el);
    l->impl = NULL;
}

/* One node in `lease list`, gathered from both prefixes. */
typedef struct entry {
    uint64_t node;
    bool held;
    int64_t gen, lease, mark_ms;
    char *holder;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    return cmp_u64(&((const entry *)a)->node, &((const entry *)b)->node);
}

static entry *find_entry(entry *v, size_t n, uint64_t node)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].node == node)
            return &v[i];
    return NULL;
}

static int etcd_list(idmc_coord *c, void (*fn)(void *ctx, const idmc_slot_info *slot), void *ctx,
                     char *msg, size_t cap)
{
    json_t *workers = NULL, *marks = NULL;
    int rc = range_prefix(c, "workers", false, &workers, msg, cap);
    if (rc == 0)
        rc = range_prefix(c, "marks", false, &marks, msg, cap);
    if (rc != 0) {
        json_decref(workers);
        return -1;
    }
    char wp[KEY_CAP], mp[KEY_CAP];
    prefix_of(c, "workers", wp, sizeof wp);
    prefix_of(c, "marks", mp, sizeof mp);
    json_t *wkvs = json_object_get(workers, "kvs"), *mkvs = json_object_get(marks, "kvs");
    size_t max = json_array_size(wkvs) + json_array_size(mkvs), n = 0;
    entry *v = calloc(max > 0 ? max : 1, sizeof *v);
    int count = -1;
    if (v == NULL) {
        snprintf(msg, cap, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < json_array_size(wkvs); i++) {
        json_t *kv = json_array_get(wkvs, i);
        uint64_t node;
        if (key_node(kv, wp, &node) != 0 || find_entry(v, n, node) != NULL)
            continue;
        entry *e = &v[n++];
        e->node = node;
        e->held = true;
        idmc_gw_get_i64(kv, "create_revision", &e->gen);
        idmc_gw_get_i64(kv, "lease", &e->lease);
        e->holder = idmc_gw_unb64(json_object_get(kv, "value"));
    }
    for (size_t i = 0; i < json_array_size(mkvs); i++) {
        json_t *kv = json_array_get(mkvs, i);
        uint64_t node;
        if (key_node(kv, mp, &node) != 0)
            continue;
        entry *e = find_entry(v, n, node);
        if (e == NULL) {
            e = &v[n++];
            e->node = node;
        }
        if (kv_mark(kv, &e->mark_ms) != 0)
            e->mark_ms = 0; /* shown as none rather than failing the whole list */
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_entry);
    for (size_t i = 0; i < n; i++) {
        char gen[IDMC_GEN_CAP];
        snprintf(gen, sizeof gen, "%" PRId64, v[i].gen);
        idmc_slot_info info = {
            .node = v[i].node,
            .held = v[i].held,
            .generation = v[i].held ? gen : NULL,
            .holder = v[i].held ? (v[i].holder != NULL ? v[i].holder : "") : NULL,
            .mark_ms = v[i].mark_ms,
            .ttl_ms_left = v[i].held && v[i].lease != 0 ? time_to_live_ms(c, v[i].lease) : -1,
        };
        fn(ctx, &info);
    }
    count = (int)n;
done:
    if (v != NULL)
        for (size_t i = 0; i < n; i++)
            free(v[i].holder);
    free(v);
    json_decref(workers);
    json_decref(marks);
    return count;
}

static const idmc_ops etcd_ops = {
    .kind = "etcd",
    .open = etcd_open,
    .close = etcd_close,
    .claim = etcd_claim,
    .keepalive = etcd_keepalive,
    .write_mark = etcd_write_mark,
    .release = etcd_release,
    .list = etcd_list,
};

const idmc_ops *const idmc_etcd_ops = &etcd_ops;
