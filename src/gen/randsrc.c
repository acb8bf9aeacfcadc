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
 * the generator, guarded by a mutex unless the generator is unshared: its
 * bytes must come from that source, not from another generator's.
 *
 * Left out: wiping a thread's pool when the thread exits (consumed bytes
 * are wiped at once; the unconsumed rest of a dead thread's pool stays in
 * freed memory).
 */
#include "internal.h"

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

int idm__randsrc_init(struct idm_randsrc *r, const struct idm_env *env, bool unshared, idm_error *err)
{
    r->entropy = env->entropy;
    r->thread_pool = env->entropy.fill == idm_entropy_system().fill;
    r->unshared = unshared;
    r->fork_gen = idm__fork_generation();
    r->allocator = env->allocator;
    r->pool = NULL;
    if (r->thread_pool)
        return IDM_OK;
    r->pool = idm__env_alloc(env, sizeof *r->pool);
    if (r->pool == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory for the randomness pool");
    idm__pool_init(r->pool);
    if (!unshared && pthread_mutex_init(&r->lock, NULL) != 0) {
        idm__env_free(env, r->pool);
        r->pool = NULL;
        return idm__fail(err, IDM_ENOMEM, 0, "cannot create the randomness mutex");
    }
    return IDM_OK;
}

void idm__randsrc_destroy(struct idm_randsrc *r)
{
    if (r->pool == NULL)
        return;
    if (!r->unshared)
        pthread_mutex_destroy(&r->lock);
    idm__pool_discard(r->pool);
    r->allocator.free(r->allocator.ctx, r->pool);
    r->pool = NULL;
}

int idm__randsrc_take_slow(struct idm_randsrc *r, void *dst, size_t n, bool wipe, idm_error *err)
{
    if (IDM_LIKELY(r->thread_pool))
        return take_thread_pool(&r->entropy, dst, n, wipe, err);
    if (!r->unshared)
        pthread_mutex_lock(&r->lock);
    uint64_t gen = idm__fork_generation();
    if (IDM_UNLIKELY(gen != r->fork_gen)) {
        idm__pool_discard(r->pool);
        r->fork_gen = gen;
    }
    int rc = idm__pool_take(r->pool, &r->entropy, dst, n, wipe, err);
    if (!r->unshared)
        pthread_mutex_unlock(&r->lock);
    return rc;
}
