/*
 * hlc.c - the hybrid logical clock (include/idmint/hlc.h).
 *
 * The state is the last stamp, wall_ms << 16 | logical, in one atomic word.
 * Each event reads the wall clock once, computes the next word from the
 * one it loaded, and publishes it with compare-and-swap, retrying from the
 * word another thread published. In the packed form the overflow rule
 * comes for free: (l << 16) + 0x10000 is (l + 1) << 16, the next
 * millisecond with logical 0.
 */
#include "gen/env.h"

#include <inttypes.h>
#include <stdio.h>

struct idm_hlc {
    _Alignas(64) _Atomic uint64_t state; /* the last stamp, 0 = none */
    struct idm_env env;
    int64_t max_offset_ms;
    _Atomic int64_t ceiling_ms; /* idm_hlc_set_ceiling; INT64_MAX = none */
    idm_ceiling_fn on_ceiling;  /* idm_hlc_set_ceiling_handler, or NULL */
    void *on_ceiling_ctx;
};

#define LOGICAL_BITS 16
#define LOGICAL_MASK ((uint64_t)0xFFFF)

void idm_hlc_config_init(idm_hlc_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->max_offset_ms = IDM_HLC_DEFAULT_MAX_OFFSET_MS;
}

int idm_hlc_new(idm_hlc **out, const idm_hlc_config *cfg, idm_error *err)
{
    if (out == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no place to store the clock");
    *out = NULL;
    idm_hlc_config defaults;
    if (cfg == NULL) {
        idm_hlc_config_init(&defaults);
        cfg = &defaults;
    }
    if (cfg->flags != 0)
        return idm__fail(err, IDM_EINVAL, 0, "flags must be 0, got %u", (unsigned)cfg->flags);
    if (cfg->max_offset_ms < 0)
        return idm__fail(err, IDM_EINVAL, 0, "max_offset_ms must be 0 or more, got %" PRId64,
                         cfg->max_offset_ms);
    struct idm_env env;
    int rc = idm__env_init_clock(&env, cfg->clock, cfg->allocator, err);
    if (rc != IDM_OK)
        return rc;
    idm_hlc *h = idm__env_alloc(&env, sizeof *h, _Alignof(idm_hlc));
    if (h == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory for a hybrid logical clock");
    memset(h, 0, sizeof *h);
    atomic_init(&h->state, 0);
    atomic_init(&h->ceiling_ms, INT64_MAX);
    h->env = env;
    h->max_offset_ms = cfg->max_offset_ms;
    *out = h;
    return IDM_OK;
}

void idm_hlc_free(idm_hlc *h)
{
    if (h == NULL)
        return;
    struct idm_env env = h->env;
    idm__env_free(&env, h);
}

/* The wall clock in ms, within what a stamp holds. */
static int wall_now(const idm_hlc *h, int64_t *pt, idm_error *err)
{
    int rc = idm__env_now_ms(&h->env, pt, err);
    if (rc != IDM_OK)
        return rc;
    if (*pt > IDM_HLC_MAX_WALL_MS)
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "the clock reads %" PRId64 " ms, past the last time a stamp can hold",
                         *pt);
    return IDM_OK;
}

/* (l << 16) + c for c in 0 .. 0x10000 (0x10000: the next ms, logical 0),
 * or IDM_ETIME_RANGE past the last stamp. */
static int pack(uint64_t l, uint64_t c, uint64_t *word, idm_error *err)
{
    if (l == (uint64_t)IDM_HLC_MAX_WALL_MS && c > LOGICAL_MASK)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock has reached its last stamp");
    *word = (l << LOGICAL_BITS) + c;
    return IDM_OK;
}

/* Whether a stamp's wall_ms is within the ceiling (checked before it is
 * published, so a refused event changes nothing). */
static bool under_ceiling(idm_hlc *h, uint64_t word)
{
    return (int64_t)(word >> LOGICAL_BITS) <=
           atomic_load_explicit(&h->ceiling_ms, memory_order_acquire);
}

static int fail_ceiling(idm_hlc *h, idm_error *err)
{
    return idm__fail(err, IDM_ECEILING, 0,
                     "the clock's ceiling (Unix ms %" PRId64 ") is reached: no later stamp may be "
                     "handed out until its owner raises it",
                     atomic_load(&h->ceiling_ms));
}

static int now_once(idm_hlc *h, uint64_t *stamp, idm_error *err)
{
    int64_t pt;
    int rc = wall_now(h, &pt, err);
    if (rc != IDM_OK)
        return rc;
    uint64_t old = atomic_load(&h->state), next = 0;
    do {
        uint64_t l = old >> LOGICAL_BITS;
        if ((uint64_t)pt > l)
            next = (uint64_t)pt << LOGICAL_BITS;
        else if ((rc = pack(l, (old & LOGICAL_MASK) + 1, &next, err)) != IDM_OK)
            return rc;
        if (!under_ceiling(h, next))
            return fail_ceiling(h, err);
    } while (!atomic_compare_exchange_weak(&h->state, &old, next));
    *stamp = next;
    return IDM_OK;
}

static int update_once(idm_hlc *h, uint64_t remote, uint64_t *stamp, idm_error *err)
{
    int64_t pt;
    int rc = wall_now(h, &pt, err);
    if (rc != IDM_OK)
        return rc;
    uint64_t rl = remote >> LOGICAL_BITS, rc_ = remote & LOGICAL_MASK;
    /* Both below 2^48: the difference cannot overflow. */
    int64_t ahead = (int64_t)rl - pt;
    if (ahead > h->max_offset_ms)
        return idm__fail(err, IDM_EOFFSET, 0,
                         "remote clock is %" PRId64 " ms ahead of the local clock, "
                         "more than the limit of %" PRId64 " ms",
                         ahead, h->max_offset_ms);
    uint64_t old = atomic_load(&h->state), next = 0;
    do {
        uint64_t l = old >> LOGICAL_BITS, c = old & LOGICAL_MASK;
        uint64_t lm = l > rl ? l : rl;
        if ((uint64_t)pt > lm)
            lm = (uint64_t)pt;
        uint64_t cn;
        if (lm == l && lm == rl)
            cn = (c > rc_ ? c : rc_) + 1;
        else if (lm == l)
            cn = c + 1;
        else if (lm == rl)
            cn = rc_ + 1;
        else
            cn = 0;
        if ((rc = pack(lm, cn, &next, err)) != IDM_OK)
            return rc;
        if (!under_ceiling(h, next))
            return fail_ceiling(h, err);
    } while (!atomic_compare_exchange_weak(&h->state, &old, next));
    *stamp = next;
    return IDM_OK;
}

/* A call at the ceiling is made again once the handler raised it. */
static bool again(idm_hlc *h, int *rc, idm_error *err)
{
    if (IDM_LIKELY(*rc != IDM_ECEILING) || h->on_ceiling == NULL)
        return false;
    int r = h->on_ceiling(h->on_ceiling_ctx, atomic_load(&h->ceiling_ms), err);
    if (r == IDM_OK)
        return true;
    *rc = r;
    return false;
}

int idm_hlc_now(idm_hlc *h, uint64_t *stamp, idm_error *err)
{
    int rc;
    do
        rc = now_once(h, stamp, err);
    while (again(h, &rc, err));
    return rc;
}

int idm_hlc_update(idm_hlc *h, uint64_t remote, uint64_t *stamp, idm_error *err)
{
    int rc;
    do
        rc = update_once(h, remote, stamp, err);
    while (again(h, &rc, err));
    return rc;
}

void idm_hlc_set_ceiling(idm_hlc *h, int64_t ceiling_unix_ms)
{
    if (h != NULL)
        atomic_store_explicit(&h->ceiling_ms, ceiling_unix_ms, memory_order_release);
}

int64_t idm_hlc_ceiling(const idm_hlc *h)
{
    return h != NULL ? atomic_load_explicit(&((idm_hlc *)h)->ceiling_ms, memory_order_acquire)
                     : INT64_MAX;
}

void idm_hlc_set_ceiling_handler(idm_hlc *h, idm_ceiling_fn fn, void *ctx)
{
    if (h != NULL) {
        h->on_ceiling = fn;
        h->on_ceiling_ctx = fn != NULL ? ctx : NULL;
    }
}

/* A raise, not a set: a concurrent event that has already gone past the
 * floor keeps its (greater) state, so the clock never goes back. */
int idm_hlc_resume_after(idm_hlc *h, int64_t after_ms, idm_error *err)
{
    if (h == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no clock");
    if (after_ms < 0 || after_ms > IDM_HLC_MAX_WALL_MS - 1)
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "the time to resume after must be 0 to %" PRId64 " ms, got %" PRId64,
                         IDM_HLC_MAX_WALL_MS - 1, after_ms);
    /* The last stamp of after_ms: the next event's wall_ms is later, by
     * the clock or by the overflow rule. */
    uint64_t floor = (uint64_t)after_ms << LOGICAL_BITS | LOGICAL_MASK;
    uint64_t old = atomic_load(&h->state);
    while (old < floor && !atomic_compare_exchange_weak(&h->state, &old, floor)) {
    }
    return IDM_OK;
}

uint64_t idm_hlc_last(const idm_hlc *h)
{
    return atomic_load(&((idm_hlc *)h)->state);
}

void idm_hlc_decode(uint64_t stamp, int64_t *wall_ms, uint16_t *logical)
{
    if (wall_ms != NULL)
        *wall_ms = (int64_t)(stamp >> LOGICAL_BITS);
    if (logical != NULL)
        *logical = (uint16_t)(stamp & LOGICAL_MASK);
}

int idm_hlc_encode(int64_t wall_ms, uint16_t logical, uint64_t *stamp, idm_error *err)
{
    if (wall_ms < 0 || wall_ms > IDM_HLC_MAX_WALL_MS)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "wall_ms must be 0 to %" PRId64 ", got %" PRId64,
                         IDM_HLC_MAX_WALL_MS, wall_ms);
    *stamp = (uint64_t)wall_ms << LOGICAL_BITS | logical;
    return IDM_OK;
}

