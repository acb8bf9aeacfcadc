/*
 * fakeclock.h - an injectable clock and randomness source for tests.
 *
 * The fake clock reads a settable time; sleep_ns advances it by the
 * requested amount (so waits are deterministic and instantaneous) and
 * counts the sleeps. step_ns, when non-zero, advances the time after
 * every read. The fake entropy source can fail its Nth call.
 */
#ifndef IDM_FAKECLOCK_H
#define IDM_FAKECLOCK_H

#include <idmint/idmint.h>
#include <stdatomic.h>
#include <string.h>

struct fake_clock {
    _Atomic int64_t now_ns;
    int64_t step_ns;
    _Atomic long sleeps;
    _Atomic int64_t slept_ns;
    int fail_reads; /* when > 0, that many reads fail with IDM_ECLOCK */
};

static int fake_clock_now(void *ctx, int64_t *out)
{
    struct fake_clock *c = ctx;
    if (c->fail_reads > 0) {
        c->fail_reads--;
        return IDM_ECLOCK;
    }
    *out = atomic_fetch_add(&c->now_ns, c->step_ns);
    return IDM_OK;
}

static void fake_clock_sleep(void *ctx, int64_t ns)
{
    struct fake_clock *c = ctx;
    atomic_fetch_add(&c->sleeps, 1);
    atomic_fetch_add(&c->slept_ns, ns);
    atomic_fetch_add(&c->now_ns, ns > 0 ? ns : 1);
}

static inline void fake_clock_set_ms(struct fake_clock *c, int64_t unix_ms)
{
    atomic_store(&c->now_ns, unix_ms * 1000000);
}

static inline idm_clock fake_clock_as_clock(struct fake_clock *c)
{
    idm_clock k = {fake_clock_now, fake_clock_sleep, c};
    return k;
}

struct fake_entropy {
    long calls;
    long fail_at; /* 1-based call number to fail, 0 = never */
    uint8_t next; /* deterministic byte counter */
};

static int fake_entropy_fill(void *ctx, void *buf, size_t len)
{
    struct fake_entropy *e = ctx;
    e->calls++;
    if (e->fail_at && e->calls == e->fail_at)
        return IDM_ENOENTROPY;
    uint8_t *p = buf;
    for (size_t i = 0; i < len; i++)
        p[i] = e->next++;
    return IDM_OK;
}

static inline idm_entropy fake_entropy_as_entropy(struct fake_entropy *e)
{
    idm_entropy s = {fake_entropy_fill, e};
    return s;
}

#endif
