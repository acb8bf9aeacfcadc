/*
 * randsrc.c - where a generator's random bytes come from.
 *
 * With the system entropy (OpenSSL's DRBG) every thread draws from its own
 * 4 KiB pool: no lock and no atomic operation on the hot path, so shared
 * generators do not serialise on randomness. The pool remembers the fork
 * generation it was filled in, and a child of fork() discards it before
 * use: the child never repeats the parent's stream.
 *
 * An injected entropy source (tests, embedders) gets a pool of its own in
 * the generator, guarded by a lock unless the generator is unshared: its
 * bytes must come from that source, not from another generator's.
 *
 * That lock is a word, not a pthread mutex, because of fork(). A child
 * inherits the parent's memory but only the forking thread: a mutex that
 * another parent thread held at that instant (say, inside a slow fill())
 * stays locked in the child for ever, and the child's first draw would
 * block. The lock word therefore records the fork generation of the
 * process that took it (idm__fork_generation(), which every child moves
 * forward), and a word taken in an earlier generation counts as free: its
 * holder does not exist in this process, and the pool it was using is
 * discarded by the child anyway. The alternative, re-initialising mutexes
 * in a pthread_atfork child handler, would need a global list of live
 * generators (and a lock around that list, with the same problem), and
 * re-initialising a locked mutex is undefined behaviour in POSIX.
 *
 * The lock is held for a memcpy, and for a fill() once per
 * IDM_ENTROPY_POOL_BYTES; a waiter spins briefly, then yields, then sleeps
 * in short, growing steps (on the OS clock, never the injected one, which
 * a fake clock would advance), so a fill() that blocks does not burn a CPU.
 *
 * Left out: wiping a thread's pool when the thread exits (consumed bytes
 * are wiped at once; the unconsumed rest of a dead thread's pool stays in
 * freed memory).
 */
#include "internal.h"

#include <sched.h>

_Thread_local struct idm_thread_pool idm__thread_pool;

static int take_thread_pool(const idm_entropy *src, void *dst, size_t n, bool wipe, idm_error *err)
{
    struct idm_thread_pool *tp = &idm__thread_pool;
    uint64_t gen = idm__fork_generation();
    if (IDM_UNLIKELY(!tp->ready || tp->fork_gen != gen)) {
        idm__pool_discard(&tp->pool);
        tp->fork_gen = gen;
        tp->ready = true;
    }
    return idm__pool_take(&tp->pool, src, dst, n, wipe, err);
}

enum {
    LOCK_SPINS = 64,           /* plain retries before yielding */
    LOCK_YIELDS = 64,          /* sched_yield()s before sleeping */
    LOCK_SLEEP_MIN_NS = 1000,  /* first sleep, doubled up to the maximum */
    LOCK_SLEEP_MAX_NS = 1000000
};

/* Takes r->lock for this process. Returns the fork generation it was taken
 * in. */
static uint64_t pool_lock(struct idm_randsrc *r)
{
    const uint64_t gen = idm__fork_generation();
    const uint64_t mine = gen << 1 | 1;
    unsigned waits = 0;
    int64_t sleep_ns = LOCK_SLEEP_MIN_NS;
    for (;;) {
        uint64_t cur = atomic_load_explicit(&r->lock, memory_order_relaxed);
        /* Free (0) or taken in an earlier generation: by a thread of an
         * ancestor process, which is not running here. A word can never
         * hold a later generation than this process's. */
        if (cur != mine) {
            if (atomic_compare_exchange_weak_explicit(&r->lock, &cur, mine, memory_order_acquire,
                                                      memory_order_relaxed))
                return gen;
            continue;
        }
        if (waits < LOCK_SPINS) {
            waits++;
        } else if (waits < LOCK_SPINS + LOCK_YIELDS) {
            waits++;
            sched_yield();
        } else {
            idm__os_sleep_ns(NULL, sleep_ns);
            if (sleep_ns < LOCK_SLEEP_MAX_NS)
                sleep_ns *= 2;
        }
    }
}

static void pool_unlock(struct idm_randsrc *r)
{
    atomic_store_explicit(&r->lock, 0, memory_order_release);
}

int idm__randsrc_init(struct idm_randsrc *r, const struct idm_env *env, bool unshared, idm_error *err)
{
    r->entropy = env->entropy;
    r->thread_pool = env->entropy.fill == idm_entropy_system().fill;
    r->unshared = unshared;
    r->fork_gen = idm__fork_generation();
    r->allocator = env->allocator;
    r->pool = NULL;
    atomic_init(&r->lock, 0);
    if (r->thread_pool)
        return IDM_OK;
    r->pool = idm__env_alloc(env, sizeof *r->pool, _Alignof(struct idm_pool));
    if (r->pool == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory for the randomness pool");
    idm__pool_init(r->pool);
    return IDM_OK;
}

void idm__randsrc_destroy(struct idm_randsrc *r)
{
    if (r->pool == NULL)
        return;
    idm__pool_discard(r->pool);
    r->allocator.free(r->allocator.ctx, r->pool);
    r->pool = NULL;
}

int idm__randsrc_take_slow(struct idm_randsrc *r, void *dst, size_t n, bool wipe, idm_error *err)
{
    if (IDM_LIKELY(r->thread_pool))
        return take_thread_pool(&r->entropy, dst, n, wipe, err);
    uint64_t gen = r->unshared ? idm__fork_generation() : pool_lock(r);
    if (IDM_UNLIKELY(gen != r->fork_gen)) {
        /* Filled by the parent (perhaps half-way, by a thread the child
         * does not have): the child must not repeat its bytes. */
        idm__pool_discard(r->pool);
        r->fork_gen = gen;
    }
    int rc = idm__pool_take(r->pool, &r->entropy, dst, n, wipe, err);
    if (!r->unshared)
        pool_unlock(r);
    return rc;
}
