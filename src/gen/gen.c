/*
 * gen.c - the idm_gen handle: lifecycle, fork handling, raw random bytes,
 * and the 128-bit reservation that ULID and KSUID share. The formats'
 * minting lives beside their codecs (src/uuid/uuid_gen.c,
 * src/ulid/ulid_gen.c, src/ksuid/ksuid_gen.c).
 *
 * Concurrency: no locks. Each format's monotonic state is one word (64 or
 * 128 bits, see struct idm_gen_states) advanced by compare-and-swap; a
 * bulk call reserves its whole range of values with one successful CAS and
 * then fills the IDs from it. Random bytes come from the calling thread's
 * own pool (randsrc.c). An IDM_GEN_UNSHARED generator skips the CAS.
 */
#include "internal.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

int idm_gen_new(idm_gen **out, const idm_gen_config *cfg, idm_error *err)
{
    if (out == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "out must not be NULL");
    *out = NULL;
    idm_gen_config defaults = {0};
    if (cfg == NULL)
        cfg = &defaults;
    uint32_t flags = cfg->flags;
    if (flags & ~(uint32_t)IDM_GEN_UNSHARED)
        return idm__fail(err, IDM_EINVAL, 0, "unknown flags 0x%x", (unsigned)flags);
    bool unshared = (flags & IDM_GEN_UNSHARED) != 0;
    if (unshared && cfg->state_path != NULL)
        return idm__fail(err, IDM_EINVAL, 0, "an unshared generator cannot use a host-wide state file");
    idm_gen_config base = *cfg;
    base.flags = 0;
    struct idm_env env;
    int rc = idm__env_init(&env, &base, err);
    if (rc != IDM_OK)
        return rc;
    idm_gen *g = idm__env_alloc(&env, sizeof *g, _Alignof(idm_gen));
    if (g == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory allocating a generator");
    memset(g, 0, sizeof *g);
    g->env = env;
    g->unshared = unshared;
    g->states = &g->own_states;
    atomic_init(&g->ceiling_ms, INT64_MAX);
    rc = idm__randsrc_init(&g->rand, &env, unshared, err);
    if (rc != IDM_OK) {
        idm__env_free(&env, g);
        return rc;
    }
    if (cfg->state_path != NULL) {
        struct idm_state_header want = {0};
        want.version = IDM_STATE_VERSION;
        want.kind = IDM_STATE_KIND_GEN;
        want.size = sizeof want + sizeof(struct idm_gen_states);
        rc = idm__state_open(cfg->state_path, &want, &g->map, err);
        if (rc != IDM_OK) {
            idm__randsrc_destroy(&g->rand);
            idm__env_free(&env, g);
            return rc;
        }
        g->states = (struct idm_gen_states *)((char *)g->map.base + sizeof want);
    }
    uint64_t gen = idm__fork_generation();
    atomic_store(&g->fork_seen, gen);
    atomic_store(&g->fork_done, gen);
    *out = g;
    return IDM_OK;
}

void idm_gen_free(idm_gen *g)
{
    if (g == NULL)
        return;
    struct idm_env env = g->env;
    idm__randsrc_destroy(&g->rand);
    idm__state_close(&g->map);
    idm__wipe(g, sizeof *g);
    idm__env_free(&env, g);
}

int idm_gen_random(idm_gen *g, void *buf, size_t len, idm_error *err)
{
    if (g == NULL || (buf == NULL && len > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and buffer must not be NULL");
    /* The caller may use them as a secret (tokens do): wipe them from the
     * pool as they are handed out. */
    return idm__randsrc_take_secret(&g->rand, buf, len, err);
}

/* Moves a process-local 128-bit state one tick (the bits above rand_bits)
 * ahead with a fresh random part, never backwards. */
static int jump_ahead(idm_gen *g, idm_u128 *state, unsigned rand_bits, size_t rand_len, idm_error *err)
{
    if (idm__cas128(state, 0, 0) == 0)
        return IDM_OK; /* nothing minted before the fork */
    idm_u128 fresh = 0;
    int rc = idm__gen_random_number(g, rand_len, &fresh, err);
    if (rc != IDM_OK)
        return rc;
    fresh &= ((idm_u128)1 << rand_bits) - 1;
    idm_u128 old = *state;
    for (;;) {
        if (old == 0)
            return IDM_OK; /* nothing minted before the fork */
        idm_u128 next = ((old >> rand_bits) + 1) << rand_bits | fresh;
        idm_u128 seen = idm__cas128(state, old, next);
        if (seen == old)
            return IDM_OK;
        old = seen;
    }
}

int idm__gen_after_fork(idm_gen *g, idm_error *err)
{
    uint64_t now = atomic_load_explicit(&idm__fork_generation_counter, memory_order_relaxed);
    for (;;) {
        uint64_t seen = atomic_load(&g->fork_seen);
        if (atomic_load(&g->fork_done) == now)
            return IDM_OK;
        if (seen == now) {
            /* Another thread of this child is adapting the generator. */
            sched_yield();
            continue;
        }
        if (!atomic_compare_exchange_strong(&g->fork_seen, &seen, now))
            continue;
        int rc = IDM_OK;
        if (g->map.base == NULL) {
            /* Host-wide states are shared with the parent on purpose; a
             * process-local ULID/KSUID would otherwise count on into the
             * parent's next values. UUIDv7 needs nothing: its 58 fresh random
             * bits per ID tell parent and child apart. */
            rc = jump_ahead(g, &g->states->ulid, 80, 10, err);
            if (rc == IDM_OK)
                rc = jump_ahead(g, &g->states->ksuid, 96, 12, err);
        }
        if (rc != IDM_OK) {
            atomic_store(&g->fork_seen, seen); /* let the next call retry */
            return rc;
        }
        atomic_store(&g->fork_done, now);
        return IDM_OK;
    }
}

int idm__reserve128(idm_gen *g, idm_u128 *state, size_t n, uint64_t now_tick, unsigned rand_bits,
                    idm_u128 fresh_rand, uint64_t max_tick, uint64_t cap_tick, const char *what,
                    idm_u128 *first, size_t *got, idm_error *err)
{
    const idm_u128 fresh = (idm_u128)now_tick << rand_bits | fresh_rand;
    const idm_u128 rand_mask = ((idm_u128)1 << rand_bits) - 1;
    idm_u128 old = g->unshared ? *state : idm__cas128(state, 0, 0); /* an atomic read */
    for (;;) {
        idm_u128 start;
        if (old == 0 || (old >> rand_bits) < now_tick) {
            start = fresh; /* a new tick: a fresh random part */
        } else {
            start = old + 1;
            if ((start & rand_mask) == 0) /* the random part overflowed */
                start |= fresh_rand;
        }
        idm_u128 tick = start >> rand_bits;
        if (tick >> 64 != 0 || (uint64_t)tick > max_tick)
            return idm__fail(err, IDM_ETIME_RANGE, 0, "%s range is exhausted", what);
        if ((uint64_t)tick > cap_tick)
            return idm__gen_fail_ceiling(g, what, err);
        /* Stay in this tick: after a carry the rest starts from fresh random
         * bits (the caller's next reservation), not from zero. */
        idm_u128 room = rand_mask - (start & rand_mask) + 1;
        size_t take = room < (idm_u128)n ? (size_t)room : n;
        idm_u128 last = start + (take - 1);
        if (g->unshared) {
            *state = last;
            *first = start;
            *got = take;
            return IDM_OK;
        }
        idm_u128 seen = idm__cas128(state, old, last);
        if (seen == old) {
            *first = start;
            *got = take;
            return IDM_OK;
        }
        old = seen;
    }
}

int idm__gen_fail_ceiling(idm_gen *g, const char *what, idm_error *err)
{
    char when[IDM_RFC3339_CAP + 16];
    int64_t c = atomic_load(&g->ceiling_ms);
    if (idm_time_format(c, when, sizeof when) != IDM_OK)
        snprintf(when, sizeof when, "Unix ms %" PRId64, c);
    return idm__fail(err, IDM_ECEILING, 0,
                     "the generator's ceiling %s is reached (%s): nothing later may be minted "
                     "until its owner raises it",
                     when, what);
}

void idm_gen_set_ceiling(idm_gen *g, int64_t ceiling_unix_ms)
{
    if (g != NULL)
        atomic_store_explicit(&g->ceiling_ms, ceiling_unix_ms, memory_order_release);
}

void idm_gen_set_ceiling_handler(idm_gen *g, idm_ceiling_fn fn, void *ctx)
{
    if (g != NULL) {
        g->on_ceiling = fn;
        g->on_ceiling_ctx = fn != NULL ? ctx : NULL;
    }
}

int64_t idm_gen_ceiling(const idm_gen *g)
{
    return g ? atomic_load_explicit(&((idm_gen *)g)->ceiling_ms, memory_order_acquire) : INT64_MAX;
}

int64_t idm_gen_high_water_ms(idm_gen *g)
{
    if (g == NULL || (g->map.base != NULL && idm__state_check(&g->map, NULL) != IDM_OK))
        return 0;
    uint64_t v7 = atomic_load(&g->states->v7) >> 16;
    idm_u128 ulid = g->unshared ? g->states->ulid : idm__cas128(&g->states->ulid, 0, 0);
    idm_u128 ksuid = g->unshared ? g->states->ksuid : idm__cas128(&g->states->ksuid, 0, 0);
    int64_t high = (int64_t)v7;
    int64_t ulid_ms = (int64_t)(uint64_t)(ulid >> 80);
    if (ulid_ms > high)
        high = ulid_ms;
    if (ksuid != 0) {
        int64_t ksuid_ms = ((int64_t)(uint64_t)(ksuid >> 96) + IDM_KSUID_EPOCH_S) * 1000;
        if (ksuid_ms > high)
            high = ksuid_ms;
    }
    return high;
}

void idm__raise128(idm_gen *g, idm_u128 *state, idm_u128 want)
{
    if (g->unshared) {
        if (*state < want)
            *state = want;
        return;
    }
    idm_u128 old = idm__cas128(state, 0, 0);
    while (old < want) {
        idm_u128 seen = idm__cas128(state, old, want);
        if (seen == old)
            return;
        old = seen;
    }
}

int idm_gen_resume_after(idm_gen *g, int64_t after_unix_ms, idm_error *err)
{
    if (g == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "generator must not be NULL");
    if (after_unix_ms < 0 || after_unix_ms >= (INT64_C(1) << 48))
        return idm__fail(err, IDM_EINVAL, 0,
                         "resume time must be a Unix time in ms within 48 bits, got %" PRId64,
                         after_unix_ms);
    /* Each state is set to the last value of the tick holding the time, so
     * the next ID is a carry into the following tick (with fresh random
     * bits for ULID and KSUID) unless the clock has passed it already. */
    const uint64_t ms = (uint64_t)after_unix_ms;
    _Atomic uint64_t *v7 = &g->states->v7;
    uint64_t want = ms << 16 | 0xFFFF;
    uint64_t old = atomic_load(v7);
    while (old < want && !atomic_compare_exchange_weak(v7, &old, want))
        ;
    idm__raise128(g, &g->states->ulid, (idm_u128)ms << 80 | (((idm_u128)1 << 80) - 1));
    int64_t s = after_unix_ms / 1000 - IDM_KSUID_EPOCH_S;
    if (s >= 0)
        idm__raise128(g, &g->states->ksuid,
                      (idm_u128)(uint64_t)s << 96 | (((idm_u128)1 << 96) - 1));
    return IDM_OK;
}

void idm__raise64(idm_gen *g, _Atomic uint64_t *state, uint64_t want)
{
    if (g->unshared) {
        if (atomic_load_explicit(state, memory_order_relaxed) < want)
            atomic_store_explicit(state, want, memory_order_relaxed);
        return;
    }
    uint64_t old = atomic_load(state);
    while (old < want && !atomic_compare_exchange_weak(state, &old, want))
        ;
}

/* The time a call mints at: the clock, shifted (idm_gen_set_clock_shift_us)
 * in microseconds so that the shifted time may pass 2262, where the
 * clock's 64-bit nanoseconds end. */
static int gen_now_ms(idm_gen *g, int64_t *now_ms, idm_error *err)
{
    if (IDM_LIKELY(g->shift_us == 0))
        return idm__env_now_ms(&g->env, now_ms, err);
    int64_t ns = 0;
    int rc = idm__env_now_ns(&g->env, &ns, err);
    if (rc != IDM_OK)
        return rc;
    /* ns is 0 or more (idm__env_now_ns refuses earlier), so ns / 1000 is
     * the floor. */
    int64_t us = 0;
    if (__builtin_add_overflow(ns / 1000, g->shift_us, &us))
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "the clock shifted by %" PRId64 " us is past 64-bit microseconds",
                         g->shift_us);
    if (us < 0)
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "the clock shifted by %" PRId64 " us reads before 1970", g->shift_us);
    *now_ms = us / 1000;
    return IDM_OK;
}

void idm_gen_set_clock_shift_us(idm_gen *g, int64_t shift_us)
{
    if (g != NULL)
        g->shift_us = shift_us;
}

int idm__gen_observe_begin(idm_gen *g, const void *seen, int64_t seen_ms, int64_t max_offset_ms,
                           const char *what, idm_error *err)
{
    if (g == NULL || seen == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "generator and seen ID must not be NULL");
    if (max_offset_ms < 0)
        return idm__fail(err, IDM_EINVAL, 0, "max_offset_ms must be 0 or more, got %" PRId64,
                         max_offset_ms);
    int rc = idm__gen_enter(g, err);
    if (rc != IDM_OK)
        return rc;
    if (g->map.base != NULL) {
        rc = idm__state_check(&g->map, err);
        if (rc != IDM_OK)
            return rc;
    }
    int64_t now_ms = 0;
    rc = gen_now_ms(g, &now_ms, err);
    if (rc != IDM_OK)
        return rc;
    /* Both are within 0 .. 2^48 * 1000 or so: the difference cannot wrap. */
    int64_t ahead = seen_ms - now_ms;
    if (ahead > max_offset_ms)
        return idm__fail(err, IDM_EOFFSET, 0,
                         "the %s seen is %" PRId64 " ms ahead of the local clock, more than the "
                         "limit of %" PRId64 " ms",
                         what, ahead, max_offset_ms);
    return IDM_OK;
}

int idm__gen_begin(idm_gen *g, const void *out, size_t n, int64_t *now_ms, idm_error *err)
{
    if (g == NULL || (out == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and output must not be NULL");
    int rc = idm__gen_enter(g, err);
    if (rc != IDM_OK || n == 0)
        return rc;
    rc = gen_now_ms(g, now_ms, err);
    /* A host-wide file truncated under us would fault on the next access:
     * one fstat per clock millisecond turns that into IDM_ESTATE
     * (statefile.h). A clock shift moves the millisecond along with the
     * clock, and a change of shift is a change of millisecond: checked. */
    if (rc == IDM_OK && g->map.base != NULL)
        rc = idm__state_check_at(&g->map, *now_ms, err);
    return rc;
}

int idm__gen_random_number(idm_gen *g, size_t len, idm_u128 *out, idm_error *err)
{
    uint8_t r[16];
    int rc = idm__randsrc_take(&g->rand, r, len, err);
    if (rc != IDM_OK)
        return rc;
    idm_u128 v = 0;
    for (size_t i = 0; i < len; i++)
        v = v << 8 | r[i];
    *out = v;
    return IDM_OK;
}
