/*
 * gen/randsrc.h - randomness for generators (src/gen/randsrc.c).
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_GEN_RANDSRC_H
#define IDM_GEN_RANDSRC_H

#include "gen/env.h"
#include "os/os.h"

/* ---- randomness for generators (src/gen/randsrc.c) ---------------------
 *
 * Generators on the system entropy draw from a pool that belongs to the
 * calling thread (no lock, no atomics; discarded in a forked child).
 * Generators with an injected entropy source keep their own pool, under a
 * lock word unless the generator is unshared (see randsrc.c for why it is
 * not a mutex). */
struct idm_randsrc {
    idm_entropy entropy;
    bool thread_pool; /* system entropy: use the calling thread's pool */
    bool unshared;    /* own pool without a lock */
    uint64_t fork_gen;
    /* The pool's lock: 0 when free, else (fork generation of the holder's
     * process) << 1 | 1. Held in an earlier generation counts as free. */
    _Atomic uint64_t lock;
    struct idm_pool *pool; /* only for an injected source */
    idm_allocator allocator;
};

int idm__randsrc_init(struct idm_randsrc *r, const struct idm_env *env, bool unshared, idm_error *err);
void idm__randsrc_destroy(struct idm_randsrc *r);
int idm__randsrc_take_slow(struct idm_randsrc *r, void *dst, size_t n, bool wipe, idm_error *err);

/* The calling thread's pool (randsrc.c). */
struct idm_thread_pool {
    uint64_t fork_gen;
    bool ready;
    struct idm_pool pool;
};
extern _Thread_local struct idm_thread_pool idm__thread_pool;

/* n random bytes into dst, any n. IDM_ENOENTROPY. The common case - the
 * thread's pool, filled in this process, holding n bytes - is inline. */
static inline int idm__randsrc_take(struct idm_randsrc *r, void *dst, size_t n, idm_error *err)
{
    struct idm_thread_pool *tp = &idm__thread_pool;
    if (IDM_LIKELY(r->thread_pool && tp->ready && n <= IDM_ENTROPY_POOL_BYTES - tp->pool.pos &&
                   tp->fork_gen == atomic_load_explicit(&idm__fork_generation_counter,
                                                        memory_order_relaxed))) {
        memcpy(dst, tp->pool.bytes + tp->pool.pos, n);
        tp->pool.pos += n;
        return IDM_OK;
    }
    return idm__randsrc_take_slow(r, dst, n, false, err);
}

/* The same for secrets: the consumed pool bytes are wiped at once. */
static inline int idm__randsrc_take_secret(struct idm_randsrc *r, void *dst, size_t n, idm_error *err)
{
    return idm__randsrc_take_slow(r, dst, n, true, err);
}

#endif