int idm_hlc_format(uint64_t stamp, char *dst, size_t cap)
{
    static const char digits[] = "0123456789abcdef";
    if (dst == NULL || cap < IDM_HLC_STRLEN + 1)
        return IDM_ENOSPC;
    for (int i = IDM_HLC_STRLEN - 1; i >= 0; i--) {
        dst[i] = digits[stamp & 0xF];
        stamp >>= 4;
    }
    dst[IDM_HLC_STRLEN] = '\0';
    return IDM_OK;
}

int idm_hlc_parse(const char *text, size_t len, uint64_t *stamp, idm_error *err)
{
    if (text == NULL || stamp == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no text or no place to store the stamp");
    uint64_t v = 0;
    size_t n = len < IDM_HLC_STRLEN ? len : IDM_HLC_STRLEN;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            d = ch - 'a' + 10;
        else
            return idm__fail(err, IDM_EPARSE, i,
                             "a stamp is lowercase hex; position %zu is not (0-9, a-f)", i + 1);
        v = v << 4 | d;
    }
    if (len != IDM_HLC_STRLEN)
        return idm__fail(err, IDM_EPARSE, n, "a stamp must be %d characters, got %zu",
                         IDM_HLC_STRLEN, len);
    *stamp = v;
    return IDM_OK;
}
